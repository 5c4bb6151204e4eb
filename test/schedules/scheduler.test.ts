import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SettableClock } from '../../src/clock.js';
import { FEATURES } from '../../src/features.js';
import type { Feature } from '../../src/feature.js';
import type { Schedule, ScheduleContext } from '../../src/schedules/schedule.js';
import { schedulerOf } from '../../src/schedules/scheduler.js';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/log.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * The scheduler on the service clock: every test sets the clock and calls tick(), so nothing
 * waits on real time. Runs in this process and again under TZ=UTC and TZ=America/New_York: due
 * times depend on the schedule's zone only, never on the process's.
 */
const CHILD = process.env.SCHEDULES_TZ_CHILD === '1';

interface Probe {
  calls: { at: string; due: string; target: string | null }[];
  /** When set, a run waits on it (a run still going at its next due time). */
  gate?: Promise<void>;
  fail?: string;
}

function testFeature(probe: Probe, extra: Partial<Schedule> = {}): Feature {
  const nightly: Schedule = {
    name: 'nightly_probe',
    summary: 'A test job at 02:30, the hour the clocks change',
    when: '30 2 * * *',
    async run(ctx: ScheduleContext) {
      probe.calls.push({
        at: new Date(ctx.startedAt).toISOString(),
        due: new Date(ctx.dueAt).toISOString(),
        target: ctx.target?.key ?? null,
      });
      if (probe.gate) {
        await Promise.race([
          probe.gate,
          new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopping')))),
        ]);
      }
      if (probe.fail) throw new Error(probe.fail);
      return { runs: probe.calls.length };
    },
    ...extra,
  };
  // The other features' schedules stay in: they must not run on a fresh box either.
  return { name: 'probe', routes: [], schedules: [nightly] };
}

async function boot(
  t: Test,
  clock: SettableClock,
  probe: Probe,
  opts: { dataDir?: string; schedules?: Record<string, string>; extra?: Partial<Schedule> } = {},
) {
  const s = await startServer(
    t,
    { scheduleTimeZone: 'Europe/Amsterdam', schedules: opts.schedules ?? {}, ...(opts.dataDir ? { dataDir: opts.dataDir } : {}) },
    { clock, features: [...FEATURES, testFeature(probe, opts.extra)] },
  );
  return { s, scheduler: schedulerOf(s.app.services) };
}

async function listed(s: TestServer, name: string) {
  const r = await s.request('GET', '/api/schedules', { admin: true });
  if (r.status !== 200) throw new Error(`GET /api/schedules: ${r.status} ${r.text}`);
  return r.body.items.find((i: { name: string }) => i.name === name);
}

t.test(`due times across both daylight-saving changes (process zone ${process.env.TZ ?? '(unset)'})`, async (t) => {
  const clock = new SettableClock('2026-03-27T12:00:00Z');
  const probe: Probe = { calls: [] };
  const { s, scheduler } = await boot(t, clock, probe);
  t.same(probe.calls, [], 'a fresh box runs nothing at start');
  const first = await listed(s, 'nightly_probe');
  t.match(first, {
    enabled: true,
    when: '30 2 * * *',
    time_zone: 'Europe/Amsterdam',
    next_run_at: '2026-03-28T01:30:00.000Z',
    last_run: null,
  });

  clock.set('2026-03-28T01:29:59Z');
  await scheduler.tick();
  t.same(probe.calls, [], 'not before its time');
  clock.set('2026-03-28T01:30:00Z');
  await scheduler.tick();
  await scheduler.tick();
  t.equal(probe.calls.length, 1, 'once at its time, however often the clock is checked');

  // 29 March 2026: 02:00 CET becomes 03:00 CEST, so there is no 02:30: it runs at 03:00 CEST.
  t.equal((await listed(s, 'nightly_probe')).next_run_at, '2026-03-29T01:00:00.000Z', 'the night without 02:30');
  clock.set('2026-03-29T01:00:00Z');
  await scheduler.tick();
  t.equal(probe.calls[1]?.at, '2026-03-29T01:00:00.000Z');
  t.equal((await listed(s, 'nightly_probe')).next_run_at, '2026-03-30T00:30:00.000Z', '02:30 CEST the night after');

  // 25 October 2026: 03:00 CEST becomes 02:00 CET, so 02:30 comes twice: it runs at the first only.
  clock.set('2026-10-24T12:00:00Z');
  await scheduler.tick();
  const before = probe.calls.length;
  t.equal((await listed(s, 'nightly_probe')).next_run_at, '2026-10-25T00:30:00.000Z');
  clock.set('2026-10-25T00:30:00Z');
  await scheduler.tick();
  clock.set('2026-10-25T01:30:00Z');
  await scheduler.tick();
  t.same(
    probe.calls.slice(before).map((c) => c.at),
    ['2026-10-25T00:30:00.000Z'],
    'one run on the night 02:30 comes twice',
  );
  t.equal((await listed(s, 'nightly_probe')).next_run_at, '2026-10-26T01:30:00.000Z', '02:30 CET the night after');
});

