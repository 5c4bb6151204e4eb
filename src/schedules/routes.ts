import { defineRoute, type RouteSpec } from '../http/route.js';
import { scheduleListSchema } from './schemas.js';
import { listSchedules } from './queries.js';

export const scheduleRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/schedules',
    operationId: 'list_schedules',
    summary: 'The periodic work the box runs, with its next and last run',
    description:
      'Each schedule (nightly backup, media retention, and those of other features: weather refresh, weekly forecast, sync) with its cron pattern, the zone it is read in, whether it is on, its next due time, and its last run: start, end, duration in milliseconds, outcome and error. Per-greenhouse schedules list each greenhouse under `targets`. Change a schedule with its setting (`SCHEDULE_<NAME>=on|off|<cron pattern>`, docs/appliance.md). Appliance admin token only.',
    tags: ['Appliance'],
    auth: 'admin-token',
    responses: { 200: { description: 'Every schedule, in the order features registered them.', schema: scheduleListSchema } },
    handler: async ({ services }) => ({ items: await listSchedules(services) }),
  }),
];
