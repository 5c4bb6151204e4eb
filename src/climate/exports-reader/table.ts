// Opening an export as a table: text (CSV, TSV, semicolon, pipe) streamed row by row, or
// .xlsx read within limits. Everything after this sees rows of text cells.
import { readFile, stat } from 'node:fs/promises';
import { detectDelimiter, parseBlock, DELIMITERS } from './layout.js';
import { detectEncoding, garbageShare, headBytes, ReaderError, recordBlocks, sniffKind, textChunks, type Encoding } from './source.js';
import type { ExportInput, ReaderLimits } from './types.js';
import { readXlsx } from './xlsx.js';

export interface RowBlock {
  rows: string[][];
  decimal: '.' | ',';
}

/**
 * What the scanner reads: rows of cells (quoted text, .xlsx), or unquoted delimited text
 * whose every line is one record, read in place without splitting it into cell strings.
 * A text block holds whole lines; its last line may lack its line end.
 */
export type ScanBlock = ({ kind: 'rows' } & RowBlock) | { kind: 'text'; text: string };

export interface Table {
  kind: 'csv' | 'xlsx';
  encoding: Encoding | null;
  delimiter: string | null;
  quoted: boolean;
  sheet: string | null;
  /** Set once a sheet is chosen among a workbook's: the others and why they were not. */
  otherSheets?: { name: string; reason: string }[];
  /** The first rows, for layout detection. */
  head: string[][];
  /** True when head holds every row of the file. */
  headIsAll: boolean;
  /** Rows from the first, file row 1 first; each call reads the file again. */
  rows(): AsyncGenerator<string[]>;
  /**
   * The same rows in blocks. With decimalComma, a block without any '.' has its commas turned
   * into points before tokenising (one native replace per block instead of one per cell);
   * such a block says decimal '.', the others ','.
   */
  blocks(decimalComma: boolean): AsyncGenerator<RowBlock>;
  /** The same rows for one pass of the scanner: unquoted lines as text, the rest as in blocks(). */
  scanBlocks(decimalComma: boolean): AsyncGenerator<ScanBlock>;
  bytesRead(): number;
}

const HEAD_BYTES = 64 * 1024;
const HEAD_ROWS = 200;

async function inputSize(input: ExportInput): Promise<number> {
  return 'bytes' in input ? input.bytes.length : (await stat(input.path)).size;
}

/** A sheet of a workbook that cannot be read as a table, and why. */
export interface UnreadableSheet {
  sheet: string;
  problem: ReaderError;
}

/**
 * The tables of an export: one for a text file, one per sheet with cells for a workbook (in
 * workbook order), with the sheets that cannot be read apart. The caller picks the table.
 */
export interface OpenedTables {
  tables: Table[];
  unreadable: UnreadableSheet[];
  /** Every sheet's name, in workbook order (empty for a text file). */
  sheetNames: string[];
}

export async function openTables(input: ExportInput, limits: ReaderLimits): Promise<OpenedTables> {
  const head = await headBytes(input, HEAD_BYTES);
  if (head.length === 0) throw new ReaderError('not_a_table', 'the file is empty');
  if (sniffKind(head) === 'zip') return openXlsx(input, limits);
  return { tables: [await openTable(input, limits, head)], unreadable: [], sheetNames: [] };
}

