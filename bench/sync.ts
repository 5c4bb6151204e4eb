/**
 * A busy box's week offline, synced to its upstream on loopback (docs/sync.md), against copying
 * the same files, measured in the same run.
 *
 * The upstream and the box run as child processes (`node src/main.ts`, their own DATA_DIR), the
 * box behind a TCP relay that the benchmark cuts for the week and mends for the catch-up. The
 * week, made on the box while the link is cut:
 *   - 50 scored walks of 12 frames, each frame an image and an overlay of about 115 kB (the size
 *     config.ts gives a scored frame with its overlay), written the way the walk runner writes a
 *     finished walk (the Writer, then the files), while the box is stopped;
 *   - 2,000 harvest and irrigation entries (1,000 each) over the API;
 *   - 7 daily climate imports over the API, hourly values of every metric the vocabulary has (29).
 * Then the link comes back and the box syncs until nothing moves. Figures:
 *   - time and bytes of the catch-up, against copying the box's SQLite file (with its WAL) over
 *     HTTP on the same loopback, and the walk files likewise;
 *   - peak RSS of each side (VmHWM) over the whole run (goal: under 300 MB);
 *   - the CPU of one idle round on each side, over 200 idle rounds (goal: under 5 ms).
 * Goal: the week in under 60 s.
 *
 *   npm run bench sync              (or: node --import tsx bench/sync.ts [--walks N])
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../src/db/database.js';
import { Store, SYSTEM_ACTOR } from '../src/db/store.js';
import { newId } from '../src/db/ids.js';
import { CLIMATE_METRICS } from '../src/climate/metrics.js';
import { frameFileName, framesDir } from '../src/walks/jobs/storage.js';
import { storedResult } from '../test/helpers/stored-result.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const FRAME_BYTES = 115_000;

class Child {
  proc: ChildProcess | null = null;
  base = '';
  constructor(
    readonly name: string,
    readonly dataDir: string,
    readonly env: Record<string, string>,
  ) {}

  async start(): Promise<void> {
    const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: this.dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        ADMIN_TOKEN,
        LOG_LEVEL: 'warn',
        DISK_RESERVE: '0',
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    let out = '';
    let listening = false;
    this.base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not start: ${out}`)), 60_000);
      // Every log line is read (a full pipe would stop the process), kept only until it listens.
      proc.stdout!.on('data', (d: Buffer) => {
        if (listening) return;
        out += d.toString();
        const m = /"address":"([^"]+)"/.exec(out);
        if (m) {
          listening = true;
          out = '';
          clearTimeout(timer);
          resolve(`http://${m[1]}`);
        }
      });
      proc.stderr!.on('data', (d: Buffer) => {
        if (process.env.SYNC_BENCH_DEBUG) process.stderr.write(`[${this.name}] ${d.toString()}`);
        if (!listening) out += d.toString();
      });
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

  /** Peak resident memory of the process so far, MB (VmHWM). */
  peakRssMB(): number {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.proc!.pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  }

  /** CPU time used so far, ms (user + system). */
  cpuMs(): number {
    const fields = readFileSync(`/proc/${this.proc!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100;
  }

  async request(method: string, url: string, key: string | null, body?: unknown): Promise<any> {
    const headers: Record<string, string> = key ? { 'x-api-key': key } : { authorization: `Bearer ${ADMIN_TOKEN}` };
    let payload: RequestInit['body'];
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(this.base + url, { method, headers, body: payload });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${this.name} ${method} ${url}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
}

/** A TCP relay to the upstream that can be cut (the box's link) and mended. */
class Relay {
  private server!: net.Server;
  private readonly sockets = new Set<net.Socket>();
  up = false;
  url = '';
  constructor(private readonly target: () => { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = net.createServer((client) => {
      if (!this.up) return client.destroy();
      const t = this.target();
      const upstream = net.connect(t.port, t.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  cut(): void {
    this.up = false;
    for (const s of this.sockets) s.destroy();
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A scored walk as the runner leaves it: its row done with a result, its clip row, its frames and overlays on disk. */
export async function writeWalks(
  dataDir: string,
  tree: { orgId: string; farmId: string; greenhouseId: string; rowId: string; cycleId: string },
  walks: number,
): Promise<number> {
  const opened = await openDatabase(dataDir);
  const store = new Store(opened.db, opened.hlc);
  let bytes = 0;
  for (let n = 0; n < walks; n++) {
    const id = newId();
    // The stored result as scoring writes it: an upstream refuses one the API could not present.
    const result = storedResult(60, 12, { width: 1280, height: 960 });
    await store.write(SYSTEM_ACTOR, async (w) => {
      await w.insert('walks', {
        id,
        organization_id: tree.orgId,
        farm_id: tree.farmId,
        greenhouse_id: tree.greenhouseId,
        row_id: tree.rowId,
        cycle_id: tree.cycleId,
        week: '2026-W11',
        source: 'cycle_batch',
        example_key: null,
        status: 'done',
        progress: 1,
        mode: 'photo',
        options: JSON.stringify({ conf: 0.5 }),
        detector: 'builtin',
        error: null,
        idempotency_key: null,
        request_hash: createHash('sha256').update(id).digest('hex'),
        created_by_key_id: null,
        attempts: 1,
        started_at: w.now,
        finished_at: w.now,
        count_green: 20,
        count_turning: 20,
        count_red: 20,
        count_total: 60,
        corrected_green: 20,
        corrected_turning: 20,
        corrected_red: 20,
        corrected_total: 60,
        result: JSON.stringify(result),
        clips_removed_at: null,
        frames_removed_at: null,
      } as never);
      await w.insert('walk_clips', {
        organization_id: tree.orgId,
        walk_id: id,
        cycle_id: tree.cycleId,
        position: 0,
        file_name: '00.jpeg',
        original_name: 'row.jpg',
        size_bytes: 2_000_000,
        sha256: createHash('sha256').update(`${id}clip`).digest('hex'),
        kind: 'image',
        format: 'jpeg',
        width: 4000,
        height: 3000,
        duration_s: 0,
        status: 'done',
        progress: 1,
        frames: 12,
        error: null,
      } as never);
    });
    const dir = framesDir(dataDir, id);
    mkdirSync(dir, { recursive: true });
    for (const f of result.frames) {
      for (const name of ['image.jpg', 'overlay.jpg'] as const) {
        // JPEG data does not compress: random bytes of a scored frame's size stand for it.
        const b = randomBytes(FRAME_BYTES - 10_000 + Math.floor(Math.random() * 20_000));
        writeFileSync(path.join(dir, frameFileName(f.index, name)), b);
        bytes += b.length;
      }
    }
  }
  await opened.close();
  return bytes;
}

export function climateDay(day: number): string {
  const metrics = CLIMATE_METRICS.map((m) => m.name);
  const lines = [['time', ...metrics].join(',')];
  for (let h = 0; h < 24; h++) {
    const at = `2026-03-${String(9 + day).padStart(2, '0')} ${String(h).padStart(2, '0')}:00`;
    lines.push(
      [at, ...CLIMATE_METRICS.map((m) => (m.range[0] + (m.range[1] - m.range[0]) * (0.3 + 0.2 * Math.sin(h / 4 + day))).toFixed(2))].join(
        ',',
      ),
    );
  }
  return lines.join('\n') + '\n';
}

/** The plain copy: one HTTP PUT of each file to a server on the same loopback that writes it to disk. */
async function copyOverHttp(files: string[], dir: string): Promise<{ ms: number; bytes: number }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    const out = createWriteStream(path.join(dir, `copy-${n++}`));
    req.pipe(out);
    out.on('finish', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  let bytes = 0;
  const started = performance.now();
  for (const f of files) {
    const size = statSync(f).size;
    bytes += size;
    await new Promise<void>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'PUT', path: '/', headers: { 'content-length': size } }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      createReadStream(f).pipe(req);
    });
  }
  const ms = performance.now() - started;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return { ms, bytes };
}

export async function runSyncBench(options: { walks?: number; idleRounds?: number } = {}) {
  const walks = options.walks ?? 50;
  const idleRounds = options.idleRounds ?? 200;
  const work = mkdtempSync(path.join(tmpdir(), 'cropwalk-sync-bench-'));
  const up = new Child('upstream', path.join(work, 'up'), { SYNC_INTERVAL_S: '0', LOG_LEVEL: 'info' });
  let relayTarget = { host: '127.0.0.1', port: 0 };
  const relay = new Relay(() => relayTarget);
  await relay.start();
  const box = new Child('box', path.join(work, 'box'), { SYNC_INTERVAL_S: '0', LOG_LEVEL: 'info', UPSTREAM_URL: relay.url });
  try {
    await up.start();
    relayTarget = { host: '127.0.0.1', port: Number(new URL(up.base).port) };
    relay.up = true;
    const org = await up.request('POST', '/api/organizations', null, { name: 'Busy Growers' });
    const key: string = org.key.api_key;
    const O = `/api/organizations/${org.organization_id}`;
    const farm = await up.request('POST', `${O}/farms`, key, { name: 'North' });
    const gh = await up.request('POST', `${O}/farms/${farm.farm_id}/greenhouses`, key, { name: 'GH', time_zone: 'Europe/Amsterdam' });
    const G = `${O}/farms/${farm.farm_id}/greenhouses/${gh.greenhouse_id}`;
    const row = await up.request('POST', `${G}/rows`, key, { name: 'Row 1' });
    const cycle = await up.request('POST', `${G}/rows/${row.row_id}/cycles`, key, { name: '2026', started_on: '2026-01-05' });
    const C = `${G}/rows/${row.row_id}/cycles/${cycle.cycle_id}`;
    const tree = {
      orgId: org.organization_id,
      farmId: farm.farm_id,
      greenhouseId: gh.greenhouse_id,
      rowId: row.row_id,
      cycleId: cycle.cycle_id,
    };

    // First contact, then the link goes down for the week.
    box.env.UPSTREAM_KEY = key;
    await box.start();
    await box.request('POST', '/api/admin/sync', null);
    relay.cut();

    // The week: walks scored (written while the box is stopped), then typed records and imports over the API.
    await box.stop();
    const frameBytes = await writeWalks(box.dataDir, tree, walks);
    await box.start();
    const madeAt = performance.now();
    for (let i = 0; i < 1000; i++) {
      await box.request('POST', `${C}/harvests`, key, {
        week: `2026-W${String(10 + (i % 2)).padStart(2, '0')}`,
        kg: 10 + (i % 50) / 10,
        note: i % 10 === 0 ? 'second picking' : undefined,
      });
      await box.request('POST', `${C}/irrigation`, key, {
        at: new Date(Date.UTC(2026, 2, 9, 6) + i * 600_000).toISOString(),
        volume_l: 300 + (i % 40),
        ec_in: 2.5,
        drain_l: 90,
      });
    }
    for (let day = 0; day < 7; day++) {
      const fd = new FormData();
      fd.append('file', new Blob([climateDay(day)]), `day-${day}.csv`);
      await box.request('POST', `${C}/climate/csv`, key, fd);
    }
    const makeMs = performance.now() - madeAt;
    const offline = await box.request('GET', '/api/sync', key);

    // The plain copy of the same files, on the same loopback (the box's file with its WAL; the walk files).
    const dbFiles = ['cropwalk.sqlite', 'cropwalk.sqlite-wal']
      .map((f) => path.join(box.dataDir, f))
      .filter((f) => {
        try {
          return statSync(f).size > 0;
        } catch {
          return false;
        }
      });
    const walkFiles: string[] = [];
    for (const w of readdirSync(path.join(box.dataDir, 'walks'))) {
      const d = path.join(box.dataDir, 'walks', w, 'frames');
      for (const f of readdirSync(d)) walkFiles.push(path.join(d, f));
    }
    const copyDir = path.join(work, 'copy');
    mkdirSync(copyDir);
    const copyDb = await copyOverHttp(dbFiles, copyDir);
    const copyFiles = await copyOverHttp(walkFiles, copyDir);
    rmSync(copyDir, { recursive: true, force: true });

    // The link comes back: rounds until nothing moves.
    relay.up = true;
    if (process.env.SYNC_BENCH_DEBUG) console.error(`catch-up starts at ${Date.now()}`);
    const started = performance.now();
    let rounds = 0;
    let bytes = 0;
    let filesSent = 0;
    let pushed = 0;
    const phases = { push: 0, pull: 0, files: 0 };
    // The API beside the catch-up: a staff request every 20 ms, its time measured (sync must not block the API).
    const apiMs: number[] = [];
    let catching = true;
    const prober = (async () => {
      while (catching) {
        const t0 = performance.now();
        await box.request('GET', '/api/session', key);
        apiMs.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    for (;;) {
      const r = await box.request('POST', '/api/admin/sync', null);
      rounds++;
      for (const k of ['push', 'pull', 'files'] as const) phases[k] += r.phases[k] / 1000;
      if (process.env.SYNC_BENCH_DEBUG)
        console.error(`round ${rounds}: ${r.ms} ms, wall ${(performance.now() - started).toFixed(0)} ms`, JSON.stringify(r));
      bytes += r.bytes_sent + r.bytes_received;
      filesSent += r.files_sent;
      pushed += r.pushed;
      if (!r.ok) throw new Error(`a catch-up round failed: ${r.error}`);
      if (r.pushed + r.pulled + r.files_sent + r.files_received === 0) break;
      if (rounds > 100) throw new Error('the catch-up did not settle in 100 rounds');
    }
    const syncMs = performance.now() - started;
    catching = false;
    await prober;
    apiMs.sort((a, b) => a - b);
    const pct = (q: number) => apiMs[Math.min(apiMs.length - 1, Math.floor(q * apiMs.length))] ?? 0;
    const after = await box.request('GET', '/api/sync', key);
    const dUp = await up.request('GET', '/api/sync/digest', key);
    const dBox = await box.request('GET', '/api/sync/digest', key);
    const same = JSON.stringify(dUp.kinds) === JSON.stringify(dBox.kinds);
    const fileBytesSent = after.files.bytes_sent as number;

    // Idle: rounds with nothing to move, CPU per round on each side.
    const cpu0 = { box: box.cpuMs(), up: up.cpuMs() };
    const idleStart = performance.now();
    for (let i = 0; i < idleRounds; i++) await box.request('POST', '/api/admin/sync', null);
    const idle = {
      box_cpu_ms: (box.cpuMs() - cpu0.box) / idleRounds,
      upstream_cpu_ms: (up.cpuMs() - cpu0.up) / idleRounds,
      wall_ms: (performance.now() - idleStart) / idleRounds,
    };

    const result = {
      week: {
        walks,
        frame_files: walkFiles.length,
        frame_mb: frameBytes / 1e6,
        harvests: 1000,
        irrigation: 1000,
        climate_imports: 7,
        climate_metrics: CLIMATE_METRICS.length,
        pending_changes: offline.pending.changes,
        made_in_s: makeMs / 1000,
      },
      catch_up: {
        seconds: syncMs / 1000,
        rounds,
        changes_pushed: pushed,
        files_sent: filesSent,
        mb_total: bytes / 1e6,
        mb_records: (bytes - fileBytesSent) / 1e6,
        mb_files: fileBytesSent / 1e6,
        digests_equal: same,
        phase_seconds: phases,
        api_during: { requests: apiMs.length, p50_ms: pct(0.5), p99_ms: pct(0.99), max_ms: apiMs.at(-1) ?? 0 },
      },
      copy: {
        sqlite_mb: copyDb.bytes / 1e6,
        sqlite_seconds: copyDb.ms / 1000,
        files_mb: copyFiles.bytes / 1e6,
        files_seconds: copyFiles.ms / 1000,
      },
      ratios: {
        records_bytes_vs_sqlite_copy: (bytes - fileBytesSent) / copyDb.bytes,
        files_bytes_vs_files_copy: fileBytesSent / copyFiles.bytes,
        time_vs_sqlite_copy: syncMs / copyDb.ms,
        time_vs_sqlite_and_files_copy: syncMs / (copyDb.ms + copyFiles.ms),
      },
      peak_rss_mb: { box: box.peakRssMB(), upstream: up.peakRssMB() },
      idle_round: idle,
      goals: {
        week_under_60_s: syncMs < 60_000,
        rss_under_300_mb: box.peakRssMB() < 300 && up.peakRssMB() < 300,
        idle_cpu_under_5_ms: idle.box_cpu_ms < 5 && idle.upstream_cpu_ms < 5,
      },
    };
    return result;
  } finally {
    await Promise.all([box.stop(), up.stop()]);
    await relay.close();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const i = process.argv.indexOf('--walks');
  const r = await runSyncBench(i > 0 ? { walks: Number(process.argv[i + 1]) } : {});
  console.log(JSON.stringify(r, null, 2));
}
