/**
 * Climate-export import cost against parsing the same file with papaparse alone, measured in
 * the same run on a generated year of 5-minute readings (scripts/gen-climate-year.ts: ~105,000
 * rows × 30 columns, ';' with decimal commas, separate date and time, Europe/Amsterdam wall clock).
 *
 * Each phase runs in its own child process, so its peak RSS (process.resourceUsage().maxRSS)
 * is its own:
 *   parse    papaparse over the file stream, cells counted (the baseline)
 *   analyse  analyseExport: the preview (one full pass: layout, mapping, stats, first rows)
 *   read     readReadings: every reading converted, in batches
 *   hourly   readReadings then aggregateHourly
 * Goals: read within 3× of parse; peak RSS under 300 MB whatever the file size.
 * The database write is not part of this figure (the storage step adds it).
 *
 *   node --import tsx bench/climate-import.ts [file.csv] [--repeat N]
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Papa from 'papaparse';
import { aggregateHourly, analyseExport, readReadings } from '../src/climate/import/index.js';
import { generateClimateYear } from '../scripts/gen-climate-year.js';

const ZONE = 'Europe/Amsterdam';
export const PHASES = ['parse', 'analyse', 'read', 'hourly'] as const;
type Phase = (typeof PHASES)[number];

export interface PhaseResult { phase: Phase; ms: number; maxRssMB: number; count: number }
export interface ClimateBenchResult {
  file: string; bytes: number; phases: PhaseResult[];
  ratios: { analyse: number; read: number; hourly: number };
  maxRssMB: number;
}

async function runPhase(phase: Phase, file: string): Promise<PhaseResult> {
  const t0 = performance.now();
  let count = 0;
  if (phase === 'parse') {
    await new Promise<void>((resolve, reject) => {
      Papa.parse<string[]>(createReadStream(file, { encoding: 'utf8' }) as unknown as File, {
        delimiter: ';',
        chunk: (r) => { for (const row of r.data) count += row.length; },
        complete: () => resolve(),
        error: (e: Error) => reject(e),
      });
    });
  } else if (phase === 'analyse') {
    const a = await analyseExport({ path: file }, { timeZone: ZONE });
    if (a.blocking.length) throw new Error(JSON.stringify(a.blocking));
    count = a.stats.values;
  } else if (phase === 'read') {
    for await (const batch of readReadings({ path: file }, { timeZone: ZONE })) count += batch.length;
  } else {
    const hours = await aggregateHourly(readReadings({ path: file }, { timeZone: ZONE }), { timeZone: ZONE });
    count = hours.length;
  }
  const ms = performance.now() - t0;
  return { phase, ms, maxRssMB: process.resourceUsage().maxRSS / 1024, count };
}

function inChild(phase: Phase, file: string): PhaseResult {
  const self = fileURLToPath(import.meta.url);
  const out = execFileSync(process.execPath, ['--import', 'tsx', self, '--phase', phase, file], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!);
}

/** Runs every phase `repeat` times (best time kept, as the figure least disturbed by other load). */
export async function runClimateBench(opts: { file?: string; repeat?: number } = {}): Promise<ClimateBenchResult> {
  let dir: string | null = null;
  let file = opts.file;
  if (!file) {
    dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-climate-bench-'));
    file = path.join(dir, 'year.csv');
    await generateClimateYear(file);
  }
  try {
    const repeat = Math.max(1, opts.repeat ?? 3);
    const phases: PhaseResult[] = [];
    for (const phase of PHASES) {
      const runs = Array.from({ length: repeat }, () => inChild(phase, file!));
      const best = runs.reduce((a, b) => (b.ms < a.ms ? b : a));
      phases.push({ ...best, maxRssMB: Math.max(...runs.map((r) => r.maxRssMB)) });
    }
    const ms = (p: Phase) => phases.find((x) => x.phase === p)!.ms;
    return {
      file, bytes: statSync(file).size, phases,
      ratios: { analyse: ms('analyse') / ms('parse'), read: ms('read') / ms('parse'), hourly: ms('hourly') / ms('parse') },
      maxRssMB: Math.max(...phases.map((p) => p.maxRssMB)),
    };
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const pi = args.indexOf('--phase');
  if (pi !== -1) {
    process.stdout.write(JSON.stringify(await runPhase(args[pi + 1] as Phase, args[pi + 2]!)) + '\n');
  } else {
    const ri = args.indexOf('--repeat');
    const repeat = ri !== -1 ? Number(args[ri + 1]) : undefined;
    const file = args.find((a, i) => !a.startsWith('--') && (ri === -1 || i !== ri + 1));
    if (file && !existsSync(file)) { console.error(`no file ${file}`); process.exit(2); }
    const r = await runClimateBench({ file, repeat });
    console.log(`climate import bench: ${(r.bytes / 1048576).toFixed(1)} MiB (${r.file})`);
    for (const p of r.phases) console.log(`  ${p.phase.padEnd(8)} ${p.ms.toFixed(0).padStart(7)} ms  peak RSS ${p.maxRssMB.toFixed(0).padStart(4)} MB  (${p.count})`);
    console.log(`  ratio vs papaparse parse-only: analyse ${r.ratios.analyse.toFixed(2)}×, read ${r.ratios.read.toFixed(2)}×, read+hourly ${r.ratios.hourly.toFixed(2)}× (goal ≤ 3×)`);
    console.log(`  peak RSS ${r.maxRssMB.toFixed(0)} MB (goal < 300 MB)`);
  }
}
