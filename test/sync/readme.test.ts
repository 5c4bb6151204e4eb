// The README's "Upstream sync" walkthrough, run as a reader would paste it: every `sh` block of
// the section, in order, in one bash, starting the instances it starts (real processes on
// loopback), cutting the upstream, working offline and catching up. A command that answers an
// error fails the run, naming its block; the section cannot drift from what the service does.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const start = README.indexOf('\n## Upstream sync\n');
const section = README.slice(start, README.indexOf('\n## ', start + 1));
const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const missing = ['bash', 'curl', 'jq'].filter((cmd) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status !== 0);

t.test('the upstream sync walkthrough runs as written', { skip: missing.length ? `${missing.join(', ')} missing` : false }, async (t) => {
  t.ok(start > 0 && blocks.length >= 4, `the section and its ${blocks.length} blocks`);
  // A folder of its own, as the reader's checkout: the section runs `node --import tsx src/main.ts` from it.
  const work = mkdtempSync(path.join(tmpdir(), 'cropwalk-sync-readme-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'));
  symlinkSync(path.join(ROOT, 'src'), path.join(work, 'src'));
  // The ports the section names, moved to free ones: other tests run beside this one.
  let script = blocks.map((b, i) => `echo; echo "### block ${i + 1}"\n${b}`).join('\n');
  for (const p of ['8081', '8082', '8083']) script = script.replaceAll(p, String(await freePort()));
  writeFileSync(
    path.join(work, 'walkthrough.sh'),
    ['set -euo pipefail', 'curl() { command curl --fail-with-body --show-error "$@"; }', script, 'echo; echo "### done"'].join('\n'),
  );
  const child = spawn('bash', ['walkthrough.sh'], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const deadline = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 300_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(deadline);
  // Whatever the blocks left running goes with their process group.
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // None left.
  }
  const last = [...out.matchAll(/### block (\d+)/g)].at(-1)?.[1];
  t.equal(code, 0, code === 0 ? 'every block ran' : `stopped in block ${last}`);
  if (code !== 0) t.comment(out.slice(-3000));
  t.match(out, /### done/, 'to the end');
  t.match(out, /\{"role":"box","state":"idle"/, 'the box is set up and synced');
  t.match(out, /\{"ok":false,"state":"offline","error":"no answer from the upstream: ECONNREFUSED"\}/, 'the network cut is seen');
  t.match(out, /\{"state":"offline","pending":\{"changes":1,/, 'the offline work waits');
  // The box's own retry may send it before the reader's POST does (the backoff after the cut is a
  // second or two): what holds either way is that nothing waits once the POST has answered.
  const catchUp = out.slice(out.indexOf('### block 4'));
  t.match(catchUp, /\{"ok":true,"state":"idle"\}\n\{"state":"idle","pending":\{"changes":0,"oldest_at":null\}\}/, 'the catch-up sends it');
  t.match(out, /\{"kg":412\.5,"week":"2026-W10"\}/, 'and the upstream has it');
  t.match(out, /^same$/m, 'both hold the same records');
  t.match(out, /"round":\{"ok":true,"pushed":[1-9]/, 'the box used on its own first is linked and sends what it holds');
});
