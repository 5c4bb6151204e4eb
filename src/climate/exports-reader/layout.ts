// Detecting a table's layout from its first rows: delimiter, decimal separator, header rows
// and their roles, time columns and date format.
import Papa from 'papaparse';
import { parseUnit } from '../../units/units.js';
import { isCompartmentCell } from './columns.js';
import {
  addEvidence,
  decideOrder,
  emptyEvidence,
  isSerialCell,
  parseTimeCell,
  splitDateCell,
  type CellOrder,
  type OrderEvidence,
} from './dates.js';
import type { HeaderRole, TimeSpec } from './types.js';
import { foldHeader, TIME_HEADER } from './vocabulary.js';

export const DELIMITERS = [';', ',', '\t', '|'] as const;

export function parseBlock(text: string, delimiter: string): string[][] {
  const r = Papa.parse<string[]>(text, { delimiter, newline: undefined, skipEmptyLines: false, header: false, dynamicTyping: false });
  return r.data;
}

/**
 * The delimiter that splits the head into the most consistent rows: each candidate is scored by
 * the share of rows having its most common field count (which must be at least 2); ties go
 * to the earlier candidate, so ';' wins over ',' in decimal-comma files.
 */
export function detectDelimiter(head: string): string | null {
  let best: { d: string; score: number; fields: number } | null = null;
  for (const d of DELIMITERS) {
    const rows = parseBlock(head, d).filter((r) => r.some((c) => c.trim() !== ''));
    if (rows.length === 0) continue;
    const counts = new Map<number, number>();
    for (const r of rows) counts.set(r.length, (counts.get(r.length) ?? 0) + 1);
    let modal = 0;
    let modalN = 0;
    for (const [len, n] of counts)
      if (n > modalN || (n === modalN && len > modal)) {
        modal = len;
        modalN = n;
      }
    if (modal < 2) continue;
    const score = modalN / rows.length;
    if (!best || score > best.score + 1e-9) best = { d, score, fields: modal };
  }
  return best?.d ?? null;
}

const COMMA_DECIMAL = /^[+-]?\d+,\d+(?:[eE][+-]?\d+)?$/;
const DOT_DECIMAL = /^[+-]?\d*\.\d+(?:[eE][+-]?\d+)?$/;

export function detectDecimal(rows: string[][], skip: Set<number>, delimiter: string | null): '.' | ',' {
  if (delimiter === ',') return '.';
  let comma = 0;
  let dot = 0;
  for (const r of rows) {
    for (let j = 0; j < r.length; j++) {
      if (skip.has(j)) continue;
      const c = r[j]!.trim();
      if (COMMA_DECIMAL.test(c)) comma++;
      else if (DOT_DECIMAL.test(c)) dot++;
    }
  }
  return comma > dot ? ',' : '.';
}

type CellKind = 'datetime' | 'date' | 'time' | 'serial' | 'other';

function cellKind(cell: string): CellKind {
  const t = cell.trim();
  if (t === '') return 'other';
  const p = splitDateCell(t);
  if (p) return p.time ? 'datetime' : 'date';
  if (parseTimeCell(t) && /[:]/.test(t)) return 'time';
  if (isSerialCell(t)) return 'serial';
  return 'other';
}

export interface TimeDetection {
  spec: TimeSpec;
  firstDataRow: number;
  serial: boolean;
  /** The cell kinds of the stamping column: date-only cells make daily readings. */
  dateOnly: boolean;
}

function headerIs(rows: string[][], firstData: number, col: number, re: RegExp): boolean {
  for (let i = 0; i < firstData; i++) {
    const c = rows[i]?.[col];
    if (
      c &&
      re.test(
        foldHeader(c)
          .replace(/[^a-z0-9æøß ]/g, '')
          .trim(),
      )
    )
      return true;
  }
  return false;
}

/**
 * The first row from which the time cells read as times, and which columns hold them. A row
 * counts as data when it and the row after it (when there is one) have the same kind of
 * time cell in the same column, so a title line with a date does not start the data.
 */
