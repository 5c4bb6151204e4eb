import { dateOfDay } from '../time/days.js';
import { weekOfDate } from '../time/weeks.js';
import type { CycleArea } from '../registry/area.js';
import type { ForecastWeek, WeekRun } from './model/replay.js';
import type { RawWeek } from './model/raw.js';

/** Figures rounded for answers: kilos to grams, ratios to 4 places. */
export const kg3 = (x: number) => Math.round(x * 1000) / 1000;
export const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
const kgOrNull = (x: number | null) => (x === null ? null : kg3(x));
const r4OrNull = (x: number | null) => (x === null ? null : r4(x));

export const weekLabel = (monday: number) => weekOfDate(dateOfDay(monday))!.label;
const dateOrNull = (day: number | null) => (day === null ? null : dateOfDay(day));

/** kg per m² of the cycle's area, or null (the area says why). */
export const perArea = (kg: number | null, area: CycleArea) => (kg === null || area.area_m2 === null ? null : r4(kg / area.area_m2));

export function presentArea(area: CycleArea) {
  return { area_m2: area.area_m2 === null ? null : r4(area.area_m2), basis: area.basis, reason: area.reason };
}

/** One forecast week with what it rests on. */
export function presentForecastWeek(f: ForecastWeek, raw: RawWeek, area: CycleArea) {
  return {
    week: weekLabel(f.week),
    horizon: f.horizon,
    kg: kg3(f.kg),
    kg_per_m2: perArea(f.kg, area),
    p10_kg: kg3(f.p10),
    p90_kg: kg3(f.p90),
    method: f.method,
    range: { basis: f.range_basis, pairs: f.range_pairs },
    model: {
      kg: kgOrNull(f.model_kg),
      raw_kg: kgOrNull(f.raw_kg),
      calibration: { ...f.calibration, factor: r4(f.calibration.factor) },
    },
    baselines: { persistence_kg: kg3(f.baselines.persistence), mean_3_weeks_kg: kg3(f.baselines.mean_3_weeks) },
    fallback: {
      pairs: f.fallback.pairs,
      model_wape: r4OrNull(f.fallback.model_wape),
      persistence_wape: r4OrNull(f.fallback.persistence_wape),
      mean_3_weeks_wape: r4OrNull(f.fallback.mean_3_weeks_wape),
      reason: f.fallback.reason,
    },
    inputs: {
      picks: raw.picks.map(dateOfDay),
      ripening_since: dateOfDay(raw.ripeningSince),
      from_trusses_kg: kgOrNull(raw.fromTrussesKg),
      from_walk_kg: kgOrNull(raw.fromWalkKg),
      flowered_from: dateOrNull(raw.floweredFrom),
      flowered_to: dateOrNull(raw.floweredTo),
      projected_share: r4OrNull(raw.projectedShare),
      development_days: raw.developmentDays === null ? null : Math.round(raw.developmentDays * 10) / 10,
      temperature_c: Math.round(raw.temperatureC * 100) / 100,
    },
  };
}

/** What the whole forecast rested on: the same for every week of it. */
export function presentInputs(run: WeekRun) {
  const r = run.raw;
  return {
    truss_counts: {
      used: r.trusses.used,
      reason: r.trusses.reason,
      counts: r.trusses.counts,
      last_counted_on: dateOrNull(r.trusses.lastCountDay),
      trusses_per_stem_per_week: r4OrNull(r.trusses.trussesPerStemPerWeek),
      fruit_per_truss: r4OrNull(r.trusses.fruitPerTruss),
      stems_per_m2: r.trusses.stemsPerM2,
    },
    walk: {
      used: r.walk.used,
      reason: r.walk.reason,
      week: r.walk.week === null ? null : weekLabel(r.walk.week),
      counts: r.walk.counts,
      corrected: r.walk.corrected,
    },
    fruit_mass: r.fruitMass && {
      week: weekLabel(r.fruitMass.week),
      green_g: r.fruitMass.green_g,
      turning_g: r.fruitMass.turning_g,
      red_g: r.fruitMass.red_g,
    },
    temperature: {
      source: r.temperature.source,
      stored_days: r.temperature.storedDays,
      ahead_c: Math.round(r.temperature.aheadC * 100) / 100,
      ahead_basis: r.temperature.aheadBasis,
      outdoor_raised_days: r.temperature.outdoorAdjustedDays,
      development_days_ahead: Math.round(r.temperature.developmentDaysAhead * 10) / 10,
    },
    pick_calendar: {
      mode: r.picks.mode,
      basis: r.picks.basis,
      last_pick: dateOrNull(r.picks.lastPick),
      pattern_days: r.picks.pattern,
      learned_from: r.picks.learnedFrom,
    },
  };
}