t.test('a run missed while the box was off runs once at start; an interrupted one runs again', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-sched-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const clock = new SettableClock('2026-05-04T10:00:00Z');
  const probe: Probe = { calls: [] };
  let { s } = await boot(t, clock, probe, { dataDir });
  await s.close();

  // Off for three nights: one run at start, not three.
  clock.set('2026-05-07T09:00:00Z');
  ({ s } = await boot(t, clock, probe, { dataDir }));
  t.same(
    probe.calls.map((c) => c.at),
    ['2026-05-07T09:00:00.000Z'],
    'made up once at start',
  );
  let view = await listed(s, 'nightly_probe');
  t.match(view.last_run, { outcome: 'ok', started_at: '2026-05-07T09:00:00.000Z', result: { runs: 1 } });
  t.equal(typeof view.last_run.duration_ms, 'number');
  t.equal(view.next_run_at, '2026-05-08T00:30:00.000Z', 'and next at its usual time');
  await s.close();

  // Started again the same day: nothing was missed.
  ({ s } = await boot(t, clock, probe, { dataDir }));
  t.equal(probe.calls.length, 1, 'no run at a start with nothing missed');

  // Stopped in the middle of a run: the run is interrupted, and made up at the next start.
  let release!: () => void;
  probe.gate = new Promise<void>((r) => (release = r));
  clock.set('2026-05-08T00:30:00Z');
  const running = schedulerOf(s.app.services).tick();
  await waitFor(() => probe.calls.length === 2, 'the run to begin');
  await s.close();
  await running;
  release();
  probe.gate = undefined;
  clock.set('2026-05-08T00:31:00Z');
  ({ s } = await boot(t, clock, probe, { dataDir }));
  t.equal(probe.calls.length, 3, 'the interrupted run is run again at start');
  view = await listed(s, 'nightly_probe');
  t.match(view.last_run, { outcome: 'ok', started_at: '2026-05-08T00:31:00.000Z' });
});

t.test('runs never overlap themselves', async (t) => {
  const clock = new SettableClock('2026-06-01T12:00:00Z');
  let release!: () => void;
  const probe: Probe = { calls: [], gate: new Promise<void>((r) => (release = r)) };
  const { s, scheduler } = await boot(t, clock, probe, { schedules: { nightly_probe: '*/5 * * * *' } });
  clock.set('2026-06-01T12:05:00Z');
  const first = scheduler.tick();
  await waitFor(() => probe.calls.length === 1, 'the first run to begin');
  clock.set('2026-06-01T12:10:00Z');
  await scheduler.tick();
  t.equal(probe.calls.length, 1, 'no second run while the first is going');
  const view = await listed(s, 'nightly_probe');
  t.match(view, { running: true, skipped_overlaps: 1, last_run: { outcome: 'running' } });
  release();
  await first;
  t.match((await listed(s, 'nightly_probe')).last_run, { outcome: 'ok' });
  clock.set('2026-06-01T12:15:00Z');
  await scheduler.tick();
  t.equal(probe.calls.length, 2, 'the next due time runs again');
});

t.test('a failed run is shown, and health says so in words', async (t) => {
  const clock = new SettableClock('2026-06-01T12:00:00Z');
  const probe: Probe = { calls: [], fail: 'the disk is full' };
  const { s, scheduler } = await boot(t, clock, probe);
  clock.set('2026-06-02T00:30:00Z');
  await scheduler.tick();
  t.match((await listed(s, 'nightly_probe')).last_run, { outcome: 'failed', error: 'the disk is full' });
  const h = await s.request('GET', '/api/health');
  t.equal(h.status, 200);
  t.equal(h.body.status, 'degraded');
  t.match(h.body.checks.schedules, { ok: false, warning: /nightly_probe run .* failed: the disk is full/ });
  probe.fail = undefined;
  clock.set('2026-06-03T00:30:00Z');
  await scheduler.tick();
  t.match((await s.request('GET', '/api/health')).body.checks.schedules, { ok: true, warning: null });
});