export function detectTime(rows: string[][], maxCols = 50): TimeDetection | null {
  const kinds = rows.map((r) => r.slice(0, maxCols).map(cellKind));
  for (let i = 0; i < rows.length; i++) {
    const k = kinds[i]!;
    const next = kinds[i + 1];
    const same = (j: number, kind: CellKind) =>
      !next || next[j] === kind || (rows[i + 1]!.every((c) => c.trim() === '') && i + 1 === rows.length - 1);
    for (let j = 0; j < k.length; j++) {
      if (k[j] === 'datetime' && same(j, 'datetime')) {
        const end = k.findIndex((kk, jj) => jj > j && kk === 'datetime');
        if (end !== -1 && same(end, 'datetime') && (headerIs(rows, i, j, TIME_HEADER.start) || headerIs(rows, i, end, TIME_HEADER.end))) {
          return {
            spec: { kind: 'period', start_column: j, end_column: end, stamp: 'start' },
            firstDataRow: i,
            serial: false,
            dateOnly: false,
          };
        }
        return { spec: { kind: 'single', column: j }, firstDataRow: i, serial: false, dateOnly: false };
      }
      if ((k[j] === 'date' || k[j] === 'serial') && same(j, k[j]!)) {
        const t = k.findIndex((kk, jj) => jj > j && kk === 'time');
        if (t !== -1 && same(t, 'time')) {
          return {
            spec: { kind: 'date_time', date_column: j, time_column: t },
            firstDataRow: i,
            serial: k[j] === 'serial',
            dateOnly: false,
          };
        }
        if (k[j] === 'date') return { spec: { kind: 'single', column: j }, firstDataRow: i, serial: false, dateOnly: true };
        // A lone five-digit number is an Excel serial only when its header says it is a time.
        if (headerIs(rows, i, j, TIME_HEADER.datetime) || headerIs(rows, i, j, TIME_HEADER.start)) {
          const end = k.findIndex((kk, jj) => jj > j && kk === 'serial');
          if (end !== -1 && headerIs(rows, i, end, TIME_HEADER.end)) {
            return {
              spec: { kind: 'period', start_column: j, end_column: end, stamp: 'start' },
              firstDataRow: i,
              serial: true,
              dateOnly: false,
            };
          }
          return { spec: { kind: 'single', column: j }, firstDataRow: i, serial: true, dateOnly: false };
        }
      }
    }
  }
  return null;
}

export function stampColumn(spec: TimeSpec): number {
  return spec.kind === 'single' ? spec.column : spec.kind === 'date_time' ? spec.date_column : spec.start_column;
}

export function timeColumns(spec: TimeSpec): number[] {
  return spec.kind === 'single'
    ? [spec.column]
    : spec.kind === 'date_time'
      ? [spec.date_column, spec.time_column]
      : [spec.start_column, spec.end_column];
}

export function orderEvidence(rows: string[][], col: number, ev: OrderEvidence = emptyEvidence()): OrderEvidence {
  for (const r of rows) {
    const c = r[col];
    if (!c) continue;
    const p = splitDateCell(c);
    if (p) addEvidence(ev, p);
  }
  return ev;
}

export { decideOrder, type CellOrder };

/**
 * Roles of the rows above the data: the unit row is the one whose cells read as units; the
 * compartment row the one whose cells are compartment names; of the rest the fullest is
 * the name row, and rows with at most one cell are titles.
 */
export function headerRoles(rows: string[][], skipCols: Set<number>): HeaderRole[] {
  const roles: HeaderRole[] = rows.map(() => 'title');
  const stats = rows.map((r) => {
    const cells = r.map((c, j) => ({ c: c.trim(), j })).filter(({ c, j }) => c !== '' && !skipCols.has(j));
    const units = cells.filter(({ c }) => parseUnit(c) !== null).length;
    const comps = cells.filter(({ c }) => isCompartmentCell(c)).length;
    return { filled: cells.length, units, comps };
  });
  let names = -1;
  for (let i = 0; i < rows.length; i++) {
    const s = stats[i]!;
    if (s.filled <= 1 && rows.length > 1) continue;
    if (s.filled > 0 && s.units / s.filled >= 0.5 && rows.length > 1) roles[i] = 'units';
    else if (s.filled > 0 && s.comps / s.filled >= 0.5 && rows.length > 1) roles[i] = 'compartments';
    else if (names === -1 || s.filled > stats[names]!.filled) names = i;
  }
  if (names === -1 && rows.length > 0) {
    // Every row looked like units or compartments: the first full row names the columns.
    names = stats.findIndex((s) => s.filled > 1);
    if (names === -1) names = 0;
  }
  if (names !== -1) roles[names] = 'names';
  return roles;
}
