import { sunElevationDeg } from '../time/sun.js';
import type { HourlySeries } from '../climate/readings/hourly.js';

/**
 * The week's climate from its stored hours: pure arithmetic over hourly series,
 * each figure with the number of hours it rests on. Day and night hours are told
 * apart by measured light where there is some, else by the sun's position at the
 * greenhouse, else by the clock (06:00 to 18:00 local).
 */
export const CLIMATE_SUMMARY_METRICS = [
  'air_temperature',
  'relative_humidity',
  'co2',
  'global_radiation',
  'par',
  'radiation_sum',
  'vpd',
] as const;

/** Global radiation above this is daylight (W/m²); PAR above `PAR_DAY` (µmol/m²/s). */
const GLOBAL_DAY = 5;
const PAR_DAY = 10;
/** 1 W/m² for an hour is 3600 J/m² = 0.36 J/cm². */
const J_CM2_PER_W_HOUR = 0.36;
/** 1 µmol/m²/s for an hour is 0.0036 mol/m². */
const MOL_PER_UMOL_HOUR = 0.0036;

export type DayBasis = 'global_radiation' | 'par' | 'outdoor_radiation' | 'sun_position' | 'clock_06_18';

export interface ClimateContext {
  latitude: number | null;
  longitude: number | null;
  /** Local hour of day (0–23) of an hour's start, for the clock rule. */
  localHour: (ms: number) => number;
  /** Outdoor short-wave radiation per hour (W/m²), from the stored weather. */
  outdoorRadiation?: ReadonlyMap<number, number>;
}

const round = (x: number | null, places = 2) => (x === null ? null : Math.round(x * 10 ** places) / 10 ** places);
const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);

/** Saturation vapour pressure over water (kPa), Tetens' formula. */
export function saturationVapourPressure(tC: number): number {
  return 0.6108 * Math.exp((17.27 * tC) / (tC + 237.3));
}

export function summariseClimate(series: ReadonlyMap<string, HourlySeries>, ctx: ClimateContext) {
  const byHour = (m: string) => {
    const s = series.get(m);
    const out = new Map<number, number>();
    if (s) for (let i = 0; i < s.at.length; i++) out.set(s.at[i]!, s.values[i]!);
    return out;
  };
  const air = byHour('air_temperature');
  const rh = byHour('relative_humidity');
  const co2 = byHour('co2');
  const glob = byHour('global_radiation');
  const par = byHour('par');
  const radSum = byHour('radiation_sum');
  const vpd = byHour('vpd');

  const bases = new Map<DayBasis, number>();
  const isDay = (ms: number): boolean => {
    let basis: DayBasis;
    let day: boolean;
    if (glob.has(ms)) [basis, day] = ['global_radiation', glob.get(ms)! > GLOBAL_DAY];
    else if (par.has(ms)) [basis, day] = ['par', par.get(ms)! > PAR_DAY];
    else if (ctx.outdoorRadiation?.has(ms)) [basis, day] = ['outdoor_radiation', ctx.outdoorRadiation.get(ms)! > GLOBAL_DAY];
    else if (ctx.latitude !== null && ctx.longitude !== null)
      [basis, day] = ['sun_position', sunElevationDeg(ms + 1_800_000, ctx.latitude, ctx.longitude) > 0];
    else {
      const h = ctx.localHour(ms);
      [basis, day] = ['clock_06_18', h >= 6 && h < 18];
    }
    bases.set(basis, (bases.get(basis) ?? 0) + 1);
    return day;
  };

  const dayT: number[] = [];
  const nightT: number[] = [];
  for (const [ms, t] of air) (isDay(ms) ? dayT : nightT).push(t);
  const co2Day: number[] = [];
  for (const [ms, v] of co2) if (isDay(ms)) co2Day.push(v);

  // Radiation sum: stored sums where there are some, else the hourly global radiation integrated.
  let radiation: { j_cm2: number | null; hours: number; basis: 'radiation_sum' | 'global_radiation' | null };
  if (radSum.size) radiation = { j_cm2: [...radSum.values()].reduce((s, x) => s + x, 0), hours: radSum.size, basis: 'radiation_sum' };
  else if (glob.size)
    radiation = {
      j_cm2: [...glob.values()].reduce((s, x) => s + Math.max(0, x) * J_CM2_PER_W_HOUR, 0),
      hours: glob.size,
      basis: 'global_radiation',
    };
  else radiation = { j_cm2: null, hours: 0, basis: null };

  // VPD: stored where there is some, else from the air temperature and humidity of the same hours.
  let vpdOut: { mean_kpa: number | null; hours: number; basis: 'vpd' | 'air_temperature_and_relative_humidity' | null };
  if (vpd.size) vpdOut = { mean_kpa: mean([...vpd.values()]), hours: vpd.size, basis: 'vpd' };
  else {
    const derived: number[] = [];
    for (const [ms, t] of air) {
      const h = rh.get(ms);
      if (h !== undefined) derived.push(saturationVapourPressure(t) * (1 - h / 100));
    }
    vpdOut = derived.length
      ? { mean_kpa: mean(derived), hours: derived.length, basis: 'air_temperature_and_relative_humidity' }
      : { mean_kpa: null, hours: 0, basis: null };
  }

  const allHours = new Set<number>();
  for (const s of series.values()) for (const ms of s.at) allHours.add(ms);
  let dayBasis: DayBasis | null = null;
  let most = 0;
  for (const [b, n] of bases)
    if (n > most) {
      most = n;
      dayBasis = b;
    }
  const lightHours = par.size;
  const dli = lightHours ? [...par.values()].reduce((s, x) => s + Math.max(0, x) * MOL_PER_UMOL_HOUR, 0) : null;
  return {
    hours: allHours.size,
    day_basis: dayBasis,
    air_temperature: {
      mean_24h_c: round(mean([...dayT, ...nightT])),
      mean_day_c: round(mean(dayT)),
      mean_night_c: round(mean(nightT)),
      hours: air.size,
      day_hours: dayT.length,
      night_hours: nightT.length,
    },
    relative_humidity: { mean_pct: round(mean([...rh.values()])), hours: rh.size },
    co2_day: { mean_ppm: round(mean(co2Day), 0), hours: co2Day.length },
    radiation_sum: { j_cm2: round(radiation.j_cm2, 1), hours: radiation.hours, basis: radiation.basis },
    light_integral: { mol_m2: round(dli, 2), hours: lightHours },
    vpd: { mean_kpa: round(vpdOut.mean_kpa, 3), hours: vpdOut.hours, basis: vpdOut.basis },
  };
}

export type ClimateSummary = ReturnType<typeof summariseClimate>;
