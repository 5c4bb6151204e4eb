// One pass over a table's rows with a plan: instants from wall clocks (DST rules), values
// checked and converted, counts of everything skipped.
import { isoWithOffset, wallLabel } from './local-time.js';
import { numberReader, timeReader, type Plan } from './plan.js';
import type { Problem, ReadStats, SkipCounts } from './types.js';

export interface RowOut {
  /** 1-based file row. */
  row: number;
  ms: number;
  at: string;
  /** The first `count` entries are this row's; the arrays are reused for the next row. */
  metrics: string[];
  values: number[];
  count: number;
}

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
  private readonly out: RowOut = { row: 0, ms: 0, at: '', metrics: [], values: [], count: 0 };
  /** Wall-clock order of the file, from its first two distinct times: newest-first files exist. */
  private firstWall = Number.NaN;
  private descending: boolean | null = null;
  firstDataRow = 0;
  lastDataRow = 0;
  minMs = Infinity;
  maxMs = -Infinity;

  constructor(private readonly plan: Plan) {
    this.readTime = timeReader(plan.time, plan.order, plan.serial);
    this.readNumber = numberReader(plan.decimal);
    this.colSkips = plan.selected.map(() => zeroSkips());
    this.stats = {
      rows_read: 0, data_rows: 0, values: 0, skipped: zeroSkips(), skipped_by_column: [], rows_without_time: 0,
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
      if (cells.some((c) => c.trim() !== '')) this.pendingNonData.push(n);
      else this.pendingNonData.push(-n); // blank rows count as trailing only
      return null;
    }
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
      return null;
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
    const out = this.out;
    const metrics = out.metrics;
    const values = out.values;
    let count = 0;
    const sel = this.plan.selected;
    const readNumber = decimal === '.' ? this.readDotNumber : this.readNumber;
    for (let k = 0; k < sel.length; k++) {
      const s = sel[k]!;
      const cell = cells[s.index];
      if (cell === undefined || cell === '' || cell.trim() === '') { this.colSkips[k]!.empty++; continue; }
      const raw = readNumber(cell);
      if (raw === null) { this.colSkips[k]!.not_a_number++; continue; }
      const v = s.apply(raw);
      if (!(v >= s.lo && v <= s.hi)) { this.colSkips[k]!.out_of_range++; continue; }
      metrics[count] = s.metric;
      values[count] = v;
      count++;
    }
    this.stats.values += count;
    out.row = n;
    out.ms = ms;
    out.at = isoWithOffset(ms, offset);
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
      w.push({ code: 'rows_without_time', message: `${this.midNonDataCount} row(s) between data rows have no readable time and are skipped`, count: this.midNonDataCount, rows: this.midNonData });
    }
    if (st.dst.repeated_rows > 0) {
      w.push({ code: 'dst_repeated_hour', message: `wall-clock hour(s) ${st.dst.repeated_hours.join(', ')} occur twice (end of summer time): the first occurrence is read with the summer offset, the second with the winter offset`, count: st.dst.repeated_rows });
    }
    if (st.dst.missing_rows_skipped > 0) {
      w.push({ code: 'dst_missing_hour', message: `wall-clock hour(s) ${st.dst.missing_hours.join(', ')} do not exist in ${this.plan.zone.name} (start of summer time); ${st.dst.missing_rows_skipped} row(s) stamped in them are skipped`, count: st.dst.missing_rows_skipped });
    }
    if (this.duplicateCount > 0) {
      w.push({ code: 'duplicate_times', message: `${this.duplicateCount} row(s) repeat a time already read twice`, count: this.duplicateCount, rows: this.duplicateRows });
    }
    for (let k = 0; k < this.plan.selected.length; k++) {
      const s = this.plan.selected[k]!;
      const c = this.colSkips[k]!;
      if (c.not_a_number > 0) w.push({ code: 'values_not_numbers', message: `column ${s.index + 1} (${s.metric}): ${c.not_a_number} cell(s) are not numbers (NaN, text) and are skipped`, count: c.not_a_number, column: s.index });
      if (c.out_of_range > 0) w.push({ code: 'values_out_of_range', message: `column ${s.index + 1} (${s.metric}): ${c.out_of_range} value(s) outside the plausible range ${s.lo} to ${s.hi} are skipped`, count: c.out_of_range, column: s.index });
    }
    return { trailingRowsDropped: trailing };
  }
}

export { isoWithOffset };
