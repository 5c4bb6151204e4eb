// The README's API examples ("Using the API" and after) are one shell session a reader pastes
// section after section. This runs every `sh` block of it, in order, in one bash against a real
// server (BASE and ADMIN_TOKEN set as the first block lets them be), so the README cannot drift from
// the API: a command that answers an error fails the run, naming its block. The blocks before it
// are the box's own commands (start, install, restore, a scale), which need root, systemd or a
// device: each names the test that runs it, and a new one without such a test fails here.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveFfmpeg } from '../src/vision/media/index.js';
import { ADMIN_TOKEN, startServer } from './helpers/server.js';
import { startFakeWeather } from './helpers/open-meteo.js';
import { unzip } from './helpers/unzip.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

interface Block {
  lang: string;
  line: number;
  text: string;
}

function fencedBlocks(md: string): Block[] {
  const blocks: Block[] = [];
  const re = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (let m = re.exec(md); m; m = re.exec(md)) blocks.push({ lang: m[1]!, text: m[2]!, line: md.slice(0, m.index).split('\n').length });
  return blocks;
}

const blocks = fencedBlocks(README);
const sessionStart = README.slice(0, README.indexOf('\n## Using the API')).split('\n').length;
const commands = blocks.filter((b) => b.lang === 'sh' && b.line > sessionStart);

/** The box's own commands, each with a command of the block and the test that runs that command. */
const COVERED: [RegExp, string][] = [
  [/^npm start$/m, 'test/main.test.ts'], // the entry point npm start runs; .ci/run runs npm test itself
  [/^sudo scripts\/install\.sh\b/m, 'test/scripts/install.test.ts'],
  [/^sudo cropwalk restore\b/m, 'test/backup/backup.test.ts'],
  [/\/api\/scales\/\w+/, 'test/scales/routes.test.ts'],
  // The upstream sync walkthrough starts instances of its own on fixed ports.
  [/\$(UP|BOX|SOLO)\b/, 'test/sync/readme.test.ts'],
  // The service started on PostgreSQL, as real processes (createuser and createdb are PostgreSQL's own).
  [/^DATABASE_URL=postgres:\/\/\S+ .*npm start$/m, 'test/db/postgres-processes.test.ts'],
];

t.test("the box's own commands before the API session each have a test that runs them", async (t) => {
  const own = blocks.filter((b) => b.lang === 'sh' && b.line < sessionStart);
  t.ok(own.length >= 1, `${own.length} blocks`);
  for (const b of own) {
    const covered = COVERED.find(([re]) => re.test(b.text));
    t.ok(covered, `block at line ${b.line} (${b.text.split('\n')[0]}) is run by a test listed here`);
    if (covered) t.ok(existsSync(path.join(ROOT, covered[1])), `${covered[1]} exists`);
  }
});

t.test('the examples are shell a reader can paste: no placeholders to fill in', async (t) => {
  t.ok(commands.length >= 5, `${commands.length} command blocks`);
  for (const b of commands) {
    t.notMatch(b.text, /\$\w*\{\w+\}/, `block at line ${b.line}: no {path} placeholder after a variable`);
    // Comments (a whole line, or after a command) may show what an answer looks like.
    const code = b.text.replace(/^\s*#.*$/gm, '').replace(/\s#\s.*$/gm, '');
    t.notMatch(code, /…|=\S*\.\.\./, `block at line ${b.line}: no "…" to replace by hand`);
  }
  t.match(README, /need `curl` and `jq`/, 'the tools the examples use are named');
});

const missing = ['bash', 'curl', 'jq'].filter((cmd) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status !== 0);
const ffmpeg = await resolveFfmpeg();
const skip = missing.length
  ? `${missing.join(', ')} missing (scripts/setup.mjs installs them for tests)`
  : !ffmpeg.available && `ffmpeg is not available`;

t.test('every command block of the README runs against a server, in order, without an error', { skip }, async (t) => {
  const work = t.testdir();
  // The box cannot reach the internet here: its weather service is the loopback server that answers
  // as Open-Meteo does (test/helpers/open-meteo.ts), as in the weather tests.
  const weather = await startFakeWeather(t);
  const s = await startServer(t, { dataDir: path.join(work, 'data'), weatherUrl: weather.url });

  // One session: the blocks in README order against this server; curl fails on an error answer.
  const script = [
    'set -euo pipefail',
    'curl() { command curl --fail-with-body --show-error "$@"; }',
    ...commands.map((b) => `echo; echo "### README block at line ${b.line}"\n${b.text}`),
    'echo; echo "### README examples done"',
  ].join('\n');
  writeFileSync(path.join(work, 'readme.sh'), script);
  // A reader's shell on the box: its address and admin token in the variables the first block reads.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, BASE: s.base, ADMIN_TOKEN };
  const child = spawn('bash', ['readme.sh'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const deadline = setTimeout(() => child.kill('SIGKILL'), 420_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(deadline);
  const last = [...out.matchAll(/### README block at line (\d+)/g)].at(-1)?.[1];
  t.equal(code, 0, code === 0 ? 'every block ran' : `stopped in the block at line ${last}`);
  if (code !== 0) t.comment(out.slice(-3000));
  t.match(out, /### README examples done/, 'to the end');

  // And they did what they say.
  const json = (name: string) => JSON.parse(readFileSync(path.join(work, name), 'utf8'));
  t.ok(existsSync(path.join(work, 'org.json')) && json('org.json').key.api_key, 'an organization and its key');
  t.equal(json('import.json').status, 'done', 'the climate file was imported');
  t.equal(json('walk.json').status, 'done', 'the walk was followed until it was scored');
  t.match(json('correction.json'), { kind: 'ripeness', corrected_counts: { total: Number } }, 'and corrected');
  const training = unzip(readFileSync(path.join(work, 'training.zip')));
  const index = JSON.parse(training.get('index.json')!.toString()) as {
    counts: { walks: number };
    images: { label: string; boxes: { ripeness: string; source: string }[] }[];
  };
  t.equal(index.counts.walks, 1, 'the training export holds the corrected walk');
  t.ok(
    index.images.some((i) => i.boxes.some((b) => b.ripeness === 'turning' && b.source === 'model, ripeness corrected')),
    'with the corrected ripeness as its label',
  );
});
