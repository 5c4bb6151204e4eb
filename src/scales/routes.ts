import { defineRoute, type RouteSpec } from '../http/route.js';
import { fieldError, notFound } from '../http/problem.js';
import { assignBody, scaleListSchema, scaleParams, scaleSchema } from './schemas.js';
import { assignScale, scalesOf } from './feature.js';

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
    handler: async (ctx) => ({ items: (await scalesOf(ctx.services)?.statuses()) ?? [] }),
  }),
  defineRoute<{ port: string }, unknown, { cycle_id: string | null }>({
    method: 'put',
    path: '/api/scales/{port}',
    operationId: 'assign_scale',
    summary: 'Set the crop cycle a scale records its weights into',
    description:
      'From now on, each stable weight after a return to zero becomes a harvest (kg, the local day in the greenhouse zone, the week of that day) of this crop cycle, logged as made by `scale:<port>`. Overrides SCALE_CYCLE_ID; `cycle_id: null` stops recording. 404 when the port is not one of SCALE_PORT; 422 when the crop cycle does not exist. Appliance admin token only.',
    tags: [TAG],
    auth: 'admin-token',
    params: scaleParams,
    body: assignBody,
    responses: { 200: { description: 'The scale with its new assignment.', schema: scaleSchema } },
    errors: [404],
    handler: async (ctx, { params, body }) => {
      const scales = scalesOf(ctx.services);
      if (!scales?.has(params.port)) throw notFound('scale');
      if (body.cycle_id !== null) {
        const cycle = await ctx.services.db.selectFrom('cycles').select('id').where('id', '=', body.cycle_id).executeTakeFirst();
        if (!cycle) throw fieldError('body', 'cycle_id', 'no crop cycle has this id');
      }
      await assignScale(ctx.services, params.port, body.cycle_id);
      return scales.status(params.port);
    },
  }),
];
