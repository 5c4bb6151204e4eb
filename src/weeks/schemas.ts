import type { JsonSchema } from '../http/route.js';
import { countsSchema, weekLabelSchema } from '../http/schemas.js';
import { parentProperties } from '../records/common.js';
import { areaSchema } from '../forecast/schemas.js';

const obj = (properties: Record<string, JsonSchema>, description?: string): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
  ...(description ? { description } : {}),
});
const n = (description: string): JsonSchema => ({ type: ['number', 'null'], description });
const int = (description: string): JsonSchema => ({ type: 'integer', description });
const hours = int('Hours it rests on.');
const countsOrNull: JsonSchema = { ...countsSchema, type: ['object', 'null'] };
const METHOD: JsonSchema = { enum: ['model', 'persistence', 'mean_3_weeks'] };

const perM2Counts: JsonSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['green', 'turning', 'red', 'total'],
  properties: { green: { type: 'number' }, turning: { type: 'number' }, red: { type: 'number' }, total: { type: 'number' } },
  description: 'Corrected fruit per m² of the area, by ripeness; null without a scored walk or an area (see fruit_per_m2_reason).',
};

const productivity = (extra: Record<string, JsonSchema> = {}) =>
  obj({
    kg_per_m3: n('Kilograms harvested per m³ of irrigation water given.'),
    reason: { type: ['string', 'null'], description: 'Why kg_per_m3 is null.' },
    ...extra,
  });

