import { defineRoute, type RouteSpec } from '../../http/route.js';
import { pathParams, weekSchema } from '../../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../../registry/paths.js';
import { type CyclePath } from '../../registry/scope.js';
import { weekNoteBody, weekNoteSchema } from './schemas.js';
import { saveWeekNote } from './commands.js';
import { presentWeekNote } from './presenters.js';

const TAG = 'Weeks';
const base = pathParams(...CYCLE_PARAMS);
const params = {
  ...base,
  properties: {
    ...base.properties,
    week: { ...weekSchema, description: `The week: ${(weekSchema.description as string).replace(/^ISO 8601 week: /, '')}` },
  },
  required: [...CYCLE_PARAMS, 'week'],
};

export const weekNoteRoutes: RouteSpec[] = [
  defineRoute<CyclePath & { week: string }, unknown, Record<string, unknown>, 'cycle', true>({
    method: 'post',
    path: `${CYCLE}/weeks/{week}`,
    operationId: 'save_week',
    summary: 'Save a free-form note object for a week',
    description:
      'Stores the body (a JSON object) for the week; saving the same week again replaces it. Answers the stored object with its week label.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params,
    body: weekNoteBody,
    responses: { 201: { description: 'The stored note.', schema: weekNoteSchema } },
    errors: [404],
    handler: async ({ w, scope, params, body, bodyBytes }) => presentWeekNote(await saveWeekNote(w, scope, params.week, body, bodyBytes)),
  }),
];
