import type { ModelConstants } from './constants.js';
import type { HarvestInput } from './inputs.js';

/**
 * The pick calendar. Fruit ripens every day but is harvested on pick days: a
 * pick takes what ripened since the one before. A week with two picks and a
 * week with one differ by what ripened in the days between, so the rhythm of
 * recent picks is learned and carried forward.
 */
export interface PickCalendar {
  /** 'picks' when a rhythm was learned from dated harvests; 'continuous' counts each week's own ripening. */
  mode: 'picks' | 'continuous';
  /** The last dated pick before the forecast, or null. */
  lastPick: number | null;
  /** The pick before the first projected one (the last dated pick, or a projected one that fell before the forecast). */
  previous: number | null;
  /** Projected pick days from the forecast's first day on, ascending. */
  projected: number[];
  /** The intervals (days) repeated forward, in order. */
  pattern: number[];
  /** How the pattern was found. */
  basis: 'repeating_intervals' | 'median_interval' | 'no_dated_picks' | 'too_few_picks';
  /** Dated picks the rhythm was learned from. */
  learnedFrom: number;
}

/** Distinct pick days of the dated harvests before `asOfDay`, ascending. */
export function pickDays(harvests: readonly HarvestInput[], asOfDay: number): number[] {
  const days = new Set<number>();
  for (const h of harvests) if (h.day !== null && h.day < asOfDay && h.kg > 0) days.add(h.day);
  return [...days].sort((a, b) => a - b);
}

/**
 * The rhythm: the smallest period p (1 to 4 intervals) that the last intervals
 * repeat (Mon–Wed–Fri–Mon... is intervals 2, 2, 3 repeating); without one, the
 * median interval. Picks are then projected from the last pick until `until`,
 * and those before `fromDay` dropped (a rhythm that lapsed starts again there).
 */
export function pickCalendar(
  harvests: readonly HarvestInput[],
  fromDay: number,
  until: number,
  endDay: number | null,
  c: ModelConstants,
): PickCalendar {
  const all = pickDays(harvests, fromDay);
  const recent = all.filter((d) => d >= fromDay - c.pickHistoryDays).slice(-c.pickHistory);
  const lastPick = all.length ? all.at(-1)! : null;
  const none = { mode: 'continuous' as const, lastPick, previous: lastPick, projected: [], pattern: [] };
  if (!all.length) return { ...none, basis: 'no_dated_picks', learnedFrom: 0 };
  if (recent.length < 3) return { ...none, basis: 'too_few_picks', learnedFrom: recent.length };
  const intervals = recent.slice(1).map((d, i) => d - recent[i]!);
  let pattern: number[] | null = null;
  // A period must repeat over its last three turns where the history has them (two at least), so that
  // two equal intervals at the end of a 4–5–5 rhythm are not taken for a 5-day one.
  for (let p = 1; p <= 4 && 2 * p <= intervals.length; p++) {
    const tail = intervals.slice(-Math.min(intervals.length, 3 * p));
    if (tail.every((v, i) => i < p || v === tail[i - p])) {
      pattern = tail.slice(-p);
      break;
    }
  }
  let basis: PickCalendar['basis'] = 'repeating_intervals';
  if (!pattern) {
    const sorted = [...intervals].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    pattern = [Math.max(1, Math.round(median))];
    basis = 'median_interval';
  }
  const projected: number[] = [];
  const last = endDay === null ? until : Math.min(until, endDay);
  let day = recent.at(-1)!;
  let previous = day;
  for (let i = 0; day <= last; i++) {
    day += pattern[i % pattern.length]!;
    if (day < fromDay) previous = day;
    else if (day <= last) projected.push(day);
  }
  // The crop is cleared on its last day: what is ripe then is picked with it.
  if (endDay !== null && endDay >= fromDay && endDay <= until && projected.at(-1) !== endDay) projected.push(endDay);
  return { mode: 'picks', lastPick, previous, projected, pattern, basis, learnedFrom: recent.length };
}
