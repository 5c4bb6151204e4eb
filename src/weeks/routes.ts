import { defineRoute, type RouteSpec } from '../http/route.js';
import { pathParams, weekSchema } from '../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../registry/paths.js';
import type { CyclePath } from '../registry/scope.js';
import { requireWeek } from '../time/weeks.js';
import { readWeek } from './read.js';
import { weekReadSchema } from './schemas.js';

const base = pathParams(...CYCLE_PARAMS);
const params = {
  ...base,
  properties: {
    ...base.properties,
    week: { ...weekSchema, description: `The week: ${(weekSchema.description as string).replace(/^ISO 8601 week: /, '')}` },
  },
  required: [...CYCLE_PARAMS, 'week'],
};

export const weekRoutes: RouteSpec[] = [
  defineRoute<CyclePath & { week: string }, unknown, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/weeks/{week}`,
    operationId: 'read_week',
    summary: 'Read a week: walks, harvest, irrigation, climate, outdoor weather, water productivity, note and forecast',
    description:
      "Everything of one ISO week of the crop cycle, read in the greenhouse zone: the walks saved to it with the detector's and the corrected counts by ripeness (the corrected ones count) and corrected fruit per m²; the harvest (kg, picks, kg/m²); irrigation (water given and drain in L, drain %, mean EC and pH in and out); the climate from the stored readings (24-hour, day and night mean air temperature, mean relative humidity, daytime CO₂, radiation sum in J/cm², light integral in mol/m² where PAR is stored, mean VPD; each with the hours it rests on); the outdoor weather stored for the greenhouse, by local day; water productivity (kg per m³ given, the week and the cycle to date); the fruit mass in force; the week note; and the forecast for the week (live, and the latest stored one that covered it). Every figure per m² says which area it used (`area`), or is null with the reason.",
    tags: ['Weeks'],
    auth: 'key',
    scope: 'cycle',
    params,
    responses: { 200: { description: 'The week.', schema: weekReadSchema } },
    errors: [404],
    handler: async ({ db, scope, params, services }) => readWeek(db, scope, requireWeek(params.week, 'week', 'path'), services.clock.now()),
  }),
];
