import { defineRoute, type RouteSpec } from '../../http/route.js';
import { pagingQuery, pathParams } from '../../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../../registry/paths.js';
import { type CyclePath } from '../../registry/scope.js';
import { createIrrigationBody, irrigationPageSchema, irrigationSchema, patchIrrigationBody } from './schemas.js';
import {
  createIrrigation,
  deleteIrrigation,
  listIrrigation,
  updateIrrigation,
  type IrrigationInput,
  type IrrigationPatch,
} from './commands.js';
import { presentIrrigation } from './presenters.js';

const TAG = 'Irrigation';
const itemParams = pathParams(...CYCLE_PARAMS, 'entry_id');
type ItemParams = CyclePath & { entry_id: string };

export const irrigationRoutes: RouteSpec[] = [
  defineRoute<CyclePath, unknown, IrrigationInput, 'cycle', true>({
    method: 'post',
    path: `${CYCLE}/irrigation`,
    operationId: 'create_irrigation_entry',
    summary: 'Log an irrigation entry',
    description:
      'When (`at`) and what was measured: volume and drain in litres, EC in mS/cm, pH, duration in minutes, and a note. At least one measurement is required (422 otherwise). A local `at` in the spring-forward gap of the greenhouse zone is a 422.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: pathParams(...CYCLE_PARAMS),
    body: createIrrigationBody,
    responses: { 201: { description: 'The stored entry.', schema: irrigationSchema } },
    errors: [404],
    handler: async ({ w, scope, body }) => presentIrrigation(await createIrrigation(w, scope, body), scope.zone),
  }),
  defineRoute<CyclePath, { limit: number; offset: number }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/irrigation`,
    operationId: 'list_irrigation_entries',
    summary: 'List irrigation entries, newest first',
    description:
      'Paged: `limit` (default 50, at most 500; above is a 422) and `offset` (default 0). `total` counts every entry of the cycle.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: pathParams(...CYCLE_PARAMS),
    query: pagingQuery(),
    responses: { 200: { description: 'A page of entries, newest `at` first.', schema: irrigationPageSchema } },
    errors: [404],
    handler: async ({ db, scope, query }) => {
      const page = await listIrrigation(db, scope, query);
      return { ...page, items: page.items.map((e) => presentIrrigation(e, scope.zone)) };
    },
  }),
  defineRoute<ItemParams, unknown, IrrigationPatch, 'cycle', true>({
    method: 'patch',
    path: `${CYCLE}/irrigation/{entry_id}`,
    operationId: 'update_irrigation_entry',
    summary: 'Change an irrigation entry',
    description:
      'Fields left out keep their value; a measurement or the note sent as null is cleared. A change that would leave no measurement is a 422 and the entry is unchanged.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: itemParams,
    body: patchIrrigationBody,
    responses: { 200: { description: 'The changed entry.', schema: irrigationSchema } },
    errors: [404],
    handler: async ({ w, scope, params, body }) => presentIrrigation(await updateIrrigation(w, scope, params.entry_id, body), scope.zone),
  }),
  defineRoute<ItemParams, unknown, unknown, 'cycle', true>({
    method: 'delete',
    path: `${CYCLE}/irrigation/{entry_id}`,
    operationId: 'delete_irrigation_entry',
    summary: 'Delete an irrigation entry',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: itemParams,
    responses: {
      200: {
        description: 'Deleted.',
        schema: {
          type: 'object',
          required: ['deleted', 'entry_id'],
          additionalProperties: false,
          properties: { deleted: { const: true }, entry_id: { type: 'string', description: 'The removed entry.' } },
        },
      },
    },
    errors: [404],
    handler: async ({ w, scope, params }) => {
      await deleteIrrigation(w, scope, params.entry_id);
      return { deleted: true, entry_id: params.entry_id };
    },
  }),
];
