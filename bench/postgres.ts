/**
 * The bulk paths on PostgreSQL against the same on SQLite, in the same run on this machine
 * (issue 41, "Bulk paths": an import on PostgreSQL within 2× of the same import on SQLite):
 *
 *   climate   a year of 5-minute readings, 30 columns (scripts/gen-climate-year.ts), imported as
 *             hourly values with the saved mapping (what ingest and the watched folder do): the
 *             import engine's port writes by COPY on PostgreSQL, by prepared multi-row statements
 *             on SQLite (src/climate/imports/point-storage.ts)
 *   raw       (--raw) every 5-minute reading of the same file as read (the climate CSV route):
 *             about 3 million readings
 *   harvests  a 100,000-line harvest CSV through the Writer's insertMany (multi-row statements,
 *             each row with its change-log entry)
 *
 * Each import goes into a fresh database (a new SQLite file; a new PostgreSQL database), ROUNDS
 * times per engine, alternating engines so that a busy minute on the shared machine falls on
 * both; the figure is the median, and the ratio PostgreSQL / SQLite. PostgreSQL runs durable
 * (fsync and synchronous_commit on, as SQLite's synchronous=FULL): a throwaway server started
 * here (scripts/pg-cluster.mjs), or the one CROPWALK_BENCH_POSTGRES names (an admin URL).
 *
 *   node --import tsx bench/postgres.ts [--raw] [--rounds N] [--only climate,harvests,raw]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { systemClock } from '../src/clock.js';
import { openStorage, type OpenedDatabase } from '../src/db/database.js';
import { Store, SYSTEM_ACTOR } from '../src/db/store.js';
import { newId } from '../src/db/ids.js';
import { analyseExport, type ConfirmedMapping } from '../src/climate/exports-reader/index.js';
import { importExport } from '../src/climate/imports/service.js';
import { readerThreadReady } from '../src/climate/imports/reader-thread.js';
import { parseHarvestCsv } from '../src/records/harvests/csv.js';
import { importHarvests } from '../src/records/harvests/commands.js';
import type { CycleScope } from '../src/registry/scope.js';
import { withYearFile } from './lib/phases.js';
// @ts-expect-error: plain JavaScript (scripts/ runs before the TypeScript tooling)
import { startCluster } from '../scripts/pg-cluster.mjs';

const ZONE = 'Europe/Amsterdam';
type Engine = 'sqlite' | 'postgres';
type Workload = 'climate' | 'raw' | 'harvests';

export interface PostgresBench {
  rounds: number;
  /** Median ms per workload and engine. */
  ms: Record<Workload, Partial<Record<Engine, number>>>;
  /** PostgreSQL / SQLite, per workload. */
  ratios: Partial<Record<Workload, number>>;
  rows: Partial<Record<Workload, number>>;
}

const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
};

/** A fresh database of the engine with one crop cycle, registry rows written straight in (the bench measures the bulk path). */
async function freshCycle(engine: Engine, adminUrl: string | null) {
  let dir: string | null = null;
  let dropName: string | null = null;
  let opened: OpenedDatabase;
  if (engine === 'sqlite') {
    dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-bench-pg-'));
    opened = await openStorage(dir);
  } else {
    dropName = `bench_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl! });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dropName}`);
    await admin.end();
    const u = new URL(adminUrl!);
    u.pathname = `/${dropName}`;
    opened = await openStorage('/nonexistent', { databaseUrl: u.toString() });
  }
  const now = new Date().toISOString();
  const stamp = { created_at: now, updated_at: now, version: opened.hlc.now() };
  const org = newId();
  const farm = newId();
  const row = newId();
  const greenhouse = {
    id: newId(),
    organization_id: org,
    farm_id: farm,
    name: 'bench',
    time_zone: ZONE,
    latitude: null,
    longitude: null,
    area_m2: null,
    notes: null,
    ...stamp,
  };
  const cycle = {
    id: newId(),
    organization_id: org,
    farm_id: farm,
    greenhouse_id: greenhouse.id,
    row_id: row,
    name: 'bench',
    crop: null,
    variety: null,
    started_on: '2021-01-01',
    ended_on: null,
    plants_per_m2: null,
    stems_per_m2: null,
    notes: null,
    ...stamp,
  };
  await opened.db
    .insertInto('organizations')
    .values({ id: org, organization_id: org, name: 'bench', ...stamp })
    .execute();
  await opened.db
    .insertInto('farms')
    .values({ id: farm, organization_id: org, name: 'bench', location: null, notes: null, ...stamp })
    .execute();
  await opened.db.insertInto('greenhouses').values(greenhouse).execute();
  await opened.db
    .insertInto('rows')
    .values({
      id: row,
      organization_id: org,
      farm_id: farm,
      greenhouse_id: greenhouse.id,
      name: 'bench',
      length_m: null,
      plant_count: null,
      notes: null,
      ...stamp,
    })
    .execute();
  await opened.db.insertInto('cycles').values(cycle).execute();
  const scope = { cycle, greenhouse, zone: ZONE } as unknown as CycleScope;
  const store = new Store(opened.db, opened.hlc, systemClock, opened.engine);
  return {
    scope,
    deps: { db: opened.db, store, clock: systemClock },
    async close() {
      await opened.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
      if (dropName) {
        const admin = new pg.Client({ connectionString: adminUrl! });
        await admin.connect();
        await admin.query(`DROP DATABASE ${dropName} WITH (FORCE)`);
        await admin.end();
      }
    },
  };
}

