// One pass over a table's rows with a plan: instants from wall clocks (DST rules), values
// checked and converted, counts of everything skipped.
import type { WallClock } from './dates.js';
import { timeColumns } from './layout.js';
import { isoWithOffset, wallLabel } from './local-time.js';
import { numberReader, timeReader, type Plan } from './plan.js';
import type { Problem, ReadStats, SkipCounts } from './types.js';

export interface RowOut {
  /** 1-based file row. */
  row: number;
  ms: number;
  /** ISO instant with the offset; '' when the scanner was made without `at`. */
  at: string;
  /** The first `count` entries are this row's; the arrays are reused for the next row. */
  metrics: string[];
  values: number[];
  /** For each value, its column's position in plan.selected. */
  cols: number[];
  count: number;
}

const EMPTY = 0;
const NUMBER = 1;
const NOT_A_NUMBER = 2;
const POW10 = Array.from({ length: 16 }, (_, i) => 10 ** i);

const ROWS_LISTED = 20;

function zeroSkips(): SkipCounts {
  return { empty: 0, not_a_number: 0, out_of_range: 0 };
}

export class Scanner {
  readonly stats: ReadStats;
  readonly warnings: Problem[] = [];
  private readonly readTime;
  private readonly readNumber;
  private readonly readDotNumber = numberReader('.');
  private readonly withAt: boolean;
  private readonly colSkips: SkipCounts[];
  private readonly seenRepeated = new Map<number, number>();
  private readonly repeatedHours = new Set<string>();
  private readonly missingHours = new Set<string>();
  private pendingNonData: number[] = [];
  private midNonData: number[] = [];
  private midNonDataCount = 0;
  private duplicateRows: number[] = [];
  private duplicateCount = 0;
  private row = 0;
  private readonly out: RowOut = { row: 0, ms: 0, at: '', metrics: [], values: [], cols: [], count: 0 };
  private curMs = 0;
  private curOffset = 0;
  // pushText's per-line state, reused from line to line.
  private readonly selIndex: number[];
  private readonly cellState: Uint8Array;
  private readonly cellRaw: Float64Array;
  private readonly timeCols: number[];
  private readonly timeCells: (string | undefined)[];
  private readonly isTimeCol: Uint8Array;
  private readonly lastCol: number;
  private readonly delimiter: string;
  private readonly delimCode: number;
  private readonly decimalCode: number;
  /** Wall-clock order of the file, from its first two distinct times: newest-first files exist. */
  private firstWall = Number.NaN;
  private descending: boolean | null = null;
  firstDataRow = 0;
  lastDataRow = 0;
  minMs = Infinity;
  maxMs = -Infinity;

  /**
   * `delimiter`: the table's, for pushText. `withAt`: false when the caller needs only `ms`
   * (hourly values), which spares formatting an ISO string per row.
   */
  constructor(
    private readonly plan: Plan,
    options: { delimiter?: string | null; withAt?: boolean } = {},
  ) {
    this.readTime = timeReader(plan.time, plan.order, plan.serial);
    this.readNumber = numberReader(plan.decimal);
    this.colSkips = plan.selected.map(() => zeroSkips());
    this.withAt = options.withAt ?? true;
    this.delimiter = options.delimiter ?? ',';
    this.delimCode = this.delimiter.charCodeAt(0);
    this.decimalCode = plan.decimal.charCodeAt(0);
    this.selIndex = plan.selected.map((s) => s.index);
    this.cellState = new Uint8Array(plan.selected.length);
    this.cellRaw = new Float64Array(plan.selected.length);
    this.timeCols = timeColumns(plan.time);
    this.lastCol = Math.max(-1, ...this.selIndex, ...this.timeCols);
    this.isTimeCol = new Uint8Array(this.lastCol + 1);
    for (const c of this.timeCols) this.isTimeCol[c] = 1;
    this.timeCells = new Array(this.lastCol + 1).fill(undefined);
    this.stats = {
      rows_read: 0,
      data_rows: 0,
      values: 0,
      skipped: zeroSkips(),
      skipped_by_column: [],
      rows_without_time: 0,
      dst: { repeated_hours: [], repeated_rows: 0, missing_hours: [], missing_rows_skipped: 0 },
    };
  }

