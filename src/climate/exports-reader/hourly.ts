// Hourly values from finer readings. Hours are UTC hours of real instants, so a repeated or
// missing wall-clock hour in autumn or spring neither merges two hours nor invents one.
import { CLIMATE_METRICS } from '../metrics.js';
import { ZoneClock } from './local-time.js';
import type { Reading } from './types.js';

export interface HourlyValue {
  /** The hour's start as an ISO instant (in the given zone's offset, else UTC). */
  hour: string;
  metric: string;
  value: number;
  /** Readings that made the value. */
  count: number;
}

import type { ReadingColumns } from './types.js';

const HOUR = 3_600_000;
const M = CLIMATE_METRICS.length;
/** A metric's position in CLIMATE_METRICS, by name. */
export const METRIC_INDEX: ReadonlyMap<string, number> = new Map(CLIMATE_METRICS.map((m, i) => [m.name, i]));
const BY_NAME_ORDER = CLIMATE_METRICS.map((m, i) => [m.name, i] as const)
  .sort((a, b) => (a[0] < b[0] ? -1 : 1))
  .map(([, i]) => i);
const CIRCULAR = CLIMATE_METRICS.map((m) => m.aggregate === 'circular_mean');
const LAST = CLIMATE_METRICS.map((m) => m.aggregate === 'last');

/**
 * Mean for states, sum for amounts, circular mean for directions, the last value for a day's
 * totals (per metrics.ts), in flat typed arrays (hour × metric): 12 bytes per metric and hour
 * seen, whatever the number of readings (a year of hours is about 3 MB). For a circular metric
 * `sum` holds the sines and `cos` the cosines; for a `last` metric `cos` holds the last value.
 */
export class HourlyAccumulator {
  private readonly slotOf = new Map<number, number>();
  private readonly hours: number[] = [];
  private cap = 256;
  private sum = new Float64Array(this.cap * M);
  private cos = new Float64Array(this.cap * M);
  private n = new Uint32Array(this.cap * M);
  private lastHour = Number.NaN;
  private lastBase = 0;
  /** Slots below this were handed out by `take`. */
  private taken = 0;
  /**
   * A reading arrived for an hour already handed out by `take`: the file is not in time
   * order, and what was taken is not that hour's value. Whoever took it starts over.
   */
  outOfOrder = false;

  /** The slot's first index in the arrays for the hour holding `ms`. */
  private base(ms: number): number {
    const h = Math.floor(ms / HOUR);
    if (h === this.lastHour) return this.lastBase;
    let s = this.slotOf.get(h);
    if (s !== undefined && s < this.taken) this.outOfOrder = true;
    if (s === undefined) {
      s = this.hours.length;
      this.hours.push(h);
      this.slotOf.set(h, s);
      if (s >= this.cap) this.grow();
    }
    this.lastHour = h;
    this.lastBase = s * M;
    return this.lastBase;
  }

  private grow(): void {
    this.cap *= 2;
    const g = <T extends Float64Array | Uint32Array>(a: T, b: T): T => {
      b.set(a);
      return b;
    };
    this.sum = g(this.sum, new Float64Array(this.cap * M));
    this.cos = g(this.cos, new Float64Array(this.cap * M));
    this.n = g(this.n, new Uint32Array(this.cap * M));
  }

  /** One reading; `metric` is its index in CLIMATE_METRICS. */
  add(ms: number, metric: number, value: number): void {
    const k = this.base(ms) + metric;
    this.n[k]!++;
    if (LAST[metric]) this.cos[k] = value;
    else if (CIRCULAR[metric]) {
      const rad = (value * Math.PI) / 180;
      this.sum[k]! += Math.sin(rad);
      this.cos[k]! += Math.cos(rad);
    } else {
      this.sum[k]! += value;
    }
  }

  /** The values of one row (all at `ms`): `metrics[cols[i]]` is the metric of `values[i]`, -1 for one outside the vocabulary. */
  addRow(ms: number, cols: readonly number[], metrics: readonly number[], values: readonly number[], count: number): void {
    const base = this.base(ms);
    const n = this.n;
    const sum = this.sum;
    for (let i = 0; i < count; i++) {
      const mi = metrics[cols[i]!]!;
      if (mi < 0) continue;
      const k = base + mi;
      n[k]!++;
      if (LAST[mi]) this.cos[k] = values[i]!;
      else if (CIRCULAR[mi]) {
        const rad = (values[i]! * Math.PI) / 180;
        sum[k]! += Math.sin(rad);
        this.cos[k]! += Math.cos(rad);
      } else {
        sum[k]! += values[i]!;
      }
    }
  }

  /** Hours seen so far, and how many of them `take` handed out. */
  get hourCount(): number {
    return this.hours.length;
  }

  get takenCount(): number {
    return this.taken;
  }

