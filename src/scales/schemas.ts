import { listOf } from '../http/schemas.js';
import { UUID_PATTERN } from '../db/ids.js';
import type { JsonSchema, ObjectSchema } from '../http/route.js';

const instantOrNull = (description: string): JsonSchema => ({ type: ['string', 'null'], format: 'date-time', description });

export const scaleParams: ObjectSchema = {
  type: 'object',
  required: ['port'],
  properties: {
    port: {
      type: 'string',
      pattern: '^[A-Za-z0-9._-]{1,100}$',
      description: "The scale: its serial device's file name (ttyUSB0 for /dev/ttyUSB0), as GET /api/scales lists it.",
    },
  },
};

export const assignBody: JsonSchema = {
  type: 'object',
  required: ['cycle_id'],
  additionalProperties: false,
  properties: {
    cycle_id: {
      type: ['string', 'null'],
      pattern: UUID_PATTERN,
      description: 'The crop cycle its weights are recorded into as harvests; null stops recording (weights are read, not stored).',
    },
  },
};

export const scaleSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'port',
    'path',
    'connection',
    'state',
    'cycle_id',
    'assigned_by',
    'last_reading',
    'last_harvest',
    'harvests_recorded',
    'weights_not_recorded',
    'last_error',
    'connected_since',
    'disconnected_since',
    'next_try_at',
    'warning',
  ],
  properties: {
    port: { type: 'string', description: 'The name to use in /api/scales/{port}.' },
    path: { type: 'string', description: 'The serial device (SCALE_PORT).' },
    connection: {
      enum: ['connecting', 'connected', 'disconnected', 'stopped'],
      description:
        'disconnected: the port closed or cannot be opened; it is tried again with a growing wait (at most SCALE_RECONNECT_MAX_MS).',
    },
    state: {
      enum: ['waiting_for_zero', 'ready', 'settling', 'recorded', 'out_of_range'],
      description:
        'waiting_for_zero: nothing is recorded until the scale reads zero (at start); ready: at zero; settling: a weight not stable yet; recorded: this weight was recorded, the next needs a return to zero; out_of_range: over or under range, or negative.',
    },
    cycle_id: { type: ['string', 'null'], description: 'The crop cycle its weights go to; null: not recorded.' },
    assigned_by: { enum: ['api', 'config', null], description: 'api: PUT /api/scales/{port}; config: SCALE_CYCLE_ID.' },
    last_reading: {
      type: ['object', 'null'],
      required: ['kg', 'stable', 'format', 'at'],
      additionalProperties: false,
      properties: {
        kg: { type: 'number', description: 'Kilograms (converted from g, lb or oz).' },
        stable: { type: 'boolean' },
        format: { enum: ['indicator', 'sics', 'plain'], description: 'The frame format it came in.' },
        at: { type: 'string', format: 'date-time' },
      },
    },
    last_harvest: {
      type: ['object', 'null'],
      required: ['harvest_id', 'kg', 'cycle_id', 'at'],
      additionalProperties: false,
      properties: {
        harvest_id: { type: 'string' },
        kg: { type: 'number', description: 'Kilograms.' },
        cycle_id: { type: 'string' },
        at: { type: 'string', format: 'date-time' },
      },
    },
    harvests_recorded: { type: 'integer', description: 'Since the service started.' },
    weights_not_recorded: {
      type: 'integer',
      description: 'Stable weights since start that found no crop cycle to go to, or failed to store.',
    },
    last_error: { type: ['string', 'null'] },
    connected_since: instantOrNull('While connected.'),
    disconnected_since: instantOrNull('While not connected, when the port was lost (null: never open since start).'),
    next_try_at: instantOrNull('While disconnected: the next try to open the port.'),
    warning: { type: ['string', 'null'], description: 'What needs attention, in plain words.' },
  },
};

export const scaleListSchema = listOf(scaleSchema);