async function once(engine: Engine, workload: Workload, adminUrl: string, input: { file: string; mapping: ConfirmedMapping; csv: Buffer }) {
  const c = await freshCycle(engine, adminUrl);
  try {
    const t0 = performance.now();
    let rows: number;
    if (workload === 'harvests') {
      const lines = parseHarvestCsv(input.csv);
      const t1 = performance.now();
      const stored = await c.deps.store.write(SYSTEM_ACTOR, (w) => importHarvests(w, c.scope, lines));
      rows = stored.length;
      return { ms: performance.now() - t1, rows };
    }
    const r = await importExport(
      c.deps,
      c.scope,
      { path: input.file, fileName: 'year.csv', size: statSync(input.file).size },
      {
        kind: workload === 'raw' ? 'csv' : 'ingest',
        actor: SYSTEM_ACTOR,
        actorLabel: 'bench',
        hourly: workload !== 'raw',
        choices: { mapping: input.mapping },
      },
    );
    rows = r.readings_added;
    return { ms: performance.now() - t0, rows };
  } finally {
    await c.close();
  }
}

export async function runPostgresBench(opts: { raw?: boolean; rounds?: number; only?: Workload[] } = {}): Promise<PostgresBench> {
  const rounds = opts.rounds ?? 3;
  let cluster: { url: string; stop(): void } | null = null;
  const adminUrl =
    process.env.CROPWALK_BENCH_POSTGRES ?? (cluster = (await startCluster({ durable: true })) as { url: string; stop(): void }).url;
  try {
    return await withYearFile(undefined, async (file) => {
      const mapping = (await analyseExport({ path: file }, { timeZone: ZONE })).mapping as ConfirmedMapping;
      const csv = Buffer.from(
        'week,kg,note\n' +
          Array.from({ length: 100_000 }, (_, i) => `2026-W${String((i % 52) + 1).padStart(2, '0')},${(i % 97) / 4},n${i}`).join('\n'),
      );
      await readerThreadReady();
      const workloads: Workload[] = opts.only ?? ['climate', 'harvests', ...(opts.raw ? (['raw'] as Workload[]) : [])];
      const samples: Record<string, number[]> = {};
      const rows: Partial<Record<Workload, number>> = {};
      // A first import of each kind on each engine, not counted: the JIT and the server's caches warm up.
      for (const w of workloads) for (const e of ['sqlite', 'postgres'] as Engine[]) await once(e, w, adminUrl, { file, mapping, csv });
      for (let i = 0; i < rounds; i++) {
        for (const w of workloads) {
          for (const e of (i % 2 ? ['postgres', 'sqlite'] : ['sqlite', 'postgres']) as Engine[]) {
            const r = await once(e, w, adminUrl, { file, mapping, csv });
            (samples[`${w}/${e}`] ??= []).push(r.ms);
            rows[w] = r.rows;
          }
        }
      }
      const ms = {} as PostgresBench['ms'];
      const ratios: PostgresBench['ratios'] = {};
      for (const w of workloads) {
        ms[w] = { sqlite: median(samples[`${w}/sqlite`]!), postgres: median(samples[`${w}/postgres`]!) };
        ratios[w] = ms[w].postgres! / ms[w].sqlite!;
      }
      return { rounds, ms, ratios, rows };
    });
  } finally {
    cluster?.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const ri = argv.indexOf('--rounds');
  const oi = argv.indexOf('--only');
  const r = await runPostgresBench({
    raw: argv.includes('--raw'),
    rounds: ri >= 0 ? Number(argv[ri + 1]) : undefined,
    only: oi >= 0 ? (argv[oi + 1]!.split(',') as Workload[]) : undefined,
  });
  console.log(`bulk paths, PostgreSQL against SQLite (median of ${r.rounds} rounds, fresh database each):`);
  for (const [w, m] of Object.entries(r.ms)) {
    console.log(
      `  ${w.padEnd(9)} ${String(r.rows[w as Workload]).padStart(9)} rows  SQLite ${m.sqlite!.toFixed(0)} ms  PostgreSQL ${m.postgres!.toFixed(0)} ms  ratio ${r.ratios[w as Workload]!.toFixed(2)}× (goal ≤ 2×)`,
    );
  }
}
