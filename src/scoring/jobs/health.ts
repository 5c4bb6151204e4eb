import { resolveFfmpeg } from '../media/ffmpeg-path.js';
import type { HealthCheck, Services } from '../../services.js';
import { queueDepth } from './commands.js';
import { configuredDetector } from './detector-choice.js';
import { runnerOf } from './runner.js';

/**
 * /api/health's `scoring` entry: ffmpeg found (path and version), which
 * detector runs, how many walks wait, and whether the runner is alive. Not
 * critical: the rest of the box works without scoring.
 */
export function scoringHealthCheck(services: Services, builtinName: string): HealthCheck {
  return {
    name: 'scoring',
    critical: false,
    async check() {
      const ff = await resolveFfmpeg();
      const configured = configuredDetector(services.config.detector);
      const runner = runnerOf(services);
      const queue = await queueDepth(services.db);
      const model = configured.model;
      const detector = !model
        ? { setting: 'builtin', runs: builtinName, available: true, reason: null }
        : model.available
          ? { setting: configured.setting, runs: configured.setting, available: true, reason: null }
          : // mode auto falls back to the built-in detector, so scoring still runs; the reason says what to fix.
            { setting: configured.setting, runs: builtinName, available: false, reason: model.reason };
      const alive = runner?.alive ?? false;
      return {
        ok: ff.available && alive,
        detail: {
          ffmpeg: ff.available
            ? { available: true, path: ff.ffmpeg.path, version: ff.ffmpeg.version, ffprobe: ff.ffprobe.path }
            : { available: false, reason: ff.reason },
          detector,
          queue: { queued: queue.queued, running: queue.running },
          runner: { alive, concurrency: runner?.concurrency ?? 0, scoring: runner?.activeWalks() ?? [] },
        },
      };
    },
  };
}
