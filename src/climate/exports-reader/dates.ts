// Reading the time cells of exports into wall-clock fields: ISO, day-month-year,
// month-day-year (with - / . separators, two- or four-digit years), Excel serial days,
// and separate date and time cells. Which instant a wall clock is, is local-time.ts's job.
import type { DateOrder } from './types.js';
import { systemClock } from '../../clock.js';

export interface WallClock {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  ms: number;
  /** Minutes east of UTC when the cell carries an offset or Z; null for wall-clock time. */
  offset: number | null;
}

const DATE_TIME =
  /^(\d{1,4})([-/.])(\d{1,2})\2(\d{1,4})(?:(?:T|\s+)(\d{1,2})[:.](\d{2})(?:[:.](\d{2})(?:[.,](\d{1,6}))?)?(?:\s*([AaPp][Mm]))?)?(?:\s*(Z|[+-]\d{2}(?::?\d{2})?))?$/;
const TIME_ONLY = /^(\d{1,2})[:.](\d{2})(?:[:.](\d{2})(?:[.,](\d{1,6}))?)?\s*([AaPp][Mm])?$/;
const SERIAL = /^\d{5}(?:\.\d+)?$/;

/** Parts of a date cell before the day/month order is known. */
export interface DateParts {
  a: number;
  b: number;
  c: number;
  aDigits: number;
  cDigits: number;
  sep: string;
  time: [number, number, number, number] | null;
  offset: number | null;
  /** The month was written as a name ('15-sep-2020', 'Sep 15, 2020'): the order is not in doubt. */
  named: boolean;
}

// Month names and abbreviations in English, Dutch, German and Danish, by their first three letters.
const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  mrt: 3,
  maa: 3,
  mär: 3,
  apr: 4,
  may: 5,
  mei: 5,
  mai: 5,
  maj: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  okt: 10,
  nov: 11,
  dec: 12,
  dez: 12,
};
const DAY_MONTH_NAME = /^(\d{1,2})[-\s./]+([A-Za-zäÄ]{3,9})\.?[-\s./,]+(\d{4}|\d{2})(?=$|[T\s])/;
const MONTH_NAME_DAY = /^([A-Za-zäÄ]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4}|\d{2})(?=$|[T\s])/;

/** '15-sep-2020 12:00' → '2020-09-15 12:00'; null when the cell has no month name. */
function monthNameToIso(cell: string): string | null {
  let day: string, month: string, year: string;
  let m = DAY_MONTH_NAME.exec(cell);
  if (m) [day, month, year] = [m[1]!, m[2]!, m[3]!];
  else {
    m = MONTH_NAME_DAY.exec(cell);
    if (!m) return null;
    [month, day, year] = [m[1]!, m[2]!, m[3]!];
  }
  const rest = cell.slice(m[0].length);
  const mo = MONTHS[month.toLowerCase().slice(0, 3)];
  if (!mo) return null;
  const y = fullYear(+year, year.length);
  return `${y}-${String(mo).padStart(2, '0')}-${day.padStart(2, '0')}${rest}`;
}

/** No date or time cell is longer; longer cells are not even matched (keeps regex cost linear and small). */
const MAX_TIME_CELL = 64;

export function splitDateCell(cell: string): DateParts | null {
  if (cell.length > MAX_TIME_CELL) return null;
  let t = cell.trim();
  let named = false;
  const c0 = t.charCodeAt(0);
  if ((c0 >= 65 && c0 <= 90) || (c0 >= 97 && c0 <= 122) || /^\d{1,2}[-\s./]+[A-Za-zäÄ]/.test(t)) {
    const iso = monthNameToIso(t);
    if (iso === null) return null;
    t = iso;
    named = true;
  }
  const m = DATE_TIME.exec(t);
  if (!m) return null;
  let time: DateParts['time'] = null;
  if (m[5] !== undefined) {
    let h = +m[5];
    if (m[9]) h = ampm(h, m[9]);
    time = [h, +m[6]!, m[7] ? +m[7] : 0, m[8] ? Math.round(+('0.' + m[8]) * 1000) : 0];
  }
  return {
    a: +m[1]!,
    b: +m[3]!,
    c: +m[4]!,
    aDigits: m[1]!.length,
    cDigits: m[4]!.length,
    sep: m[2]!,
    time,
    offset: m[10] ? parseOffset(m[10]) : null,
    named,
  };
}

function ampm(h: number, marker: string): number {
  const pm = marker.toLowerCase() === 'pm';
  if (h === 12) return pm ? 12 : 0;
  return pm ? h + 12 : h;
}

function parseOffset(s: string): number {
  if (s === 'Z') return 0;
  const sign = s[0] === '-' ? -1 : 1;
  const digits = s.slice(1).replace(':', '');
  return sign * (+digits.slice(0, 2) * 60 + (digits.length > 2 ? +digits.slice(2, 4) : 0));
}

/**
 * Two-digit years are this century unless that puts them more than a year in the future. The
 * reader runs on a thread of its own, without the service's clock: the year comes from the system
 * clock, which decides only a two-digit year within a year of the turn of a century.
 */
export function fullYear(y: number, digits: number, nowYear = new Date(systemClock.now()).getUTCFullYear()): number {
  if (digits > 2) return y;
  const century = Math.floor(nowYear / 100) * 100;
  return century + y > nowYear + 1 ? century - 100 + y : century + y;
}

