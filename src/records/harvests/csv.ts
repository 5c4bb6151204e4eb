import Papa from 'papaparse';
import { parseWeek, WEEK_FORMS, type IsoWeek } from '../../time/weeks.js';
import type { FieldIssue as FieldError } from '../../errors.js';
import { NOTE_MAX } from '../common.js';
import { Invalid } from '../../errors.js';
import { HARVEST_KG_MAX } from './schemas.js';

/**
 * Reads a harvest CSV as growers' spreadsheets write it: UTF-8 with or without
 * a BOM, LF or CRLF, quoted notes, `,` or `;` (or tab) as the delimiter, and
 * with `;` a decimal comma (`12,5`). Pure: text in, lines or a 422 out, so the
 * all-or-nothing rule is decided before anything is written.
 */
export interface HarvestLine {
  /** Physical line number in the file (the header is line 1). */
  line: number;
  week: IsoWeek;
  kg: number;
  note: string | null;
}

export const HARVEST_COLUMNS = ['week', 'kg', 'note'] as const;
const REQUIRED = ['week', 'kg'];
/** The 422 lists this many bad lines at most; `bad_lines` says how many there were. */
export const MAX_LISTED_ERRORS = 1000;
/** Bounded work per request: a file above this many harvest lines is refused whole. */
export const MAX_HARVEST_LINES = 100_000;

const fileError = (message: string, detail = `file: ${message}`) => new Invalid([{ in: 'body', name: 'file', message }], detail);

/** Decodes strictly: a file that is not UTF-8 text is refused instead of stored as mojibake. */
export function decodeCsv(bytes: Uint8Array): string {
  if (bytes.includes(0)) throw fileError('is not a text CSV file (it holds NUL bytes)');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw fileError('is not UTF-8 text (save the spreadsheet as "CSV UTF-8")');
  }
  return text;
}

function detectDelimiter(text: string): string {
  const end = text.search(/\r?\n/);
  const header = end === -1 ? text : text.slice(0, end);
  const count = (d: string) => header.split(d).length - 1;
  let best = ',';
  for (const d of [';', '\t']) if (count(d) > count(best)) best = d;
  return best;
}

const DOT_NUMBER = /^\d+(\.\d+)?$/;
const COMMA_NUMBER = /^\d+,\d+$/;

function parseKg(raw: string, decimalComma: boolean): number | null {
  const s = raw.trim();
  if (DOT_NUMBER.test(s)) return Number(s);
  if (decimalComma && COMMA_NUMBER.test(s)) return Number(s.replace(',', '.'));
  return null;
}

