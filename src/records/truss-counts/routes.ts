import { defineRoute, type RouteSpec } from '../../http/route.js';
import { MAX_LIMIT, pageOf, pagingQuery, pathParams, dateSchema } from '../../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../../registry/paths.js';
import { type CyclePath } from '../../registry/scope.js';
import { deletedCountSchema, MAX_ROWS, saveTrussCountBody, trussCountSchema } from './schemas.js';
import { deleteTrussCount, listTrussCounts, saveTrussCount, type TrussCountInput } from './commands.js';
import { presentTrussCounts } from './presenters.js';

const TAG = 'Truss counts';

export const trussCountRoutes: RouteSpec[] = [
  defineRoute<CyclePath, unknown, TrussCountInput, 'cycle', true>({
    method: 'put',
    path: `${CYCLE}/truss-counts`,
    operationId: 'save_truss_count',
    summary: 'Save the truss counts of one date',
    description: `Fruit (and optionally flowers) counted per truss on tagged plants, for one count date. Saving a date again replaces every row it had, in one transaction. 1 to ${MAX_ROWS} rows; a (plant, truss) repeated within the date is a 422 naming the row index (rows.N, from 0) and nothing is saved.`,
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: pathParams(...CYCLE_PARAMS),
    body: saveTrussCountBody,
    responses: {
      200: {
        description: 'The saved count date with its rows, figures and the change since the previous count.',
        schema: trussCountSchema,
      },
    },
    errors: [404],
    handler: async ({ w, scope, body }) => {
      const all = presentTrussCounts(await saveTrussCount(w, scope, body), scope.cycle);
      return all.find((c) => c.counted_on === body.counted_on)!;
    },
  }),
  defineRoute<CyclePath, { limit: number; offset: number }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/truss-counts`,
    operationId: 'list_truss_counts',
    summary: 'Truss counts, newest first, with what the forecast needs',
    description: `Each count date with its rows and figures: fruit per truss (mean), trusses per plant, fruit per plant, flowers per plant, fruit per m² (scaled by the cycle's stems_per_m2, else plants_per_m2; null with a reason when it has neither), and the change since the previous count (delta and per week). Paged: \`limit\` (default 50, at most ${MAX_LIMIT}; above is a 422) and \`offset\` (default 0), in count dates; \`change\` always compares with the previous count date, also across pages.`,
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: pathParams(...CYCLE_PARAMS),
    query: pagingQuery(),
    responses: { 200: { description: 'Count dates, newest first.', schema: pageOf(trussCountSchema) } },
    errors: [404],
    handler: async ({ db, scope, query }) => {
      // Figures and changes are computed over every date (each compares with the one before it), then paged.
      const all = presentTrussCounts(await listTrussCounts(db, scope.cycle.id), scope.cycle);
      return { items: all.slice(query.offset, query.offset + query.limit), total: all.length, limit: query.limit, offset: query.offset };
    },
  }),
  defineRoute<CyclePath & { counted_on: string }, unknown, unknown, 'cycle', true>({
    method: 'delete',
    path: `${CYCLE}/truss-counts/{counted_on}`,
    operationId: 'delete_truss_count',
    summary: 'Delete the counts of one date',
    description: '404 when nothing was counted on that date.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: {
      ...pathParams(...CYCLE_PARAMS),
      properties: { ...pathParams(...CYCLE_PARAMS).properties, counted_on: { ...dateSchema, description: 'The count date, YYYY-MM-DD.' } },
      required: [...CYCLE_PARAMS, 'counted_on'],
    },
    responses: { 200: { description: 'Deleted, with how many rows went.', schema: deletedCountSchema } },
    errors: [404],
    handler: async ({ w, scope, params }) => ({
      deleted: true,
      counted_on: params.counted_on,
      rows: await deleteTrussCount(w, scope, params.counted_on),
    }),
  }),
];
