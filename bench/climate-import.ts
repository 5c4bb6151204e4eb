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
 *   hourly   readHourly: every reading into hourly values, no object per reading (what an
 *            import of a climate-computer export reads before it writes)
 * Goals: read within 3× of parse; peak RSS under 300 MB whatever the file size.
 * The database write is not part of this figure (the storage step adds it).
 *
 *   node --import tsx bench/climate-import.ts [file.csv] [--repeat N] [--years N]   (default: a generated year, 5 rounds)
 */
import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { analyseExport, readHourly, readReadings } from '../src/climate/exports-reader/index.js';
import { benchArgs, papaparseCells, phaseInChild, withYearFile } from './lib/phases.js';

const ZONE = 'Europe/Amsterdam';
export const PHASES = ['parse', 'analyse', 'read', 'hourly'] as const;
type Phase = (typeof PHASES)[number];

/** ms: wall clock; cpuMs: user + system CPU time of the phase, steadier on a shared machine. */
export interface PhaseResult {
  phase: Phase;
  ms: number;
  cpuMs: number;
  maxRssMB: number;
  count: number;
}
export interface ClimateBenchResult {
  file: string;
  bytes: number;
  phases: PhaseResult[];
  ratios: { analyse: number; read: number; hourly: number };
  cpuRatios: { analyse: number; read: number; hourly: number };
  maxRssMB: number;
}

async function runPhase(phase: Phase, file: string): Promise<PhaseResult> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let count = 0;
  if (phase === 'parse') {
    count = await papaparseCells(file);
  } else if (phase === 'analyse') {
    const a = await analyseExport({ path: file }, { timeZone: ZONE });
    if (a.blocking.length) throw new Error(JSON.stringify(a.blocking));
    count = a.stats.values;
  } else if (phase === 'read') {
    for await (const batch of readReadings({ path: file }, { timeZone: ZONE })) count += batch.length;
  } else {
    count = (await readHourly({ path: file }, { timeZone: ZONE }).read()).size;
  }
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { phase, ms, cpuMs: (c.user + c.system) / 1000, maxRssMB: process.resourceUsage().maxRSS / 1024, count };
}

/**
 * Runs the four phases `repeat` rounds, interleaved so that each round's phases see about the
 * same machine load; a ratio is the median over rounds of phase ÷ parse within one round.
 * Times shown are the medians.
 */
export async function runClimateBench(opts: { file?: string; repeat?: number; years?: number } = {}): Promise<ClimateBenchResult> {
  return withYearFile(
    opts.file,
    async (file) => {
      const repeat = Math.max(1, opts.repeat ?? 5);
      const rounds: Record<Phase, PhaseResult>[] = [];
      for (let r = 0; r < repeat; r++) {
        const round = {} as Record<Phase, PhaseResult>;
        for (const phase of PHASES) round[phase] = phaseInChild<PhaseResult>(import.meta.url, phase, file);
        rounds.push(round);
      }
      const median = (xs: number[]) => {
        const s = [...xs].sort((a, b) => a - b);
        return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
      };
      const phases: PhaseResult[] = PHASES.map((phase) => ({
        phase,
        ms: median(rounds.map((r) => r[phase].ms)),
        cpuMs: median(rounds.map((r) => r[phase].cpuMs)),
        maxRssMB: Math.max(...rounds.map((r) => r[phase].maxRssMB)),
        count: rounds[0]![phase].count,
      }));
      const ratio = (p: Phase) => median(rounds.map((r) => r[p].ms / r.parse.ms));
      const cpuRatio = (p: Phase) => median(rounds.map((r) => r[p].cpuMs / r.parse.cpuMs));
      return {
        file,
        bytes: statSync(file).size,
        phases,
        ratios: { analyse: ratio('analyse'), read: ratio('read'), hourly: ratio('hourly') },
        cpuRatios: { analyse: cpuRatio('analyse'), read: cpuRatio('read'), hourly: cpuRatio('hourly') },
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
    const r = await runClimateBench({ file: args.file, repeat: args.repeat, years: args.years });
    console.log(`climate import bench: ${(r.bytes / 1048576).toFixed(1)} MiB (${r.file})`);
    for (const p of r.phases)
      console.log(
        `  ${p.phase.padEnd(8)} ${p.ms.toFixed(0).padStart(7)} ms wall ${p.cpuMs.toFixed(0).padStart(7)} ms CPU  peak RSS ${p.maxRssMB.toFixed(0).padStart(4)} MB  (${p.count})`,
      );
    console.log(
      `  ratio vs papaparse parse-only, wall: analyse ${r.ratios.analyse.toFixed(2)}×, read ${r.ratios.read.toFixed(2)}×, hourly ${r.ratios.hourly.toFixed(2)}× (goal ≤ 3×)`,
    );
    console.log(
      `  ratio vs papaparse parse-only, CPU:  analyse ${r.cpuRatios.analyse.toFixed(2)}×, read ${r.cpuRatios.read.toFixed(2)}×, hourly ${r.cpuRatios.hourly.toFixed(2)}×`,
    );
    console.log(`  peak RSS ${r.maxRssMB.toFixed(0)} MB (goal < 300 MB)`);
  }
}
