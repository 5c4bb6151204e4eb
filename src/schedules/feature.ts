import type { Feature } from '../feature.js';
import type { HealthCheck, Services } from '../services.js';
import { scheduleRoutes } from './routes.js';
import { Scheduler, schedulerOf, schedulers, type ScheduleView } from './scheduler.js';

/**
 * Builds the scheduler from every feature's `schedules` (checking the SCHEDULE_* settings against
 * them, so a misspelt one stops the start with a message) and adds its health check. Always done,
 * so GET /api/schedules answers even where background work is off.
 */
export function attachScheduler(services: Services, features: Feature[]): Scheduler {
  const scheduler = new Scheduler(
    services,
    services.clock,
    features.flatMap((f) => f.schedules ?? []),
    { boxZone: services.config.scheduleTimeZone, settings: services.config.schedules },
  );
  schedulers.set(services, scheduler);
  services.healthChecks.push(schedulesCheck(scheduler));
  return scheduler;
}

/** Starts the schedules (making up missed runs); stops them first when the service closes. */
export async function startScheduler(services: Services): Promise<void> {
  const scheduler = schedulerOf(services);
  services.onClose.push(async () => {
    await scheduler.stop(Math.max(1000, services.config.stopTimeoutMs / 2));
  });
  await scheduler.start();
}

/** Not ok when a schedule's last run failed: the warning names it and says what went wrong. */
export function schedulesCheck(scheduler: Scheduler): HealthCheck {
  return {
    name: 'schedules',
    critical: false,
    async check() {
      const views = await scheduler.list();
      const failed = views.flatMap((v: ScheduleView) =>
        (v.targets ?? [{ label: null, last_run: v.last_run }])
          .filter((t) => t.last_run?.outcome === 'failed')
          .map((t) => ({ schedule: v.name, target: t.label, at: t.last_run!.started_at, error: t.last_run!.error })),
      );
      const warning = failed.length
        ? failed
            .map((f) => `The last ${f.schedule} run${f.target ? ` for ${f.target}` : ''} (${f.at}) failed: ${f.error ?? 'no message'}.`)
            .join(' ') + ' GET /api/schedules shows every schedule; the service log has the details.'
        : null;
      return {
        ok: failed.length === 0,
        detail: {
          schedules: views.map((v) => ({
            name: v.name,
            enabled: v.enabled,
            next_run_at: v.next_run_at,
            last_outcome: v.last_run?.outcome ?? null,
          })),
          failed,
          warning,
        },
      };
    },
  };
}

export const schedulesFeature: Feature = { name: 'schedules', routes: scheduleRoutes };
