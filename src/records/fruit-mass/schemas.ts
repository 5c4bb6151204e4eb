import { parentProperties, PARENT_FIELDS } from '../common.js';
import type { JsonSchema, ObjectSchema } from '../../http/route.js';
import { weekSchema, syncedFields, weekLabelSchema } from '../../http/schemas.js';

const grams = (ripeness: string): JsonSchema => ({
  type: 'number',
  exclusiveMinimum: 0,
  maximum: 5000,
  'x-unit': 'g',
  description: `Mean mass of one ${ripeness} fruit, grams (g), greater than 0 (at most 5000).`,
});

export const saveFruitMassBody: ObjectSchema = {
  type: 'object',
  required: ['green_g', 'turning_g', 'red_g'],
  additionalProperties: false,
  properties: {
    green_g: grams('green'),
    turning_g: grams('turning'),
    red_g: grams('red'),
    week: {
      ...weekSchema,
      description: `The week from which the values apply (until a later entry): ${(weekSchema.description as string).replace(/^ISO 8601 week: /, '')} Default: the current week in the greenhouse time zone. Saving again for the same week replaces that week's values; for another week adds to the history.`,
    },
  },
};

export const fruitMassSchema: JsonSchema = {
  type: 'object',
  required: [...PARENT_FIELDS, 'week', 'green_g', 'turning_g', 'red_g', 'created_at', 'updated_at', 'version'],
  additionalProperties: false,
  properties: {
    ...parentProperties,
    week: { ...weekLabelSchema, description: "The week these values apply from (until the next entry's week)." },
    green_g: grams('green'),
    turning_g: grams('turning'),
    red_g: grams('red'),
    ...syncedFields,
  },
};

export const fruitMassListSchema: JsonSchema = {
  type: 'object',
  required: ['items', 'total', 'limit', 'offset', 'week', 'in_force'],
  additionalProperties: false,
  properties: {
    items: { type: 'array', items: fruitMassSchema, description: 'The history, oldest week first.' },
    total: { type: 'integer', description: 'Entries in the whole history.' },
    limit: { type: 'integer' },
    offset: { type: 'integer' },
    week: {
      ...weekLabelSchema,
      description: 'The week `in_force` is for (query `week`, default the current week in the greenhouse zone).',
    },
    in_force: {
      oneOf: [fruitMassSchema, { type: 'null' }],
      description: 'The values that apply in `week`: the latest entry whose week is on or before it; null when the history starts later.',
    },
  },
};
