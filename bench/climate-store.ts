/**
 * Climate import into SQLite against parsing the same file with papaparse
 * alone, measured in the same run on the generated year of 5-minute readings
 * (scripts/gen-climate-year.ts: ~105,000 rows × 30 columns).
 *
 * Each phase runs in its own child process so its peak RSS is its own, three times in it (into a
 * fresh database each time): the first run pays for a cold JIT (and is reported apart, against
 * papaparse's own first run), the later ones are what a running service sees (their median is
 * the figure). Hourly imports read on the reader thread (src/climate/imports/reader-thread.ts),
 * started once per process before the clock starts, its start time reported apart:
 *   parse        papaparse over the file stream (the baseline)
 *   preview      previewFile: what POST {cycle}/climate/file/preview does (the analysis, the first
 *                24 hours as they would be stored, what the cycle already holds in the range)
 *   ingest       importExport with the saved mapping, hourly values (what ingest and the
 *                watched folder do): read + convert + hourly aggregation + one transaction
 *   file         the same through detection (the upload without a mapping): analysis pass first
 *   csv          importExport of every 5-minute reading as read (the climate CSV route), only
 *                with --raw: ~3 million readings, a database of about a gigabyte
 * Goals: import within 3× of parse-only; peak RSS under 300 MB.
 *
 *   node --import tsx bench/climate-store.ts [file.csv] [--raw] [--repeat N] [--years N]
 *
 * --years 3 generates three years (3× the file) instead of one: peak RSS should stay put.
 */
import { systemClock } from '../src/clock.js';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../src/db/database.js';
import { Store, SYSTEM_ACTOR } from '../src/db/store.js';
import { newId } from '../src/db/ids.js';
import { analyseExport, type ConfirmedMapping } from '../src/climate/exports-reader/index.js';
import { importExport, previewFile } from '../src/climate/imports/service.js';
import { readerThreadReady } from '../src/climate/imports/reader-thread.js';
import type { CycleScope } from '../src/registry/scope.js';
import { benchArgs, papaparseCells, phaseInChild, withYearFile } from './lib/phases.js';

const ZONE = 'Europe/Amsterdam';
type Phase = 'parse' | 'preview' | 'ingest' | 'file' | 'csv';

/** ms/cpuMs: the median of a process's later runs (a running service); first: its first run (cold JIT). */
export interface StorePhase {
  phase: Phase;
  ms: number;
  cpuMs: number;
  maxRssMB: number;
  readings: number;
  dbMB: number;
  threadStartMs?: number;
  first: { ms: number; cpuMs: number };
}
export interface ClimateStoreBench {
  file: string;
  bytes: number;
  phases: StorePhase[];
  ratios: Partial<Record<Phase, number>>;
  cpuRatios: Partial<Record<Phase, number>>;
  firstRatios: Partial<Record<Phase, number>>;
  maxRssMB: number;
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};

/** A database with one crop cycle, registry rows written straight in: the bench measures climate, not the registry. */
async function cycleDb(dir: string) {
  const opened = await openDatabase(dir);
  const now = new Date().toISOString();
  const stamp = { created_at: now, updated_at: now, version: opened.hlc.now() };
  const org = newId();
  const farm = newId();
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
  const row = newId();
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
  const scope = { cycle, greenhouse, zone: ZONE } as CycleScope;
  const deps = { db: opened.db, store: new Store(opened.db, opened.hlc, systemClock, opened.engine), clock: systemClock };
  return { opened, scope, deps };
}

/** Where the parent leaves the saved mapping for the ingest phase's children. */
const MAPPING_ENV = 'CROPWALK_BENCH_MAPPING';

/** Imports (or parses) per process: the first pays for a cold JIT, the later ones are what a running service sees. */
const ROUNDS = 3;

