import type { ModelConstants } from './constants.js';
import type { DayTemperature, OutdoorForecastDay, TemperatureSource } from './inputs.js';

/**
 * Fruit development driven by temperature: a fruit that flowered on day s is
 * ripe on the day its summed daily development rates reach 1. Warmer days
 * count for more: a day adds its mean temperature above a base, in degree-days,
 * until the fruit's thermal time is reached. Constants and sources: docs/forecast.md.
 */
export function developmentRate(meanC: number, c: ModelConstants): number {
  return Math.max(0, Math.min(meanC, c.maxTemperatureC) - c.baseTemperatureC) / c.thermalTimeDegreeDays;
}

/** Days from flowering to ripe at a constant temperature. */
export function developmentDays(meanC: number, c: ModelConstants): number {
  const r = developmentRate(meanC, c);
  return r > 0 ? 1 / r : Number.POSITIVE_INFINITY;
}

export interface TemperatureSeries {
  /** First day of the series; `t[i]` is the temperature of day `first + i`. */
  first: number;
  t: Float64Array;
  /** What the days before `asOf` rest on. */
  source: TemperatureSource | 'default';
  /** Days before asOf with a stored mean. */
  storedDays: number;
  /** The temperature given to days from asOf on (before any outdoor adjustment), and where it came from. */
  ahead: { meanC: number; basis: 'recent_mean' | 'default'; days: number };
  /** Days ahead raised to the stored outdoor forecast. */
  outdoorAdjustedDays: number;
}

/**
 * One temperature per day from `first` to `last`: stored daily means before
 * `asOf` (a gap takes the last day before it, or the first after it), and for
 * the days from `asOf` on, the mean of the most recent stored days, nudged by
 * the outdoor forecast where one was fetched in time (docs/forecast.md).
 */
export function temperatureSeries(
  stored: readonly DayTemperature[],
  outdoorForecast: readonly OutdoorForecastDay[],
  first: number,
  last: number,
  asOfDay: number,
  c: ModelConstants,
  outdoorFloorC: number | null = c.outdoorFloorC,
): TemperatureSeries {
  const n = last - first + 1;
  const t = new Float64Array(n).fill(Number.NaN);
  const known = stored.filter((d) => d.day < asOfDay).sort((a, b) => a.day - b.day);
  const counts = new Map<TemperatureSource, number>();
  for (const d of known) {
    counts.set(d.source, (counts.get(d.source) ?? 0) + 1);
    const i = d.day - first;
    if (i >= 0 && i < n) t[i] = d.meanC;
  }
  // Recent mean: the last `recentTemperatureDays` stored days, if they are recent (within 4× that span).
  const recent = known.filter((d) => d.day >= asOfDay - 4 * c.recentTemperatureDays).slice(-c.recentTemperatureDays);
  const aheadMean = recent.length ? recent.reduce((s, d) => s + d.meanC, 0) / recent.length : c.defaultTemperatureC;
  const ahead = {
    meanC: aheadMean,
    basis: recent.length ? ('recent_mean' as const) : ('default' as const),
    days: recent.length,
  };
  // Past gaps: carry the previous known day forward; before the first, take the first; none at all: the default.
  let prev = Number.NaN;
  const firstKnown = known.length ? known[0]!.meanC : c.defaultTemperatureC;
  for (let i = 0; i < n; i++) {
    const day = first + i;
    if (day >= asOfDay) {
      t[i] = aheadMean;
      continue;
    }
    if (!Number.isNaN(t[i]!)) prev = t[i]!;
    else t[i] = Number.isNaN(prev) ? firstKnown : prev;
  }
  // A greenhouse is not cooler than the air outside it by day: a day ahead whose outdoor forecast mean
  // (plus `outdoorFloorC`) is above the assumed temperature takes that instead (docs/forecast.md).
  let adjusted = 0;
  if (outdoorFloorC !== null) {
    for (const f of outdoorForecast) {
      const i = f.day - first;
      if (f.day < asOfDay || i < 0 || i >= n) continue;
      if (f.meanC + outdoorFloorC > t[i]!) {
        t[i] = f.meanC + outdoorFloorC;
        adjusted++;
      }
    }
  }
  let source: TemperatureSeries['source'] = 'default';
  let best = 0;
  for (const [s, k] of counts)
    if (k > best) {
      best = k;
      source = s;
    }
  return { first, t, source, storedDays: known.length, ahead, outdoorAdjustedDays: adjusted };
}

/**
 * Cumulative development: `D[i]` is the development summed over the days before
 * `first + i`. A fruit flowering at the start of day s is ripe at the (fractional)
 * day x where D(x) − D(s) = 1.
 */
export function cumulativeDevelopment(series: TemperatureSeries, c: ModelConstants): Float64Array {
  const D = new Float64Array(series.t.length + 1);
  for (let i = 0; i < series.t.length; i++) D[i + 1] = D[i]! + developmentRate(series.t[i]!, c);
  return D;
}

/**
 * The ripening day (fractional, as a day number) of fruit flowering at the start
 * of day `day`; null when it ripens after the series ends.
 */
export function ripeningDay(D: Float64Array, first: number, day: number): number | null {
  const s = day - first;
  if (s < 0 || s >= D.length - 1) return null;
  const target = D[s]! + 1;
  if (D[D.length - 1]! < target) return null;
  let lo = s;
  let hi = D.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (D[mid]! >= target) hi = mid;
    else lo = mid;
  }
  // D[lo] < target ≤ D[hi]; interpolate inside day lo.
  const step = D[hi]! - D[lo]!;
  return first + lo + (step > 0 ? (target - D[lo]!) / step : 0);
}