  /** Feeds one file row; returns its readings (valid until the next push), or null when the row has no time. */
  push(cells: string[], decimal: '.' | ',' = this.plan.decimal): RowOut | null {
    const n = ++this.row;
    this.stats.rows_read++;
    if (n <= this.plan.firstDataRow) return null;
    const wall = this.readTime(cells);
    if (!wall) {
      this.noTime(
        n,
        cells.some((c) => c.trim() !== ''),
      );
      return null;
    }
    if (!this.place(n, wall)) return null;
    const out = this.out;
    const metrics = out.metrics;
    const values = out.values;
    const cols = out.cols;
    let count = 0;
    const sel = this.plan.selected;
    const readNumber = decimal === '.' ? this.readDotNumber : this.readNumber;
    for (let k = 0; k < sel.length; k++) {
      const s = sel[k]!;
      const cell = cells[s.index];
      if (cell === undefined || cell === '' || cell.trim() === '') {
        this.colSkips[k]!.empty++;
        continue;
      }
      const raw = readNumber(cell);
      if (raw === null) {
        this.colSkips[k]!.not_a_number++;
        continue;
      }
      const v = s.apply(raw);
      if (!(v >= s.lo && v <= s.hi)) {
        this.colSkips[k]!.out_of_range++;
        continue;
      }
      metrics[count] = s.metric;
      values[count] = v;
      cols[count] = k;
      count++;
    }
    return this.emit(n, count);
  }

  /**
   * Feeds a block of unquoted delimited text (whole lines, as table.scanBlocks gives it), with
   * the same result as push() of each line split into cells: only the time cells become
   * strings; plain decimal numbers are read straight from the text, anything else through
   * the same cell reader as push().
   */
  pushText(text: string, onRow: (out: RowOut) => void): void {
    const len = text.length;
    for (let from = 0; from < len;) {
      let nl = text.indexOf('\n', from);
      if (nl === -1) nl = len;
      const end = nl > from && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      const out = this.pushLine(text, from, end);
      if (out) onRow(out);
      from = nl + 1;
    }
  }

