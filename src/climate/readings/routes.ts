import { defineRoute, type RouteSpec } from '../../http/route.js';
import { MAX_OFFSET, pageOf, pagingQuery, pathParams } from '../../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../../registry/paths.js';
import type { CyclePath } from '../../registry/scope.js';
import { CLIMATE_METRICS } from '../metrics.js';
import { deletePoint, readingsPage, recordPoints, updatePoint, type PointInput, type PointPatch } from './commands.js';
import { METRIC_DESCRIPTION, presentReading, readingSchema } from './presenters.js';

export const MAX_POINTS = 10_000;
export const MAX_READINGS_LIMIT = 1_000;
/** Typed points whose stored readings are echoed in the answer; above it only counts. */
export const ECHO_ITEMS_UP_TO = 1_000;

const TAG = 'Climate readings';
const metricNames = CLIMATE_METRICS.map((m) => m.name);
const AT_DESCRIPTION =
  'Instant, ISO 8601. With an offset (2026-03-01T14:00:00+01:00 or Z) it is exact; without one it is wall-clock time in the greenhouse time zone. A wall time the clock skips when summer time starts does not exist (422); one it passes twice when summer time ends is read as its first (summer-time) occurrence.';

// A bound in any unit a reading may be sent in (lux, J/m² are large); the metric's own range,
// in its canonical unit, is checked after conversion.
const VALUE_BOUND = 1_000_000_000;
const VALUE_BOUND_TEXT = VALUE_BOUND.toLocaleString('en');

const pointSchema = {
  type: 'object',
  required: ['metric', 'value', 'at'],
  additionalProperties: false,
  properties: {
    metric: { enum: metricNames, description: METRIC_DESCRIPTION },
    value: {
      type: 'number',
      minimum: -VALUE_BOUND,
      maximum: VALUE_BOUND,
      description: `The reading, in \`unit\` when given, else in the canonical unit of the metric, -${VALUE_BOUND_TEXT} to ${VALUE_BOUND_TEXT} as sent. After conversion, values outside the metric's plausible range (sensor faults, fill values; each metric's range is listed under \`metric\`) are refused.`,
    },
    at: { type: 'string', minLength: 1, maxLength: 64, description: AT_DESCRIPTION },
    unit: {
      type: 'string',
      minLength: 1,
      maxLength: 32,
      description:
        'Unit of `value` when it is not the canonical one, e.g. °F or K for temperatures, µS/cm for EC, hPa for VPD, kW/m² for radiation, klux or lux for par and global_radiation (a sunlight approximation, named in the conversion). Converted to the canonical unit; a unit that cannot be converted is refused (422).',
    },
  },
};

const addResultSchema = {
  type: 'object',
  required: ['added', 'updated', 'unchanged'],
  additionalProperties: false,
  properties: {
    added: { type: 'integer', description: 'Readings that did not exist before.' },
    updated: {
      type: 'integer',
      description: 'Readings of the same metric at the same instant that existed and now hold the new value (they become manual).',
    },
    unchanged: { type: 'integer', description: 'Points equal to the manual reading already stored.' },
    items: {
      type: 'array',
      items: readingSchema,
      description: `The stored readings, when the request had at most ${ECHO_ITEMS_UP_TO} points.`,
    },
  },
};

