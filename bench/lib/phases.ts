// Shared by the climate benchmarks: each phase runs in a fresh process (so its
// peak RSS is its own), on a generated year of readings unless a file is given.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Papa from 'papaparse';
import { generateClimateYear } from '../../scripts/gen-climate-year.js';

/** Runs `<module> --phase <phase> <file>` in a new Node process and returns the JSON it prints last. */
export function phaseInChild<T>(moduleUrl: string, phase: string, file: string): T {
  const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(moduleUrl), '--phase', phase, file], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(out.trim().split('\n').pop()!) as T;
}

/** Calls `fn` with `file`, or with `years` generated years of 5-minute readings (one by default), removed afterwards. */
export async function withYearFile<R>(file: string | undefined, fn: (file: string) => Promise<R>, years = 1): Promise<R> {
  if (file) return fn(file);
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-climate-year-'));
  try {
    const generated = path.join(dir, 'year.csv');
    await generateClimateYear(generated, 2021, 5, 'Europe/Amsterdam', years);
    return await fn(generated);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface BenchArgs {
  /** Set in a child: the one phase to run on `file`. */
  phase?: string;
  file?: string;
  repeat?: number;
  /** Years in the generated file when no file is given (`--years N`). */
  years?: number;
  flags: string[];
}

/** `--phase NAME FILE` (a child's one phase), or `[FILE] [--repeat N] [--years N] [--flags]`; exits 2 for a file that is not there. */
export function benchArgs(argv: string[]): BenchArgs {
  const pi = argv.indexOf('--phase');
  if (pi !== -1) return { phase: argv[pi + 1]!, file: argv[pi + 2]!, flags: [] };
  const valued = ['--repeat', '--years'];
  const valueOf = (name: string) => {
    const i = argv.indexOf(name);
    return i !== -1 ? Number(argv[i + 1]) : undefined;
  };
  const file = argv.find((a, i) => !a.startsWith('--') && !valued.includes(argv[i - 1] ?? ''));
  if (file && !existsSync(file)) {
    console.error(`no file ${file}`);
    process.exit(2);
  }
  return {
    file,
    repeat: valueOf('--repeat'),
    years: valueOf('--years'),
    flags: argv.filter((a) => a.startsWith('--') && !valued.includes(a)),
  };
}

/** The baseline: papaparse over the file as a stream (';' as the generated year writes it), cells counted. */
export function papaparseCells(file: string): Promise<number> {
  let cells = 0;
  return new Promise<number>((resolve, reject) => {
    Papa.parse<string[]>(createReadStream(file, { encoding: 'utf8' }) as unknown as File, {
      delimiter: ';',
      chunk: (r) => {
        for (const row of r.data) cells += row.length;
      },
      complete: () => resolve(cells),
      error: (e: Error) => reject(e),
    });
  });
}
