import type { JsonSchema, ObjectSchema } from '../../http/route.js';
import { countsSchema, pathParams, syncedFields, weekLabelSchema } from '../../http/schemas.js';
import { NOTE_MAX } from '../../records/common.js';
import { RIPENESS } from '../../vision/types.js';
import { CORRECTION_KINDS } from './tables.js';
import { MAX_CORRECTIONS_PER_WALK } from './commands.js';
import { correctedCountsSchema } from '../jobs/presenters.js';

const COUNT_MAX = 1_000_000;
/** Track ids and frame indices: a walk has at most 12 clips of a few thousand sampled frames. */
const INDEX_MAX = 1_000_000;
/** Box corners, pixels: larger than any frame (8K video is 7680 wide); the box is checked against its frame too. */
const PIXEL_MAX = 100_000;

const ripeness: JsonSchema = { enum: [...RIPENESS], description: 'green, turning or red (the classes of counts).' };
const box: JsonSchema = {
  type: 'array',
  items: { type: 'number', minimum: 0, maximum: PIXEL_MAX },
  minItems: 4,
  maxItems: 4,
  description: `For add: [x1, y1, x2, y2] in pixels of frame frame_id (result.frames[].width × height), x2 > x1, y2 > y1, inside the frame (each 0 to ${PIXEL_MAX.toLocaleString('en')}).`,
};
const handCounts: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: Object.fromEntries(
    RIPENESS.map((r) => [
      r,
      {
        type: 'integer',
        minimum: 0,
        maximum: COUNT_MAX,
        description: `${r} fruit counted by hand, 0 to ${COUNT_MAX.toLocaleString('en')}.`,
      },
    ]),
  ),
  description: `For counts: any of green, turning, red, whole numbers 0 to ${COUNT_MAX.toLocaleString('en')}. Each replaces that class of the corrected counts (a count made by hand); the classes left out stay as the fruit-by-fruit corrections make them.`,
};
const note: JsonSchema = { type: 'string', maxLength: NOTE_MAX, description: `Free text, at most ${NOTE_MAX} characters.` };

export const createCorrectionBody: ObjectSchema = {
  type: 'object',
  required: ['kind'],
  additionalProperties: false,
  description:
    "One correction. kind ripeness: track_id and ripeness (the fruit's ripeness is this). kind remove: track_id (not a fruit, or a fruit counted twice). " +
    'kind add: frame_id and ripeness, optionally box (a fruit the detector missed). kind counts: counts (classes counted by hand). ' +
    'A field that does not go with the kind is a 422, and so is a track_id or frame_id the walk does not have.',
  properties: {
    kind: { enum: [...CORRECTION_KINDS], description: 'ripeness, remove, add or counts.' },
    track_id: {
      type: 'integer',
      minimum: 0,
      maximum: INDEX_MAX,
      description: `For ripeness and remove: the fruit, as result.fruit[].track_id (0 to ${INDEX_MAX.toLocaleString('en')}).`,
    },
    ripeness,
    frame_id: {
      type: 'integer',
      minimum: 0,
      maximum: INDEX_MAX,
      description: `For add: walk-wide frame index (result.frames[].index) the fruit is seen in (0 to ${INDEX_MAX.toLocaleString('en')}).`,
    },
    box,
    counts: handCounts,
    note,
  },
};

export const patchCorrectionBody: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description:
    'Changes ripeness (kinds ripeness and add), box (add), counts (counts: replaces the whole object) or note (any kind; null clears it). Kind, track_id and frame_id do not change: undo the correction and make another.',
  properties: { ripeness, box, counts: handCounts, note: { ...note, type: ['string', 'null'] } },
};

const nullableInt = (description: string): JsonSchema => ({ type: ['integer', 'null'], description });

export const correctionSchema: JsonSchema = {
  type: 'object',
  required: [
    'correction_id',
    'walk_id',
    'organization_id',
    'kind',
    'track_id',
    'ripeness',
    'frame_id',
    'box',
    'counts',
    'note',
    'created_by_key_id',
    'created_at',
    'updated_at',
    'version',
  ],
  additionalProperties: false,
  properties: {
    correction_id: { type: 'string', description: 'Correction id (UUIDv7).' },
    walk_id: { type: 'string', description: 'The walk (its job_id).' },
    organization_id: { type: 'string' },
    kind: { enum: [...CORRECTION_KINDS] },
    track_id: nullableInt("ripeness, remove: the fruit's track_id."),
    ripeness: { type: ['string', 'null'], enum: [...RIPENESS, null], description: 'ripeness, add: the ripeness given.' },
    frame_id: nullableInt('add: the frame the fruit was added in.'),
    box: { oneOf: [box, { type: 'null' }], description: 'add: where the fruit is in frame frame_id, or null.' },
    counts: { oneOf: [handCounts, { type: 'null' }], description: 'counts: the classes counted by hand.' },
    note: { type: ['string', 'null'] },
    created_by_key_id: { type: ['string', 'null'], description: 'The key that made it.' },
    ...syncedFields,
  },
};

