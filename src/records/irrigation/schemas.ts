import type { JsonSchema, ObjectSchema } from '../../http/route.js';
import { pageOf, syncedFields } from '../../http/schemas.js';
import { NOTE_MAX, parentProperties, PARENT_FIELDS } from '../common.js';

/** The measurements of an entry; an entry always keeps at least one of them. */
export const MEASUREMENTS = ['volume_l', 'drain_l', 'ec_in', 'ec_drain', 'ph_in', 'ph_drain', 'duration_min'] as const;
export type Measurement = (typeof MEASUREMENTS)[number];

/**
 * The most water (or drain) one entry may hold: 1,000 m³, a day's water for 10 ha of tomatoes in
 * summer; far below where a week's sum could stop being a finite number.
 */
export const IRRIGATION_LITRES_MAX = 1_000_000;
const LITRES_MAX_TEXT = IRRIGATION_LITRES_MAX.toLocaleString('en');

const measurementSchemas: Record<Measurement, JsonSchema> = {
  volume_l: {
    type: 'number',
    minimum: 0,
    maximum: IRRIGATION_LITRES_MAX,
    'x-unit': 'L',
    description: `Water given in this entry, litres (L), 0 to ${LITRES_MAX_TEXT}: the total volume delivered to the crop cycle's row during the irrigation event (or the period the entry stands for), not per plant, dripper or m².`,
  },
  drain_l: {
    type: 'number',
    minimum: 0,
    maximum: IRRIGATION_LITRES_MAX,
    'x-unit': 'L',
    description: `Drain water collected from the same row over the same event or period, litres (L), 0 to ${LITRES_MAX_TEXT}.`,
  },
  ec_in: {
    type: 'number',
    minimum: 0,
    maximum: 50,
    'x-unit': 'mS/cm',
    description: 'Electrical conductivity of the water given, mS/cm (0–50).',
  },
  ec_drain: {
    type: 'number',
    minimum: 0,
    maximum: 50,
    'x-unit': 'mS/cm',
    description: 'Electrical conductivity of the drain, mS/cm (0–50).',
  },
  ph_in: { type: 'number', minimum: 0, maximum: 14, description: 'pH of the water given (0–14).' },
  ph_drain: { type: 'number', minimum: 0, maximum: 14, description: 'pH of the drain (0–14).' },
  duration_min: {
    type: 'number',
    minimum: 0,
    maximum: 1440,
    'x-unit': 'min',
    description: 'How long the irrigation ran, minutes (0–1440).',
  },
};

const atSchema: JsonSchema = {
  type: 'string',
  minLength: 10,
  maxLength: 40,
  description:
    "When the irrigation happened: ISO 8601, e.g. 2026-03-01T07:30:00+01:00. Without an offset it is wall-clock time in the greenhouse time zone; a wall time the clock skips when summer time starts is a 422, and a wall time that happens twice when summer time ends is read as the first of the two (the earlier instant, still on summer time: 2026-10-25T02:30 in Europe/Amsterdam is 02:30+02:00 = 00:30Z); send an offset (02:30+01:00) to name the second. Answered with the greenhouse's offset.",
};

const note: JsonSchema = { type: 'string', maxLength: NOTE_MAX, description: `Free text, at most ${NOTE_MAX} characters.` };

const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, 'null'] });

export const createIrrigationBody: ObjectSchema = {
  type: 'object',
  required: ['at'],
  additionalProperties: false,
  description: 'One irrigation entry: `at` and at least one measurement (422 otherwise).',
  properties: { at: atSchema, ...measurementSchemas, note },
};

export const patchIrrigationBody: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description:
    'Fields left out keep their value; a measurement or the note sent as null is cleared. A change that would clear the last measurement is a 422 and the entry stays as it was.',
  properties: {
    at: atSchema,
    ...Object.fromEntries(MEASUREMENTS.map((m) => [m, nullable(measurementSchemas[m])])),
    note: nullable(note),
  },
};

export const irrigationSchema: JsonSchema = {
  type: 'object',
  required: ['entry_id', ...PARENT_FIELDS, 'at', ...MEASUREMENTS, 'note', 'created_at', 'updated_at', 'version'],
  additionalProperties: false,
  properties: {
    entry_id: { type: 'string', description: 'Irrigation entry id (UUIDv7).' },
    ...parentProperties,
    at: { type: 'string', format: 'date-time', description: "When, ISO 8601 with the greenhouse's offset at that instant." },
    ...Object.fromEntries(
      MEASUREMENTS.map((m) => [
        m,
        { ...nullable(measurementSchemas[m]), description: `${measurementSchemas[m].description as string} Null when not measured.` },
      ]),
    ),
    note: { type: ['string', 'null'], description: 'Free text, or null.' },
    ...syncedFields,
  },
};

export const irrigationPageSchema = pageOf(irrigationSchema);
