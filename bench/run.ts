// `npm run bench [name ...]`: every benchmark, each printing its figures as
// ratios against a baseline measured in the same run. Names: registry,
// records, climate-import, climate-store, scoring-accuracy, scoring-walk,
// scoring-photo-walk, scoring-model, scoring-service, web, sync, postgres, bulk, upstream, media-photo, forecast-agc2, forecast-speed. Figures are written to bench/out/results.json as well.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

interface Bench {
  name: string;
  module: string;
  /** Exported function to call; without one the file runs as its own process. */
  fn?: string;
  what: string;
}

const BENCHES: Bench[] = [
  {
    name: 'registry',
    module: './registry.js',
    fn: 'runRegistryBench',
    what: 'authenticated GET /api/session and GET {org} (4,000 cycles) vs a bare Koa handler',
  },
  { name: 'records', module: './records-harvest-import.ts', what: 'harvest CSV import vs papaparse alone' },
  {
    name: 'climate-import',
    module: './climate-import.js',
    fn: 'runClimateBench',
    what: 'a year of 5-minute readings, 30 columns: preview and read vs papaparse alone, peak RSS',
  },
  {
    name: 'climate-store',
    module: './climate-store.js',
    fn: 'runClimateStoreBench',
    what: 'the same year imported into SQLite vs papaparse alone, peak RSS',
  },
  {
    name: 'scoring-accuracy',
    module: './scoring-accuracy.js',
    fn: 'runPhotoBench',
    what: 'built-in detector on the labelled tomato photos; the shipped model beside it on the validation photos',
  },
  {
    name: 'scoring-walk',
    module: './scoring-walk.js',
    fn: 'runWalkBench',
    what: 'count error after tracking on rendered walks; scoring vs ffmpeg decode alone',
  },
  {
    name: 'scoring-photo-walk',
    module: './scoring-photo-walk.js',
    fn: 'runPhotoWalkComparison',
    what: 'walks past the labelled tomato photos (real fruit), count error after tracking vs the same photos scored one at a time',
  },
  {
    name: 'scoring-model',
    module: './scoring-model.js',
    fn: 'runModelSpeedBench',
    what: 'YOLOv8n- and YOLOv8s-sized ONNX models (random weights) scoring the 60 s 1080p walk vs ffmpeg decode alone and the built-in detector',
  },
  {
    name: 'scoring-service',
    module: './scoring-service.js',
    fn: 'runScoringServiceBench',
    what: 'a 60 s 1080p walk through the service; API p99 while scoring',
  },
  {
    name: 'web',
    module: './web.js',
    fn: 'runWebBench',
    what: 'the staff app: first-load JavaScript (compressed) vs the 200 KB budget; the week screen of a season in headless Chromium vs a bare page from the box',
  },
  {
    name: 'sync',
    module: './sync.js',
    fn: 'runSyncBench',
    what: "a busy box's week offline (50 walks with frames, 2,000 harvest and irrigation entries, 7 daily climate imports) synced to its upstream on loopback vs copying the same files; peak RSS; an idle round's CPU",
  },
  {
    name: 'postgres',
    module: './postgres.js',
    fn: 'runPostgresBench',
    what: 'bulk paths on PostgreSQL (COPY, multi-row statements) vs the same on SQLite: a year of climate imported hourly, a 100,000-line harvest CSV',
  },
  {
    name: 'bulk',
    module: './bulk.js',
    fn: 'runBulkBench',
    what: 'change-log rows on PostgreSQL in batches of 50, 500 and 5,000: one JSON value a statement (src/db/bulk.ts) vs multi-row VALUES',
  },
  {
    name: 'upstream',
    module: './upstream.js',
    fn: 'runUpstreamBench',
    what: "fifty simulated boxes pushing the sync issue's busy week at once to an upstream on PostgreSQL (one and two processes) vs one on SQLite: changes applied per second, p99 of a push batch, a puller's digest",
  },
  {
    name: 'media-photo',
    module: './media-photo.js',
    fn: 'runPhotoDecodeBench',
    what: 'a HEIC photo (libheif, WebAssembly) vs ffmpeg decoding the same picture as a JPEG',
  },
  {
    name: 'forecast-agc2',
    module: './forecast-agc2.js',
    fn: 'runForecastAgc2Bench',
    what: 'the agc2 season (3 compartments) entered week by week through the API: backtest per horizon vs persistence and mean_3_weeks (tuned on AICU; Digilog and TheAutomators held out)',
  },
  {
    name: 'forecast-speed',
    module: './forecast-speed.js',
    fn: 'runForecastSpeedBench',
    what: 'backtest and week read of a 45-week cycle with a year of hourly climate and weekly walks vs reading the same rows with one SQL query each',
  },
];

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const results: Record<string, unknown> = {};
let failed = 0;
for (const b of BENCHES) {
  if (wanted.length && !wanted.includes(b.name)) continue;
  console.log(`\n=== ${b.name}: ${b.what}`);
  const started = Date.now();
  try {
    if (!b.fn) {
      const file = fileURLToPath(new URL(b.module, import.meta.url));
      const r = spawnSync(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
      process.stdout.write(r.stdout);
      if (r.status !== 0) throw new Error(`${b.module} exited with ${r.status}`);
      results[b.name] = { output: r.stdout.trim().split('\n').slice(-12) };
    } else {
      const mod = (await import(b.module)) as Record<string, (...a: unknown[]) => Promise<unknown>>;
      const fn = mod[b.fn];
      if (typeof fn !== 'function') throw new Error(`${b.module} does not export ${b.fn}`);
      results[b.name] = await fn();
      // Some benchmarks print their table only when run on their own: show their figures here too.
      console.log(
        JSON.stringify(
          results[b.name],
          (_k, v) => (Array.isArray(v) && v.length > 6 ? `[${v.length} items]` : typeof v === 'number' ? Math.round(v * 1000) / 1000 : v),
          2,
        ),
      );
    }
  } catch (err) {
    failed++;
    results[b.name] = { error: err instanceof Error ? err.message : String(err) };
    console.error(`${b.name} failed: ${err instanceof Error ? err.stack : String(err)}`);
  }
  console.log(`=== ${b.name} took ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
const outDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'out');
mkdirSync(outDir, { recursive: true });
writeFileSync(path.join(outDir, 'results.json'), JSON.stringify({ at: new Date().toISOString(), node: process.version, results }, null, 2));
console.log(`\nfigures written to bench/out/results.json${failed ? `; ${failed} benchmark(s) failed` : ''}`);
process.exitCode = failed ? 1 : 0;