const modelCounts: JsonSchema = {
  oneOf: [countsSchema, { type: 'null' }],
  description: "The detector's counts (the walk's counts), null until done.",
};
const withCounts = { model_counts: modelCounts, corrected_counts: correctedCountsSchema };

/** A created or changed correction, with what it did to the walk's counts. */
export const correctionAnswerSchema: JsonSchema = {
  ...correctionSchema,
  required: [...(correctionSchema.required as string[]), 'model_counts', 'corrected_counts'],
  properties: { ...(correctionSchema.properties as Record<string, JsonSchema>), ...withCounts },
};

export const undoneSchema: JsonSchema = {
  type: 'object',
  required: ['deleted', 'correction_id', 'model_counts', 'corrected_counts'],
  additionalProperties: false,
  properties: { deleted: { const: true }, correction_id: { type: 'string', description: 'The correction undone.' }, ...withCounts },
};

const correctedFruitSchema: JsonSchema = {
  type: 'object',
  required: ['track_id', 'ripeness', 'model_ripeness', 'frame', 'box', 'correction_id'],
  additionalProperties: false,
  properties: {
    track_id: nullableInt("The detector's track id; null for a fruit added by a correction."),
    ripeness: { enum: [...RIPENESS], description: 'The ripeness after corrections.' },
    model_ripeness: {
      type: ['string', 'null'],
      enum: [...RIPENESS, null],
      description: "The detector's ripeness; null for an added fruit.",
    },
    frame: { type: 'integer', description: 'Walk-wide frame index of its best view, or of the frame it was added in.' },
    box: {
      oneOf: [{ type: 'array', items: { type: 'number' }, minItems: 4, maxItems: 4 }, { type: 'null' }],
      description: '[x1, y1, x2, y2] px in that frame; null for an added fruit without a box.',
    },
    correction_id: {
      type: ['string', 'null'],
      description: "The correction that set its ripeness or added it; null where the detector's stands.",
    },
  },
};

export const walkCorrectionsSchema: JsonSchema = {
  type: 'object',
  required: ['walk_id', 'status', 'weeks', 'corrections', 'fruit', 'removed_track_ids', 'model_counts', 'corrected_counts'],
  additionalProperties: false,
  properties: {
    walk_id: { type: 'string', description: 'The walk (its job_id).' },
    status: { enum: ['queued', 'running', 'done', 'failed'], description: "The walk's status: corrections are made on a done walk only." },
    weeks: {
      type: 'array',
      description:
        'The crop-cycle weeks the walk is saved to: one for a walk uploaded to {cycle}/videos or videos/batch, none for a quick score (POST /api/observations) or an example.',
      items: {
        type: 'object',
        required: ['farm_id', 'greenhouse_id', 'row_id', 'cycle_id', 'week'],
        additionalProperties: false,
        properties: {
          farm_id: { type: 'string' },
          greenhouse_id: { type: 'string' },
          row_id: { type: 'string' },
          cycle_id: { type: 'string' },
          week: weekLabelSchema,
        },
      },
    },
    corrections: {
      type: 'array',
      items: correctionSchema,
      maxItems: MAX_CORRECTIONS_PER_WALK,
      description: `In the order they were made (at most ${MAX_CORRECTIONS_PER_WALK} per walk).`,
    },
    fruit: {
      type: 'array',
      items: correctedFruitSchema,
      description:
        "The walk's fruit after the corrections: the detector's (less those removed, with ripeness changed) and then those added. Empty until done.",
    },
    removed_track_ids: { type: 'array', items: { type: 'integer' }, description: "The detector's fruit removed by a correction." },
    ...withCounts,
  },
};

export const walkPathParams: ObjectSchema = pathParams('organization_id', 'walk_id');
export const correctionPathParams: ObjectSchema = pathParams('organization_id', 'walk_id', 'correction_id');