  private pushLine(text: string, start: number, end: number): RowOut | null {
    const n = ++this.row;
    this.stats.rows_read++;
    if (n <= this.plan.firstDataRow) return null;
    const sel = this.plan.selected;
    const selIndex = this.selIndex;
    const state = this.cellState;
    const raws = this.cellRaw;
    const tcells = this.timeCells;
    const isTime = this.isTimeCol;
    const lastCol = this.lastCol;
    const delim = this.delimCode;
    const dm = this.decimalCode;
    for (let k = 0; k < sel.length; k++) state[k] = EMPTY;
    for (const c of this.timeCols) tcells[c] = undefined;
    let k = 0;
    let pos = start;
    for (let col = 0; col <= lastCol; col++) {
      const nextSel = k < sel.length && selIndex[k] === col;
      if (!nextSel || isTime[col] === 1) {
        let e = text.indexOf(this.delimiter, pos);
        if (e === -1 || e > end) e = end;
        if (isTime[col] === 1) tcells[col] = text.slice(pos, e);
        if (nextSel) {
          this.slowCell(k, text.slice(pos, e));
          k++;
        }
        if (e >= end) break;
        pos = e + 1;
        continue;
      }
      // A selected cell: [-]digits[mark digits] up to the delimiter is read here, exactly as
      // Number() reads it (an integer below 2^53 divided by an exact power of ten rounds once).
      let i = pos;
      let c = i < end ? text.charCodeAt(i) : delim;
      let fast = false;
      let v: number;
      if (c === delim) {
        state[k] = EMPTY;
        fast = true;
      } else {
        let neg = false;
        if (c === 45) {
          neg = true;
          i++;
        }
        let mant = 0;
        let digits = 0;
        while (i < end && (c = text.charCodeAt(i)) >= 48 && c <= 57) {
          mant = mant * 10 + (c - 48);
          i++;
          digits++;
        }
        let frac = 0;
        if (digits > 0 && i < end && c === dm) {
          i++;
          while (i < end && (c = text.charCodeAt(i)) >= 48 && c <= 57) {
            mant = mant * 10 + (c - 48);
            i++;
            frac++;
          }
        }
        if (
          digits > 0 &&
          digits + frac <= 15 &&
          (i === end || text.charCodeAt(i) === delim) &&
          (frac > 0 || text.charCodeAt(i - 1) !== dm)
        ) {
          v = frac === 0 ? mant : mant / POW10[frac]!;
          raws[k] = neg ? -v : v;
          state[k] = NUMBER;
          fast = true;
        }
      }
      let e = i;
      if (!fast) {
        e = text.indexOf(this.delimiter, pos);
        if (e === -1 || e > end) e = end;
        this.slowCell(k, text.slice(pos, e));
      }
      k++;
      if (e >= end) break;
      pos = e + 1;
    }
    const wall = this.readTime(tcells as string[]);
    if (!wall) {
      this.noTime(
        n,
        text
          .slice(start, end)
          .split(this.delimiter)
          .some((c) => c.trim() !== ''),
      );
      return null;
    }
    if (!this.place(n, wall)) return null;
    const out = this.out;
    const metrics = out.metrics;
    const values = out.values;
    const cols = out.cols;
    let count = 0;
    for (k = 0; k < sel.length; k++) {
      const st = state[k];
      if (st !== NUMBER) {
        if (st === EMPTY) this.colSkips[k]!.empty++;
        else this.colSkips[k]!.not_a_number++;
        continue;
      }
      const s = sel[k]!;
      const v = s.conversion === null ? raws[k]! : s.apply(raws[k]!);
      if (!(v >= s.lo && v <= s.hi)) {
        this.colSkips[k]!.out_of_range++;
        continue;
      }
      metrics[count] = s.metric;
      values[count] = v;
      cols[count] = k;
      count++;
    }
    return this.emit(n, count);
  }

  /** A selected cell the fast path does not read: the same tests as push(). */
  private slowCell(k: number, cell: string): void {
    if (cell === '' || cell.trim() === '') {
      this.cellState[k] = EMPTY;
      return;
    }
    const raw = this.readNumber(cell);
    if (raw === null) {
      this.cellState[k] = NOT_A_NUMBER;
      return;
    }
    this.cellRaw[k] = raw;
    this.cellState[k] = NUMBER;
  }

  /** A row after the header without a readable time: trailing if nothing with a time follows. */
  private noTime(n: number, hasContent: boolean): void {
    if (hasContent) this.pendingNonData.push(n);
    else this.pendingNonData.push(-n); // blank rows count as trailing only
  }

  /** Places a data row in time (DST rules); false when its wall time does not exist. Sets curMs and curOffset. */
  private place(n: number, wall: WallClock): boolean {
    if (this.pendingNonData.length > 0) {
      for (const r of this.pendingNonData) {
        if (r > 0) {
          this.midNonDataCount++;
          if (this.midNonData.length < ROWS_LISTED) this.midNonData.push(r);
        }
      }
      this.pendingNonData = [];
    }
    const zone = this.plan.zone;
    if (this.descending === null) {
      const wallMs = Date.UTC(wall.y, wall.mo - 1, wall.d, wall.h, wall.mi, wall.s, wall.ms);
      if (Number.isNaN(this.firstWall)) this.firstWall = wallMs;
      else if (wallMs !== this.firstWall) this.descending = wallMs < this.firstWall;
    }
    const resolved = zone.resolve(wall);
    let ms: number;
    let offset: number;
    if (resolved.kind === 'missing') {
      this.missingHours.add(wallLabel({ ...wall, mi: 0 }).slice(0, 13));
      this.stats.dst.missing_rows_skipped++;
      return false;
    } else if (resolved.kind === 'repeated') {
      // The same wall time twice: the first is the summer offset, the second the winter one
      // (the other way round in a newest-first file).
      const key = resolved.ms[0];
      const seen = this.seenRepeated.get(key) ?? 0;
      this.seenRepeated.set(key, seen + 1);
      if (seen === 1) this.repeatedHours.add(wallLabel({ ...wall, mi: 0 }).slice(0, 13));
      const i = (seen === 0) !== (this.descending === true) ? 0 : 1;
      if (seen >= 2) {
        this.duplicateCount++;
        if (this.duplicateRows.length < ROWS_LISTED) this.duplicateRows.push(n);
      }
      if (seen === 1) this.stats.dst.repeated_rows++;
      ms = resolved.ms[i];
      offset = resolved.offset[i];
    } else {
      ms = resolved.ms;
      offset = wall.offset === null ? resolved.offset : zone.offsetAt(ms);
    }
    this.stats.data_rows++;
    if (this.firstDataRow === 0) this.firstDataRow = n;
    this.lastDataRow = n;
    if (ms < this.minMs) this.minMs = ms;
    if (ms > this.maxMs) this.maxMs = ms;
    this.curMs = ms;
    this.curOffset = offset;
    return true;
  }