export const readingRoutes: RouteSpec[] = [
  defineRoute<CyclePath, unknown, { points: PointInput[] }, 'cycle', true>({
    method: 'post',
    path: `${CYCLE}/climate`,
    operationId: 'add_climate_readings',
    summary: 'Store typed climate readings (all or nothing)',
    description: `1 to ${MAX_POINTS} points. Every point is checked first: one bad point answers 422 with an entry per bad field (\`points.3.unit\`) and nothing is stored. One metric at one instant is one reading: sending it again updates it, never doubles it.`,
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: pathParams(...CYCLE_PARAMS),
    body: {
      type: 'object',
      required: ['points'],
      additionalProperties: false,
      properties: {
        points: { type: 'array', minItems: 1, maxItems: MAX_POINTS, items: pointSchema, description: `Readings, 1 to ${MAX_POINTS}.` },
      },
    },
    responses: { 200: { description: 'What was stored.', schema: addResultSchema } },
    errors: [404],
    handler: async ({ w, scope, body }) => {
      const r = await recordPoints(w, scope, body.points);
      return {
        added: r.added,
        updated: r.updated,
        unchanged: r.unchanged,
        ...(body.points.length <= ECHO_ITEMS_UP_TO ? { items: r.rows.map((x) => presentReading(x, scope.zone)) } : {}),
      };
    },
  }),
  defineRoute<CyclePath, { metric?: string; from?: string; to?: string; limit: number; offset: number }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/climate`,
    operationId: 'list_climate_readings',
    summary: 'Climate readings, newest first',
    description:
      'Filtered by metric and by a time range (`from` and `to` inclusive). Times are answered on the greenhouse clock with their offset.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: pathParams(...CYCLE_PARAMS),
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        metric: { enum: metricNames, description: 'Only this metric.' },
        from: { type: 'string', minLength: 1, maxLength: 64, description: `Earliest instant, inclusive. ${AT_DESCRIPTION}` },
        to: { type: 'string', minLength: 1, maxLength: 64, description: `Latest instant, inclusive. ${AT_DESCRIPTION}` },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_READINGS_LIMIT,
          default: 50,
          description: `Page size, 1 to ${MAX_READINGS_LIMIT} (422 above).`,
        },
        offset: { ...pagingQuery().properties.offset!, description: `Readings to skip, 0 to ${MAX_OFFSET.toLocaleString('en')}.` },
      },
    },
    responses: { 200: { description: 'A page of readings.', schema: pageOf(readingSchema) } },
    errors: [404],
    handler: async ({ db, scope, query }) => {
      const { rows, ...page } = await readingsPage(db, scope, query);
      return { ...page, items: rows.map((r) => presentReading(r, scope.zone)) };
    },
  }),
  defineRoute<CyclePath & { point_id: string }, unknown, PointPatch, 'cycle', true>({
    method: 'patch',
    path: `${CYCLE}/climate/{point_id}`,
    operationId: 'update_climate_reading',
    summary: 'Edit one reading (value, unit, at)',
    description:
      "Fields left out keep their value. `unit` is the unit of `value` and comes with it. The reading becomes a manual one. Moving it onto an instant where the same metric already has a reading answers 409 with that reading's `point_id`. A point_id is made from the cycle, the metric and the instant, so a reading moved with `at` answers under the point_id of its new instant (readings stored by a release before this storage keep the ids they had); the old id then answers 404.",
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: pathParams(...CYCLE_PARAMS, 'point_id'),
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { value: pointSchema.properties.value, unit: pointSchema.properties.unit, at: pointSchema.properties.at },
    },
    responses: { 200: { description: 'The reading after the edit.', schema: readingSchema } },
    errors: [404, 409],
    handler: async ({ w, scope, params, body }) => presentReading(await updatePoint(w, scope, params.point_id, body), scope.zone),
  }),
  defineRoute<CyclePath & { point_id: string }, unknown, unknown, 'cycle', true>({
    method: 'delete',
    path: `${CYCLE}/climate/{point_id}`,
    operationId: 'delete_climate_reading',
    summary: 'Delete one reading',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: pathParams(...CYCLE_PARAMS, 'point_id'),
    responses: {
      200: {
        description: 'The reading as it was.',
        schema: {
          type: 'object',
          required: ['deleted', 'reading'],
          additionalProperties: false,
          properties: { deleted: { const: true }, reading: readingSchema },
        },
      },
    },
    errors: [404],
    handler: async ({ w, scope, params }) => ({
      deleted: true,
      reading: presentReading(await deletePoint(w, scope, params.point_id), scope.zone),
    }),
  }),
];
