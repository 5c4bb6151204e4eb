// kill -9 of either side at random points: an upstream and a box run as child processes (the
// real `node src/main.ts`, each with its own DATA_DIR), the box syncing in the background every
// second and on demand, while one or the other is killed mid-round and started again. After the
// kills stop: every acknowledged write stands as the latest write says and a delete stays a
// delete, both hold the same records, nothing is left pending, and the files pass a foreign-key
// check. SYNC_KILL_RUNS (default 2; 20 in the nightly run) and SYNC_FUZZ_SEED choose the runs; a
// failure names its seed.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { FaultProxy, seeded } from '../helpers/fault-proxy.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { apiOnPostgres, createDatabase, pgForeignKeyViolations, pgQuery } from '../helpers/postgres.js';
import { winner } from './workload.js';

const RUNS = Number(process.env.SYNC_KILL_RUNS ?? (process.env.CROPWALK_NIGHTLY === '1' ? 20 : 2));
const SEED0 = Number(process.env.SYNC_FUZZ_SEED ?? 36_001);
const STEPS = Number(process.env.SYNC_KILL_STEPS ?? 24);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

class Instance {
  child: ChildProcess | null = null;
  base = '';
  constructor(
    readonly name: string,
    readonly dataDir: string,
    private readonly env: Record<string, string>,
  ) {}

