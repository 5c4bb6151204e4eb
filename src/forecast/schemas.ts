import type { JsonSchema, ObjectSchema } from '../http/route.js';
import { instantSchema, pagingQuery, weekLabelSchema, weekSchema } from '../http/schemas.js';
import { parentProperties, PARENT_FIELDS } from '../records/common.js';

/** JSON Schemas of the forecast, stored forecasts and backtest answers; every unit in its description. */
const obj = (properties: Record<string, JsonSchema>, description?: string): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
  ...(description ? { description } : {}),
});
const num = (description: string): JsonSchema => ({ type: 'number', description });
const numOrNull = (description: string): JsonSchema => ({ type: ['number', 'null'], description });
const intSchema = (description: string): JsonSchema => ({ type: 'integer', description });
const text = (description: string): JsonSchema => ({ type: 'string', description });
const textOrNull = (description: string): JsonSchema => ({ type: ['string', 'null'], description });
const dateOrNull = (description: string): JsonSchema => ({ type: ['string', 'null'], format: 'date', description });
const METHOD: JsonSchema = {
  enum: ['model', 'persistence', 'mean_3_weeks'],
  description:
    "What answered: the model, or a naive baseline when the cycle's own rolling backtest says the model does worse at this horizon (or the model has nothing to go on).",
};

export const forecastQuery: ObjectSchema = {
  type: 'object',
  properties: {
    week: {
      ...weekSchema,
      description: `The week to forecast as of (horizon 0): ${(weekSchema.description as string).replace(/^ISO 8601 week: /, '')}. Default: the latest week with a scored walk; without walks, the current week. It must lie inside the crop cycle and have begun.`,
    },
  },
};

export const areaSchema = obj(
  {
    area_m2: numOrNull('Growing area the figures per m² divide by (m²); null when not known.'),
    basis: {
      enum: ['cycle_area_m2', 'row_plant_count_over_plants_per_m2', null],
      description: "Where the area comes from: the crop cycle's area_m2, or the row's plant_count divided by the cycle's plants_per_m2.",
    },
    reason: textOrNull('Why there is no area (and every figure per m² is null); null when there is one.'),
  },
  'The area every figure per m² of this answer used.',
);

const calibrationSchema = obj(
  {
    factor: num('Realized ÷ forecast kg over recent complete weeks, within its bounds; 1 before any harvest.'),
    pairs: intSchema('Complete weeks the factor rests on.'),
    bounded: { type: 'boolean', description: 'Whether the bounds (0.5 to 2) held the factor in.' },
    basis: {
      enum: ['horizon', 'horizon_0', 'none'],
      description: "The misses it rests on: this horizon's, horizon 0's (too few of this horizon), or none yet.",
    },
  },
  'How the model was scaled to what was harvested.',
);

export const forecastWeekSchema = obj({
  week: { ...weekLabelSchema, description: 'The forecast week.' },
  horizon: intSchema('Weeks after the week the forecast is made as of (0 to 7).'),
  kg: num('Kilograms expected to be harvested in the week.'),
  kg_per_m2: numOrNull('kg per m² of the area; null without an area (see area.reason).'),
  p10_kg: num(
    '10th percentile of the range (kg): past actual ÷ forecast ratios at this horizon, or ±(25 % + 5 %/week) without enough of them.',
  ),
  p90_kg: num('90th percentile of the range (kg).'),
  method: METHOD,
  range: obj({
    basis: {
      enum: ['past_errors', 'default'],
      description: 'Past errors at this horizon (at least 4 complete weeks), or the default band.',
    },
    pairs: intSchema('Complete weeks with a forecast at this horizon the range rests on.'),
  }),
  model: obj({
    kg: numOrNull("The calibrated model's kg; null when the model had nothing to go on."),
    raw_kg: numOrNull("The model's kg before calibration."),
    calibration: calibrationSchema,
  }),
  baselines: obj({
    persistence_kg: num("Naive: the last complete week's harvest (kg)."),
    mean_3_weeks_kg: num('Naive: the mean harvest of the last three complete weeks (kg).'),
  }),
  fallback: obj(
    {
      pairs: intSchema('Complete weeks (since harvest began) of the rolling backtest at this horizon.'),
      model_wape: numOrNull("The model's WAPE on them (sum of |error| ÷ sum of actual kg); null without harvest."),
      persistence_wape: numOrNull("Persistence's WAPE on the same weeks."),
      mean_3_weeks_wape: numOrNull("mean_3_weeks' WAPE on the same weeks."),
      reason: text('Why the method answered, in words.'),
    },
    "The cycle's own rolling backtest at this horizon, which decides between the model and a baseline.",
  ),
  inputs: obj(
    {
      picks: {
        type: 'array',
        items: { type: 'string', format: 'date' },
        description: 'Pick days in the week: projected by the learned rhythm, or every day when harvests carry no dates.',
      },
      ripening_since: { type: 'string', format: 'date', description: "The week's first pick takes what ripened after this day." },
      from_trusses_kg: numOrNull('Kilos from the truss cohorts (before calibration); null when not used.'),
      from_walk_kg: numOrNull("Kilos from the walk's counts (before calibration); null when not used."),
      flowered_from: dateOrNull('Earliest flowering day of the trusses ripening in the week.'),
      flowered_to: dateOrNull('Latest flowering day of the trusses ripening in the week.'),
      projected_share: numOrNull('Share of those fruit from trusses not counted yet (projected at the recent rate), 0 to 1.'),
      development_days: numOrNull('Mean days from flowering to ripe of those fruit, at the temperatures stored and assumed.'),
      temperature_c: num("Mean greenhouse temperature of the week's days (°C): stored before the forecast, assumed after."),
    },
    'What this week of the forecast rests on.',
  ),
});