async function openTable(input: ExportInput, limits: ReaderLimits, head: Uint8Array): Promise<Table> {
  const kind = sniffKind(head);
  if (kind === 'ole') throw new ReaderError('unsupported_format', 'an old binary Excel file (.xls): save it as .xlsx or CSV');
  const enc = detectEncoding(head);
  if (enc === 'utf-32') throw new ReaderError('unsupported_encoding', 'UTF-32 text: save the export as UTF-8, UTF-16 or Windows-1252');
  if (!enc) throw new ReaderError('not_a_table', "the file is not text: it holds zero bytes in no text encoding's pattern");
  const headText = new TextDecoder(enc.encoding).decode(head, { stream: true });
  if (garbageShare(headText) > 0.01)
    throw new ReaderError('not_a_table', 'the file is not text: it holds control characters or bytes that decode to nothing');
  // A first line with more delimiters than columns allowed is refused before it is read to its end.
  const firstLineEnd = headText.indexOf('\n');
  const firstLine = firstLineEnd === -1 ? headText : headText.slice(0, firstLineEnd);
  for (const d of DELIMITERS) {
    const n = firstLine.split(d).length - 1;
    if (n >= limits.maxColumns) throw new ReaderError('too_many_columns', `the first line has more than ${limits.maxColumns} columns`);
  }

  let bytes = 0;
  const onBytes = (n: number) => {
    bytes += n;
  };
  // The head: whole records up to about HEAD_BYTES; reading stops there.
  let headTextWhole = '';
  let ended = true;
  try {
    for await (const block of recordBlocks(textChunks(input, enc, onBytes), { maxLineChars: limits.maxLineChars })) {
      headTextWhole += block;
      if (headTextWhole.length >= HEAD_BYTES) {
        ended = false;
        break;
      }
    }
  } catch (err) {
    if (err instanceof ReaderError) err.bytesRead = bytes;
    throw err;
  }
  const size = await inputSize(input);
  let text = headTextWhole;
  let sepHint: string | null = null;
  const sepLine = /^sep=(.)\r?\n/.exec(text);
  if (sepLine) {
    sepHint = sepLine[1]!;
    text = text.slice(sepLine[0].length);
  }
  const delimiter = sepHint ?? detectDelimiter(text);
  if (!delimiter) throw new ReaderError('not_a_table', 'no delimiter (, ; tab |) splits the lines into columns');
  const allHeadRows = toRows(text, delimiter);
  const headIsAll = ended && bytes >= size && allHeadRows.length <= HEAD_ROWS;
  const headRows = allHeadRows.slice(0, HEAD_ROWS);
  if (sepLine) headRows.unshift([sepLine[0].trim()]);
  checkColumns(headRows, limits);
  const quoted = text.includes('"');
  const textEnc: Encoding = enc;
  const delim: string = delimiter;
  return {
    kind: 'csv',
    encoding: enc,
    delimiter,
    quoted,
    sheet: null,
    head: headRows,
    headIsAll,
    bytesRead: () => bytes,
    blocks,
    scanBlocks,
    async *rows() {
      for await (const b of blocks(false)) yield* b.rows;
    },
  };

  async function* blocks(decimalComma: boolean): AsyncGenerator<RowBlock> {
    bytes = 0;
    let first = true;
    for await (const text of recordBlocks(textChunks(input, textEnc, onBytes), { maxLineChars: limits.maxLineChars })) {
      const convert = decimalComma && text.indexOf('.') === -1;
      const rows = toRows(convert ? text.replaceAll(',', '.') : text, delim);
      if (first && sepLine && rows.length > 0) rows[0] = [sepLine[0].trim()];
      first = false;
      checkColumns(rows, limits);
      yield { rows, decimal: convert ? '.' : decimalComma ? ',' : '.' };
    }
  }

  async function* scanBlocks(decimalComma: boolean): AsyncGenerator<ScanBlock> {
    bytes = 0;
    let first = true;
    for await (const text of recordBlocks(textChunks(input, textEnc, onBytes), { maxLineChars: limits.maxLineChars })) {
      // The same test toRows makes for splitting natively: what it would split, the scanner reads in place.
      const body = text.slice(0, bodyEnd(text));
      if (!(first && sepLine) && body.indexOf('"') === -1 && body.indexOf('\n') !== -1) {
        first = false;
        checkLineColumns(text, delim, limits);
        yield { kind: 'text', text };
        continue;
      }
      const convert = decimalComma && text.indexOf('.') === -1;
      const rows = toRows(convert ? text.replaceAll(',', '.') : text, delim);
      if (first && sepLine && rows.length > 0) rows[0] = [sepLine[0].trim()];
      first = false;
      checkColumns(rows, limits);
      yield { kind: 'rows', rows, decimal: convert ? '.' : decimalComma ? ',' : '.' };
    }
  }
}

