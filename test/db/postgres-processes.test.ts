import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { openStorage, type OpenedDatabase } from '../../src/db/database.js';
import { Store, SYSTEM_ACTOR } from '../../src/db/store.js';
import { scheduled } from '../../src/db/engine.js';
import { createOrganization } from '../../src/keys/commands.js';
import { claimNextWalk, recoverInterrupted } from '../../src/walks/jobs/commands.js';
import type { WalkTable } from '../../src/walks/jobs/tables.js';
import { sqlitePassSkip, testDatabase } from '../helpers/postgres.js';
import { startServer } from '../helpers/server.js';
import { SettableClock } from '../../src/clock.js';
import { FEATURES } from '../../src/features.js';
import type { Feature } from '../../src/feature.js';
import { schedulerOf } from '../../src/schedules/scheduler.js';

/**
 * Several service processes on one PostgreSQL database: the walk queue hands each walk to one
 * process (FOR UPDATE SKIP LOCKED), a process starting takes back only the walks of processes
 * that died, a scheduled job runs in one process per round, and two real processes started at
 * once serve one set of data, a key revoked in one refused by the other.
 */

const storeOf = (o: OpenedDatabase) => new Store(o.db, o.hlc, undefined, o.engine);
const instanceOf = (o: OpenedDatabase) => (o.engine.kind === 'postgres' ? o.engine.instance : -1);

async function queueWalks(store: Store, n: number): Promise<{ org: string; ids: string[] }> {
  const { org } = await store.write(SYSTEM_ACTOR, (w) => createOrganization(w, 'Queue', 'admin'));
  const ids = await store.write(SYSTEM_ACTOR, async (w) => {
    const made: string[] = [];
    for (let i = 0; i < n; i++) {
      const walk = await w.insert<WalkTable>('walks', {
        organization_id: org.id,
        farm_id: null,
        greenhouse_id: null,
        row_id: null,
        cycle_id: null,
        week: null,
        source: 'observation',
        example_key: null,
        status: 'queued',
        progress: 0,
        mode: 'video',
        options: '{}',
        detector: null,
        error: null,
        idempotency_key: null,
        request_hash: `h${i}`,
        created_by_key_id: null,
        attempts: 0,
        started_at: null,
        finished_at: null,
        count_green: null,
        count_turning: null,
        count_red: null,
        count_total: null,
        corrected_green: null,
        corrected_turning: null,
        corrected_red: null,
        corrected_total: null,
        result: null,
        clips_removed_at: null,
        frames_removed_at: null,
      });
      made.push(walk.id);
    }
    return made;
  });
  return { org: org.id, ids };
}

t.test('processes sharing the walk queue', async (t) => {
  if (sqlitePassSkip(t)) return;
  const url = await testDatabase(t);
  if (!url) return;
  const a = await openStorage('/nonexistent', { databaseUrl: url });
  const b = await openStorage('/nonexistent', { databaseUrl: url });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const [sa, sb] = [storeOf(a), storeOf(b)];

  t.test('a claimer passes over the walk another process is claiming, instead of waiting for it', async (t) => {
    const { ids } = await queueWalks(sa, 2);
    // Another process in the middle of claiming the oldest walk: its row is locked until that commits.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    t.teardown(() => holder.end());
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM walks WHERE id = $1 FOR UPDATE', [ids[0]]);
    const started = Date.now();
    const got = await Promise.race([claimNextWalk(sb), sleep(5000).then(() => 'waited' as const)]);
    t.not(got, 'waited', 'the claim did not wait for the locked row');
    t.equal(got !== 'waited' && got?.id, ids[1], 'it took the next walk');
    t.ok(Date.now() - started < 5000);
    await holder.query('ROLLBACK');
    const first = await claimNextWalk(sa);
    t.equal(first?.id, ids[0], 'the walk that was locked is claimed once free');
    t.equal(await claimNextWalk(sa), null, 'and the queue is empty');
  });

  t.test('every walk is claimed once', async (t) => {
    const { ids } = await queueWalks(sa, 12);
    const claimed: { id: string; by: number | null | undefined; who: string }[] = [];
    for (;;) {
      const [x, y] = await Promise.all([claimNextWalk(sa), claimNextWalk(sb)]);
      if (x) claimed.push({ id: x.id, by: x.claimed_by, who: 'a' });
      if (y) claimed.push({ id: y.id, by: y.claimed_by, who: 'b' });
      if (!x && !y) break;
    }
    t.same(claimed.map((c) => c.id).sort(), [...ids].sort(), 'each walk exactly once');
    for (const c of claimed) t.equal(c.by, c.who === 'a' ? instanceOf(a) : instanceOf(b), 'the claim names its process');
  });

  t.test('a process starting takes back only the walks of processes that are gone', async (t) => {
    const c = await openStorage('/nonexistent', { databaseUrl: url });
    const sc = storeOf(c);
    const { ids } = await queueWalks(sc, 1);
    const walk = await claimNextWalk(sc);
    t.equal(walk?.id, ids[0]);
    const whileAlive = await recoverInterrupted(sb);
    t.notOk(whileAlive.requeued.includes(ids[0]!), "a live process's running walk stays with it");
    await c.close();
    const afterDeath = await recoverInterrupted(sb);
    t.ok(afterDeath.requeued.includes(ids[0]!), 'once its process is gone, the walk goes back to the queue');
    const again = await claimNextWalk(sa);
    t.equal(again?.id, ids[0], 'and is claimed by a live one');
    t.equal(again?.claimed_by, instanceOf(a));
  });

  t.test('a scheduled job runs in one process per round', async (t) => {
    let runs = 0;
    const job = async () => {
      runs++;
      await sleep(300);
      return 'ran';
    };
    const results = await Promise.all([scheduled(a.engine, 'sweep', job), scheduled(b.engine, 'sweep', job)]);
    t.equal(runs, 1);
    t.same(results.sort(), ['ran', undefined].sort());
    t.equal(await scheduled(b.engine, 'sweep', job), 'ran', 'the next round runs again');
  });
});

