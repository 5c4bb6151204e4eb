/**
 * The upstream role under load (issue 41, "Measured"): fifty simulated boxes each push a busy
 * week (the sync issue's week, bench/sync.ts's generator) at once to an upstream
 *   - on SQLite, one process (the baseline),
 *   - on PostgreSQL, one process,
 *   - on PostgreSQL, two processes on the same database (each box talks to one of them),
 * all in the same run, each on a fresh database. Every box is its own organization (a company
 * serving many growers), so PostgreSQL's organizations write side by side while SQLite's one
 * writer takes them in turn.
 *
 * The week is made once on a real box (in process, on SQLite): 50 scored walks (their records;
 * their frames travel by upload, not by push, and are not sent here), 1,000 harvests and 1,000
 * irrigation entries over the API, 7 daily climate imports of every metric. Its outbox is read in
 * the box's own batches (src/sync/outbox.ts, as the agent sends them); each simulated box sends
 * a copy with ids of its own (every UUID, its node id, its organization's registry) to
 * POST /api/sync/v1/push with its organization's admin key, batch after batch, as a box does.
 *
 * While they push, a real box (in process, SQLite) of the first organization pulls the feed by
 * cursor, round after round; at the end its digest must equal the upstream's for that
 * organization (nothing skipped by a change that committed late).
 *
 * Figures: changes applied per second (all boxes' changes / time from the first push to the last
 * acknowledgement), p99 of a push batch's answer time, and the ratios against the SQLite upstream.
 * An upstream past SYNC_PUSH_AT_ONCE + SYNC_PUSH_WAITING batches answers 503 upstream_busy with
 * Retry-After (src/sync/admission.ts); a simulated box then waits as the agent does and sends the
 * batch again. The batch p99 is of the pushes applied; the busy answers are counted with their
 * own p99, and "delivered" is a batch from its first send to its acknowledgement, waits included.
 * --at-once N --waiting M set the upstreams' admission (a large --at-once turns it off); --page N
 * the changes a box sends in one batch (its outbox page: 500 changes or 1 MiB, src/sync/outbox.ts
 * DEFAULT_LIMITS). UPSTREAM_BENCH_TRACE=<prefix> writes <prefix>-<target>.json: the kinds in each
 * batch, and each applied push's box, batch, start and answer time (how the tail was found:
 * docs/postgres.md, "Pages of 1 MiB").
 * Goal: two PostgreSQL processes faster than one SQLite process, the second process raising
 * throughput, p99 under 500 ms. PostgreSQL runs durable (fsync, synchronous commit), as SQLite's
 * synchronous=FULL. Every push may hold a pooled connection at once: 60 connections for one
 * process, 30 each for two (the same 60 in all); with the default 10, pushes past ten wait for a
 * connection and those that wait over 10 s are answered 503 database_unavailable.
 *
 * A process's first batches run code for the first time and take longer (docs/postgres.md,
 * "Pages of 1 MiB, and the first seconds of a process"); as a benchmark warms what it measures, each
 * process first takes two more boxes' weeks alone, one after the other, and their times are
 * printed beside the figures (the first against the second). --cold leaves that out: the timed
 * pushes then start on new processes.
 *
 *   npm run bench upstream       (or: node --import tsx bench/upstream.ts [--boxes N] [--scale F] [--at-once N] [--waiting M] [--page N] [--cold])
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { createApp, type App } from '../src/app.js';
import { createLogger } from '../src/log.js';
import { newId } from '../src/db/ids.js';
import { DEFAULT_LIMITS, readOutbox } from '../src/sync/outbox.js';
import { kindsOf, nodeOf } from '../src/sync/registry.js';
import type { WireChange } from '../src/sync/wire.js';
import { climateDay, writeWalks } from './sync.js';
// @ts-expect-error: plain JavaScript (scripts/ runs before the TypeScript tooling)
import { startCluster } from '../scripts/pg-cluster.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g;
/** Registry records the target has already (made over its API per organization): not pushed. */
const REGISTRY = new Set(['organizations', 'api_keys', 'farms', 'greenhouses', 'rows', 'cycles']);

interface Tree {
  orgId: string;
  farmId: string;
  greenhouseId: string;
  rowId: string;
  cycleId: string;
}