/** Where a block's text ends without its final line end. */
function bodyEnd(block: string): number {
  if (block.endsWith('\r\n')) return block.length - 2;
  if (block.endsWith('\n') || block.endsWith('\r')) return block.length - 1;
  return block.length;
}

/** checkColumns for a text block: only a line at least maxColumns long can hold more cells. */
function checkLineColumns(text: string, delimiter: string, limits: ReaderLimits): void {
  const max = limits.maxColumns;
  if (text.length < max) return;
  for (let from = 0; from < text.length;) {
    let nl = text.indexOf('\n', from);
    if (nl === -1) nl = text.length;
    if (nl - from >= max) {
      let cells = 1;
      for (let d = text.indexOf(delimiter, from); d !== -1 && d < nl; d = text.indexOf(delimiter, d + 1)) cells++;
      if (cells > max) throw new ReaderError('too_many_columns', `a row has ${cells} columns; at most ${max} are read`);
    }
    from = nl + 1;
  }
}

function toRows(block: string, delimiter: string): string[][] {
  const end = bodyEnd(block);
  if (end === 0) return block.length > 0 ? [['']] : [];
  const body = block.slice(0, end);
  // Without a quote character, CSV is plain splitting: done natively it is about twice as fast
  // as the tokeniser. Anything quoted goes through papaparse.
  if (body.indexOf('"') === -1 && body.indexOf('\n') !== -1) {
    const lines = body.split('\n');
    const rows: string[][] = new Array(lines.length);
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      rows[i] = (l.charCodeAt(l.length - 1) === 13 ? l.slice(0, -1) : l).split(delimiter);
    }
    return rows;
  }
  return parseBlock(body, delimiter);
}

function checkColumns(rows: string[][], limits: ReaderLimits): void {
  for (const r of rows) {
    if (r.length > limits.maxColumns)
      throw new ReaderError('too_many_columns', `a row has ${r.length} columns; at most ${limits.maxColumns} are read`);
  }
}

async function openXlsx(input: ExportInput, limits: ReaderLimits): Promise<OpenedTables> {
  const size = await inputSize(input);
  if (size > limits.maxXlsxBytes) {
    throw new ReaderError(
      'xlsx_too_large',
      `the workbook is ${Math.round(size / 1048576)} MiB; at most ${Math.round(limits.maxXlsxBytes / 1048576)} MiB is read`,
    );
  }
  const buf = 'bytes' in input ? input.bytes : await readFile(input.path);
  const sheets = await readXlsx(buf, limits);
  const unreadable = sheets.flatMap((s) => (s.problem ? [{ sheet: s.sheet, problem: s.problem }] : []));
  const tables = sheets
    .filter((s) => !s.problem)
    .map((sheet): Table => {
      let head: string[][] | null = null;
      return {
        kind: 'xlsx',
        encoding: null,
        delimiter: null,
        quoted: false,
        sheet: sheet.sheet,
        // A sheet's text is made when its head is first looked at.
        get head() {
          return (head ??= sheet.rows().slice(0, HEAD_ROWS));
        },
        get headIsAll() {
          return sheet.rows().length <= HEAD_ROWS;
        },
        bytesRead: () => buf.length,
        async *rows() {
          yield* sheet.rows();
        },
        async *blocks() {
          yield { rows: sheet.rows(), decimal: '.' };
        },
        async *scanBlocks() {
          yield { kind: 'rows', rows: sheet.rows(), decimal: '.' };
        },
      };
    });
  return { tables, unreadable, sheetNames: sheets.map((s) => s.sheet) };
}
