import type { Services } from '../services.js';
import { schedulerOf, type ScheduleView } from './scheduler.js';

/** Every schedule the features registered, in their order, with its next and last run. */
export async function listSchedules(services: Services): Promise<ScheduleView[]> {
  return schedulerOf(services).list();
}
