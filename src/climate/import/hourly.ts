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

const HOUR = 3_600_000;
const M = CLIMATE_METRICS.length;
const METRIC_INDEX = new Map(CLIMATE_METRICS.map((m, i) => [m.name, i]));
const BY_NAME_ORDER = CLIMATE_METRICS.map((m, i) => [m.name, i] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, i]) => i);

/**
 * Mean for states, sum for amounts, circular mean for directions (per metrics.ts). Readings
 * of metrics outside the vocabulary are ignored. Sorted by hour, then metric name.
 * Accumulates in flat typed arrays (hour × metric), so a year of 5-minute readings costs a
 * few megabytes whatever the number of readings.
 */
export async function aggregateHourly(
  readings: Iterable<Reading> | AsyncIterable<Reading> | AsyncIterable<Reading[]> | Iterable<Reading[]>,
  options: { timeZone?: string } = {},
): Promise<HourlyValue[]> {
  const slotOf = new Map<number, number>();
  const hours: number[] = [];
  let cap = 256;
  let sum = new Float64Array(cap * M);
  let sin = new Float64Array(cap * M);
  let cos = new Float64Array(cap * M);
  let n = new Uint32Array(cap * M);
  const grow = () => {
    cap *= 2;
    const g = <T extends Float64Array | Uint32Array>(a: T, make: (k: number) => T): T => { const b = make(cap * M); b.set(a); return b; };
    sum = g(sum, (k) => new Float64Array(k));
    sin = g(sin, (k) => new Float64Array(k));
    cos = g(cos, (k) => new Float64Array(k));
    n = g(n, (k) => new Uint32Array(k));
  };
  // The readings of one row share one `at` string: parse it and find its hour once.
  let lastAt = '';
  let lastSlot = -1;
  const add = (r: Reading) => {
    if (r.at !== lastAt) {
      lastAt = r.at;
      const ms = Date.parse(r.at);
      if (!Number.isFinite(ms)) { lastSlot = -1; return; }
      const h = Math.floor(ms / HOUR);
      let s = slotOf.get(h);
      if (s === undefined) {
        s = hours.length;
        hours.push(h);
        slotOf.set(h, s);
        if (s >= cap) grow();
      }
      lastSlot = s;
    }
    if (lastSlot < 0 || !Number.isFinite(r.value)) return;
    const mi = METRIC_INDEX.get(r.metric);
    if (mi === undefined) return;
    const k = lastSlot * M + mi;
    n[k]!++;
    if (CLIMATE_METRICS[mi]!.aggregate === 'circular_mean') {
      const rad = (r.value * Math.PI) / 180;
      sin[k]! += Math.sin(rad);
      cos[k]! += Math.cos(rad);
    } else {
      sum[k]! += r.value;
    }
  };
  for await (const item of readings as AsyncIterable<Reading | Reading[]>) {
    if (Array.isArray(item)) for (const r of item) add(r);
    else add(item);
  }
  const zone = options.timeZone ? new ZoneClock(options.timeZone) : null;
  const order = hours.map((h, s) => [h, s] as const).sort((a, b) => a[0] - b[0]);
  const out: HourlyValue[] = [];
  for (const [h, s] of order) {
    const ms = h * HOUR;
    const hour = zone ? zone.iso(ms) : new Date(ms).toISOString().replace('.000Z', 'Z');
    for (const mi of BY_NAME_ORDER) {
      const k = s * M + mi;
      const count = n[k]!;
      if (count === 0) continue;
      const def = CLIMATE_METRICS[mi]!;
      let value: number;
      if (def.aggregate === 'sum') value = sum[k]!;
      else if (def.aggregate === 'mean') value = sum[k]! / count;
      else {
        const deg = (Math.atan2(sin[k]! / count, cos[k]! / count) * 180) / Math.PI;
        value = deg < 0 ? deg + 360 : deg;
      }
      out.push({ hour, metric: def.name, value, count });
    }
  }
  return out;
}