async function req(base: string, method: string, url: string, key: string | null, body?: unknown): Promise<any> {
  const headers: Record<string, string> = key ? { 'x-api-key': key } : { authorization: `Bearer ${ADMIN_TOKEN}` };
  let payload: RequestInit['body'];
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(base + url, { method, headers, body: payload });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}

export async function makeTree(base: string, name: string): Promise<{ tree: Tree; key: string; cyclePath: string }> {
  const org = await req(base, 'POST', '/api/organizations', null, { name });
  const key: string = org.key.api_key;
  const O = `/api/organizations/${org.organization_id}`;
  const farm = await req(base, 'POST', `${O}/farms`, key, { name: 'North' });
  const gh = await req(base, 'POST', `${O}/farms/${farm.farm_id}/greenhouses`, key, { name: 'GH', time_zone: 'Europe/Amsterdam' });
  const G = `${O}/farms/${farm.farm_id}/greenhouses/${gh.greenhouse_id}`;
  const row = await req(base, 'POST', `${G}/rows`, key, { name: 'Row 1' });
  const cycle = await req(base, 'POST', `${G}/rows/${row.row_id}/cycles`, key, { name: '2026', started_on: '2026-01-05' });
  return {
    tree: { orgId: org.organization_id, farmId: farm.farm_id, greenhouseId: gh.greenhouse_id, rowId: row.row_id, cycleId: cycle.cycle_id },
    key,
    cyclePath: `${G}/rows/${row.row_id}/cycles/${cycle.cycle_id}`,
  };
}

/** An instance in this process (the template box, the puller). */
export async function inProcess(dataDir: string, config: Record<string, unknown> = {}): Promise<{ app: App; base: string }> {
  const app = await createApp({
    config: {
      adminToken: ADMIN_TOKEN,
      logLevel: 'warn',
      diskReserve: 0,
      scoringThreads: 0,
      syncIntervalS: 0,
      schedules: { weather: 'off', forecast: 'off' },
      dataDir,
      databaseUrl: '',
      ...config,
    } as never,
    env: {},
    logger: createLogger('warn', {}, () => undefined),
  });
  const server = await app.listen(0, '127.0.0.1');
  const address = server.address();
  return { app, base: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

/** The busy week, made on a real box, read back as the batches its agent would push. */
export async function makeWeek(
  work: string,
  walks: number,
  scale: number,
  page: number = DEFAULT_LIMITS.maxChanges,
): Promise<{ batches: WireChange[][]; tree: Tree }> {
  const dataDir = path.join(work, 'template');
  let box = await inProcess(dataDir);
  const { tree, key, cyclePath: C } = await makeTree(box.base, 'Template');
  await box.app.close();
  await writeWalks(dataDir, tree, walks);
  box = await inProcess(dataDir);
  const entries = Math.round(1000 * scale);
  for (let i = 0; i < entries; i++) {
    await req(box.base, 'POST', `${C}/harvests`, key, {
      week: `2026-W${10 + (i % 2)}`,
      kg: 10 + (i % 50) / 10,
      note: i % 10 === 0 ? 'second picking' : undefined,
    });
    await req(box.base, 'POST', `${C}/irrigation`, key, {
      at: new Date(Date.UTC(2026, 2, 9, 6) + i * 600_000).toISOString(),
      volume_l: 300 + (i % 40),
      ec_in: 2.5,
      drain_l: 90,
    });
  }
  for (let day = 0; day < 7; day++) {
    const fd = new FormData();
    fd.append('file', new Blob([climateDay(day)]), `day-${day}.csv`);
    await req(box.base, 'POST', `${C}/climate/csv`, key, fd);
  }
  const services = box.app.services;
  const kinds = kindsOf(services);
  const batches: WireChange[][] = [];
  for (let after = 0; ;) {
    const read = await readOutbox(services, kinds, nodeOf(services), tree.orgId, after, { ...DEFAULT_LIMITS, maxChanges: page });
    if (read.scanned === 0) break;
    const changes = read.changes.filter((c) => !REGISTRY.has(c.kind));
    if (changes.length) batches.push(changes);
    after = read.last;
  }
  await box.app.close();
  return { batches: batches.map((b) => JSON.parse(JSON.stringify(b).replaceAll(nodeOf(services), '@NODE@')) as WireChange[]), tree };
}

/** One simulated box's batches: its own node, its organization's registry, fresh ids for everything else. */
export function boxBatches(template: WireChange[][], from: Tree, to: Tree, node: string): Buffer[] {
  const fixed = new Map<string, string>([
    [from.orgId, to.orgId],
    [from.farmId, to.farmId],
    [from.greenhouseId, to.greenhouseId],
    [from.rowId, to.rowId],
    [from.cycleId, to.cycleId],
  ]);
  const fresh = new Map<string, string>();
  return template.map((b) => {
    const text = JSON.stringify({ changes: b })
      .replaceAll('@NODE@', node)
      .replace(UUID, (id) => fixed.get(id) ?? fresh.get(id) ?? (fresh.set(id, newId()), fresh.get(id)!));
    return gzipSync(text, { level: 1 });
  });
}

class Upstream {
  proc: ChildProcess | null = null;
  /** Error lines of its log, printed when a push fails. */
  readonly errors: string[] = [];
  base = '';
  constructor(
    readonly name: string,
    readonly env: Record<string, string>,
  ) {}

  async start(): Promise<void> {
    const prof = process.env.UPSTREAM_BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.UPSTREAM_BENCH_PROF}`] : [];
    const proc = spawn(process.execPath, [...prof, '--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        ADMIN_TOKEN,
        LOG_LEVEL: 'info',
        DISK_RESERVE: '0',
        SYNC_INTERVAL_S: '0',
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    let out = '';
    let tail = '';
    let listening = false;
    proc.on('exit', (code, signal) => {
      if (this.proc === proc) console.error(`${this.name} exited (${code ?? signal}) while the benchmark ran: ${tail}`);
    });
    this.base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not start: ${out}`)), 90_000);
      const onData = (d: Buffer) => {
        if (process.env.UPSTREAM_BENCH_DEBUG) process.stderr.write(`[${this.name}] ${d.toString()}`);
        tail = (tail + d.toString()).slice(-4000);
        for (const line of d.toString().split('\n')) if (line.includes('"level":"error"')) this.errors.push(line.slice(0, 3000));
        if (listening) return;
        out += d.toString();
        const m = /"address":"([^"]+)"/.exec(out);
        if (m) {
          listening = true;
          clearTimeout(timer);
          resolve(`http://${m[1]}`);
        }
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`${this.name} exited with ${code}: ${out.slice(-2000)}`)));
    });
  }

  async stop(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    this.proc = null;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGTERM');
    });
  }
}

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] ?? NaN;
}

