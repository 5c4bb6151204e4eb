import type { ModelConstants } from './constants.js';
import type { TrussCountInput } from './inputs.js';
import { ripeningDay } from './development.js';

/**
 * Truss cohorts: the trusses that appeared between two count dates, per m², with
 * the fruit they set. Each flowered, spread evenly, over the days between the
 * counts (the first count's since the cycle started, two weeks at least); past
 * the last count, trusses keep appearing at the recent rate.
 */
export interface Cohort {
  /** First and last flowering day (inclusive). */
  from: number;
  to: number;
  trussesPerM2: number;
  fruitPerTruss: number;
  stemsPerM2: number;
  /** True past the last count: extrapolated at the recent rate. */
  projected: boolean;
}

export interface CohortPlan {
  cohorts: Cohort[];
  /** Recent new trusses per stem per week; null without two counts far enough apart. */
  trussesPerStemPerWeek: number | null;
  lastCountDay: number | null;
  /** Why no cohort could be made, when none could. */
  reason: string | null;
}

/** The stem density in force on each count date: its own, else the last one carried before it, else the cycle's. */
export function stemsInForce(counts: readonly TrussCountInput[], cycleStems: number | null): (number | null)[] {
  let current: number | null = null;
  return counts.map((c) => {
    if (c.stemsPerM2 !== null) current = c.stemsPerM2;
    return current ?? cycleStems;
  });
}

export function trussCohorts(
  countsIn: readonly TrussCountInput[],
  cycleStems: number | null,
  projectUntil: number,
  c: ModelConstants,
  startDay: number = Number.POSITIVE_INFINITY,
): CohortPlan {
  const counts = [...countsIn].sort((a, b) => a.day - b.day);
  if (!counts.length)
    return { cohorts: [], trussesPerStemPerWeek: null, lastCountDay: null, reason: 'no truss count yet: PUT truss-counts' };
  const stems = stemsInForce(counts, cycleStems);
  if (stems.every((s) => s === null))
    return {
      cohorts: [],
      trussesPerStemPerWeek: null,
      lastCountDay: counts.at(-1)!.day,
      reason: 'no stem density: set stems_per_m2 (or plants_per_m2) on the crop cycle, or stems_per_m2 on a truss count date',
    };
  // Stem density on a day: the one carried by the last count date on or before it; before any, the cycle's (else the first carried).
  const initial = cycleStems ?? stems.find((x) => x !== null)!;
  const changes = counts.flatMap((x) => (x.stemsPerM2 !== null ? [{ day: x.day, stems: x.stemsPerM2 }] : []));
  const densityOn = (day: number) => {
    let d = initial;
    for (const ch of changes) if (ch.day <= day) d = ch.stems;
    return d;
  };
  // Stems kept as extra ones set their first truss some days later; stems taken out stop at once.
  const setting = (day: number) => Math.min(densityOn(day), densityOn(day - c.newStemLagDays));
  const cohorts: Cohort[] = [];
  /** Trusses per stem `perStem` appearing over days from..to (inclusive), cut where the density that sets them changes. */
  const add = (from: number, to: number, perStem: number, fruitPerTruss: number, projected: boolean) => {
    const days = to - from + 1;
    let pieceStart = from;
    for (let d = from; d <= to; d++) {
      const density = setting(d);
      if (d === to || setting(d + 1) !== density) {
        const share = (d - pieceStart + 1) / days;
        cohorts.push({ from: pieceStart, to: d, trussesPerM2: perStem * share * density, fruitPerTruss, stemsPerM2: density, projected });
        pieceStart = d + 1;
      }
    }
  };
  let fruitPerTruss = c.defaultFruitPerTruss;
  // The first count's trusses flowered over the 14 days before it, or since the day after planting when that is
  // earlier (a grower who starts counting mid-season counts every truss the plants have had).
  let prevDay = Math.min(counts[0]!.day - c.firstCountSpreadDays, startDay);
  let prevTrusses = 0;
  for (const count of counts) {
    if (count.fruitPerTruss !== null && count.fruitPerTruss > 0) fruitPerTruss = count.fruitPerTruss;
    const added = Math.max(0, count.trussesPerStem - prevTrusses);
    if (added > 0 && count.day > prevDay) add(prevDay + 1, count.day, added, fruitPerTruss, false);
    prevDay = Math.max(prevDay, count.day);
    prevTrusses = Math.max(prevTrusses, count.trussesPerStem);
  }
  const last = counts.at(-1)!;
  // The recent rate: from the latest count at least `trussRateWindowDays` before the last one (else the first).
  let earlier: TrussCountInput | undefined;
  for (const x of counts) if (last.day - x.day >= c.trussRateWindowDays) earlier = x;
  earlier ??= counts[0]!.day < last.day - 6 ? counts[0] : undefined;
  let perWeek: number | null = null;
  if (earlier) {
    perWeek = (Math.max(0, last.trussesPerStem - earlier.trussesPerStem) / (last.day - earlier.day)) * 7;
    if (projectUntil > last.day && perWeek > 0)
      add(last.day + 1, projectUntil, (perWeek / 7) * (projectUntil - last.day), fruitPerTruss, true);
  }
  return { cohorts, trussesPerStemPerWeek: perWeek, lastCountDay: last.day, reason: null };
}

export interface RipeningFlow {
  /** First day of the flow; `fruit[i]` are fruit per m² ripening on day `first + i`. */
  first: number;
  fruit: Float64Array;
  /** Per day: the earliest and latest flowering day of the fruit ripening then (NaN where none). */
  floweredFrom: Float64Array;
  floweredTo: Float64Array;
  /** Per day: the share of the fruit ripening then that comes from projected (not yet counted) trusses. */
  projectedFruit: Float64Array;
  /** Per day: fruit-weighted sum of development days. */
  devDaysWeighted: Float64Array;
}

/** Spreads each cohort's fruit over its flowering days, moves each day to its ripening day, and spreads that over a few days. */
export function ripeningFlow(
  cohorts: readonly Cohort[],
  D: Float64Array,
  devFirst: number,
  first: number,
  last: number,
  c: ModelConstants,
): RipeningFlow {
  const n = last - first + 1;
  const flow: RipeningFlow = {
    first,
    fruit: new Float64Array(n),
    floweredFrom: new Float64Array(n).fill(Number.NaN),
    floweredTo: new Float64Array(n).fill(Number.NaN),
    projectedFruit: new Float64Array(n),
    devDaysWeighted: new Float64Array(n),
  };
  const S = c.ripeningSpreadDays;
  const norm = (S + 1) * (S + 1);
  for (const k of cohorts) {
    const days = k.to - k.from + 1;
    const perDay = (k.trussesPerM2 * k.fruitPerTruss) / days;
    for (let s = k.from; s <= k.to; s++) {
      // Flowered through the day: development starts at its middle.
      const x = ripeningDay(D, devFirst, s);
      if (x === null) continue;
      const ripe = x + 0.5;
      const centre = Math.floor(ripe);
      for (let j = -S; j <= S; j++) {
        const i = centre + j - first;
        if (i < 0 || i >= n) continue;
        const share = (perDay * (S + 1 - Math.abs(j))) / norm;
        flow.fruit[i]! += share;
        if (k.projected) flow.projectedFruit[i]! += share;
        flow.devDaysWeighted[i]! += share * (x - s);
        if (!(flow.floweredFrom[i]! <= s)) flow.floweredFrom[i] = s;
        if (!(flow.floweredTo[i]! >= s)) flow.floweredTo[i] = s;
      }
    }
  }
  return flow;
}