export const forecastInputsSchema = obj(
  {
    truss_counts: obj({
      used: { type: 'boolean' },
      reason: textOrNull('Why the truss counts were not used.'),
      counts: intSchema('Count dates known as of the week.'),
      last_counted_on: dateOrNull('The latest of them.'),
      trusses_per_stem_per_week: numOrNull('Recent new trusses per stem per week (the rate projected after the last count).'),
      fruit_per_truss: numOrNull('Fruit per set truss of the latest count.'),
      stems_per_m2: numOrNull('Stem density in force at the latest count (stems/m²).'),
    }),
    walk: obj({
      used: { type: 'boolean' },
      reason: textOrNull('Why no walk was used.'),
      week: {
        type: ['string', 'null'],
        pattern: '^\\d{4}-W\\d{2}$',
        description: 'The walk used: the latest of the week or the week before.',
      },
      counts: {
        type: ['object', 'null'],
        additionalProperties: false,
        required: ['green', 'turning', 'red'],
        properties: { green: { type: 'integer' }, turning: { type: 'integer' }, red: { type: 'integer' } },
        description: 'Its counts by ripeness (corrected where staff corrected them).',
      },
      corrected: { type: ['boolean', 'null'], description: 'Whether staff corrected the counts.' },
    }),
    fruit_mass: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['week', 'green_g', 'turning_g', 'red_g'],
      properties: {
        week: { ...weekLabelSchema, description: 'The week the values apply from.' },
        green_g: num('g per green fruit.'),
        turning_g: num('g per turning fruit.'),
        red_g: num('g per red fruit.'),
      },
      description: 'Fruit mass in force as of the week; null when none was typed before it.',
    },
    temperature: obj({
      source: {
        enum: ['air_temperature', 'substrate_temperature', 'default'],
        description: 'What the stored days rest on (most days): air temperature, else substrate, else the default 20 °C.',
      },
      stored_days: intSchema('Days with a stored daily mean before the week.'),
      ahead_c: num('Temperature assumed for the days from the week on (°C).'),
      ahead_basis: { enum: ['recent_mean', 'default'], description: 'The mean of the last 7 stored days, or the default.' },
      outdoor_raised_days: intSchema('Days ahead raised to the stored outdoor forecast (+1 °C).'),
      development_days_ahead: num('Days from flowering to ripe at the temperature assumed ahead.'),
    }),
    pick_calendar: obj({
      mode: {
        enum: ['picks', 'continuous'],
        description: 'picks: a rhythm learned from dated harvests; continuous: each week takes its own 7 days of ripening.',
      },
      basis: { enum: ['repeating_intervals', 'median_interval', 'no_dated_picks', 'too_few_picks'] },
      last_pick: dateOrNull('The last dated pick before the week.'),
      pattern_days: { type: 'array', items: { type: 'integer' }, description: 'The intervals between picks (days) repeated forward.' },
      learned_from: intSchema('Dated picks the rhythm was learned from.'),
    }),
  },
  'What the forecast rested on.',
);

