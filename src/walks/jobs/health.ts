import path from 'node:path';
import { resolveFfmpeg } from '../../vision/media/ffmpeg-path.js';
import { readManifest } from '../../vision/onnx/manifest.js';
import type { HealthCheck, Services } from '../../services.js';
import { queueDepth } from './commands.js';
import { configuredFor } from './detector-choice.js';
import { keptClipBytes, retentionOf } from './retention.js';
import { runnerOf } from './runner.js';

/**
 * /api/health's `scoring` entry: ffmpeg found (path and version), which
 * detector runs, how many walks wait, whether the runner is alive, and how
 * long walks' files are kept with the bytes of clips still on disk. Not
 * critical: the rest of the box works without scoring.
 */
export function scoringHealthCheck(services: Services, builtinName: string): HealthCheck {
  return {
    name: 'scoring',
    critical: false,
    async check() {
      const ff = await resolveFfmpeg();
      const configured = configuredFor(services);
      const runner = runnerOf(services);
      const queue = await queueDepth(services.db);
      const model = configured.model;
      let detector: Record<string, unknown>;
      if (!model)
        detector = { setting: configured.setting, runs: builtinName, kind: 'builtin', available: true, reason: configured.reason };
      else {
        // The manifest is read (not the model loaded): cheap enough for every health request.
        const manifest = model.available
          ? await readManifest(model.manifest).then(
              (m) => ({ m, reason: null }),
              (err: Error) => ({ m: null, reason: `the manifest ${path.basename(model.manifest)} is not valid: ${err.message}` }),
            )
          : { m: null, reason: model.reason };
        detector = manifest.m
          ? {
              setting: configured.setting,
              runs: manifest.m.name,
              kind: 'onnx',
              available: true,
              reason: null,
              model: {
                manifest: path.basename(model.manifest),
                sha256: manifest.m.sha256,
                created: manifest.m.created ?? null,
                input: manifest.m.input,
                conf: manifest.m.conf ?? null,
              },
            }
          : // mode auto falls back to the built-in detector, so scoring still runs; the reason says what to fix.
            { setting: configured.setting, runs: builtinName, kind: 'builtin', available: false, reason: manifest.reason };
      }
      if (configured.passedOver?.length) detector.passed_over = configured.passedOver;
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
          media: {
            clip_keep_days: services.config.walkClipKeepDays,
            frame_keep_days: services.config.walkFrameKeepDays,
            disk_reserve_bytes: services.config.diskReserve,
            clips_kept: await keptClipBytes(services.db),
            last_sweep: retentionOf(services)?.lastSweep ?? null,
          },
        },
      };
    },
  };
}