  /**
   * The values of the hours not yet taken, up to hour number `upTo` (in the order the hours
   * were first seen: time order for an export read front to back or back to front), metrics
   * by name, with each metric as its index in CLIMATE_METRICS; they count as taken from now
   * on. An import that writes while it reads takes all hours but the last one seen, the
   * one the next rows may still add to.
   */
  take(upTo: number): IndexedColumns {
    const end = Math.min(upTo, this.hours.length);
    let count = 0;
    for (let k = this.taken * M; k < end * M; k++) if (this.n[k]! > 0) count++;
    const out: IndexedColumns = {
      length: count,
      ms: new Float64Array(count),
      metric: new Uint8Array(count),
      value: new Float64Array(count),
    };
    let i = 0;
    for (let s = this.taken; s < end; s++) {
      const ms = this.hours[s]! * HOUR;
      for (const mi of BY_NAME_ORDER) {
        const k = s * M + mi;
        const c = this.n[k]!;
        if (c === 0) continue;
        out.ms[i] = ms;
        out.metric[i] = mi;
        out.value[i++] = this.valueAt(k, mi, c);
      }
    }
    this.taken = Math.max(this.taken, end);
    return out;
  }

  /** Number of hourly values (hour and metric with at least one reading). */
  get size(): number {
    let c = 0;
    const n = this.n;
    for (let k = 0, end = this.hours.length * M; k < end; k++) if (n[k]! > 0) c++;
    return c;
  }

  /** Slots in time order. */
  private order(): number[] {
    return this.hours
      .map((h, s) => [h, s] as const)
      .sort((a, b) => a[0] - b[0])
      .map(([, s]) => s);
  }

  private valueAt(k: number, mi: number, count: number): number {
    if (LAST[mi]) return this.cos[k]!;
    if (CIRCULAR[mi]) {
      const deg = (Math.atan2(this.sum[k]! / count, this.cos[k]! / count) * 180) / Math.PI;
      return deg < 0 ? deg + 360 : deg;
    }
    return CLIMATE_METRICS[mi]!.aggregate === 'sum' ? this.sum[k]! : this.sum[k]! / count;
  }

  /** The values as objects, sorted by hour, then metric name. */
  values(options: { timeZone?: string } = {}): HourlyValue[] {
    const zone = options.timeZone ? new ZoneClock(options.timeZone) : null;
    const out: HourlyValue[] = [];
    for (const s of this.order()) {
      const ms = this.hours[s]! * HOUR;
      const hour = zone ? zone.iso(ms) : new Date(ms).toISOString().replace('.000Z', 'Z');
      for (const mi of BY_NAME_ORDER) {
        const k = s * M + mi;
        const count = this.n[k]!;
        if (count > 0) out.push({ hour, metric: CLIMATE_METRICS[mi]!.name, value: this.valueAt(k, mi, count), count });
      }
    }
    return out;
  }

  /** The same values in the same order (`ms`: the hour's start), as columns of at most `size` values, made as they are asked for. */
  *columns(size: number): Generator<ReadingColumns> {
    let batch = newColumns(size);
    for (const s of this.order()) {
      const ms = this.hours[s]! * HOUR;
      for (const mi of BY_NAME_ORDER) {
        const k = s * M + mi;
        const count = this.n[k]!;
        if (count === 0) continue;
        const i = batch.length++;
        batch.ms[i] = ms;
        batch.metric[i] = CLIMATE_METRICS[mi]!.name;
        batch.value[i] = this.valueAt(k, mi, count);
        if (batch.length === size) {
          yield batch;
          batch = newColumns(size);
        }
      }
    }
    if (batch.length > 0) yield batch;
  }
}

/** Hourly values as columns with metrics as indices in CLIMATE_METRICS: plain typed arrays, which a worker thread can hand over without copying. */
export interface IndexedColumns {
  length: number;
  ms: Float64Array;
  metric: Uint8Array;
  value: Float64Array;
}

/** The same columns with metric names, as the import engine takes them. */
export function namedColumns(c: IndexedColumns): ReadingColumns {
  const metric = new Array<string>(c.length);
  for (let i = 0; i < c.length; i++) metric[i] = CLIMATE_METRICS[c.metric[i]!]!.name;
  return { length: c.length, ms: c.ms, metric, value: c.value };
}

export function newColumns(size: number): ReadingColumns {
  return { length: 0, ms: new Float64Array(size), metric: new Array<string>(size), value: new Float64Array(size) };
}

/**
 * Mean for states, sum for amounts, circular mean for directions, the last for a day's totals
 * (per metrics.ts). Readings of metrics outside the vocabulary are ignored. Sorted by hour,
 * then metric name.
 */
export async function aggregateHourly(
  readings: Iterable<Reading> | AsyncIterable<Reading> | AsyncIterable<Reading[]> | Iterable<Reading[]>,
  options: { timeZone?: string } = {},
): Promise<HourlyValue[]> {
  const acc = new HourlyAccumulator();
  // The readings of one row share one `at` string: parse it once.
  let lastAt = '';
  let lastMs = Number.NaN;
  const add = (r: Reading) => {
    if (r.at !== lastAt) {
      lastAt = r.at;
      lastMs = Date.parse(r.at);
    }
    if (!Number.isFinite(lastMs) || !Number.isFinite(r.value)) return;
    const mi = METRIC_INDEX.get(r.metric);
    if (mi === undefined) return;
    acc.add(lastMs, mi, r.value);
  };
  for await (const item of readings as AsyncIterable<Reading | Reading[]>) {
    if (Array.isArray(item)) for (const r of item) add(r);
    else add(item);
  }
  return acc.values(options);
}
