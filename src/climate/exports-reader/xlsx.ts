// .xlsx exports read with SheetJS 0.20 (@e965/xlsx) after the zip guard has passed them.
// Cells become text: numbers in '.' decimal notation, date cells as wall-clock ISO text
// computed from the serial day, never through a JS Date in the process zone.
import * as XLSX from '@e965/xlsx';
import { serialToWall } from './dates.js';
import { ReaderError } from './source.js';
import type { ReaderLimits } from './types.js';
import { checkZip } from './zip-guard.js';

export interface SheetRows {
  sheet: string;
  rows: string[][];
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

export async function readXlsx(buf: Uint8Array, limits: ReaderLimits): Promise<SheetRows> {
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
  // The sheet with the most rows: exports sometimes put a cover or chart sheet first.
  let best: { name: string; rows: number; cols: number } | null = null;
  for (const name of wb.SheetNames) {
    const ws = wb.Sheets[name];
    if (!ws || !ws['!ref']) continue;
    const r = XLSX.utils.decode_range(ws['!ref']);
    const rows = r.e.r - r.s.r + 1;
    const cols = r.e.c - r.s.c + 1;
    if (!best || rows > best.rows) best = { name, rows, cols };
  }
  if (!best) throw new ReaderError('not_a_table', 'the workbook has no sheet with cells');
  if (best.cols > limits.maxColumns) {
    throw new ReaderError('too_many_columns', `sheet ${best.name} has ${best.cols} columns; at most ${limits.maxColumns} are read`);
  }
  const ws = wb.Sheets[best.name]!;
  const data = (ws['!data'] ?? []) as (XLSX.CellObject | undefined)[][];
  const range = XLSX.utils.decode_range(ws['!ref']!);
  const rows: string[][] = [];
  for (let r = range.s.r; r <= range.e.r; r++) {
    const src = data[r] ?? [];
    const row: string[] = new Array(range.e.c - range.s.c + 1);
    for (let c = range.s.c; c <= range.e.c; c++) row[c - range.s.c] = cellText(src[c], date1904);
    rows.push(row);
  }
  return { sheet: best.name, rows };
}