export type CellOrder = 'ymd' | DateOrder;

export function wallFromParts(p: DateParts, order: CellOrder): WallClock | null {
  let y: number, mo: number, d: number;
  if (order === 'ymd') {
    if (p.aDigits !== 4) return null;
    [y, mo, d] = [p.a, p.b, p.c];
  } else {
    if (p.aDigits > 2) return null;
    y = fullYear(p.c, p.cDigits);
    [d, mo] = order === 'dmy' ? [p.a, p.b] : [p.b, p.a];
  }
  const [h, mi, s, ms] = p.time ?? [0, 0, 0, 0];
  const w: WallClock = { y, mo, d, h, mi, s, ms, offset: p.offset };
  return validWall(w) ? w : null;
}

export function validWall(w: WallClock): boolean {
  if (w.mo < 1 || w.mo > 12 || w.d < 1 || w.h > 24 || w.mi > 59 || w.s > 60 || w.y < 1900 || w.y > 2200) return false;
  if (w.h === 24 && (w.mi > 0 || w.s > 0)) return false;
  return w.d <= daysInMonth(w.y, w.mo);
}

function daysInMonth(y: number, mo: number): number {
  return new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

export function parseTimeCell(cell: string): [number, number, number, number] | null {
  if (cell.length > MAX_TIME_CELL) return null;
  const t = cell.trim();
  const m = TIME_ONLY.exec(t);
  if (m) {
    let h = +m[1]!;
    if (m[5]) h = ampm(h, m[5]);
    const r: [number, number, number, number] = [h, +m[2]!, m[3] ? +m[3] : 0, m[4] ? Math.round(+('0.' + m[4]) * 1000) : 0];
    return r[0] <= 24 && r[1] < 60 && r[2] < 61 ? r : null;
  }
  // A time formatted as an Excel day fraction.
  if (/^0?\.\d+$|^0$/.test(t)) {
    const f = +t;
    if (f >= 0 && f < 1) {
      const w = serialToWall(f + 25569);
      return w ? [w.h, w.mi, w.s, w.ms] : null;
    }
  }
  return null;
}

export function isSerialCell(cell: string): boolean {
  if (cell.length > MAX_TIME_CELL || !SERIAL.test(cell.trim())) return false;
  const v = +cell;
  // 1954 to 2119: a wide window that still excludes five-digit readings like 10000 ppm.
  return v >= 20000 && v <= 80000;
}

/**
 * An Excel serial day (days since 1899-12-30 in the 1900 system, 1904-01-01 in the 1904
 * system) as wall-clock fields. Excel serials have no zone: they are wall clocks.
 * Rounded to the millisecond, then to the second when within 1 ms, as Excel stores float days.
 */
export function serialToWall(serial: number, date1904 = false): WallClock | null {
  if (!Number.isFinite(serial)) return null;
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
  let ms = Math.round(serial * 86400000);
  const rem = ((ms % 1000) + 1000) % 1000;
  if (rem <= 1 || rem >= 999) ms = Math.round(ms / 1000) * 1000;
  const dt = new Date(epoch + ms);
  const w: WallClock = {
    y: dt.getUTCFullYear(),
    mo: dt.getUTCMonth() + 1,
    d: dt.getUTCDate(),
    h: dt.getUTCHours(),
    mi: dt.getUTCMinutes(),
    s: dt.getUTCSeconds(),
    ms: dt.getUTCMilliseconds(),
    offset: null,
  };
  return validWall(w) ? w : null;
}

/** What a sample of date cells says about their order. */
export interface OrderEvidence {
  ymd: number;
  firstOver12: number;
  secondOver12: number;
  dayMonth: number;
}

export function emptyEvidence(): OrderEvidence {
  return { ymd: 0, firstOver12: 0, secondOver12: 0, dayMonth: 0 };
}

export function addEvidence(ev: OrderEvidence, p: DateParts): void {
  if (p.aDigits === 4) {
    ev.ymd++;
    return;
  }
  ev.dayMonth++;
  if (p.a > 12) ev.firstOver12++;
  if (p.b > 12) ev.secondOver12++;
}

/** 'ambiguous' when every first and second part is ≤ 12; 'conflict' when both exceed 12 somewhere. */
export function decideOrder(ev: OrderEvidence): CellOrder | 'ambiguous' | 'conflict' | null {
  if (ev.ymd > 0 && ev.dayMonth === 0) return 'ymd';
  if (ev.dayMonth === 0) return null;
  if (ev.ymd > 0) return 'conflict';
  if (ev.firstOver12 > 0 && ev.secondOver12 > 0) return 'conflict';
  if (ev.firstOver12 > 0) return 'dmy';
  if (ev.secondOver12 > 0) return 'mdy';
  return 'ambiguous';
}

export function describeDateFormat(order: CellOrder, sep: string, yearDigits: number, serial: boolean, named = false): string {
  if (serial) return 'Excel serial day';
  if (named) return 'day, month name, year';
  const yy = yearDigits <= 2 ? 'YY' : 'YYYY';
  if (order === 'ymd') return `YYYY${sep}MM${sep}DD`;
  return order === 'dmy' ? `DD${sep}MM${sep}${yy}` : `MM${sep}DD${sep}${yy}`;
}
