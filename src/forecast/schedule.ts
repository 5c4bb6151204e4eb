import type { Schedule } from '../schedules/schedule.js';
import { activeCycles, storeForecastForCycle } from './commands.js';

/**
 * Monday 06:00 in each greenhouse's zone, each running crop cycle stores its forecast as of the
 * week just begun (made by "system"): a record of what the box said, to hold against the harvest.
 */
export const forecastSchedule: Schedule = {
  name: 'forecast',
  summary: 'Stores the forecast of each running crop cycle as of the new week',
  when: '0 6 * * 1',
  zone: 'target',
  async targets(services) {
    return (await activeCycles(services.db, services.clock.now())).map((c) => ({ key: c.cycle_id, label: c.label, timeZone: c.time_zone }));
  },
  async run({ services, target }) {
    const stored = await storeForecastForCycle(services, target!.key);
    return { forecast_id: stored.id, week: stored.week };
  },
};
