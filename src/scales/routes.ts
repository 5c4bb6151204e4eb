import { defineRoute, type RouteSpec } from '../http/route.js';
import { assignBody, scaleListSchema, scaleParams, scaleSchema } from './schemas.js';
import { assignScale } from './commands.js';
import { listScales } from './queries.js';
import { scalesOf } from './service.js';

const TAG = 'Appliance';

export const scaleRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/scales',
    operationId: 'list_scales',
    summary: 'The scales on the serial ports, their last reading and state',
    description:
      'One entry per port in SCALE_PORT (none when unset): connection, weighing state, the crop cycle it records into, its last reading (kg) and last recorded harvest, and a plain-words warning when something needs attention. Appliance admin token only.',
    tags: [TAG],
    auth: 'admin-token',
    responses: { 200: { description: 'Every configured scale.', schema: scaleListSchema } },
    handler: async ({ db, services }) => ({ items: await listScales(db, scalesOf(services)) }),
  }),
  defineRoute<{ port: string }, unknown, { cycle_id: string | null }, 'none', true>({
    method: 'put',
    path: '/api/scales/{port}',
    operationId: 'assign_scale',
    summary: 'Set the crop cycle a scale records its weights into',
    description:
      'From now on, each stable weight after a return to zero becomes a harvest (kg, the local day in the greenhouse zone, the week of that day) of this crop cycle, logged as made by `scale:<port>`. Overrides SCALE_CYCLE_ID; `cycle_id: null` stops recording. 404 when the port is not one of SCALE_PORT; 422 when the crop cycle does not exist. Appliance admin token only.',
    tags: [TAG],
    auth: 'admin-token',
    write: true,
    params: scaleParams,
    body: assignBody,
    responses: { 200: { description: 'The scale with its new assignment.', schema: scaleSchema } },
    errors: [404],
    handler: ({ w, services, params, body }) => assignScale(w, scalesOf(services), params.port, body.cycle_id),
  }),
];
