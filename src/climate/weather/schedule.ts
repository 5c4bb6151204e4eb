import { SYSTEM_ACTOR } from '../../db/store.js';
import type { Schedule } from '../../schedules/schedule.js';
import { greenhousesWithLocation, refreshWeather } from './commands.js';

/**
 * Every hour, each greenhouse with a location refreshes its outdoor weather: the last two days
 * (the service's analysis replaces the hours that were forecast) and a week ahead, which the
 * forecast reads for the days to come. A greenhouse given a location joins at its next due check.
 */
export const weatherSchedule: Schedule = {
  name: 'weather',
  summary:
    "Refreshes each greenhouse's outdoor weather (2 days back, 7 ahead) from WEATHER_URL; greenhouses without a location are left out",
  when: '7 * * * *',
  async targets(services) {
    return (await greenhousesWithLocation(services.db)).map((g) => ({ key: g.id, label: g.name, timeZone: g.time_zone }));
  },
  async run({ services, target }) {
    const greenhouse = await services.db.selectFrom('greenhouses').selectAll().where('id', '=', target!.key).executeTakeFirst();
    if (!greenhouse || greenhouse.latitude === null || greenhouse.longitude === null)
      return { skipped: 'no such greenhouse with a location' };
    const r = await refreshWeather(services, greenhouse, { pastDays: 2, forecastDays: 7 }, SYSTEM_ACTOR);
    return { hours: r.hours, added: r.added, updated: r.updated };
  },
};