interface Outcome {
  target: string;
  boxes: number;
  changes: number;
  applied: number;
  seconds: number;
  changesPerSecond: number;
  batches: number;
  p50BatchMs: number;
  p99BatchMs: number;
  maxBatchMs: number;
  /** Pushes answered 503 upstream_busy, and p99 of their answer time. */
  busyAnswers: number;
  p99BusyMs: number;
  /** p99 of a batch from its first send to its acknowledgement, waits after busy answers included. */
  p99DeliveredMs: number;
  pullerRounds: number;
  pullerPulled: number;
  digestEqual: boolean;
  /** Per process, before the timed pushes: one box's week alone into the new process, then a second box's (null with --cold). */
  warmUp: { firstMs: number; firstMaxBatchMs: number; secondMs: number; secondMaxBatchMs: number }[] | null;
}

/** One box's week pushed batch after batch into one upstream, alone: its time and its slowest batch. */
async function pushWeekAlone(base: string, key: string, batches: Buffer[]): Promise<{ ms: number; maxBatchMs: number }> {
  const t0 = performance.now();
  let maxBatchMs = 0;
  for (const body of batches) {
    const t = performance.now();
    const res = await fetch(`${base}/api/sync/v1/push`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`warm-up push answered ${res.status} ${text.slice(0, 500)}`);
    maxBatchMs = Math.max(maxBatchMs, performance.now() - t);
  }
  return { ms: performance.now() - t0, maxBatchMs };
}