interface Running {
  child: ChildProcess;
  base: string;
  out: () => string;
  stop(): Promise<number | null>;
}

/** `npm start`'s entry point as a process of its own. */
async function startProcess(env: Record<string, string>): Promise<Running> {
  const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const address = await new Promise<string>((resolve, reject) => {
    const deadline = Date.now() + 60_000;
    const timer = setInterval(() => {
      const m = /"msg":"cropwalk listening","address":"([^"]+)"/.exec(out);
      if (m) {
        clearInterval(timer);
        resolve(m[1]!);
      } else if (Date.now() > deadline) {
        clearInterval(timer);
        reject(new Error(`did not start within 60 s: ${out}`));
      }
    }, 50);
    child.on('exit', () => reject(new Error(`exited early: ${out}`)));
  });
  return {
    child,
    base: `http://${address}`,
    out: () => out,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

t.test('two service processes on one database', async (t) => {
  if (sqlitePassSkip(t)) return;
  const url = await testDatabase(t);
  if (!url) return;
  const token = 'two-processes-admin-token-0123456789';
  const dirs = [mkdtempSync(path.join(tmpdir(), 'cropwalk-p1-')), mkdtempSync(path.join(tmpdir(), 'cropwalk-p2-'))];
  t.teardown(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  // Started at once on an empty database: both migrate, one after the other.
  const [p1, p2] = await Promise.all(dirs.map((d) => startProcess({ DATABASE_URL: url, DATA_DIR: d, ADMIN_TOKEN: token })));
  t.teardown(async () => {
    await p1.stop();
    await p2.stop();
  });
  t.match(p1.out(), /"database":"postgres:\/\/cropwalk@127\.0\.0\.1/, 'the log names the database, without a password');

  const call = async (p: Running, method: string, url: string, opts: { key?: string; body?: unknown; admin?: boolean } = {}) => {
    const headers: Record<string, string> = {};
    if (opts.key) headers['x-api-key'] = opts.key;
    if (opts.admin) headers.authorization = `Bearer ${token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(p.base + url, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined };
  };

  const org = await call(p1, 'POST', '/api/organizations', { admin: true, body: { name: 'Shared' } });
  t.equal(org.status, 201);
  const key = org.body.key.api_key as string;
  const orgPath = `/api/organizations/${org.body.organization_id}`;
  t.equal((await call(p2, 'GET', '/api/session', { key })).status, 200, 'a key made in one process works in the other');

  const farm = await call(p2, 'POST', `${orgPath}/farms`, { key, body: { name: 'F' } });
  const gh = await call(p1, 'POST', `${orgPath}/farms/${farm.body.farm_id}/greenhouses`, {
    key,
    body: { name: 'G', time_zone: 'Europe/Amsterdam' },
  });
  const ghPath = `${orgPath}/farms/${farm.body.farm_id}/greenhouses/${gh.body.greenhouse_id}`;
  const row = await call(p2, 'POST', `${ghPath}/rows`, { key, body: { name: 'R' } });
  const cycle = await call(p1, 'POST', `${ghPath}/rows/${row.body.row_id}/cycles`, { key, body: { name: 'C', started_on: '2026-01-05' } });
  const cyclePath = `${ghPath}/rows/${row.body.row_id}/cycles/${cycle.body.cycle_id}`;

  const posts = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      call(i % 2 ? p1 : p2, 'POST', `${cyclePath}/harvests`, { key, body: { week: '2026-W10', kg: i + 1 } }),
    ),
  );
  t.same([...new Set(posts.map((p) => p.status))], [201], 'forty harvests at once over two processes, all stored');
  const [l1, l2] = await Promise.all([p1, p2].map((p) => call(p, 'GET', `${cyclePath}/harvests?limit=100`, { key })));
  t.equal(l1.body.total, 40);
  t.same(l1.body, l2.body, 'both processes answer the same');

  const member = await call(p1, 'POST', `${orgPath}/keys`, { key, body: { name: 'm', role: 'member' } });
  t.equal(
    (await call(p2, 'GET', '/api/session', { key: member.body.api_key })).status,
    200,
    'the other process now holds the key in memory',
  );
  t.equal((await call(p1, 'POST', `${orgPath}/keys/${member.body.key_id}/revoke`, { key })).status, 200);
  // The revoking process tells the others on commit (NOTIFY); the deadline is for that word to arrive.
  const deadline = Date.now() + 5000;
  let status = 0;
  while (Date.now() < deadline && (status = (await call(p2, 'GET', '/api/session', { key: member.body.api_key })).status) !== 401)
    await sleep(20);
  t.equal(status, 401, 'a key revoked in one process is refused by the other');

  t.equal(await p1.stop(), 0, 'stops cleanly');
  t.equal((await call(p2, 'GET', `${cyclePath}/harvests?limit=1`, { key })).status, 200, 'the other serves on');
});

t.test('a schedule due in two processes runs in one', async (t) => {
  if (sqlitePassSkip(t)) return;
  const url = await testDatabase(t);
  if (!url) return;
  const calls: string[] = [];
  let release!: () => void;
  let gate: Promise<void> | null = null;
  const probe: Feature = {
    name: 'probe',
    routes: [],
    schedules: [
      {
        name: 'hourly_probe',
        summary: 'A test job on the hour',
        when: '0 * * * *',
        async run(ctx) {
          calls.push(new Date(ctx.dueAt).toISOString());
          if (gate) await gate;
          return { n: calls.length };
        },
      },
    ],
  };
  const boot = async () => {
    const clock = new SettableClock('2026-05-04T10:30:00Z');
    const s = await startServer(t, { databaseUrl: url }, { clock, features: [...FEATURES, probe] });
    return { s, clock, scheduler: schedulerOf(s.app.services) };
  };
  const a = await boot();
  const b = await boot();

  // Due in both at once, the first run still going while the other looks.
  gate = new Promise<void>((r) => (release = r));
  a.clock.set('2026-05-04T11:00:00Z');
  b.clock.set('2026-05-04T11:00:00Z');
  const first = a.scheduler.tick();
  await sleep(200);
  const second = b.scheduler.tick();
  await sleep(200);
  release();
  await Promise.all([first, second]);
  t.same(calls, ['2026-05-04T11:00:00.000Z'], 'one run for the due time');

  // One after the other: the second finds the run made and leaves it.
  gate = null;
  a.clock.set('2026-05-04T12:00:00Z');
  b.clock.set('2026-05-04T12:00:00Z');
  await b.scheduler.tick();
  await a.scheduler.tick();
  t.same(calls, ['2026-05-04T11:00:00.000Z', '2026-05-04T12:00:00.000Z'], 'one run again');
  const seen = await a.s.request('GET', '/api/schedules', { admin: true });
  const item = seen.body.items.find((i: { name: string }) => i.name === 'hourly_probe');
  t.equal(item.last_run.started_at, '2026-05-04T12:00:00.000Z', "the process that left it shows the other's run");
  t.equal(item.next_run_at, '2026-05-04T13:00:00.000Z');
});
