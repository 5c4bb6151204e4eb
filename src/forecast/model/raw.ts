import type { ModelConstants } from './constants.js';
import type { CycleHistory, FruitMassInput, WalkInput } from './inputs.js';
import { cumulativeDevelopment, developmentDays, temperatureSeries } from './development.js';
import { ripeningFlow, trussCohorts } from './cohorts.js';
import { pickCalendar, type PickCalendar } from './picks.js';

/**
 * One run of the model as of a week, before calibration: fruit ripening day by
 * day (from truss cohorts moved by temperature, and from the walk's counts by
 * ripeness), turned into kilos with the fruit mass, gathered on pick days.
 * `history` must already be cut to what was known (inputs.ts `asOf`).
 */
export interface RawWeek {
  horizon: number;
  /** Monday of the forecast week. */
  week: number;
  /** Kilos the model expects, before calibration; null when the model has nothing to go on. */
  kg: number | null;
  fromTrussesKg: number | null;
  fromWalkKg: number | null;
  /** Pick days in the week: projected by the rhythm, or every day when harvests are not dated. */
  picks: number[];
  /** The ripening that the week's first pick takes starts after this day. */
  ripeningSince: number;
  /** Flowering days of the counted or projected trusses ripening in the week (NaN-free; null without any). */
  floweredFrom: number | null;
  floweredTo: number | null;
  /** Share of the trusses' kilos from trusses not yet counted (projected at the recent rate). */
  projectedShare: number | null;
  /** Mean days from flowering to ripe of those fruit. */
  developmentDays: number | null;
  /** Mean temperature of the week's days (°C): stored before the forecast, projected after. */
  temperatureC: number;
}

export interface RawRun {
  asOf: number;
  weeks: RawWeek[];
  temperature: {
    source: string;
    storedDays: number;
    aheadC: number;
    aheadBasis: string;
    outdoorAdjustedDays: number;
    /** Days from flowering to ripe at the temperature assumed ahead. */
    developmentDaysAhead: number;
  };
  picks: PickCalendar;
  trusses: {
    used: boolean;
    reason: string | null;
    counts: number;
    lastCountDay: number | null;
    trussesPerStemPerWeek: number | null;
    fruitPerTruss: number | null;
    stemsPerM2: number | null;
  };
  walk: {
    used: boolean;
    reason: string | null;
    week: number | null;
    counts: { green: number; turning: number; red: number } | null;
    corrected: boolean | null;
  };
  fruitMass: FruitMassInput | null;
  areaM2: number | null;
}

function latestMass(h: CycleHistory): FruitMassInput | null {
  let best: FruitMassInput | null = null;
  for (const f of h.fruitMass) if (best === null || f.week > best.week) best = f;
  return best;
}

function latestWalk(walks: readonly WalkInput[], asOfWeek: number, maxAge: number): WalkInput | null {
  let best: WalkInput | null = null;
  for (const w of walks) if (w.week <= asOfWeek && w.week >= asOfWeek - maxAge && (best === null || w.week > best.week)) best = w;
  return best;
}

