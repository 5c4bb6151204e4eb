// The vocabulary of climate metrics: what typed readings and imported exports may store,
// in which unit, how finer readings make an hour, and which values are impossible.
import { conversion, parseUnit, unitBySymbol, type CanonicalUnit } from '../units/units.js';

/**
 * How readings within one hour make the hour's value: `mean` for states (a temperature),
 * `sum` for amounts accumulated over the reading's interval (rain, a radiation sum, CO₂ dosed),
 * `circular_mean` for directions (the mean of 350° and 10° is 0°, not 180°), `last` for a value
 * that is already a day's total (a daily light integral): within an hour the last one read, so
 * a daily row stays one reading at the day's start and a running total is never summed again.
 */
export type Aggregation = 'mean' | 'sum' | 'circular_mean' | 'last';

export interface ClimateMetric {
  name: string;
  unit: CanonicalUnit;
  aggregate: Aggregation;
  /** Inclusive bounds in the canonical unit; values outside are sensor faults or fill values. */
  range: readonly [number, number];
  /** A value the climate computer aimed for, not one it measured. */
  setpoint: boolean;
  /** Measured outside the greenhouse. */
  outside: boolean;
  /** A day's value: one reading per day, stamped at the start of its day (local midnight). */
  daily: boolean;
  description: string;
}

const M = (
  name: string,
  unit: CanonicalUnit,
  aggregate: Aggregation,
  range: [number, number],
  description: string,
  flags: { setpoint?: boolean; outside?: boolean; daily?: boolean } = {},
): ClimateMetric => ({
  name,
  unit,
  aggregate,
  range,
  description,
  setpoint: flags.setpoint ?? false,
  outside: flags.outside ?? false,
  daily: flags.daily ?? false,
});

// Ranges are wide on purpose: they reject fill values (-9999, 5.47e+34, -2.14748e+08)
// and unit mistakes, not unusual weather. Small negative light readings are normal
// night-time sensor offsets.
export const CLIMATE_METRICS: readonly ClimateMetric[] = [
  M('air_temperature', '°C', 'mean', [-40, 70], 'Greenhouse air temperature.'),
  M('relative_humidity', '%', 'mean', [0, 100], 'Greenhouse air relative humidity.'),
  M('co2', 'ppm', 'mean', [0, 20000], 'Greenhouse air CO₂ concentration.'),
  M('global_radiation', 'W/m²', 'mean', [-50, 2000], 'Global (short-wave) solar radiation, usually measured outside on the roof.'),
  M('par', 'µmol/m²/s', 'mean', [-50, 4000], 'Photosynthetically active radiation at the crop (photon flux density).'),
  M('radiation_sum', 'J/cm²', 'sum', [0, 10000], 'Global radiation accumulated over the reading interval.'),
  M('vpd', 'kPa', 'mean', [0, 10], 'Vapour pressure deficit of the greenhouse air.'),
  M('humidity_deficit', 'g/m³', 'mean', [0, 100], 'Humidity deficit of the greenhouse air (absolute, g/m³; not VPD).'),
  M('absolute_humidity', 'g/m³', 'mean', [0, 100], 'Water vapour content of the greenhouse air.'),
  M('dew_point', '°C', 'mean', [-60, 60], 'Dew point of the greenhouse air.'),
  M('pipe_temperature', '°C', 'mean', [-20, 130], 'Heating pipe (water flow) temperature.'),
  M('vent_opening', '%', 'mean', [0, 100], 'Roof vent (window) opening.'),
  M('screen_position', '%', 'mean', [0, 100], 'Energy or shade screen closure.'),
  M('substrate_temperature', '°C', 'mean', [-20, 70], 'Root-zone (slab, substrate) temperature.'),
  M('substrate_ec', 'mS/cm', 'mean', [0, 50], 'Electrical conductivity in the substrate.'),
  M('substrate_water_content', '%', 'mean', [0, 100], 'Volumetric water content of the substrate.'),
  M('leaf_temperature', '°C', 'mean', [-40, 70], 'Leaf or crop surface temperature.'),
  M('outside_temperature', '°C', 'mean', [-60, 60], 'Outside air temperature.', { outside: true }),
  M('outside_relative_humidity', '%', 'mean', [0, 100], 'Outside air relative humidity.', { outside: true }),
  M('wind_speed', 'm/s', 'mean', [0, 80], 'Outside wind speed.', { outside: true }),
  M('wind_direction', '°', 'circular_mean', [0, 360], 'Outside wind direction, degrees from north.', { outside: true }),
  M('rain', 'mm', 'sum', [0, 500], 'Rain fallen during the reading interval.', { outside: true }),
  M('air_pressure', 'hPa', 'mean', [800, 1100], 'Atmospheric pressure.', { outside: true }),
  M('co2_dosing', 'kg/ha', 'sum', [0, 1000], 'CO₂ dosed during the reading interval.'),
  M('heating_setpoint', '°C', 'mean', [-20, 60], 'Air temperature the heating aims for.', { setpoint: true }),
  M('ventilation_setpoint', '°C', 'mean', [-20, 60], 'Air temperature above which the vents open.', { setpoint: true }),
  M('co2_setpoint', 'ppm', 'mean', [0, 20000], 'CO₂ concentration the dosing aims for.', { setpoint: true }),
  M('humidity_setpoint', '%', 'mean', [0, 100], 'Relative humidity the climate computer aims for.', { setpoint: true }),
  M('pipe_setpoint', '°C', 'mean', [-20, 130], 'Heating pipe temperature the climate computer aims for.', { setpoint: true }),
  // Daily values, as crop-registration and energy programs export them: one row per day.
  M('daily_light_integral', 'mol/m²/d', 'last', [0, 100], 'Daily light integral: PAR photons received in the day.', { daily: true }),
  M('daily_radiation_sum', 'J/cm²', 'last', [0, 5000], 'Global radiation received in the day (a radiation sum of daily rows).', {
    daily: true,
  }),
  M('daily_heat_energy', 'MJ/m²', 'last', [0, 100], 'Heat used in the day per m² of greenhouse.', { daily: true }),
  M('daily_electricity', 'kWh/m²', 'last', [0, 50], 'Electricity used in the day per m² of greenhouse (lamps, pumps, fans).', {
    daily: true,
  }),
];

