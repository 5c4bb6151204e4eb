// .xlsx exports read with SheetJS 0.20 (@e965/xlsx) after the zip guard has passed them.
// Cells become text: numbers in '.' decimal notation, date cells as wall-clock ISO text
// computed from the serial day, never through a JS Date in the process zone.
import * as XLSX from '@e965/xlsx';
import { serialToWall } from './dates.js';
import { ReaderError } from './source.js';
import type { ReaderLimits } from './types.js';
import { checkZip } from './zip-guard.js';

/** One sheet with cells: its name, and its rows as text (made when first asked for). */
export interface SheetRows {
  sheet: string;
  /** Null when the sheet can be read; else why not (too many columns). */
  problem: ReaderError | null;
  rows(): string[][];
}

/** A date format with no time of day in it (Excel's h, s, AM/PM; m alone is the month). */
function dateOnlyFormat(format: string): boolean {
  const f = format
    .replace(/"[^"]*"/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\\./g, '')
    .toLowerCase();
  return !/[hs]|am\/pm|a\/p/.test(f);
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function cellText(cell: XLSX.CellObject | undefined, date1904: boolean): string {
  if (!cell || cell.v === undefined || cell.v === null) return '';
  switch (cell.t) {
    case 'n': {
      const v = cell.v as number;
      if (cell.z !== undefined && XLSX.SSF.is_date(cell.z as string)) {
        const w = serialToWall(v, date1904);
        if (!w) return String(v);
        if (v < 1) return `${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}`;
        // A cell shown as a date is a day (a row of daily values), not that day's midnight reading.
        if (Number.isInteger(v) && dateOnlyFormat(cell.z as string)) return `${w.y}-${pad(w.mo)}-${pad(w.d)}`;
        return `${w.y}-${pad(w.mo)}-${pad(w.d)}T${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}${w.ms ? '.' + pad(w.ms, 3) : ''}`;
      }
      return String(v);
    }
    case 's':
      return String(cell.v);
    case 'b':
      return cell.v ? 'TRUE' : 'FALSE';
    case 'e':
      return '';
    default:
      return String(cell.v);
  }
}

/** Every sheet with cells, in workbook order. */
export async function readXlsx(buf: Uint8Array, limits: ReaderLimits): Promise<SheetRows[]> {
  if (buf.length > limits.maxXlsxBytes) {
    throw new ReaderError(
      'xlsx_too_large',
      `the workbook is ${Math.round(buf.length / 1048576)} MiB; at most ${Math.round(limits.maxXlsxBytes / 1048576)} MiB is read`,
    );
  }
  await checkZip(buf, limits.maxXlsxInflatedBytes);
  let wb: XLSX.WorkBook;
  try {
    wb = XLSX.read(buf, {
      type: 'buffer',
      dense: true,
      cellDates: false,
      cellNF: true,
      cellHTML: false,
      cellFormula: false,
      sheetRows: limits.maxXlsxRows,
      WTF: false,
    });
  } catch (err) {
    throw new ReaderError('not_a_table', `the workbook cannot be read: ${(err as Error).message}`);
  }
  const date1904 = !!wb.Workbook?.WBProps?.date1904;
  const sheets: SheetRows[] = [];
  for (const name of wb.SheetNames) {
    const ws = wb.Sheets[name];
    if (!ws || !ws['!ref']) continue;
    const range = XLSX.utils.decode_range(ws['!ref']);
    const cols = range.e.c - range.s.c + 1;
    let rows: string[][] | null = null;
    sheets.push({
      sheet: name,
      problem:
        cols > limits.maxColumns
          ? new ReaderError('too_many_columns', `sheet ${name} has ${cols} columns; at most ${limits.maxColumns} are read`)
          : null,
      rows() {
        if (rows) return rows;
        const data = (ws['!data'] ?? []) as (XLSX.CellObject | undefined)[][];
        rows = [];
        for (let r = range.s.r; r <= range.e.r; r++) {
          const src = data[r] ?? [];
          const row: string[] = new Array(cols);
          for (let c = range.s.c; c <= range.e.c; c++) row[c - range.s.c] = cellText(src[c], date1904);
          rows.push(row);
        }
        return rows;
      },
    });
  }
  if (sheets.length === 0) throw new ReaderError('not_a_table', 'the workbook has no sheet with cells');
  return sheets;
}