export function rawForecast(h: CycleHistory, asOfWeek: number, c: ModelConstants): RawRun {
  const lastDay = asOfWeek + 7 * c.horizons - 1;
  const mass = latestMass(h);
  // Days the model steps over: from well before the first count (its trusses flowered earlier) to past the horizon.
  const firstCount = h.trussCounts.length ? Math.min(...h.trussCounts.map((x) => x.day)) : asOfWeek;
  const first = Math.min(h.startWeek, h.startDay - 1, firstCount - c.firstCountSpreadDays - 1, asOfWeek - 7 * 4);
  const flowLast = lastDay + c.ripeningSpreadDays + 1;
  const series = temperatureSeries(h.temperature, h.outdoorForecast, first, flowLast, asOfWeek, c);
  const D = cumulativeDevelopment(series, c);

  // Trusses that flower after the last count still ripen inside the horizon when it is long enough.
  const plan = trussCohorts(h.trussCounts, h.stemsPerM2, lastDay, c, h.startDay);
  let trussReason = plan.reason;
  if (!trussReason && !mass) trussReason = 'no fruit mass yet: POST fruit-mass (grams per fruit by ripeness)';
  if (!trussReason && h.areaM2 === null)
    trussReason = "no growing area: set area_m2 on the crop cycle, or the row's plant_count and the cycle's plants_per_m2";
  const useTrusses = trussReason === null && plan.cohorts.length > 0;
  if (!trussReason && !plan.cohorts.length) trussReason = 'the truss counts show no trusses yet';
  const flow = ripeningFlow(useTrusses ? plan.cohorts : [], D, first, first, flowLast, c);
  const kgPerFruit = useTrusses ? (mass!.red_g / 1000) * h.areaM2! : 0;

  // The walk: fruit counted by ripeness, placed on the days they are expected to be picked.
  const walk = latestWalk(h.walks, asOfWeek, c.walkMaxAgeDays);
  let walkReason: string | null = null;
  if (!walk) walkReason = 'no walk saved to this week or the one before';
  else if (!mass) walkReason = 'no fruit mass yet: POST fruit-mass (grams per fruit by ripeness)';
  const useWalk = walk !== null && walkReason === null;
  const n = flowLast - first + 1;
  const walkKg = new Float64Array(n);
  // Days the walk speaks for: its red and turning fruit replace the trusses' ripening there.
  let walkUntil = Number.NEGATIVE_INFINITY;
  if (useWalk) {
    const put = (kg: number, fromDay: number, toDay: number) => {
      const days = toDay - fromDay + 1;
      for (let d = fromDay; d <= toDay; d++) {
        // Fruit expected before the forecast starts were picked already, except this week's red: picked at the next pick.
        const day = Math.max(d, asOfWeek);
        if (d < asOfWeek && walk!.week < asOfWeek) continue;
        const i = day - first;
        if (i >= 0 && i < n) walkKg[i]! += kg / days;
      }
    };
    const w = walk!;
    put((w.red * mass!.red_g) / 1000, w.week, w.week);
    put((w.turning * mass!.turning_g) / 1000, w.week + c.walkTurningDays[0], w.week + c.walkTurningDays[1]);
    walkUntil = w.week + c.walkGreenDays[0] - 1;
    if (!useTrusses) put((w.green * mass!.green_g) / 1000, w.week + c.walkGreenDays[0], w.week + c.walkGreenDays[1]);
  }

  // Kilos ripening per day, and their prefix sums for "what ripened between two picks".
  const kgDay = new Float64Array(n);
  const trussKgDay = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const day = first + i;
    const fromTrusses = flow.fruit[i]! * kgPerFruit;
    const replaced = useWalk && day >= asOfWeek && day <= walkUntil;
    trussKgDay[i] = replaced ? 0 : fromTrusses;
    kgDay[i] = trussKgDay[i]! + walkKg[i]!;
  }
  const prefix = (a: Float64Array) => {
    const p = new Float64Array(a.length + 1);
    for (let i = 0; i < a.length; i++) p[i + 1] = p[i]! + a[i]!;
    return p;
  };
  const P = prefix(kgDay);
  const PT = prefix(trussKgDay);
  const PW = prefix(walkKg);
  // Sum over days (a, b], as day numbers.
  const between = (p: Float64Array, a: number, b: number) => {
    const lo = Math.min(n, Math.max(0, a + 1 - first));
    const hi = Math.min(n, Math.max(0, b + 1 - first));
    return p[hi]! - p[lo]!;
  };

  const calendar = pickCalendar(h.harvests, asOfWeek, lastDay, h.endDay, c);
  const hasModel = useTrusses || useWalk;
  const weeks: RawWeek[] = [];
  let previousPick = calendar.previous ?? asOfWeek - 1;
  for (let k = 0; k < c.horizons; k++) {
    const from = asOfWeek + 7 * k;
    const to = from + 6;
    let picks: number[];
    const segments: [number, number][] = [];
    let ripeningSince: number;
    if (calendar.mode === 'picks') {
      picks = calendar.projected.filter((d) => d >= from && d <= to);
      ripeningSince = previousPick;
      for (const p of picks) {
        segments.push([previousPick, p]);
        previousPick = p;
      }
    } else {
      picks = [];
      for (let d = from; d <= to; d++) if (h.endDay === null || d <= h.endDay) picks.push(d);
      ripeningSince = from - 1;
      if (picks.length) segments.push([from - 1, picks.at(-1)!]);
    }
    let kg = 0;
    let kgT = 0;
    let kgW = 0;
    let fruit = 0;
    let projectedFruit = 0;
    let devWeighted = 0;
    let fFrom = Number.POSITIVE_INFINITY;
    let fTo = Number.NEGATIVE_INFINITY;
    for (const [a, b] of segments) {
      kg += between(P, a, b);
      kgT += between(PT, a, b);
      kgW += between(PW, a, b);
      for (let d = a + 1; d <= b; d++) {
        const i = d - first;
        if (i < 0 || i >= n || trussKgDay[i] === 0) continue;
        fruit += flow.fruit[i]!;
        projectedFruit += flow.projectedFruit[i]!;
        devWeighted += flow.devDaysWeighted[i]!;
        if (flow.floweredFrom[i]! < fFrom) fFrom = flow.floweredFrom[i]!;
        if (flow.floweredTo[i]! > fTo) fTo = flow.floweredTo[i]!;
      }
    }
    let tSum = 0;
    for (let d = from; d <= to; d++) tSum += series.t[d - first]!;
    weeks.push({
      horizon: k,
      week: from,
      kg: hasModel ? kg : null,
      fromTrussesKg: useTrusses ? kgT : null,
      fromWalkKg: useWalk ? kgW : null,
      picks,
      ripeningSince,
      floweredFrom: fruit > 0 ? fFrom : null,
      floweredTo: fruit > 0 ? fTo : null,
      projectedShare: fruit > 0 ? projectedFruit / fruit : null,
      developmentDays: fruit > 0 ? devWeighted / fruit : null,
      temperatureC: tSum / 7,
    });
  }
  const lastCount = h.trussCounts.length ? h.trussCounts.reduce((a, b) => (b.day > a.day ? b : a)) : null;
  const lastCohort = plan.cohorts.filter((x) => !x.projected).at(-1);
  return {
    asOf: asOfWeek,
    weeks,
    temperature: {
      source: series.source,
      storedDays: series.storedDays,
      aheadC: series.ahead.meanC,
      aheadBasis: series.ahead.basis,
      outdoorAdjustedDays: series.outdoorAdjustedDays,
      developmentDaysAhead: developmentDays(series.ahead.meanC, c),
    },
    picks: calendar,
    trusses: {
      used: useTrusses,
      reason: useTrusses ? null : trussReason,
      counts: h.trussCounts.length,
      lastCountDay: lastCount?.day ?? null,
      trussesPerStemPerWeek: plan.trussesPerStemPerWeek,
      fruitPerTruss: lastCohort?.fruitPerTruss ?? null,
      stemsPerM2: lastCohort?.stemsPerM2 ?? null,
    },
    walk: {
      used: useWalk,
      reason: walkReason,
      week: walk?.week ?? null,
      counts: walk ? { green: walk.green, turning: walk.turning, red: walk.red } : null,
      corrected: walk?.corrected ?? null,
    },
    fruitMass: mass,
    areaM2: h.areaM2,
  };
}