async function runTarget(
  admission: Record<string, string>,
  target: string,
  work: string,
  env: Record<string, string>[],
  template: { batches: WireChange[][]; tree: Tree },
  boxes: number,
  cold: boolean,
): Promise<Outcome> {
  const ups = env.map((e, i) => new Upstream(`${target}#${i + 1}`, { ...admission, ...e }));
  // Started one after the other: the first migrates the database.
  for (const u of ups) await u.start();
  let puller: { app: App; base: string } | null = null;
  try {
    const orgs: { tree: Tree; key: string }[] = [];
    for (let i = 0; i < boxes; i++) orgs.push(await makeTree(ups[i % ups.length]!.base, `Grower ${i}`));
    const bodies = orgs.map((o, i) => boxBatches(template.batches, template.tree, o.tree, `bx${i}n${newId().slice(-8).replace('-', '')}`));
    const changes = template.batches.reduce((n, b) => n + b.length, 0) * boxes;

    // A process's first batches run code not yet compiled (docs/postgres.md, "Pages of 1 MiB, and
    // the first seconds of a process"): unless --cold, each process first takes two more boxes'
    // weeks alone, untimed in the figures below and reported beside them.
    let warmUp: Outcome['warmUp'] = null;
    if (!cold) {
      warmUp = [];
      for (const [j, u] of ups.entries()) {
        const [a, b] = [await makeTree(u.base, `Warm-up ${j}a`), await makeTree(u.base, `Warm-up ${j}b`)];
        const first = await pushWeekAlone(
          u.base,
          a.key,
          boxBatches(template.batches, template.tree, a.tree, `wu${j}a${newId().slice(-8)}`),
        );
        const second = await pushWeekAlone(
          u.base,
          b.key,
          boxBatches(template.batches, template.tree, b.tree, `wu${j}b${newId().slice(-8)}`),
        );
        warmUp.push({ firstMs: first.ms, firstMaxBatchMs: first.maxBatchMs, secondMs: second.ms, secondMaxBatchMs: second.maxBatchMs });
      }
    }

    // The puller: a real box of the first organization, pulling round after round while the pushes run.
    puller = await inProcess(path.join(work, `${target}-puller`), { upstreamUrl: ups[0]!.base, upstreamKey: orgs[0]!.key });
    const pull = async () => {
      const res = await fetch(`${puller!.base}/api/admin/sync`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const body = (await res.json()) as { ok: boolean; pulled: number; pushed: number; error: string | null };
      if (res.status !== 200) throw new Error(`puller: ${res.status} ${JSON.stringify(body)}`);
      return body;
    };
    await pull();

    /** Answer times of the pushes applied; of those turned away busy; and each batch from its first send to its acknowledgement. */
    const times: number[] = [];
    const trace: { box: number; batch: number; t: number; ms: number }[] = [];
    const busyTimes: number[] = [];
    const delivered: number[] = [];
    let applied = 0;
    let pushing = true;
    let pullerRounds = 0;
    let pullerPulled = 0;
    const pulling = (async () => {
      while (pushing) {
        const r = await pull();
        pullerRounds++;
        pullerPulled += r.pulled;
        // A box's rounds come apart in time; one with nothing new waits a little before asking again.
        if (r.pulled === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })().catch((err: Error) => err);
    const started = performance.now();
    const pushes = Promise.all(
      bodies.map(async (batches, i) => {
        const base = ups[i % ups.length]!.base;
        for (const [batch, body] of batches.entries()) {
          const first = performance.now();
          let res: Response;
          let text: string;
          for (;;) {
            const t0 = performance.now();
            res = await fetch(`${base}/api/sync/v1/push`, {
              method: 'POST',
              headers: { 'x-api-key': orgs[i]!.key, 'content-type': 'application/json', 'content-encoding': 'gzip' },
              body,
            });
            text = await res.text();
            const retry = res.status === 503 ? res.headers.get('retry-after') : null;
            if (retry === null) {
              times.push(performance.now() - t0);
              trace.push({ box: i, batch, t: t0 - started, ms: performance.now() - t0 });
              break;
            }
            // Turned away (src/sync/admission.ts): as the agent does, again after Retry-After, with jitter.
            busyTimes.push(performance.now() - t0);
            await new Promise((r) => setTimeout(r, Number(retry) * 1000 * (1 + Math.random() * 0.5)));
          }
          delivered.push(performance.now() - first);
          if (res.status !== 200) throw new Error(`${target} box ${i}: push answered ${res.status} ${text.slice(0, 500)}`);
          const answer = JSON.parse(text) as { results: { outcome: string; detail?: string }[] };
          const refused = answer.results.filter((r) => r.outcome === 'refused');
          if (refused.length) throw new Error(`${target} box ${i}: ${refused.length} refused, e.g. ${refused[0]!.detail}`);
          applied += answer.results.filter((r) => r.outcome === 'applied').length;
        }
      }),
    );
    const pushed = await pushes.catch((err: Error) => err);
    const seconds = (performance.now() - started) / 1000;
    pushing = false;
    const pulled = await pulling;
    if (pushed instanceof Error) {
      for (const u of ups) for (const line of u.errors.slice(0, 3)) console.error(`[${u.name}] ${line}`);
      throw pushed;
    }
    if (pulled instanceof Error) throw pulled;
    // The last rounds: whatever committed after the puller's last page.
    for (let k = 0; k < 20; k++) {
      const r = await pull();
      pullerRounds++;
      pullerPulled += r.pulled;
      if (r.ok && r.pulled === 0) break;
    }
    const digestOf = async (base: string) => (await req(base, 'GET', '/api/sync/digest', orgs[0]!.key)).kinds;
    const want = await digestOf(ups[0]!.base);
    const got = await digestOf(puller.base);
    const digestEqual = JSON.stringify(want) === JSON.stringify(got);
    if (!digestEqual) console.error(`${target}: the puller's digest differs: ${JSON.stringify({ want, got })}`);
    const sorted = [...times].sort((a, b) => a - b);
    if (process.env.UPSTREAM_BENCH_TRACE) {
      const kinds = template.batches.map((b) => {
        const n: Record<string, number> = {};
        for (const c of b) n[c.kind] = (n[c.kind] ?? 0) + 1;
        return n;
      });
      writeFileSync(`${process.env.UPSTREAM_BENCH_TRACE}-${target}.json`, JSON.stringify({ kinds, trace }));
    }
    return {
      target,
      boxes,
      changes,
      applied,
      seconds,
      changesPerSecond: changes / seconds,
      batches: times.length,
      p50BatchMs: sorted[Math.floor(sorted.length / 2)]!,
      p99BatchMs: p99(times),
      maxBatchMs: sorted[sorted.length - 1]!,
      busyAnswers: busyTimes.length,
      p99BusyMs: busyTimes.length ? p99(busyTimes) : 0,
      p99DeliveredMs: p99(delivered),
      pullerRounds,
      pullerPulled,
      digestEqual,
      warmUp,
    };
  } finally {
    await puller?.app.close();
    for (const u of ups) await u.stop();
  }
}

export async function runUpstreamBench(
  options: { boxes?: number; scale?: number; walks?: number; atOnce?: number; waiting?: number; page?: number; cold?: boolean } = {},
) {
  const cold = options.cold ?? false;
  const boxes = options.boxes ?? 50;
  // The upstreams' admission settings (SYNC_PUSH_AT_ONCE, SYNC_PUSH_WAITING); their defaults when not given.
  const admission: Record<string, string> = {
    ...(options.atOnce !== undefined ? { SYNC_PUSH_AT_ONCE: String(options.atOnce) } : {}),
    ...(options.waiting !== undefined ? { SYNC_PUSH_WAITING: String(options.waiting) } : {}),
  };
  const scale = options.scale ?? 1;
  const walks = options.walks ?? Math.round(50 * scale);
  const work = mkdtempSync(path.join(tmpdir(), 'cropwalk-upstream-bench-'));
  const cluster = await startCluster({ durable: true });
  try {
    const t0 = performance.now();
    const template = await makeWeek(work, walks, scale, options.page);
    const perBox = template.batches.reduce((n, b) => n + b.length, 0);
    console.log(
      `bench upstream: the week is ${perBox} changes in ${template.batches.length} batches per box (made in ${((performance.now() - t0) / 1000).toFixed(1)} s); ${boxes} boxes`,
    );
    const database = async (name: string) => {
      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
      await admin.end();
      const u = new URL(cluster.url);
      u.pathname = `/${name}`;
      return u.toString();
    };
    const results: Outcome[] = [];
    if (process.env.UPSTREAM_BENCH_ONLY === 'postgres')
      console.log(
        await runTarget(
          admission,
          'postgres-1',
          work,
          [{ DATA_DIR: path.join(work, 'up-pg1'), DATABASE_URL: await database('upstream_try') }],
          template,
          boxes,
          cold,
        ),
      );
    results.push(await runTarget(admission, 'sqlite', work, [{ DATA_DIR: path.join(work, 'up-sqlite') }], template, boxes, cold));
    const one = await database('upstream_one');
    results.push(
      await runTarget(
        admission,
        'postgres-1',
        work,
        [{ DATA_DIR: path.join(work, 'up-pg1'), DATABASE_URL: one, PG_POOL_MAX: '60' }],
        template,
        boxes,
        cold,
      ),
    );
    const two = await database('upstream_two');
    const shared = path.join(work, 'up-pg2');
    results.push(
      await runTarget(
        admission,
        'postgres-2',
        work,
        [
          { DATA_DIR: shared, DATABASE_URL: two, PG_POOL_MAX: '30' },
          { DATA_DIR: shared, DATABASE_URL: two, PG_POOL_MAX: '30' },
        ],
        template,
        boxes,
        cold,
      ),
    );
    const base = results[0]!;
    console.log(
      cold
        ? '  --cold: the timed pushes start on new processes'
        : "  before the timed pushes, each process took two boxes' weeks alone (the first after its start, then the second):",
    );
    for (const r of results)
      for (const [j, w] of (r.warmUp ?? []).entries())
        console.log(
          `    ${`${r.target}#${j + 1}`.padEnd(13)} first week ${Math.round(w.firstMs)} ms (slowest batch ${Math.round(w.firstMaxBatchMs)} ms), second ${Math.round(w.secondMs)} ms (${Math.round(w.secondMaxBatchMs)} ms): x${(w.firstMs / w.secondMs).toFixed(2)}`,
        );
    for (const r of results) {
      console.log(
        `  ${r.target.padEnd(11)} ${r.changes} changes in ${r.seconds.toFixed(1)} s = ${Math.round(r.changesPerSecond)} changes/s (x${(r.changesPerSecond / base.changesPerSecond).toFixed(2)} of SQLite); batch p50 ${Math.round(r.p50BatchMs)} ms, p99 ${Math.round(r.p99BatchMs)} ms (x${(r.p99BatchMs / base.p99BatchMs).toFixed(2)}), max ${Math.round(r.maxBatchMs)} ms; ${r.busyAnswers} busy answers (p99 ${Math.round(r.p99BusyMs)} ms); batch delivered p99 ${Math.round(r.p99DeliveredMs)} ms; puller ${r.pullerRounds} rounds, ${r.pullerPulled} changes, digest ${r.digestEqual ? 'equal' : 'DIFFERENT'}`,
      );
    }
    const [sqlite, pg1, pg2] = results as [Outcome, Outcome, Outcome];
    const goals = {
      twoPgFasterThanSqlite: pg2.changesPerSecond > sqlite.changesPerSecond,
      secondProcessRaisesThroughput: pg2.changesPerSecond > pg1.changesPerSecond,
      p99Under500ms: { sqlite: sqlite.p99BatchMs < 500, pg1: pg1.p99BatchMs < 500, pg2: pg2.p99BatchMs < 500 },
      pullerLosesNothing: results.every((r) => r.digestEqual),
    };
    console.log(`  goals: ${JSON.stringify(goals)}`);
    return {
      boxes,
      scale,
      changesPerBox: perBox,
      batchesPerBox: template.batches.length,
      results,
      ratios: {
        pg1_throughput_vs_sqlite: pg1.changesPerSecond / sqlite.changesPerSecond,
        pg2_throughput_vs_sqlite: pg2.changesPerSecond / sqlite.changesPerSecond,
        pg2_throughput_vs_pg1: pg2.changesPerSecond / pg1.changesPerSecond,
        pg1_p99_vs_sqlite: pg1.p99BatchMs / sqlite.p99BatchMs,
        pg2_p99_vs_sqlite: pg2.p99BatchMs / sqlite.p99BatchMs,
      },
      goals,
    };
  } finally {
    cluster.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  const r = await runUpstreamBench({
    boxes: arg('boxes'),
    scale: arg('scale'),
    walks: arg('walks'),
    atOnce: arg('at-once'),
    waiting: arg('waiting'),
    page: arg('page'),
    cold: process.argv.includes('--cold'),
  });
  console.log(JSON.stringify(r.ratios));
  process.exit(r.goals.pullerLosesNothing ? 0 : 1);
}