async function once(phase: Phase, file: string): Promise<Omit<StorePhase, 'maxRssMB' | 'first'>> {
  if (phase === 'parse') {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const cells = await papaparseCells(file);
    return { phase, ms: performance.now() - t0, cpuMs: cpuMs(c0), readings: cells, dbMB: 0 };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-climate-store-'));
  try {
    const { opened, scope, deps } = await cycleDb(dir);
    if (phase === 'preview') {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const p = await previewFile(deps.db, scope, { path: file, fileName: 'year.csv', size: statSync(file).size }, {});
      const ms = performance.now() - t0;
      const cpu = cpuMs(c0);
      if (p.blocking.length > 0 || p.first_hours.length === 0) throw new Error(`preview: ${JSON.stringify(p.blocking)}`);
      await opened.close();
      return { phase, ms, cpuMs: cpu, readings: p.stats.values, dbMB: 0 };
    }
    // The saved mapping was made by the parent (ingest and the watcher have it already): an
    // analysis here would put the preview's memory into this phase's peak RSS.
    const mapping = phase === 'ingest' ? (JSON.parse(readFileSync(process.env[MAPPING_ENV]!, 'utf8')) as ConfirmedMapping) : undefined;
    const size = statSync(file).size;
    // The reader thread is started once per process (a service starts it with its first
    // import): timed apart, before the import's clock starts.
    const s0 = performance.now();
    if (phase !== 'csv') await readerThreadReady();
    const threadStartMs = performance.now() - s0;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const row = await importExport(
      deps,
      scope,
      { path: file, fileName: 'year.csv', size },
      {
        kind: phase === 'csv' ? 'csv' : phase === 'ingest' ? 'ingest' : 'file',
        actor: SYSTEM_ACTOR,
        actorLabel: 'bench',
        hourly: phase !== 'csv',
        choices: mapping ? { mapping } : {},
      },
    );
    const ms = performance.now() - t0;
    const cpu = cpuMs(c0);
    await opened.close();
    return { phase, ms, cpuMs: cpu, readings: row.readings_added, dbMB: statSync(opened.file).size / 1048576, threadStartMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One phase in this process: ROUNDS runs (one for the raw CSV import), each import into a
 * fresh database. `first` is the first run; ms and cpuMs are the median of the later ones.
 */
async function runPhase(phase: Phase, file: string): Promise<StorePhase> {
  const runs = [];
  for (let i = 0; i < (phase === 'csv' ? 1 : ROUNDS); i++) runs.push(await once(phase, file));
  const later = runs.length > 1 ? runs.slice(1) : runs;
  const med = (xs: number[]) => {
    const v = [...xs].sort((a, b) => a - b);
    return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
  };
  return {
    ...runs[0]!,
    ms: med(later.map((r) => r.ms)),
    cpuMs: med(later.map((r) => r.cpuMs)),
    first: { ms: runs[0]!.ms, cpuMs: runs[0]!.cpuMs },
    maxRssMB: process.resourceUsage().maxRSS / 1024,
  };
}

/**
 * Runs each phase `repeat` times in fresh processes; the best time is kept (least disturbed
 * by other load), the highest RSS. CPU time (user + system) is reported beside wall time:
 * on a shared box it is the steadier figure, while wall time also shows the waits on disk.
 */
export async function runClimateStoreBench(
  opts: { file?: string; raw?: boolean; repeat?: number; years?: number } = {},
): Promise<ClimateStoreBench> {
  return withYearFile(
    opts.file,
    async (file) => {
      const mappingDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-bench-mapping-'));
      process.env[MAPPING_ENV] = path.join(mappingDir, 'mapping.json');
      writeFileSync(process.env[MAPPING_ENV], JSON.stringify((await analyseExport({ path: file }, { timeZone: ZONE })).mapping));
      const phases: StorePhase[] = [];
      const wanted: Phase[] = ['parse', 'preview', 'ingest', 'file', ...(opts.raw ? (['csv'] as Phase[]) : [])];
      for (const phase of wanted) {
        const runs = Array.from({ length: Math.max(1, opts.repeat ?? 1) }, () => phaseInChild<StorePhase>(import.meta.url, phase, file));
        const best = runs.reduce((a, b) => (b.ms < a.ms ? b : a));
        phases.push({ ...best, maxRssMB: Math.max(...runs.map((r) => r.maxRssMB)) });
      }
      const parse = phases[0]!;
      const ratios = Object.fromEntries(phases.slice(1).map((p) => [p.phase, p.ms / parse.ms]));
      const firstRatios = Object.fromEntries(phases.slice(1).map((p) => [p.phase, p.first.ms / parse.first.ms]));
      const cpuRatios = Object.fromEntries(phases.slice(1).map((p) => [p.phase, p.cpuMs / parse.cpuMs]));
      rmSync(mappingDir, { recursive: true, force: true });
      return {
        file,
        bytes: statSync(file).size,
        phases,
        ratios,
        cpuRatios,
        firstRatios,
        maxRssMB: Math.max(...phases.map((p) => p.maxRssMB)),
      };
    },
    opts.years,
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = benchArgs(process.argv.slice(2));
  if (args.phase) {
    process.stdout.write(JSON.stringify(await runPhase(args.phase as Phase, args.file!)) + '\n');
  } else {
    const r = await runClimateStoreBench({ file: args.file, raw: args.flags.includes('--raw'), repeat: args.repeat, years: args.years });
    console.log(`climate store bench: ${(r.bytes / 1048576).toFixed(1)} MiB (${r.file})`);
    for (const p of r.phases) {
      const ratio = p.phase === 'parse' ? 'baseline' : `${r.ratios[p.phase]!.toFixed(1)}× / cpu ${r.cpuRatios[p.phase]!.toFixed(1)}×`;
      const first =
        p.phase === 'parse'
          ? `first run ${p.first.ms.toFixed(0)} ms`
          : `first run ${p.first.ms.toFixed(0)} ms = ${r.firstRatios[p.phase]!.toFixed(1)}×`;
      const thread = p.threadStartMs !== undefined && p.phase !== 'csv' ? `, reader thread start ${p.threadStartMs.toFixed(0)} ms` : '';
      console.log(
        `  ${p.phase.padEnd(7)} ${p.ms.toFixed(0).padStart(7)} ms wall ${p.cpuMs.toFixed(0).padStart(7)} ms cpu  ${ratio.padEnd(20)} peak RSS ${p.maxRssMB.toFixed(0).padStart(4)} MB  ${p.phase === 'parse' ? `${p.readings} cells` : p.phase === 'preview' ? `${p.readings} values read` : `${p.readings} readings stored, db ${p.dbMB.toFixed(0)} MB`}  (${first}${thread})`,
      );
    }
    console.log(
      `  goals: preview and import ≤ 3× parse-only, peak RSS < 300 MB (highest here ${r.maxRssMB.toFixed(0)} MB); ratios are of later runs in a process, first runs in brackets`,
    );
  }
}
