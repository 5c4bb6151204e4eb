import { UUID_PATTERN } from '../db/ids.js';
import { WEEK_PATTERN, WEEK_FORMS } from '../time/weeks.js';
import type { JsonSchema, ObjectSchema } from './route.js';

/** Schema pieces shared by every feature's routes. */
export const idSchema = (description: string): JsonSchema => ({ type: 'string', pattern: UUID_PATTERN, description });

export const pathParams = (...names: string[]): ObjectSchema => ({
  type: 'object',
  properties: Object.fromEntries(names.map((n) => [n, idSchema(`${n.replace(/_id$/, '').replace(/_/g, ' ')} id (UUIDv7)`)])),
  required: names,
});

export const weekSchema: JsonSchema = {
  type: 'string',
  pattern: WEEK_PATTERN,
  description: `ISO 8601 week: ${WEEK_FORMS}.`,
  examples: ['2026-W07', '2026-02-11'],
};
export const weekLabelSchema: JsonSchema = {
  type: 'string',
  pattern: '^\\d{4}-W\\d{2}$',
  description: 'ISO 8601 week label.',
  examples: ['2026-W07'],
};
export const dateSchema: JsonSchema = { type: 'string', format: 'date', description: 'Calendar date YYYY-MM-DD (greenhouse local).' };
export const instantSchema: JsonSchema = { type: 'string', format: 'date-time', description: 'ISO 8601 instant with offset.' };
export const nullableString = (maxLength: number, description: string): JsonSchema => ({
  type: ['string', 'null'],
  maxLength,
  description,
});

export const MAX_LIMIT = 500;
/** The most items a list skips: far past any list the box holds, far below where SQLite's integers end. */
export const MAX_OFFSET = 100_000_000;
export const pagingQuery = (extra: Record<string, JsonSchema> = {}): ObjectSchema => ({
  type: 'object',
  properties: {
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_LIMIT,
      default: 50,
      description: `Page size, 1 to ${MAX_LIMIT} (a whole number in decimal digits).`,
    },
    offset: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_OFFSET,
      default: 0,
      description: `Items to skip, 0 to ${MAX_OFFSET.toLocaleString('en')} (a whole number in decimal digits).`,
    },
    ...extra,
  },
});

export const listOf = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: item } },
  additionalProperties: false,
});
export const pageOf = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['items', 'total', 'limit', 'offset'],
  properties: {
    items: { type: 'array', items: item },
    total: { type: 'integer' },
    limit: { type: 'integer' },
    offset: { type: 'integer' },
  },
  additionalProperties: false,
});

export const countsSchema: JsonSchema = {
  type: 'object',
  description:
    'Counts by ripeness: the USDA colour stages grouped by the share of the skin turned from green. green: mature green and breakers (up to a tenth, which from the path looks green); turning: turning and pink (a tenth to three fifths); red: light red and red (more).',
  required: ['green', 'turning', 'red', 'total'],
  properties: { green: { type: 'integer' }, turning: { type: 'integer' }, red: { type: 'integer' }, total: { type: 'integer' } },
};

export const syncedFields = {
  created_at: instantSchema,
  updated_at: instantSchema,
  version: { type: 'string', description: 'Hybrid-logical-clock stamp; grows with every change.' },
} satisfies Record<string, JsonSchema>;

export const cascadeQuery: ObjectSchema = {
  type: 'object',
  properties: {
    cascade: { type: 'boolean', default: false, description: 'Delete the level with everything it holds, in one transaction.' },
  },
};

export const deletedSchema: JsonSchema = {
  type: 'object',
  required: ['deleted', 'counts'],
  properties: {
    deleted: { type: 'boolean', const: true },
    counts: { type: 'object', additionalProperties: { type: 'integer' }, description: 'What was removed with it.' },
  },
};
