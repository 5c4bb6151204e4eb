import type { Context } from 'koa';
import { pipeline } from 'node:stream/promises';
import { Writable, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import Bourne from '@hapi/bourne';
import { Invalid, Refused, TooLarge, UnsupportedMedia } from '../errors.js';

/**
 * Reading a JSON body, for every route that takes one. The bytes are read under the cap (also
 * after decompression), then, before anything walks the text:
 * - they must be UTF-8: a byte that is not is refused (400 `invalid_encoding`), never stored as
 *   replacement characters;
 * - its nesting is measured by one loop over the text, without recursion, and a body nested
 *   deeper than MAX_JSON_DEPTH is refused (422) before JSON.parse, schema checks or domain code
 *   (a week note's check, the change log's JSON.stringify) could run out of stack on it;
 * - an object key `__proto__` is refused (422), so no later spread or merge of the body can
 *   reach an object's prototype (@hapi/bourne: JSON.parse, then an iterative scan when the text
 *   holds the key in any spelling).
 */

/** Deeper than any body the API takes (a week note is at most 8 levels inside its body). */
export const MAX_JSON_DEPTH = 64;

/** The nesting depth of JSON text, counted without parsing it: brackets outside strings. Stops past `max`. */
export function jsonDepth(text: string, max = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > max) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Text of a JSON body as received, or throws the domain error of what is wrong with it. */
export function decodeJsonText(bytes: Uint8Array): string {
  try {
    // A leading BOM is dropped, as JSON parsers drop it.
    return UTF8.decode(bytes);
  } catch {
    throw new Refused(
      'invalid_encoding',
      'The body is not valid UTF-8 text: send JSON encoded as UTF-8 (a byte sequence in it is not a character). Nothing was stored.',
    );
  }
}

/** Parses JSON text within the depth limit; the top level must be an object or an array. */
export function parseJsonText(text: string, what = '(body)'): unknown {
  const depth = jsonDepth(text, MAX_JSON_DEPTH);
  if (depth > MAX_JSON_DEPTH) {
    throw new Invalid(
      [{ in: 'body', name: what, message: `is nested more than ${MAX_JSON_DEPTH} levels deep` }],
      `The JSON is nested more than ${MAX_JSON_DEPTH} levels deep.`,
    );
  }
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[')
    throw new Invalid([{ in: 'body', name: what, message: 'is not a JSON object or array' }], 'The body is not valid JSON.');
  try {
    return Bourne.parse(text, { protoAction: 'error' }) as unknown;
  } catch (err) {
    const proto = err instanceof SyntaxError && /prototype/.test(err.message);
    throw new Invalid(
      [{ in: 'body', name: what, message: proto ? 'has a key __proto__, which is not accepted' : 'is not valid JSON' }],
      proto ? 'The body has a key __proto__, which is not accepted.' : 'The body is not valid JSON.',
    );
  }
}

function decompressor(encoding: string): Readable & NodeJS.WritableStream {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      throw new UnsupportedMedia(`The body's content-encoding ${encoding} is not accepted (identity, gzip, deflate or br).`);
  }
}

/** The body's bytes, at most `limit` of them once decompressed (413 above, checked while reading). */
async function readBytes(ctx: Context, limit: number): Promise<Buffer> {
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  const declared = Number(ctx.get('content-length') || 0);
  if (encoding === 'identity' && declared > limit) throw new TooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > limit) return done(new TooLarge(limit));
      chunks.push(chunk);
      done();
    },
  });
  try {
    if (encoding === 'identity') await pipeline(ctx.req, sink);
    else await pipeline(ctx.req, decompressor(encoding), sink);
  } catch (err) {
    if (err instanceof TooLarge || err instanceof UnsupportedMedia) throw err;
    throw new Invalid(
      [{ in: 'body', name: '(body)', message: 'could not be read (cut off, or not the encoding it declares)' }],
      'The body could not be read.',
    );
  }
  return Buffer.concat(chunks, size);
}

/** The JSON body of a request, or undefined when it has none; `bytes` is its size as read. */
export async function readJsonBody(ctx: Context, limit: number): Promise<{ value: unknown; bytes: number } | undefined> {
  const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
  if (!hasBody) return undefined;
  if (!ctx.is('application/json', 'application/*+json')) throw new UnsupportedMedia('This operation takes an application/json body.');
  const bytes = await readBytes(ctx, limit);
  const text = decodeJsonText(bytes);
  if (text.trim() === '') return undefined;
  return { value: parseJsonText(text), bytes: bytes.length };
}