export function parseHarvestCsv(input: string | Uint8Array): HarvestLine[] {
  let text = typeof input === 'string' ? input : decodeCsv(input);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') throw fileError('is empty; expected a header line week,kg (and optionally note)');
  const delimiter = detectDelimiter(text);
  const decimalComma = delimiter !== ',';

  let header: string[] | null = null;
  const columns: Record<string, number> = {};
  const lines: HarvestLine[] = [];
  const errors: FieldError[] = [];
  let badLines = 0;
  let tooMany = false;
  let headerProblems: FieldError[] = [];
  const weeks = new Map<string, IsoWeek | null>();
  // Line numbers are physical lines, so a quoted note spanning lines does not shift the ones after it.
  let scanned = 0;
  let newlines = 0;
  let previousEnd = -1;
  const bad = (line: number, message: string) => {
    badLines++;
    if (errors.length < MAX_LISTED_ERRORS) errors.push({ in: 'body', name: `line ${line}`, message });
  };

  Papa.parse<string[]>(text, {
    delimiter,
    skipEmptyLines: false,
    step: (result, p) => {
      const start = previousEnd < 0 ? 0 : previousEnd + 1;
      for (; scanned < start && scanned < text.length; scanned++) {
        const c = text.charCodeAt(scanned);
        // LF, CRLF (counted at its LF) and a lone CR (old spreadsheets) each end a line.
        if (c === 10 || (c === 13 && text.charCodeAt(scanned + 1) !== 10)) newlines++;
      }
      previousEnd = result.meta.cursor;
      const line = newlines + 1;
      const cells = result.data;
      if (cells.every((c) => c.trim() === '')) return;

      if (!header) {
        header = cells.map((c) => c.trim().toLowerCase());
        const problems: FieldError[] = [];
        header.forEach((name, i) => {
          if (!(HARVEST_COLUMNS as readonly string[]).includes(name))
            problems.push({
              in: 'body',
              name: `column ${i + 1}`,
              message: `"${cells[i]!.trim().slice(0, 50)}" is not a harvest column; the columns are week, kg and optionally note (any order)`,
            });
          else if (columns[name] !== undefined) problems.push({ in: 'body', name: `column ${i + 1}`, message: `"${name}" appears twice` });
          else columns[name] = i;
        });
        for (const r of REQUIRED)
          if (columns[r] === undefined)
            problems.push({
              in: 'body',
              name: `column ${r}`,
              message: `the header has no "${r}" column (the header line must name week, kg and optionally note)`,
            });
        if (problems.length) {
          headerProblems = problems;
          p.abort();
        }
        return;
      }

      if (lines.length + badLines >= MAX_HARVEST_LINES) {
        tooMany = true;
        p.abort();
        return;
      }
      if (result.errors.length) {
        bad(line, `cannot be read: ${result.errors[0]!.message.toLowerCase()} (a quote in a note must be doubled, "")`);
        return;
      }
      if (cells.length !== header.length) {
        bad(
          line,
          `has ${cells.length} field${cells.length === 1 ? '' : 's'} where the header has ${header.length} (a note with the delimiter "${delimiter === '\t' ? 'tab' : delimiter}" in it must be quoted)`,
        );
        return;
      }
      const problems: string[] = [];
      const weekText = cells[columns.week!]!.trim();
      // A season file repeats a few dozen weeks; parse each once.
      let week = weeks.get(weekText);
      if (week === undefined) weeks.set(weekText, (week = parseWeek(weekText)));
      if (!week) problems.push(`week: must be ${WEEK_FORMS}`);
      const kg = parseKg(cells[columns.kg!]!, decimalComma);
      if (kg === null || !Number.isFinite(kg)) problems.push(`kg: must be a number ≥ 0${decimalComma ? ' (12.5 or 12,5)' : ' (12.5)'}`);
      else if (kg > HARVEST_KG_MAX) problems.push(`kg: at most ${HARVEST_KG_MAX.toLocaleString('en')} per harvest entry`);
      const rawNote = columns.note === undefined ? '' : cells[columns.note]!;
      if ([...rawNote].length > NOTE_MAX) problems.push(`note: at most ${NOTE_MAX} characters`);
      if (problems.length) {
        bad(line, problems.join('; '));
        return;
      }
      lines.push({ line, week: week!, kg: kg!, note: rawNote.trim() === '' ? null : rawNote });
    },
  });

  if (headerProblems.length)
    throw new Invalid(headerProblems, 'The header line of the harvest file is not week,kg[,note]; nothing was stored.');
  if (tooMany) throw fileError(`has more than ${MAX_HARVEST_LINES} harvest lines; split it into several files`);
  if (badLines) {
    const more = badLines > errors.length ? ` (the first ${errors.length} are listed)` : '';
    throw new Invalid(
      errors,
      `${badLines} line${badLines === 1 ? '' : 's'} of the harvest file ${badLines === 1 ? 'is' : 'are'} not valid${more}; nothing was stored.`,
      'validation_failed',
      { bad_lines: badLines },
    );
  }
  if (!header) throw fileError('is empty; expected a header line week,kg (and optionally note)');
  if (!lines.length) throw fileError('has no harvest lines, only a header', 'The harvest file has no harvest lines: nothing to store.');
  return lines;
}