  private emit(n: number, count: number): RowOut {
    const out = this.out;
    this.stats.values += count;
    out.row = n;
    out.ms = this.curMs;
    out.at = this.withAt ? isoWithOffset(this.curMs, this.curOffset) : '';
    out.count = count;
    return out;
  }

  /** Closes the pass: trailing rows, DST and skip reports. */
  finish(): { trailingRowsDropped: number } {
    const trailing = this.pendingNonData.length;
    const st = this.stats;
    st.rows_without_time = this.midNonDataCount;
    st.dst.repeated_hours = [...this.repeatedHours].sort();
    st.dst.missing_hours = [...this.missingHours].sort();
    st.skipped_by_column = this.plan.selected.map((s, k) => ({ index: s.index, metric: s.metric, skipped: this.colSkips[k]! }));
    for (const c of this.colSkips) {
      st.skipped.empty += c.empty;
      st.skipped.not_a_number += c.not_a_number;
      st.skipped.out_of_range += c.out_of_range;
    }
    const w = this.warnings;
    if (this.midNonDataCount > 0) {
      w.push({
        code: 'rows_without_time',
        message: `${this.midNonDataCount} row(s) between data rows have no readable time and are skipped`,
        count: this.midNonDataCount,
        rows: this.midNonData,
      });
    }
    if (st.dst.repeated_rows > 0) {
      w.push({
        code: 'dst_repeated_hour',
        message: `wall-clock hour(s) ${st.dst.repeated_hours.join(', ')} occur twice (end of summer time): the first occurrence is read with the summer offset, the second with the winter offset`,
        count: st.dst.repeated_rows,
      });
    }
    if (st.dst.missing_rows_skipped > 0) {
      w.push({
        code: 'dst_missing_hour',
        message: `wall-clock hour(s) ${st.dst.missing_hours.join(', ')} do not exist in ${this.plan.zone.name} (start of summer time); ${st.dst.missing_rows_skipped} row(s) stamped in them are skipped`,
        count: st.dst.missing_rows_skipped,
      });
    }
    if (this.duplicateCount > 0) {
      w.push({
        code: 'duplicate_times',
        message: `${this.duplicateCount} row(s) repeat a time already read twice`,
        count: this.duplicateCount,
        rows: this.duplicateRows,
      });
    }
    for (let k = 0; k < this.plan.selected.length; k++) {
      const s = this.plan.selected[k]!;
      const c = this.colSkips[k]!;
      if (c.not_a_number > 0)
        w.push({
          code: 'values_not_numbers',
          message: `column ${s.index} (${s.metric}): ${c.not_a_number} cell(s) are not numbers (NaN, text) and are skipped`,
          count: c.not_a_number,
          column: s.index,
        });
      if (c.out_of_range > 0)
        w.push({
          code: 'values_out_of_range',
          message: `column ${s.index} (${s.metric}): ${c.out_of_range} value(s) outside the plausible range ${s.lo} to ${s.hi} are skipped`,
          count: c.out_of_range,
          column: s.index,
        });
    }
    return { trailingRowsDropped: trailing };
  }
}

export { isoWithOffset };