  /** Starts `node src/main.ts` and waits for its "listening" line (deadline 60 s). */
  async start(): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: this.dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        ADMIN_TOKEN,
        LOG_LEVEL: 'info',
        DISK_RESERVE: '0',
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let out = '';
    this.base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not start in 60 s: ${out.slice(-2000)}`)), 60_000);
      const onData = (d: Buffer) => {
        out += d.toString();
        const m = /"msg":"cropwalk listening","address":"([^"]+)"/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(`http://${m[1]}`);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited with ${code} while starting: ${out.slice(-2000)}`));
      });
    });
    child.removeAllListeners('exit');
  }

  async kill(): Promise<void> {
    const c = this.child;
    if (!c) return;
    this.child = null;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  }

  async request(method: string, url: string, key: string | null, body?: unknown): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = key ? { 'x-api-key': key } : { authorization: `Bearer ${ADMIN_TOKEN}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(this.base + url, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
}

t.test(`kill -9 at random points, ${RUNS} runs from seed ${SEED0}`, async (t) => {
  for (let run = 0; run < RUNS; run++) {
    const seed = SEED0 + run;
    await t.test(`seed ${seed}`, async (t) => {
      const random = seeded(seed);
      const dirs = [mkdtempSync(path.join(tmpdir(), 'cropwalk-kill-up-')), mkdtempSync(path.join(tmpdir(), 'cropwalk-kill-box-'))];
      // In the PostgreSQL pass the upstream runs on a database of its own; the box stays on SQLite.
      const upDb = apiOnPostgres() ? await createDatabase('cwkill') : null;
      if (upDb) t.teardown(() => upDb.drop());
      const up = new Instance('upstream', dirs[0]!, { SYNC_INTERVAL_S: '0', ...(upDb ? { DATABASE_URL: upDb.url } : {}) });
      await up.start();
      const proxy = await new FaultProxy(up.base, seeded(seed), null).start();
      t.teardown(async () => {
        await Promise.all([up.kill(), box.kill(), proxy.close()]);
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
      });
      const org = await up.request('POST', '/api/organizations', null, { name: 'Kill Growers' });
      const key: string = org.body.key.api_key;
      const O = `/api/organizations/${org.body.organization_id}`;
      const farm = (await up.request('POST', `${O}/farms`, key, { name: 'F' })).body;
      const gh = (await up.request('POST', `${O}/farms/${farm.farm_id}/greenhouses`, key, { name: 'G', time_zone: 'Europe/Amsterdam' }))
        .body;
      const G = `${O}/farms/${farm.farm_id}/greenhouses/${gh.greenhouse_id}`;
      const row = (await up.request('POST', `${G}/rows`, key, { name: 'R' })).body;
      const cycle = (await up.request('POST', `${G}/rows/${row.row_id}/cycles`, key, { name: 'C', started_on: '2026-01-05' })).body;
      const C = `${G}/rows/${row.row_id}/cycles/${cycle.cycle_id}`;
      const box = new Instance('box', dirs[1]!, { UPSTREAM_URL: proxy.url, UPSTREAM_KEY: key, SYNC_INTERVAL_S: '1' });
      await box.start();

      const say = (what: string) => `seed ${seed}: ${what}`;
      const syncBox = async (deadlineMs: number, label: string) => {
        const deadline = Date.now() + deadlineMs;
        for (;;) {
          const r = await box.request('POST', '/api/admin/sync', null).catch(() => null);
          if (r?.status === 200 && r.body.ok && r.body.pushed + r.body.pulled === 0) return;
          if (Date.now() > deadline) throw new Error(say(`${label}: the box did not settle: ${JSON.stringify(r?.body)}`));
        }
      };
      await syncBox(60_000, 'first contact');

      const harvests = new Map<string, { writes: { version: string; kg: number }[]; deleted: boolean }>();
      const events: string[] = [];
      const restart = async (i: Instance) => {
        await i.start();
        if (i === up) proxy.target = up.base;
      };
      for (let step = 0; step < STEPS; step++) {
        const r = random();
        const on = random() < 0.5 ? box : up;
        if (r < 0.5) {
          const ids = [...harvests.keys()].filter((id) => !harvests.get(id)!.deleted);
          const kg = Math.round(random() * 1000) / 10;
          if (!ids.length || random() < 0.5) {
            const res = await on.request('POST', `${C}/harvests`, key, { week: '2026-W10', kg });
            if (res.status !== 201) throw new Error(say(`harvest on ${on.name}: ${res.status} ${JSON.stringify(res.body)}`));
            harvests.set(res.body.harvest_id, { writes: [{ version: res.body.version, kg }], deleted: false });
          } else {
            const id = ids[Math.floor(random() * ids.length)]!;
            if (random() < 0.2) {
              const res = await on.request('DELETE', `${C}/harvests/${id}`, key);
              if (res.status === 200) harvests.get(id)!.deleted = true;
            } else {
              const res = await on.request('PATCH', `${C}/harvests/${id}`, key, { kg });
              if (res.status === 200) harvests.get(id)!.writes.push({ version: res.body.version, kg });
            }
          }
        } else {
          // Kill one side at a random moment of a round (or of the background rounds), then start it again.
          const victim = random() < 0.5 ? box : up;
          const round = box.request('POST', '/api/admin/sync', null).catch(() => null);
          await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 60)));
          await victim.kill();
          events.push(`kill ${victim.name} at step ${step}`);
          await round;
          await restart(victim);
        }
      }

      await syncBox(120_000, 'catch-up');
      // A second pass: the upstream's own writes made while the box was down reach it too.
      await syncBox(60_000, 'settle');
      for (const i of [up, box]) {
        const held = new Map<string, any>(
          (await i.request('GET', `${C}/harvests?limit=500`, key)).body.items.map((h: any) => [h.harvest_id, h]),
        );
        const bad: string[] = [];
        for (const [id, h] of harvests) {
          const got = held.get(id);
          if (h.deleted) {
            if (got) bad.push(`${id} deleted but back`);
          } else if (!got) bad.push(`${id} lost`);
          else if (got.kg !== winner(h.writes)!.kg) bad.push(`${id} kg ${got.kg}, latest write ${winner(h.writes)!.kg}`);
        }
        if (held.size !== [...harvests.values()].filter((h) => !h.deleted).length) bad.push(`${held.size} harvests held`);
        t.same(bad, [], say(`${i.name}: every acknowledged write stands (${events.join(', ')})`));
      }
      const d1 = (await up.request('GET', '/api/sync/digest', key)).body.kinds;
      const d2 = (await box.request('GET', '/api/sync/digest', key)).body.kinds;
      t.same(d2, d1, say('both hold the same records'));
      const st = (await box.request('GET', '/api/sync', key)).body;
      t.equal(st.pending.changes, 0, say('nothing left pending'));
      t.equal(st.quarantined.count, 0, say('nothing refused'));
      t.ok(events.length > 0, say('there were kills'));
      if (upDb) {
        await up.kill();
        t.same(await pgForeignKeyViolations((text) => pgQuery(upDb.url, text)), [], say('no broken reference in the database'));
      }
      for (const d of upDb ? dirs.slice(1) : dirs) {
        const db = new SQLite(path.join(d, 'cropwalk.sqlite'), { readonly: true });
        t.same(db.prepare('PRAGMA foreign_key_check').all(), [], say('no broken reference in the file'));
        db.close();
      }
    });
  }
});
