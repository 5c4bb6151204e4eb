// Bytes in, text out: where the file comes from, which encoding it is in, and the
// guards (line length, unbalanced quotes) that must hold while it streams.
import { createReadStream } from 'node:fs';
import type { ExportInput } from './types.js';

export const CHUNK_BYTES = 64 * 1024;

export class ReaderError extends Error {
  /** How far the file was read when it was refused. */
  bytesRead: number | null = null;
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function* byteChunks(input: ExportInput, chunkBytes = CHUNK_BYTES, onBytes?: (n: number) => void): AsyncGenerator<Uint8Array> {
  if ('bytes' in input) {
    for (let i = 0; i < input.bytes.length; i += chunkBytes) {
      const c = input.bytes.subarray(i, i + chunkBytes);
      onBytes?.(c.length);
      yield c;
    }
    return;
  }
  const stream = createReadStream(input.path, { highWaterMark: chunkBytes });
  try {
    for await (const chunk of stream) {
      onBytes?.((chunk as Buffer).length);
      yield chunk as Buffer;
    }
  } finally {
    stream.destroy();
  }
}

/** The first bytes of the input, without reading the rest. */
export async function headBytes(input: ExportInput, n: number): Promise<Uint8Array> {
  if ('bytes' in input) return input.bytes.subarray(0, n);
  const parts: Uint8Array[] = [];
  let have = 0;
  for await (const c of byteChunks(input)) {
    parts.push(c);
    have += c.length;
    if (have >= n) break;
  }
  return Buffer.concat(parts).subarray(0, n);
}

export interface Encoding {
  /** A label TextDecoder accepts. */
  encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';
  bom: boolean;
}

export type FileKind = 'text' | 'zip' | 'ole' | 'binary';

export function sniffKind(head: Uint8Array): FileKind {
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) return 'zip';
  if (head[0] === 0xd0 && head[1] === 0xcf && head[2] === 0x11 && head[3] === 0xe0) return 'ole';
  return 'text';
}

/**
 * BOM first; else UTF-16 recognised by its zero bytes (ASCII text in UTF-16 has a zero in
 * every other byte); else UTF-8 when the head decodes strictly; else Windows-1252, the
 * encoding of older Windows climate-computer exports ('°' is byte 0xB0 there).
 */
export function detectEncoding(head: Uint8Array): Encoding | null | 'utf-32' {
  if (
    (head[0] === 0xff && head[1] === 0xfe && head[2] === 0 && head[3] === 0) ||
    (head[0] === 0 && head[1] === 0 && head[2] === 0xfe && head[3] === 0xff)
  )
    return 'utf-32';
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', bom: true };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', bom: true };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', bom: true };
  const n = Math.min(head.length, 4096) & ~1;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i < n; i += 2) {
    if (head[i] === 0) evenZero++;
    if (head[i + 1] === 0) oddZero++;
  }
  const pairs = n / 2;
  if (pairs >= 2) {
    if (oddZero > pairs * 0.3 && evenZero < pairs * 0.05) return { encoding: 'utf-16le', bom: false };
    if (evenZero > pairs * 0.3 && oddZero < pairs * 0.05) return { encoding: 'utf-16be', bom: false };
  }
  if (evenZero + oddZero > 0) return null; // zero bytes, not UTF-16: binary
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return { encoding: 'utf-8', bom: false };
  } catch {
    return { encoding: 'windows-1252', bom: false };
  }
}

/** Share of characters that no text table contains (controls other than tab, CR, LF; U+FFFD). */
export function garbageShare(text: string): number {
  if (text.length === 0) return 0;
  let bad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 13) || c === 0xfffd || c === 0x7f) bad++;
  }
  return bad / text.length;
}

export async function* textChunks(input: ExportInput, enc: Encoding, onBytes?: (n: number) => void): AsyncGenerator<string> {
  // TextDecoder drops the BOM itself.
  const decoder = new TextDecoder(enc.encoding);
  for await (const bytes of byteChunks(input, CHUNK_BYTES, onBytes)) {
    const s = decoder.decode(bytes, { stream: true });
    if (s) yield s;
  }
  const tail = decoder.decode();
  if (tail) yield tail;
}

export interface BlockOptions {
  maxLineChars: number;
  /** Counts characters handed on, for reports on how far a refused file was read. */
  onChars?: (n: number) => void;
}

/**
 * Regroups text into blocks that end at a record boundary (a line end outside quotes), so
 * that each block can be tokenised on its own. Refuses a line longer than maxLineChars as
 * soon as it is seen, holding at most about one line plus one chunk in memory.
 */
export async function* recordBlocks(chunks: AsyncIterable<string>, opts: BlockOptions): AsyncGenerator<string> {
  const { maxLineChars } = opts;
  const maxPending = Math.max(4 * maxLineChars, 4 * CHUNK_BYTES);
  let pending = '';
  let lineLen = 0;
  let quotes = 0; // quote characters in pending, for parity
  for await (const chunk of chunks) {
    opts.onChars?.(chunk.length);
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf('\n', from);
      const segEnd = nl === -1 ? chunk.length : nl;
      lineLen += segEnd - from;
      if (lineLen > maxLineChars) {
        throw new ReaderError('line_too_long', `a line is longer than ${maxLineChars} characters; this is not a climate export`);
      }
      if (nl === -1) break;
      lineLen = 0;
      from = nl + 1;
    }
    for (let q = chunk.indexOf('"'); q !== -1; q = chunk.indexOf('"', q + 1)) quotes++;
    pending += chunk;
    const cut = pending.lastIndexOf('\n');
    if (cut === -1) continue;
    if (quotes % 2 === 0) {
      // Quote parity over the whole pending text is even: the last line end is outside quotes.
      const block = pending.slice(0, cut + 1);
      pending = pending.slice(cut + 1);
      quotes = countQuotes(pending);
      yield block;
    } else if (pending.length > maxPending) {
      throw new ReaderError('unbalanced_quotes', 'a quoted cell never ends; the file is not a well-formed table');
    }
  }
  if (quotes % 2 === 1) throw new ReaderError('unbalanced_quotes', 'a quoted cell never ends; the file is not a well-formed table');
  if (pending.length > 0) yield pending;
}

function countQuotes(s: string): number {
  let n = 0;
  for (let q = s.indexOf('"'); q !== -1; q = s.indexOf('"', q + 1)) n++;
  return n;
}