export const weekReadSchema = obj({
  ...parentProperties,
  week: { ...weekLabelSchema, description: 'The week read.' },
  start: { type: 'string', format: 'date', description: 'Its Monday.' },
  end: { type: 'string', format: 'date', description: 'Its Sunday.' },
  time_zone: { type: 'string', description: 'The greenhouse zone the week is read in.' },
  area: areaSchema,
  note: { type: ['object', 'null'], description: "The week's saved note object, or null." },
  walks: obj({
    items: {
      type: 'array',
      description: 'The walks saved to the week, oldest first.',
      items: obj({
        job_id: { type: 'string', description: 'The walk (its scoring job).' },
        status: { enum: ['queued', 'running', 'done', 'failed'] },
        created_at: { type: 'string', format: 'date-time' },
        model_counts: { ...countsOrNull, description: "The detector's counts; null until scored." },
        corrected_counts: { ...countsOrNull, description: 'The counts after staff corrections (these count); null until scored.' },
      }),
    },
    model_counts: { ...countsOrNull, description: "The detector's counts summed over the week's scored walks." },
    corrected_counts: { ...countsOrNull, description: "The corrected counts summed over the week's scored walks." },
    fruit_per_m2: perM2Counts,
    fruit_per_m2_reason: { type: ['string', 'null'] },
  }),
  harvest: obj({
    kg: { type: 'number', description: 'Kilograms harvested in the week.' },
    harvests: int('Harvest records.'),
    picks: int('Picks: distinct harvest days, each undated harvest a pick of its own.'),
    kg_per_m2: n('kg per m² of the area.'),
    kg_per_m2_reason: { type: ['string', 'null'], description: 'Why kg_per_m2 is null.' },
  }),
  irrigation: obj({
    entries: int('Entries logged in the week (greenhouse clock).'),
    volume_l: n('Water given (L).'),
    water_m3: n('Water given (m³).'),
    drain_l: n('Drain (L).'),
    drain_pct: n('Drain ÷ water given, over entries with both (%).'),
    ec_in_mean: n('Mean EC of the water given (mS/cm).'),
    ec_drain_mean: n('Mean EC of the drain (mS/cm).'),
    ph_in_mean: n('Mean pH of the water given.'),
    ph_drain_mean: n('Mean pH of the drain.'),
  }),
  climate: obj(
    {
      hours: int('Hours with any stored reading.'),
      day_basis: {
        enum: ['global_radiation', 'par', 'outdoor_radiation', 'sun_position', 'clock_06_18', null],
        description:
          'How day hours were told from night hours (for most hours): measured light, the outdoor weather, the sun at the greenhouse, or 06:00–18:00.',
      },
      air_temperature: obj({
        mean_24h_c: n('Mean of all hours (°C).'),
        mean_day_c: n('Mean of day hours (°C).'),
        mean_night_c: n('Mean of night hours (°C).'),
        hours,
        day_hours: int('Day hours.'),
        night_hours: int('Night hours.'),
      }),
      relative_humidity: obj({ mean_pct: n('Mean relative humidity (%).'), hours }),
      co2_day: obj({ mean_ppm: n('Mean CO₂ of day hours (ppm).'), hours }),
      radiation_sum: obj({
        j_cm2: n('Radiation sum over the week (J/cm²).'),
        hours,
        basis: { enum: ['radiation_sum', 'global_radiation', null], description: 'Stored sums, else hourly global radiation integrated.' },
      }),
      light_integral: obj({ mol_m2: n('PAR integrated over the week (mol/m²); null where PAR is not stored.'), hours }),
      vpd: obj({
        mean_kpa: n('Mean vapour pressure deficit (kPa).'),
        hours,
        basis: {
          enum: ['vpd', 'air_temperature_and_relative_humidity', null],
          description: 'Stored, else from air temperature and humidity.',
        },
      }),
    },
    'The week’s climate from the stored readings (hourly).',
  ),
  outdoor_weather: obj(
    {
      hours: int('Stored outdoor hours in the week.'),
      past_hours: int('Of them, past when last fetched.'),
      forecast_hours: int('Of them, forecast when last fetched.'),
      last_fetched_at: { type: ['string', 'null'], format: 'date-time' },
      temperature: obj({ mean_c: n('°C'), min_c: n('°C'), max_c: n('°C') }),
      relative_humidity_mean_pct: n('%'),
      radiation_sum_j_cm2: n('Short-wave radiation summed (J/cm²).'),
      precipitation_mm: n('mm'),
      wind_speed_mean_m_s: n('m/s'),
      days: {
        type: 'array',
        description: 'Each local day of the week (a day with a clock change has 23 or 25 hours).',
        items: obj({
          date: { type: 'string', format: 'date' },
          hours_in_day: int('Hours the local day has.'),
          hours: int('Stored hours in it.'),
          past_hours: int('Past.'),
          forecast_hours: int('Forecast.'),
          mean_c: n('°C'),
          min_c: n('°C'),
          max_c: n('°C'),
          precipitation_mm: n('mm'),
          radiation_sum_j_cm2: n('J/cm²'),
        }),
      },
    },
    'The greenhouse’s outdoor weather in the week (POST {cycle}/weather stores it).',
  ),
  water_productivity: obj({
    week: productivity(),
    cycle_to_date: productivity({
      harvest_kg: { type: 'number', description: 'Harvest from the cycle’s start to the end of this week (kg).' },
      water_m3: n('Water given from the start to the end of this week (m³).'),
    }),
  }),
  fruit_mass: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['week', 'green_g', 'turning_g', 'red_g'],
    properties: {
      week: { ...weekLabelSchema, description: 'Week the values apply from.' },
      green_g: { type: 'number' },
      turning_g: { type: 'number' },
      red_g: { type: 'number' },
    },
    description: 'Fruit mass in force for the week (g per fruit by ripeness).',
  },
  forecast: obj({
    live: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['as_of', 'horizon', 'kg', 'kg_per_m2', 'p10_kg', 'p90_kg', 'method', 'reason'],
      properties: {
        as_of: { ...weekLabelSchema, description: 'The week it is made as of: this week, or the current one when this week is ahead.' },
        horizon: int('Weeks from as_of.'),
        kg: { type: 'number' },
        kg_per_m2: n('kg/m²'),
        p10_kg: { type: 'number' },
        p90_kg: { type: 'number' },
        method: METHOD,
        reason: { type: 'string', description: 'Why the method answered.' },
      },
      description: 'The forecast for this week as the model makes it now (GET forecast), null with live_reason when there is none.',
    },
    live_reason: { type: ['string', 'null'] },
    stored: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['forecast_id', 'as_of', 'made_at', 'made_by', 'horizon', 'kg', 'kg_per_m2', 'p10_kg', 'p90_kg', 'method'],
      properties: {
        forecast_id: { type: 'string' },
        as_of: weekLabelSchema,
        made_at: { type: 'string', format: 'date-time' },
        made_by: { type: 'string' },
        horizon: { type: 'integer' },
        kg: { type: 'number' },
        kg_per_m2: n('kg/m²'),
        p10_kg: { type: 'number' },
        p90_kg: { type: 'number' },
        method: METHOD,
      },
      description: 'The latest stored forecast that covered this week, as issued; null when none did.',
    },
  }),
});
