// A newcomer's clone has no ../shared beside it: every test that needs the shared data must skip
// with a message there, never fail. This runs those tests with CROPWALK_SHARED pointed at an empty
// folder and reads their TAP: each one skips, naming where it looked, and the run is green.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHARED_ENV } from './shared-data.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SELF = 'test/helpers/shared-data.test.ts';

function files(dir: string, suffix: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name), suffix) : e.name.endsWith(suffix) ? [path.join(dir, e.name)] : [],
  );
}
const HELPER = 'test/helpers/shared-data.ts';
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');
/** The repository files a file imports by relative path, as .ts paths from the root. */
const importsOf = (f: string) =>
  [...read(f).matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)].map((m) => path.normalize(path.join(path.dirname(f), m[1]! + '.ts')));

// A string literal that starts with a relative path to the shared folder ('../shared/...',
// '../../../../shared/data/...'): the location written by hand instead of asked of the helper.
const HAND_WRITTEN = /['"`](?:\.\.\/)+shared\b/;
// Modules outside test/ that read the shared data for tests and benchmarks (bench/lib/agc2.ts,
// bench/scoring-accuracy.ts), each through the helper.
const viaHelper = new Set([HELPER, ...[...files('bench', '.ts'), ...files('scripts', '.ts')].filter((f) => importsOf(f).includes(HELPER))]);
const usesShared = (f: string) => importsOf(f).some((i) => viaHelper.has(i)) || /\bPHOTO_DIR\b/.test(read(f)) || HAND_WRITTEN.test(read(f));

const shared = files('test', '.test.ts')
  .filter((f) => f !== SELF)
  .filter(usesShared)
  .sort();

t.test('every test that reads the shared data asks the helper where it is', async (t) => {
  t.ok(shared.length >= 7, `${shared.length} shared-data tests found: ${shared.join(', ')}`);
  t.ok(viaHelper.size >= 3, `read through the helper by: ${[...viaHelper].join(', ')}`);
  for (const f of shared) {
    t.notOk(HAND_WRITTEN.test(read(f)), `${f}: no hand-written ../shared path`);
    t.ok(
      importsOf(f).some((i) => viaHelper.has(i)),
      `${f}: finds the data through ${HELPER}`,
    );
  }
});

t.test(`with ${SHARED_ENV} pointed at an empty folder, every shared-data test skips and the run is green`, async (t) => {
  const empty = mkdtempSync(path.join(tmpdir(), 'cropwalk-no-shared-'));
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  // The child is a run of its own, not a subtest of this one: tap's variables stay behind.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^_?TAP/i.test(k) && k !== 'NODE_OPTIONS'));
  env[SHARED_ENV] = empty;
  const bin = path.join(ROOT, 'node_modules/.bin/tap');
  const child = spawn(bin, ['--reporter=tap', '--jobs=1', '--timeout=300', ...shared], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.equal(code, 0, 'the run without shared data is green');
  if (code !== 0) t.comment(out.slice(-4000));
  const skippedAt = new RegExp(`# SKIP.*shared data not found at ${empty.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
  for (const f of shared) {
    // tap's TAP reporter nests each file's stream under a subtest named by the file.
    const start = out.indexOf(`# Subtest: ${f}`);
    t.ok(start >= 0, `${f} ran`);
    const next = shared.map((g) => out.indexOf(`# Subtest: ${g}`, start + 1)).filter((i) => i > start);
    const own = out.slice(start, next.length ? Math.min(...next) : undefined);
    t.match(own, skippedAt, `${f} skips, saying where it looked`);
    t.notMatch(own, /^\s*not ok /m, `${f}: nothing failed`);
  }
});
