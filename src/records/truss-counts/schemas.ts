import { parentProperties, PARENT_FIELDS } from '../common.js';
import { dateSchema, syncedFields, weekLabelSchema } from '../../http/schemas.js';
import type { JsonSchema, ObjectSchema } from '../../http/route.js';
import { FIGURE_NAMES } from './figures.js';

export const MAX_ROWS = 5000;

const countedOn: JsonSchema = { ...dateSchema, description: 'The count date, a local date YYYY-MM-DD in the greenhouse time zone.' };

const stemsSchema: JsonSchema = {
  type: ['number', 'null'],
  exclusiveMinimum: 0,
  maximum: 100,
  'x-unit': 'stems/m²',
  description:
    "Stem density from this count date on (stems/m², greater than 0, at most 100; e.g. when extra stems are kept), until a later count date carries another; it wins over the crop cycle's stems_per_m2 for this date's figures and for the forecast's truss cohorts. Left out or null: the date carries none.",
};

const rowSchema: ObjectSchema = {
  type: 'object',
  required: ['plant', 'truss', 'fruits'],
  additionalProperties: false,
  properties: {
    plant: { type: 'string', minLength: 1, maxLength: 50, description: 'Tag of the counted plant (head), at most 50 characters.' },
    truss: { type: 'integer', minimum: 1, maximum: 1000, description: 'Truss number on that plant, counted from the bottom, 1 to 1000.' },
    fruits: { type: 'integer', minimum: 0, maximum: 1000, description: 'Fruit set on the truss (count, 0 to 1000).' },
    flowers: { type: 'integer', minimum: 0, maximum: 1000, description: 'Open flowers on the truss (count, 0 to 1000); optional.' },
  },
};

export const saveTrussCountBody: ObjectSchema = {
  type: 'object',
  required: ['counted_on', 'rows'],
  additionalProperties: false,
  description: `One count date with its rows (1 to ${MAX_ROWS}); each (plant, truss) at most once (422 naming the row otherwise). Saving a date again replaces all its rows.`,
  properties: {
    counted_on: countedOn,
    stems_per_m2: stemsSchema,
    rows: { type: 'array', minItems: 1, maxItems: MAX_ROWS, items: rowSchema, description: `The counted trusses, 1 to ${MAX_ROWS}.` },
  },
};

const ratio = (text: string): JsonSchema => ({ type: 'number', description: text });
const nullableRatio = (text: string): JsonSchema => ({ type: ['number', 'null'], description: text });

export const figuresSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'plants',
    'trusses',
    'fruits',
    'flowers',
    'fruit_per_truss',
    'trusses_per_plant',
    'fruit_per_plant',
    'flowers_per_plant',
    'fruit_per_m2',
    'density_per_m2',
    'density_basis',
    'density_from',
    'fruit_per_m2_reason',
  ],
  description: 'What the forecast needs from this count (rounded to 4 decimals).',
  properties: {
    plants: { type: 'integer', description: 'Distinct plants counted.' },
    trusses: { type: 'integer', description: 'Trusses counted (rows).' },
    fruits: { type: 'integer', description: 'Fruit counted, all trusses.' },
    flowers: { type: ['integer', 'null'], description: 'Flowers counted; null when no row has flowers.' },
    fruit_per_truss: ratio('Mean fruit per truss.'),
    trusses_per_plant: ratio('Trusses per counted plant.'),
    fruit_per_plant: ratio('Fruit per counted plant.'),
    flowers_per_plant: nullableRatio('Flowers per counted plant; null when no row has flowers.'),
    fruit_per_m2: nullableRatio(
      "Fruit per m²: fruit per plant × the stem density in force (this or the last earlier count date's stems_per_m2, else the cycle's stems_per_m2, else its plants_per_m2); null when there is none.",
    ),
    density_per_m2: nullableRatio('The density that scaled fruit_per_m2 (stems or plants per m²).'),
    density_basis: {
      enum: ['truss_count', 'stems_per_m2', 'plants_per_m2', null],
      description:
        "Which density scaled fruit_per_m2: truss_count (a count date's stems_per_m2, see density_from), or the crop cycle's stems_per_m2 or plants_per_m2.",
    },
    density_from: {
      type: ['string', 'null'],
      format: 'date',
      description: 'For density_basis truss_count: the count date that carried it.',
    },
    fruit_per_m2_reason: { type: ['string', 'null'], description: 'Why fruit_per_m2 is null; null when it is given.' },
  },
};

const byFigure = (text: string): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: FIGURE_NAMES,
  description: text,
  properties: Object.fromEntries(FIGURE_NAMES.map((n) => [n, { type: ['number', 'null'] }])),
});

export const changeSchema: JsonSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['since', 'days', 'delta', 'per_week'],
  description: 'How the figures changed since the previous (older) count date; null for the first count.',
  properties: {
    since: { ...dateSchema, description: 'The previous count date.' },
    days: { type: 'number', description: 'Days between the two counts.' },
    delta: byFigure('This count minus the previous one, per figure; null where either is null.'),
    per_week: byFigure('The delta scaled to 7 days (per week).'),
  },
};

export const trussCountSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'count_id',
    ...PARENT_FIELDS,
    'counted_on',
    'week',
    'stems_per_m2',
    'rows',
    'figures',
    'change',
    'created_at',
    'updated_at',
    'version',
  ],
  properties: {
    count_id: { type: 'string', description: 'Id of the count date record (UUIDv7).' },
    ...parentProperties,
    counted_on: countedOn,
    week: { ...weekLabelSchema, description: 'The ISO week of counted_on.' },
    stems_per_m2: { ...stemsSchema, description: 'The stem density this count date carries (stems/m²); null when it carries none.' },
    rows: {
      type: 'array',
      description: 'The counted trusses, in the order they were saved.',
      items: {
        ...rowSchema,
        required: ['plant', 'truss', 'fruits', 'flowers'],
        properties: {
          ...rowSchema.properties,
          flowers: { type: ['integer', 'null'], description: 'Open flowers on the truss, or null when not counted.' },
        },
      },
    },
    figures: figuresSchema,
    change: changeSchema,
    ...syncedFields,
  },
};

export const deletedCountSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['deleted', 'counted_on', 'rows'],
  properties: { deleted: { const: true }, counted_on: countedOn, rows: { type: 'integer', description: 'How many rows went with it.' } },
};
