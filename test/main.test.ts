import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `npm start` runs after setup: the real entry point, as a process. */
t.test('the service starts, logs JSON lines, answers, and stops cleanly on SIGTERM', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-main-'));
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  delete (env as Record<string, string | undefined>).ADMIN_TOKEN;
  const child = spawn(process.execPath, ['--import', 'tsx', main], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  const address = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /"msg":"cropwalk listening","address":"([^"]+)"/.exec(out);
      if (m) {
        clearInterval(timer);
        resolve(m[1]!);
      }
    }, 50);
    child.on('exit', () => reject(new Error(`exited early: ${out}`)));
  });
  const health = await fetch(`http://${address}/api/health`);
  t.equal(health.status, 200);
  const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  const org = await fetch(`http://${address}/api/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Started' }),
  });
  t.equal(org.status, 201, 'the generated admin token works');

  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exits 0 on SIGTERM');
  const lines = out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  t.ok(lines.length >= 4);
  for (const l of lines) t.doesNotThrow(() => JSON.parse(l), 'each log line is JSON');
  t.ok(
    lines.some((l) => JSON.parse(l).msg === 'request' && JSON.parse(l).path === '/api/health'),
    'one line per request',
  );
  t.ok(lines.some((l) => JSON.parse(l).msg === 'stopped'));
  t.match(out, path.join(dataDir, 'admin-token'), 'the token file is named');
  t.notMatch(out, token, 'the token itself never reaches the log');
  t.ok(existsSync(path.join(dataDir, 'cropwalk.sqlite')), 'SQLite under DATA_DIR');
});