t.test('settings: off, a pattern of its own, per-target zones', async (t) => {
  const clock = new SettableClock('2026-03-05T00:00:00Z');
  const probe: Probe = { calls: [] };
  const { s, scheduler } = await boot(t, clock, probe, {
    schedules: { nightly_probe: 'off' },
  });
  const off = await listed(s, 'nightly_probe');
  t.match(off, { enabled: false, off_reason: /SCHEDULE_NIGHTLY_PROBE=off/, next_run_at: null });
  clock.set('2026-03-09T00:00:00Z');
  await scheduler.tick();
  t.same(probe.calls, [], 'an schedule turned off never runs');

  // Monday 06:00 in each target's own zone.
  const probe2: Probe = { calls: [] };
  const { s: s2, scheduler: sch2 } = await boot(t, clock, probe2, {
    extra: {
      when: '0 6 * * 1',
      zone: 'target',
      targets: async () => [
        { key: 'ams', label: 'Amsterdam house', timeZone: 'Europe/Amsterdam' },
        { key: 'nyc', label: 'New York house', timeZone: 'America/New_York' },
      ],
    },
  });
  const view = await listed(s2, 'nightly_probe');
  t.match(view, { per_target: true, time_zone: null, next_run_at: '2026-03-09T05:00:00.000Z' });
  t.same(
    view.targets.map((x: { key: string; next_run_at: string; time_zone: string }) => [x.key, x.time_zone, x.next_run_at]),
    [
      ['ams', 'Europe/Amsterdam', '2026-03-09T05:00:00.000Z'],
      // New York went to daylight time on 8 March 2026: 06:00 EDT is 10:00 UTC.
      ['nyc', 'America/New_York', '2026-03-09T10:00:00.000Z'],
    ],
  );
  clock.set('2026-03-09T05:00:00Z');
  await sch2.tick();
  t.same(
    probe2.calls.map((c) => c.target),
    ['ams'],
  );
  clock.set('2026-03-09T10:00:00Z');
  await sch2.tick();
  t.same(
    probe2.calls.map((c) => c.target),
    ['ams', 'nyc'],
  );
});

t.test('bad settings stop the start with a message naming them', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-sched-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const make = (schedules: Record<string, string>, zone = 'Europe/Amsterdam') =>
    createApp({
      config: { dataDir, schedules, scheduleTimeZone: zone, adminToken: 'x'.repeat(32) },
      env: {},
      logger: createLogger('silent'),
      startBackground: false,
      features: [...FEATURES, testFeature({ calls: [] })],
    });
  await t.rejects(make({ nightly_probe: '61 * * * *' }), /SCHEDULE_NIGHTLY_PROBE must be on, off or a 5-field cron pattern/);
  await t.rejects(make({ nightly_probe: '0 0 0 * * *' }), /does not have 5 fields/);
  await t.rejects(make({ bakcup: 'off' }), /SCHEDULE_BAKCUP names no schedule/);
  await t.rejects(make({}, 'Mars/Olympus'), /SCHEDULE_TIME_ZONE must be an IANA time zone/);
});

t.test("the box's own schedules: backup nightly, media retention hourly, each run on the clock", async (t) => {
  const clock = new SettableClock('2026-06-01T12:00:00Z');
  const { s, scheduler } = await boot(t, clock, { calls: [] });
  const backup = await listed(s, 'backup');
  if (s.app.services.engine.kind === 'sqlite')
    t.match(backup, { enabled: true, when: '15 3 * * *', setting: 'SCHEDULE_BACKUP', next_run_at: '2026-06-02T01:15:00.000Z' });
  // The backup copies the SQLite file: on PostgreSQL it stands aside and says what to use.
  else t.match(backup, { enabled: false, off_reason: /PostgreSQL.*pg_dump/, next_run_at: null });
  t.match(await listed(s, 'media_retention'), { enabled: true, when: '7 * * * *', next_run_at: '2026-06-01T12:07:00.000Z' });
  clock.set('2026-06-01T12:07:00Z');
  await scheduler.tick();
  t.match((await listed(s, 'media_retention')).last_run, {
    outcome: 'ok',
    result: { clips: 0, frames: 0, clips_for_space: 0, frames_for_space: 0 },
  });
});

t.test('GET /api/schedules needs the admin token', async (t) => {
  const clock = new SettableClock('2026-06-01T12:00:00Z');
  const { s } = await boot(t, clock, { calls: [] });
  const r = await s.request('GET', '/api/schedules');
  t.equal(r.status, 401);
  t.equal(r.body.code, 'unauthenticated');
  const names = (await s.request('GET', '/api/schedules', { admin: true })).body.items.map((i: { name: string }) => i.name);
  t.ok(names.includes('nightly_probe'));
});

async function waitFor(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

if (!CHILD) {
  const self = fileURLToPath(import.meta.url);
  for (const zone of ['UTC', 'America/New_York']) {
    t.test(`the same checks under TZ=${zone}`, async (t) => {
      const child = spawnSync(process.execPath, ['--import', 'tsx', self], {
        env: { ...process.env, TZ: zone, SCHEDULES_TZ_CHILD: '1' },
        encoding: 'utf8',
        timeout: 180_000,
      });
      t.equal(child.status, 0, `child under TZ=${zone} passed:\n${child.stdout.slice(-3000)}\n${child.stderr.slice(-2000)}`);
      t.match(child.stdout, new RegExp(`process zone ${zone.replace('/', '\\/')}`));
    });
  }
}
