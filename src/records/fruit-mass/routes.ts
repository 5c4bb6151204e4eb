import { defineRoute, type RouteSpec } from '../../http/route.js';
import { MAX_LIMIT, pagingQuery, pathParams, weekSchema } from '../../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../../registry/paths.js';
import { type CyclePath } from '../../registry/scope.js';
import { fruitMassListSchema, fruitMassSchema, saveFruitMassBody } from './schemas.js';
import { fruitMassPage, saveFruitMass } from './commands.js';
import { type FruitMassValues } from './history.js';
import { presentFruitMass } from './presenters.js';

const TAG = 'Fruit mass';
const paging = pagingQuery();

export const fruitMassRoutes: RouteSpec[] = [
  defineRoute<CyclePath, unknown, FruitMassValues & { week?: string }, 'cycle', true>({
    method: 'post',
    path: `${CYCLE}/fruit-mass`,
    operationId: 'save_fruit_mass',
    summary: 'Save the mean fruit mass by ripeness',
    description:
      'Mean grams per fruit for green, turning and red fruit, applying from `week` (default: the current week in the greenhouse zone) until a later entry. The same week again replaces its values; a later week adds to the history, so forecasts of past weeks keep the mass known then.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: pathParams(...CYCLE_PARAMS),
    body: saveFruitMassBody,
    responses: { 200: { description: 'The saved entry.', schema: fruitMassSchema } },
    errors: [404],
    handler: async ({ w, scope, body }) => presentFruitMass(await saveFruitMass(w, scope, body)),
  }),
  defineRoute<CyclePath, { week?: string; limit: number; offset: number }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/fruit-mass`,
    operationId: 'list_fruit_mass',
    summary: 'The fruit mass history and the values in force',
    description:
      'Every saved entry (the week each applies from), oldest first, and the values in force for query `week` (default the current week in the greenhouse zone). The history is paged (`limit` default and maximum 500, 422 above; `offset`); `in_force` always looks at the whole history.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: pathParams(...CYCLE_PARAMS),
    query: {
      ...paging,
      properties: {
        ...paging.properties,
        limit: {
          ...paging.properties.limit,
          default: MAX_LIMIT,
          description: `History entries per page, 1 to ${MAX_LIMIT} (default ${MAX_LIMIT}).`,
        },
        week: {
          ...weekSchema,
          description: `Which week \`in_force\` is for: ${(weekSchema.description as string).replace(/^ISO 8601 week: /, '')} Default: the current week in the greenhouse zone.`,
        },
      },
    },
    responses: { 200: { description: 'History and the values in force.', schema: fruitMassListSchema } },
    errors: [404],
    handler: async ({ db, scope, query, services }) => {
      const { inForce, ...page } = await fruitMassPage(db, scope, query, services.clock.iso());
      return { ...page, items: page.items.map(presentFruitMass), in_force: inForce && presentFruitMass(inForce) };
    },
  }),
];
