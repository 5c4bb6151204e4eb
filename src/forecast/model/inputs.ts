/**
 * What the forecast model reads: a crop cycle's records as plain arrays of day
 * numbers (src/time/days.ts) and numbers, with no database behind them. The
 * queries (src/forecast/queries.ts) build a `CycleHistory` from the stored
 * records; the benchmark builds one from a season's files. `asOf` cuts it to
 * what was known when a week began, the one rule of "no peeking".
 *
 * Weeks and days are day numbers; a week is named by its Monday.
 */
export interface HarvestInput {
  /** The pick day when the harvest was dated (harvested_on); null when only its week is known. */
  day: number | null;
  /** The Monday of the harvest's ISO week. */
  week: number;
  kg: number;
}

export interface TrussCountInput {
  /** The count date. */
  day: number;
  /** Trusses per stem so far: the mean over counted plants of the highest truss number. */
  trussesPerStem: number;
  /** Mean fruit per set truss; null when the count holds no fruit. */
  fruitPerTruss: number | null;
  /** Stem density carried by this count date (stems/m²); null when it carries none. */
  stemsPerM2: number | null;
}

export interface WalkInput {
  /** The Monday of the week the walk is saved to. */
  week: number;
  green: number;
  turning: number;
  red: number;
  /** True when the counts are staff-corrected ones. */
  corrected: boolean;
}

export interface FruitMassInput {
  /** The Monday of the week the mass applies from. */
  week: number;
  green_g: number;
  turning_g: number;
  red_g: number;
}

export type TemperatureSource = 'air_temperature' | 'substrate_temperature';

export interface DayTemperature {
  day: number;
  meanC: number;
  /** Hours the mean rests on. */
  hours: number;
  source: TemperatureSource;
}

/** A day of outdoor weather forecast (daily mean of its hours), as fetched on `fetchedDay`. */
export interface OutdoorForecastDay {
  day: number;
  meanC: number;
  fetchedDay: number;
}

export interface CycleHistory {
  /** Monday of the cycle's first week, and of its last (null while it runs). */
  startWeek: number;
  /** The cycle's first day (started_on): the first truss count's trusses flowered since then at the latest. */
  startDay: number;
  endWeek: number | null;
  /** The last day of the cycle (ended_on); no pick is projected after it. */
  endDay: number | null;
  /** Growing area the records cover (m²); null when not known. */
  areaM2: number | null;
  /** The cycle's stem density, else its plant density (per m²): in force where no count date carries one. */
  stemsPerM2: number | null;
  harvests: HarvestInput[];
  trussCounts: TrussCountInput[];
  walks: WalkInput[];
  fruitMass: FruitMassInput[];
  /** Daily means of greenhouse temperature, one per day at most. */
  temperature: DayTemperature[];
  /** Outdoor forecast days kept from the last weather refresh. */
  outdoorForecast: OutdoorForecastDay[];
}

/**
 * The history as known when the week starting `week` (a Monday) began: records
 * dated before it, plus the walks and truss counts saved to the week itself.
 * Never a harvest of that week or later.
 */
export function asOf(h: CycleHistory, week: number): CycleHistory {
  const weekEnd = week + 6;
  return {
    ...h,
    harvests: h.harvests.filter((x) => x.week < week),
    trussCounts: h.trussCounts.filter((c) => c.day <= weekEnd),
    walks: h.walks.filter((x) => x.week <= week),
    fruitMass: h.fruitMass.filter((f) => f.week < week),
    temperature: h.temperature.filter((t) => t.day < week),
    // A weather forecast fetched during the week is known then, like its walks; it speaks only of days ahead.
    outdoorForecast: h.outdoorForecast.filter((d) => d.fetchedDay <= weekEnd && d.day >= week),
  };
}

/** Harvest kg per week (keyed by Monday). */
export function weeklyHarvest(harvests: readonly HarvestInput[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const x of harvests) out.set(x.week, (out.get(x.week) ?? 0) + x.kg);
  return out;
}