export const forecastSchema = obj({
  ...parentProperties,
  week: { ...weekLabelSchema, description: 'The week the forecast is made as of (horizon 0).' },
  as_of: text('What "as of the week" means.'),
  model: text("The model's name and version."),
  area: areaSchema,
  total_kg: num('Kilograms over the eight weeks.'),
  total_kg_per_m2: numOrNull('kg per m² over the eight weeks.'),
  notes: {
    type: 'array',
    items: { type: 'string' },
    description:
      'What to know first, in words: inputs left out and why, and the weeks a naive baseline answered with the reason (each reason once).',
  },
  inputs: forecastInputsSchema,
  weeks: { type: 'array', minItems: 8, maxItems: 8, items: forecastWeekSchema, description: 'The week and the seven after it.' },
});

const storedWeekSchema = obj({
  week: { ...weekLabelSchema, description: 'The forecast week.' },
  horizon: intSchema('Weeks after the week the forecast was made as of.'),
  kg: num('Kilograms forecast, as issued.'),
  kg_per_m2: numOrNull('kg per m², as issued.'),
  p10_kg: num('10th percentile, as issued (kg).'),
  p90_kg: num('90th percentile, as issued (kg).'),
  method: METHOD,
  realized_kg: num('Kilograms harvested in the week, as stored now (an edited harvest shows here).'),
  realized_kg_per_m2: numOrNull('The same per m² of the area now.'),
  complete: { type: 'boolean', description: 'Whether the week has ended (by the greenhouse clock), so the error is final.' },
  error_kg: numOrNull('Forecast − realized (kg), once the week is complete.'),
  abs_pct_error: numOrNull('|error| ÷ realized, once complete and something was harvested.'),
});

export const storedForecastSchema = obj({
  forecast_id: text('Id of the stored forecast (UUIDv7).'),
  ...parentProperties,
  week: { ...weekLabelSchema, description: 'The week it was made as of.' },
  made_at: { ...instantSchema, description: 'When it was issued (UTC).' },
  made_by: text('Who issued it: the key name, or "system" for a schedule.'),
  made_by_key_id: textOrNull('The key that issued it.'),
  model: text("The model's name and version."),
  weeks: { type: 'array', items: storedWeekSchema, description: 'The forecast weeks as issued, each with the harvest since.' },
  inputs: { type: 'object', description: 'What it rested on when issued (the forecast answer’s area and inputs).' },
  version: text('Version stamp; never changes, since a stored forecast is never changed.'),
});

export const storedForecastsQuery: ObjectSchema = pagingQuery({
  week: { ...weekSchema, description: 'Only the forecasts made as of this week.' },
});

export const backtestSchema = obj({
  ...parentProperties,
  model: text("The model's name and version."),
  as_of: text('What "as of the week" means for each replayed week.'),
  complete_before: { ...weekLabelSchema, description: 'Weeks before this one (the current week) are complete and counted.' },
  area: areaSchema,
  horizons: {
    type: 'array',
    description: 'Errors per horizon over every complete week, the model against both baselines on the same weeks.',
    items: obj({
      horizon: intSchema('0 is the week the forecast is made for; 7 the seventh after it.'),
      n: intSchema('Complete weeks counted.'),
      actual_kg: num('Kilograms harvested over them.'),
      mae_kg: numOrNull('Mean absolute error (kg).'),
      wape: numOrNull('Sum of absolute errors ÷ sum of actual kg; null when nothing was harvested.'),
      bias_kg: numOrNull('Mean of forecast − actual (kg): positive forecasts too much.'),
      baselines: obj({
        persistence: obj({ mae_kg: numOrNull('kg'), wape: numOrNull('WAPE') }),
        mean_3_weeks: obj({ mae_kg: numOrNull('kg'), wape: numOrNull('WAPE') }),
      }),
    }),
  },
  weeks: {
    type: 'array',
    description: 'Every replayed week with its forecast and the actuals.',
    items: obj({
      week: { ...weekLabelSchema, description: 'The week the forecast was replayed as of.' },
      forecasts: {
        type: 'array',
        items: obj({
          horizon: intSchema('Horizon.'),
          week: { ...weekLabelSchema, description: 'The forecast week.' },
          kg: num('Forecast kg.'),
          p10_kg: num('10th percentile (kg).'),
          p90_kg: num('90th percentile (kg).'),
          method: METHOD,
          actual_kg: numOrNull('Harvested kg, once the week is complete.'),
          baselines: obj({ persistence_kg: num('kg'), mean_3_weeks_kg: num('kg') }),
        }),
      },
    }),
  },
});

export const exportQuery: ObjectSchema = {
  type: 'object',
  properties: {
    delimiter: {
      enum: ['comma', 'semicolon'],
      default: 'comma',
      description: 'comma: `,` between cells and decimal points; semicolon: `;` and decimal commas (European spreadsheets).',
    },
  },
};

export { PARENT_FIELDS };
