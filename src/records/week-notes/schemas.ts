import { parentProperties, PARENT_FIELDS } from '../common.js';
import type { JsonSchema } from '../../http/route.js';
import { weekLabelSchema, syncedFields } from '../../http/schemas.js';
import { NOTE_MAX_BYTES, NOTE_MAX_DEPTH, NOTE_MAX_KEYS } from './limits.js';

export const weekNoteBody: JsonSchema = {
  type: 'object',
  description: `Any JSON object: the week's notes as the grower's tools write them. At most ${NOTE_MAX_BYTES / 1024} KiB (413 beyond), nested at most ${NOTE_MAX_DEPTH} levels deep (the object itself is level 1) and at most ${NOTE_MAX_KEYS} keys in all levels together (422 beyond). An array, string or other non-object is a 422.`,
};

export const weekNoteSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...PARENT_FIELDS, 'week', 'note', 'created_at', 'updated_at', 'version'],
  properties: {
    ...parentProperties,
    week: weekLabelSchema,
    note: { type: 'object', description: 'The stored object, as it was sent.' },
    ...syncedFields,
  },
};

export const weekReadSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...PARENT_FIELDS, 'week', 'start', 'end', 'note', 'harvest', 'irrigation', 'fruit_mass'],
  description: 'The records part of the week read. Walk counts, climate, water productivity and the forecast are not in it yet.',
  properties: {
    ...parentProperties,
    week: weekLabelSchema,
    start: { type: 'string', format: 'date', description: 'Monday of the week (local date).' },
    end: { type: 'string', format: 'date', description: 'Sunday of the week (local date).' },
    note: { type: ['object', 'null'], description: 'The saved week note, or null when none was saved.' },
    harvest: {
      type: 'object',
      additionalProperties: false,
      required: ['kg', 'harvests'],
      properties: {
        kg: { type: 'number', description: 'Total harvested in the week, kilograms (kg).' },
        harvests: { type: 'integer', description: 'Harvest records in the week.' },
      },
    },
    irrigation: {
      type: 'object',
      additionalProperties: false,
      required: ['entries', 'volume_l', 'drain_l'],
      description: 'Irrigation entries whose `at` falls in the week on the greenhouse clock (Monday 00:00 to Monday 00:00 local).',
      properties: {
        entries: { type: 'integer', description: 'Entries in the week.' },
        volume_l: {
          type: ['number', 'null'],
          description: 'Sum of volume_l over the entries that have it, litres (L); null when none has.',
        },
        drain_l: { type: ['number', 'null'], description: 'Sum of drain_l over the entries that have it, litres (L); null when none has.' },
      },
    },
    fruit_mass: {
      type: ['object', 'null'],
      description:
        'Fruit mass in force for the week (grams per fruit), with the week it applies from; null when none was saved on or before it.',
      required: ['week', 'green_g', 'turning_g', 'red_g'],
      additionalProperties: false,
      properties: { week: weekLabelSchema, green_g: { type: 'number' }, turning_g: { type: 'number' }, red_g: { type: 'number' } },
    },
  },
};
