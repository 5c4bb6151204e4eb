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

function testFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(path.join(dir, e.name)) : e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : [],
  );
}

// A string literal that starts with a relative path to the shared folder ('../shared/...',
// '../../../../shared/data/...'): the location written by hand instead of asked of the helper.
const HAND_WRITTEN = /['"`](?:\.\.\/)+shared\b/;
const usesShared = (src: string) => /helpers\/shared-data\.js'/.test(src) || /\bPHOTO_DIR\b/.test(src) || HAND_WRITTEN.test(src);

const files = testFiles('test')
  .filter((f) => f !== SELF)
  .filter((f) => usesShared(readFileSync(path.join(ROOT, f), 'utf8')))
  .sort();

t.test('every test that reads the shared data asks the helper where it is', async (t) => {
  t.ok(files.length >= 5, `${files.length} shared-data tests found: ${files.join(', ')}`);
  for (const f of files) {
    const src = readFileSync(path.join(ROOT, f), 'utf8');
    t.notOk(HAND_WRITTEN.test(src), `${f}: no hand-written ../shared path`);
    t.match(src, /helpers\/shared-data\.js'/, `${f}: imports test/helpers/shared-data.ts`);
  }
});

t.test(`with ${SHARED_ENV} pointed at an empty folder, every shared-data test skips and the run is green`, async (t) => {
  const empty = mkdtempSync(path.join(tmpdir(), 'cropwalk-no-shared-'));
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  // The child is a run of its own, not a subtest of this one: tap's variables stay behind.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^_?TAP/i.test(k) && k !== 'NODE_OPTIONS'));
  env[SHARED_ENV] = empty;
  const bin = path.join(ROOT, 'node_modules/.bin/tap');
  const child = spawn(bin, ['--reporter=tap', '--jobs=1', '--timeout=300', ...files], {
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
  for (const f of files) {
    // tap's TAP reporter nests each file's stream under a subtest named by the file.
    const start = out.indexOf(`# Subtest: ${f}`);
    t.ok(start >= 0, `${f} ran`);
    const next = files.map((g) => out.indexOf(`# Subtest: ${g}`, start + 1)).filter((i) => i > start);
    const own = out.slice(start, next.length ? Math.min(...next) : undefined);
    t.match(own, skippedAt, `${f} skips, saying where it looked`);
    t.notMatch(own, /^\s*not ok /m, `${f}: nothing failed`);
  }
});
