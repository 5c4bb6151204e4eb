import { sql } from 'kysely';
import { defineRoute, type RouteSpec } from '../http/route.js';
import type { HealthCheck, Services } from '../services.js';

const healthSchema = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { enum: ['ok', 'degraded', 'unavailable'], description: 'unavailable (503) when the database does not answer; degraded when a non-critical part (scoring) cannot run.' },
    checks: {
      type: 'object',
      additionalProperties: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
      description: 'One entry per part: `database`, `scoring` (ffmpeg found, a detector available), and others.',
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

const started = Date.now();

export const healthRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/health',
    operationId: 'get_health',
    summary: 'Whether the database answers and scoring can run (no key needed)',
    tags: ['Status'],
    auth: 'none',
    responses: { 200: { description: 'Healthy or degraded.', schema: healthSchema }, 503: { description: 'The database does not answer.', schema: healthSchema } },
    handler: async (ctx) => {
      const checks: Record<string, Record<string, unknown>> = {};
      let critical = true;
      let all = true;
      for (const hc of ctx.services.healthChecks) {
        // A check that throws is a failed check, never a failed health answer.
        const r = await hc.check().catch((err: unknown) => ({ ok: false, detail: { error: err instanceof Error ? err.message : String(err) } }));
        checks[hc.name] = { ok: r.ok, ...r.detail };
        if (!r.ok) {
          all = false;
          if (hc.critical) critical = false;
        }
      }
      const body = { status: !critical ? 'unavailable' : all ? 'ok' : 'degraded', checks, version: process.env.npm_package_version ?? '0.1.0', uptime_s: Math.round((Date.now() - started) / 1000) };
      if (!critical) {
        ctx.status = 503;
        ctx.body = body;
        return undefined;
      }
      return body;
    },
  }),
];
