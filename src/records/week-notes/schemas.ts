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
