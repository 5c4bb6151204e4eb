import { weekStartDay } from '../../time/days.js';
import type { CycleHistory } from './inputs.js';

/**
 * The first week whose forecast can differ between two histories of one cycle: the earliest Monday W
 * for which `asOf(before, W)` and `asOf(after, W)` (src/forecast/model/inputs.ts) may not be equal;
 * null when the histories are the same. A run as of an earlier week saw the same inputs in both, and
 * the replay keeps it (src/forecast/model/replay.ts).
 *
 * Each kind of record enters the runs from a week its own `asOf` rule gives, so this follows that rule
 * record by record: a harvest of week K is known from K + 1, a truss count dated d from d's own week,
 * a walk from its week, a fruit mass from the week after its own, a day's temperature from the week
 * after that day, a weather forecast from the week it was fetched in. Anything else (the cycle's
 * dates, area, stem density) reaches every run: the first week.
 */
export function firstChangedWeek(before: CycleHistory, after: CycleHistory): number | null {
  if (
    before.startWeek !== after.startWeek ||
    before.startDay !== after.startDay ||
    before.endWeek !== after.endWeek ||
    before.endDay !== after.endDay ||
    before.areaM2 !== after.areaM2 ||
    before.stemsPerM2 !== after.stemsPerM2
  )
    return Math.min(before.startWeek, after.startWeek);

  let first = Number.POSITIVE_INFINITY;
  const see = <T>(a: readonly T[], b: readonly T[], from: (x: T) => number) => {
    for (const x of changedItems(a, b)) first = Math.min(first, from(x));
  };
  see(before.harvests, after.harvests, (x) => x.week + 7);
  see(before.trussCounts, after.trussCounts, (x) => weekStartDay(x.day));
  see(before.walks, after.walks, (x) => x.week);
  see(before.fruitMass, after.fruitMass, (x) => x.week + 7);
  see(before.temperature, after.temperature, (x) => weekStartDay(x.day) + 7);
  see(before.outdoorForecast, after.outdoorForecast, (x) => weekStartDay(x.fetchedDay));
  return Number.isFinite(first) ? first : null;
}

/** The items in one list and not the other, as multisets of their values (the order a query answers in does not count). */
function changedItems<T>(a: readonly T[], b: readonly T[]): T[] {
  const counts = new Map<string, { item: T; n: number }>();
  for (const x of a) {
    const k = JSON.stringify(x);
    const e = counts.get(k);
    if (e) e.n++;
    else counts.set(k, { item: x, n: 1 });
  }
  for (const x of b) {
    const k = JSON.stringify(x);
    const e = counts.get(k);
    if (e) e.n--;
    else counts.set(k, { item: x, n: -1 });
  }
  return [...counts.values()].filter((e) => e.n !== 0).map((e) => e.item);
}
