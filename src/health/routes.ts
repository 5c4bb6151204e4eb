import { statfs } from 'node:fs/promises';
import { sql } from 'kysely';
import { defineRoute, type RouteSpec } from '../http/route.js';
import type { HealthCheck, Services } from '../services.js';

const healthSchema = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: {
      enum: ['ok', 'degraded', 'unavailable'],
      description:
        'unavailable (503) when the database does not answer; degraded when a non-critical part cannot run (scoring) or is short of room (storage).',
    },
    checks: {
      type: 'object',
      additionalProperties: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
      description:
        'One entry per part: `database`, `storage` (free and total bytes under DATA_DIR; not ok below `low_below_bytes`, 1 GiB), `scoring` (ffmpeg found; `detector`: the `DETECTOR` setting, the detector that runs (`runs`, `kind` builtin or onnx; for a model its manifest, sha256, created, input and thresholds `conf`), the reason when no model runs and the manifests `passed_over` with why; the queue, the runner, media retention), `schedules` (the last run of each; not ok when one failed), `backups` (the last good backup and its age in seconds, `age_s`; not ok past two days), `scales` (each scale on SCALE_PORT). A part that needs attention has `ok: false` and a `warning` in plain words.',
    },
    version: { type: 'string' },
    uptime_s: { type: 'number' },
  },
};

export function databaseCheck(services: Pick<Services, 'db'>): HealthCheck {
  return {
    name: 'database',
    critical: true,
    async check() {
      try {
        await sql`select 1`.execute(services.db);
        return { ok: true, detail: {} };
      } catch (err) {
        return { ok: false, detail: { error: err instanceof Error ? err.message : String(err) } };
      }
    },
  };
}

/**
 * Below this much free space under DATA_DIR the box reports `degraded`: a few minutes of 4K
 * phone video no longer fit, and the frames of a walk being scored need room too. Uploads that
 * do not fit answer 507 whatever this says.
 */
export const LOW_STORAGE_BYTES = 1024 ** 3;

/** Free and total bytes of the filesystem under `dir`, as statfs reports them to this process (what it may still write). */
export async function storageOf(dir: string): Promise<{ free_bytes: number; total_bytes: number }> {
  const s = await statfs(dir);
  return { free_bytes: s.bavail * s.bsize, total_bytes: s.blocks * s.bsize };
}

export function storageCheck(services: Pick<Services, 'config'>, low = LOW_STORAGE_BYTES): HealthCheck {
  return {
    name: 'storage',
    critical: false,
    async check() {
      const space = await storageOf(services.config.dataDir);
      const ok = space.free_bytes >= low;
      const warning = ok
        ? null
        : `The box is short of disk space: ${(space.free_bytes / 1024 ** 3).toFixed(1)} GiB free under ${services.config.dataDir}. New walk uploads may be refused; old walks' clips go first (DISK_RESERVE). Free some space or move backups to another disk (BACKUP_DIR).`;
      return { ok, detail: { ...space, low_below_bytes: low, warning } };
    },
  };
}

/** Every health check of the running service, gathered; `unavailable` when a critical one fails. */
export async function readHealth(services: Services) {
  const checks: Record<string, Record<string, unknown>> = {};
  let critical = true;
  let all = true;
  for (const hc of services.healthChecks) {
    // A check that throws is a failed check, never a failed health answer.
    const r = await hc
      .check()
      .catch((err: unknown) => ({ ok: false, detail: { error: err instanceof Error ? err.message : String(err) } }));
    checks[hc.name] = { ok: r.ok, ...r.detail };
    if (!r.ok) {
      all = false;
      if (hc.critical) critical = false;
    }
  }
  return {
    status: !critical ? 'unavailable' : all ? 'ok' : 'degraded',
    checks,
    version: process.env.npm_package_version ?? '0.1.0',
    // Time since the process started: an elapsed time, not the wall clock.
    uptime_s: Math.round(process.uptime()),
  };
}

export const healthRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/health',
    operationId: 'get_health',
    summary: 'Whether the database answers and scoring can run (no key needed)',
    tags: ['Status'],
    auth: 'none',
    responses: {
      200: { description: 'Healthy or degraded.', schema: healthSchema },
      503: { description: 'The database does not answer.', schema: healthSchema },
    },
    handler: async ({ services, reply }) => {
      const health = await readHealth(services);
      if (health.status === 'unavailable') reply.status = 503;
      return health;
    },
  }),
];
