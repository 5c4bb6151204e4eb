import type { Feature } from '../feature.js';
import type { Services } from '../services.js';
import { BUILTIN_DETECTOR_NAME } from '../vision/builtin/index.js';
import { attachAutoModel } from './jobs/detector-choice.js';
import { scoringHealthCheck } from './jobs/health.js';
import { attachRetention, MediaRetention, retentionOf } from './jobs/retention.js';
import type { Schedule } from '../schedules/schedule.js';
import { attachRunner, forgetWalks, WalkRunner } from './jobs/runner.js';
import { correctionRoutes } from './corrections/routes.js';
import { scoringRoutes } from './routes.js';
import { walkScopes } from './jobs/commands.js';
import { trainingRoutes } from './training/routes.js';

/** The hourly sweep of walk media past its keep time or beyond DISK_RESERVE (jobs/retention.ts). */
export const mediaRetentionSchedule: Schedule = {
  name: 'media_retention',
  summary:
    "Removes scored walks' clips and frames past WALK_CLIP_KEEP_DAYS / WALK_FRAME_KEEP_DAYS, and the oldest early when free space is below DISK_RESERVE",
  when: '7 * * * *',
  async run({ services, startedAt }) {
    const retention = retentionOf(services);
    if (!retention) return { skipped: 'walk scoring is not running' };
    const r = await retention.sweep(new Date(startedAt));
    return {
      clips: r.clips.length,
      frames: r.frames.length,
      clips_for_space: r.clipsForSpace.length,
      frames_for_space: r.framesForSpace.length,
    };
  },
};

/**
 * Walk scoring as a service: uploads become walks queued in SQLite, a runner
 * scores them in worker processes, results and frames are served back.
 */
export const scoringFeature: Feature = {
  name: 'scoring',
  routes: [...scoringRoutes, ...correctionRoutes, ...trainingRoutes],
  scopes: walkScopes,
  schedules: [mediaRetentionSchedule],
  recordKinds: [
    { name: 'walks', table: 'walks', scope: 'cycle', column: 'cycle_id', afterRemove: forgetWalks },
    { name: 'walk_clips', table: 'walk_clips', scope: 'cycle', column: 'cycle_id', dependsOn: ['walks'] },
    { name: 'walk_corrections', table: 'walk_corrections', scope: 'cycle', column: 'cycle_id', dependsOn: ['walks'] },
  ],
  async start(services: Services) {
    if (services.config.detector.trim() === 'auto') {
      // Read once: a model dropped into MODELS_DIR runs from the next restart, never mid-walk.
      const auto = attachAutoModel(services);
      services.log.info('detector chosen', { setting: 'auto', manifest: auto.manifest, reason: auto.reason });
    }
    const runner = new WalkRunner(services, {
      concurrency: services.config.scoringConcurrency,
      detectThreads: services.config.scoringThreads,
    });
    attachRunner(services, runner);
    services.healthChecks.push(scoringHealthCheck(services, BUILTIN_DETECTOR_NAME));
    // Registered before start: app.close runs onClose in reverse, so the runner stops before the database closes.
    services.onClose.push(() => runner.stop());
    await runner.start();
    const retention = new MediaRetention(services, 0);
    attachRetention(services, retention);
    services.onClose.push(() => retention.stop());
    await retention.start();
  },
};