/** The daily metric an amount per reading interval becomes when the rows are days. */
export const DAILY_OF: Readonly<Record<string, string>> = { radiation_sum: 'daily_radiation_sum' };

const BY_NAME = new Map(CLIMATE_METRICS.map((m) => [m.name, m]));

export function isClimateMetric(name: unknown): name is string {
  return typeof name === 'string' && BY_NAME.has(name);
}

export function climateMetric(name: string): ClimateMetric | null {
  return BY_NAME.get(name) ?? null;
}

export type ToCanonicalResult = { ok: true; value: number; conversion: string | null } | { ok: false; message: string };

/**
 * Checks one reading and brings it to the metric's canonical unit. `unit` left out means the
 * value is already canonical. Every refusal message is fit for a 422 answer.
 */
export function toCanonical(metric: string, value: number, unit?: string | null): ToCanonicalResult {
  const m = BY_NAME.get(metric);
  if (!m) return { ok: false, message: `unknown metric '${metric}'; known metrics: ${CLIMATE_METRICS.map((x) => x.name).join(', ')}` };
  if (typeof value !== 'number' || !Number.isFinite(value)) return { ok: false, message: `value must be a finite number` };
  let v = value;
  let label: string | null = null;
  if (unit != null && unit !== '') {
    const from = unitBySymbol(unit) ?? parseUnit(unit);
    if (!from) return { ok: false, message: `unknown unit '${unit}' for ${metric} (canonical unit ${m.unit})` };
    const c = conversion(from, m.unit);
    if (!c) return { ok: false, message: `unit '${unit}' cannot be converted to ${m.unit} for ${metric}` };
    v = c.apply(value);
    label = c.identity ? null : c.label;
  }
  const [lo, hi] = m.range;
  if (!(v >= lo && v <= hi)) {
    return { ok: false, message: `${metric} ${formatNumber(v)} ${m.unit} is outside the plausible range ${lo} to ${hi} ${m.unit}` };
  }
  return { ok: true, value: v, conversion: label };
}

function formatNumber(v: number): string {
  return Math.abs(v) >= 1e6 || (v !== 0 && Math.abs(v) < 1e-4) ? v.toExponential(3) : String(Math.round(v * 1e4) / 1e4);
}
