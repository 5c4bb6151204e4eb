import { presentParents } from '../common.js';
import { defineRoute, type RouteSpec } from '../../http/route.js';
import { pathParams, weekSchema } from '../../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../../registry/paths.js';
import { type CyclePath } from '../../registry/scope.js';
import { weekNoteBody, weekNoteSchema, weekReadSchema } from './schemas.js';
import { readWeekRecords } from './read.js';
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
  defineRoute<CyclePath & { week: string }, unknown, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/weeks/{week}`,
    operationId: 'read_week',
    summary: 'Read a week (records part)',
    description:
      "The saved week note, the week's harvest total, irrigation totals (entries on the greenhouse clock) and the fruit mass in force. Walk counts, climate, water productivity and the forecast are not answered yet.",
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params,
    responses: { 200: { description: 'The week.', schema: weekReadSchema } },
    errors: [404],
    handler: async ({ db, scope, params }) => {
      const { week, ...r } = await readWeekRecords(db, scope, params.week);
      return {
        ...presentParents({ ...scope.cycle, cycle_id: scope.cycle.id }),
        week: week.label,
        start: week.start,
        end: week.end,
        note: r.note ? presentWeekNote(r.note).note : null,
        harvest: r.harvest,
        irrigation: r.irrigation,
        fruit_mass: r.fruitMass && {
          week: r.fruitMass.week,
          green_g: r.fruitMass.green_g,
          turning_g: r.fruitMass.turning_g,
          red_g: r.fruitMass.red_g,
        },
      };
    },
  }),
];
