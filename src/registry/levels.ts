import type { JsonSchema, ObjectSchema } from '../http/route.js';
import { dateSchema, nullableString } from '../http/schemas.js';
import { FARM, FARMS, GREENHOUSE, GREENHOUSES, ROW, ROWS, CYCLE, CYCLES } from './paths.js';

/**
 * The four levels under an organization, described once. Routes, presenters,
 * contents counting and cascading deletes are all driven by this table.
 */
export type LevelName = 'farm' | 'greenhouse' | 'row' | 'cycle';

export interface Level {
  name: LevelName;
  plural: string;
  table: 'farms' | 'greenhouses' | 'rows' | 'cycles';
  idName: 'farm_id' | 'greenhouse_id' | 'row_id' | 'cycle_id';
  /** Parent ids stored on the row, outermost first (organization_id is implied). */
  parentIds: string[];
  collectionPath: string;
  itemPath: string;
  child: LevelName | null;
  /** Detail fields a client may set, with their schemas. */
  fields: Record<string, JsonSchema>;
  required: string[];
  label: string;
}

const name = { type: 'string', minLength: 1, maxLength: 200, description: 'Display name.' };
const notes = nullableString(4000, 'Free text.');
const positive = (description: string, unit: string, max: number): JsonSchema => ({
  type: ['number', 'null'],
  exclusiveMinimum: 0,
  maximum: max,
  description: `${description} (${unit}), greater than 0, at most ${max.toLocaleString('en')}.`,
  'x-unit': unit,
});

export const LEVELS: Record<LevelName, Level> = {
  farm: {
    name: 'farm',
    plural: 'farms',
    table: 'farms',
    idName: 'farm_id',
    parentIds: [],
    collectionPath: FARMS,
    itemPath: FARM,
    child: 'greenhouse',
    label: 'farm',
    required: ['name'],
    fields: {
      name,
      location: nullableString(500, 'Address or place name.'),
      notes,
    },
  },
  greenhouse: {
    name: 'greenhouse',
    plural: 'greenhouses',
    table: 'greenhouses',
    idName: 'greenhouse_id',
    parentIds: ['farm_id'],
    collectionPath: GREENHOUSES,
    itemPath: GREENHOUSE,
    child: 'row',
    label: 'greenhouse',
    required: ['name', 'time_zone'],
    fields: {
      name,
      time_zone: {
        type: 'string',
        format: 'iana-zone',
        maxLength: 64,
        description:
          'IANA time zone of the greenhouse clock, e.g. Europe/Amsterdam. Wall-clock times, local dates and weeks of everything under it are read in this zone.',
      },
      latitude: {
        type: ['number', 'null'],
        minimum: -90,
        maximum: 90,
        description: 'Degrees north (WGS 84), -90 to 90. Needed, with longitude, for outdoor weather.',
      },
      longitude: {
        type: ['number', 'null'],
        minimum: -180,
        maximum: 180,
        description: 'Degrees east (WGS 84), -180 to 180. Needed, with latitude, for outdoor weather.',
      },
      area_m2: positive('Growing area', 'm²', 10_000_000),
      notes,
    },
  },
  row: {
    name: 'row',
    plural: 'rows',
    table: 'rows',
    idName: 'row_id',
    parentIds: ['farm_id', 'greenhouse_id'],
    collectionPath: ROWS,
    itemPath: ROW,
    child: 'cycle',
    label: 'row',
    required: ['name'],
    fields: {
      name,
      length_m: positive('Row length', 'm', 10_000),
      plant_count: { type: ['integer', 'null'], minimum: 0, maximum: 1_000_000, description: 'Plants in the row, 0 to 1,000,000.' },
      notes,
    },
  },
  cycle: {
    name: 'cycle',
    plural: 'cycles',
    table: 'cycles',
    idName: 'cycle_id',
    parentIds: ['farm_id', 'greenhouse_id', 'row_id'],
    collectionPath: CYCLES,
    itemPath: CYCLE,
    child: null,
    label: 'crop cycle',
    required: ['name', 'started_on'],
    fields: {
      name,
      started_on: { ...dateSchema, description: 'First day of the cycle (planting), greenhouse local date.' },
      ended_on: {
        type: ['string', 'null'],
        format: 'date',
        description: 'Last day (clearing), greenhouse local date; not before started_on.',
      },
      crop: nullableString(100, 'Crop, e.g. tomato.'),
      variety: nullableString(200, 'Cultivar, e.g. Merlice.'),
      plants_per_m2: positive('Plant density', 'plants/m²', 100),
      stems_per_m2: positive('Stem density', 'stems/m²', 100),
      area_m2: positive(
        "Growing area the cycle's records cover; every figure per m² divides by it (without it: the row's plant_count ÷ plants_per_m2)",
        'm²',
        10_000_000,
      ),
      notes,
    },
  },
};

export const LEVEL_ORDER: LevelName[] = ['farm', 'greenhouse', 'row', 'cycle'];

export function createSchema(level: Level): ObjectSchema {
  return { type: 'object', properties: level.fields, required: level.required, additionalProperties: false };
}

/** Every detail may be changed; a required one sent as null is refused by updateLevel. */
export function patchSchema(level: Level): ObjectSchema {
  return { type: 'object', properties: level.fields, additionalProperties: false, minProperties: 1 } as ObjectSchema;
}

export function responseSchema(level: Level): JsonSchema {
  const ids = ['organization_id', ...level.parentIds, level.idName];
  return {
    type: 'object',
    required: [...ids, ...Object.keys(level.fields), 'created_at', 'updated_at', 'version'],
    properties: {
      ...Object.fromEntries(ids.map((i) => [i, { type: 'string' }])),
      ...level.fields,
      created_at: { type: 'string' },
      updated_at: { type: 'string' },
      version: { type: 'string' },
    },
  };
}
