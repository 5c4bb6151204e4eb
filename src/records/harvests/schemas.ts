import type { JsonSchema, ObjectSchema } from '../../http/route.js';
import { weekLabelSchema, weekSchema, dateSchema, syncedFields } from '../../http/schemas.js';
import { NOTE_MAX, parentProperties, PARENT_FIELDS } from '../common.js';

/**
 * The most one harvest entry may hold: far above a week of a large greenhouse (10 ha at 1.5 kg/m²
 * is 150,000 kg), far below where a week's sum could stop being a finite number.
 */
export const HARVEST_KG_MAX = 1_000_000;
const kg: JsonSchema = {
  type: 'number',
  minimum: 0,
  maximum: HARVEST_KG_MAX,
  'x-unit': 'kg',
  description: `Harvested mass, kilograms (kg), 0 to ${HARVEST_KG_MAX.toLocaleString('en')} per entry.`,
};
const note: JsonSchema = { type: 'string', maxLength: NOTE_MAX, description: `Free text, at most ${NOTE_MAX} characters.` };
const harvestedOn: JsonSchema = {
  ...dateSchema,
  description:
    'The day of the harvest, a local date YYYY-MM-DD in the greenhouse time zone. It must fall in `week`; when `week` is left out the week is derived from it.',
};

export const createHarvestBody: ObjectSchema = {
  type: 'object',
  required: ['kg'],
  additionalProperties: false,
  description: 'One harvest. Send `week`, or `harvested_on` (the week is derived from it), or both (the date must fall in the week).',
  properties: {
    week: {
      ...weekSchema,
      description: `The ISO week the harvest counts for: ${(weekSchema.description as string).replace(/^ISO 8601 week: /, '')} Answered as a label.`,
    },
    kg,
    note,
    harvested_on: harvestedOn,
  },
};

export const patchHarvestBody: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description:
    'Fields left out keep their value; `note` or `harvested_on` sent as null is cleared. The merged harvest must still have `harvested_on` inside `week` (send both to move a dated harvest to another week).',
  properties: {
    week: createHarvestBody.properties.week!,
    kg,
    note: { ...note, type: ['string', 'null'] },
    harvested_on: { ...harvestedOn, type: ['string', 'null'] },
  },
};

export const harvestSchema: JsonSchema = {
  type: 'object',
  required: ['harvest_id', ...PARENT_FIELDS, 'week', 'kg', 'note', 'harvested_on', 'created_at', 'updated_at', 'version'],
  additionalProperties: false,
  properties: {
    harvest_id: { type: 'string', description: 'Harvest id (UUIDv7).' },
    ...parentProperties,
    week: weekLabelSchema,
    kg,
    note: { type: ['string', 'null'], description: 'Free text, or null.' },
    harvested_on: {
      type: ['string', 'null'],
      format: 'date',
      description: 'Local harvest date in the greenhouse zone, or null when only the week is known.',
    },
    ...syncedFields,
  },
};

export const harvestImportSchema: JsonSchema = {
  type: 'object',
  required: ['items', 'count'],
  additionalProperties: false,
  properties: {
    items: { type: 'array', items: harvestSchema, description: 'The stored harvests, in file order.' },
    count: { type: 'integer', description: 'How many harvests were stored (one per line).' },
  },
};
