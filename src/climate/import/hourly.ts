// Hourly values from finer readings. Hours are UTC hours of real instants, so a repeated or
// missing wall-clock hour in autumn or spring neither merges two hours nor invents one.
import { climateMetric } from '../metrics.js';
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

interface Acc { sum: number; sin: number; cos: number; n: number }

/**
 * Mean for states, sum for amounts, circular mean for directions (per metrics.ts). Readings
 * of metrics outside the vocabulary are ignored. Sorted by hour, then metric.
 */
export async function aggregateHourly(
  readings: Iterable<Reading> | AsyncIterable<Reading> | AsyncIterable<Reading[]> | Iterable<Reading[]>,
  options: { timeZone?: string } = {},
): Promise<HourlyValue[]> {
  const acc = new Map<string, Map<number, Acc>>();
  const add = (r: Reading) => {
    const ms = Date.parse(r.at);
    if (!Number.isFinite(ms) || !Number.isFinite(r.value)) return;
    const def = climateMetric(r.metric);
    if (!def) return;
    let byHour = acc.get(r.metric);
    if (!byHour) { byHour = new Map(); acc.set(r.metric, byHour); }
    const h = Math.floor(ms / HOUR);
    let a = byHour.get(h);
    if (!a) { a = { sum: 0, sin: 0, cos: 0, n: 0 }; byHour.set(h, a); }
    a.n++;
    if (def.aggregate === 'circular_mean') {
      const rad = (r.value * Math.PI) / 180;
      a.sin += Math.sin(rad);
      a.cos += Math.cos(rad);
    } else {
      a.sum += r.value;
    }
  };
  for await (const item of readings as AsyncIterable<Reading | Reading[]>) {
    if (Array.isArray(item)) for (const r of item) add(r);
    else add(item);
  }
  const zone = options.timeZone ? new ZoneClock(options.timeZone) : null;
  const out: HourlyValue[] = [];
  for (const [metric, byHour] of acc) {
    const def = climateMetric(metric)!;
    for (const [h, a] of byHour) {
      let value: number;
      if (def.aggregate === 'sum') value = a.sum;
      else if (def.aggregate === 'mean') value = a.sum / a.n;
      else {
        const deg = (Math.atan2(a.sin / a.n, a.cos / a.n) * 180) / Math.PI;
        value = deg < 0 ? deg + 360 : deg;
      }
      const ms = h * HOUR;
      out.push({ hour: zone ? zone.iso(ms) : new Date(ms).toISOString().replace('.000Z', 'Z'), metric, value, count: a.n });
    }
  }
  out.sort((x, y) => Date.parse(x.hour) - Date.parse(y.hour) || (x.metric < y.metric ? -1 : x.metric > y.metric ? 1 : 0));
  return out;
}
