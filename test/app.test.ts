import t from 'tap';
import { sqliteOf } from './helpers/postgres.js';
import { mkdtempSync, statSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { startServer } from './helpers/server.js';
import { FEATURES } from '../src/features.js';
import { defineRoute } from '../src/http/route.js';
import { loadConfig } from '../src/config.js';
import { loadAdminToken } from '../src/auth/admin-token.js';
import { createLogger } from '../src/log.js';

t.test('errors: problem+json everywhere, no internals on a 5xx', async (t) => {
  const boom = defineRoute({
    method: 'get',
    path: '/api/test/boom',
    operationId: 'boom',
    summary: 'always fails',
    tags: ['Test'],
    auth: 'none',
    responses: { 200: { description: 'never' } },
    handler: () => {
      throw new Error('secret internal detail at /srv/db');
    },
  });
  const s = await startServer(t, {}, { features: [...FEATURES, { name: 'test', routes: [boom] }] });
  const r = await s.request('GET', '/api/test/boom');
  t.equal(r.status, 500);
  t.match(r.headers.get('content-type'), /application\/problem\+json/);
  t.equal(r.body.code, 'internal_error');
  t.notMatch(r.text, /secret internal detail|at .*\.ts|Error:/, 'no message or stack in the answer');
  const id = r.headers.get('x-request-id');
  t.ok(id);
  t.match(r.body.detail, id!);
  const logged = (s as any).logLines.find((l: string) => l.includes('unhandled error'));
  t.match(logged, 'secret internal detail', 'the log has it');
  t.match(logged, id!, 'under the request id');

  const unknown = await s.request('GET', '/api/nothing-here');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'not_found');
  const method = await s.request('PUT', '/api/health');
  t.equal(method.status, 405);
  t.equal(method.body.code, 'method_not_allowed');
  const big = await s.request('POST', '/api/session', { body: { api_key: 'x'.repeat(2 * 1024 * 1024) } });
  t.equal(big.status, 413);
  t.equal(big.body.code, 'payload_too_large');
});

t.test('a route without path parameters answers the same whether found by its exact path or by the router', async (t) => {
  const s = await startServer(t);
  const org = await s.request('POST', '/api/organizations', { admin: true, body: { name: 'Exact Growers' } });
  t.equal(org.status, 201);
  const key = org.body.key.api_key;
  const exact = await s.request('GET', '/api/session', { key });
  t.equal(exact.status, 200);
  for (const variant of ['/api/session/', '/API/Session']) {
    const r = await s.request('GET', variant, { key });
    t.equal(r.status, 200, `${variant} is the same route`);
    t.same(r.body, exact.body);
  }
  t.equal((await s.request('GET', '/api/session')).status, 401, 'the exact path still authenticates');
  const head = await fetch(`${s.base}/api/health`, { method: 'HEAD' });
  t.equal(head.status, 200, 'HEAD of a GET route');
  t.equal(await head.text(), '');
  const options = await fetch(`${s.base}/api/session`, { method: 'OPTIONS' });
  t.ok(options.status < 300, 'OPTIONS answers');
  t.same(options.headers.get('allow')!.split(/,\s*/).sort(), ['DELETE', 'GET', 'HEAD', 'POST']);
  const put = await s.request('PUT', '/api/session', { key });
  t.equal(put.status, 405);
  t.equal(put.body.code, 'method_not_allowed');
  t.match(put.headers.get('allow'), /GET/);
});

t.test('health: database and scoring; 503 when the database does not answer', async (t) => {
  const s = await startServer(t);
  const ok = await s.request('GET', '/api/health');
  t.equal(ok.status, 200);
  t.equal(ok.body.checks.database.ok, true);
  t.ok(['ok', 'degraded'].includes(ok.body.status));
  sqliteOf(s.app.services).close();
  const down = await s.request('GET', '/api/health');
  t.equal(down.status, 503);
  t.equal(down.body.status, 'unavailable');
  t.equal(down.body.checks.database.ok, false);
});

t.test('configuration: defaults, a config file, the environment wins', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-config-'));
  const d = loadConfig({ DATA_DIR: dir });
  t.equal(d.port, 8080);
  t.equal(d.host, '0.0.0.0');
  t.equal(d.dataDir, dir);
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ PORT: 9000, LOG_LEVEL: 'warn', CLIMATE_WATCH_DIR: '/srv/in' }));
  const f = loadConfig({ DATA_DIR: dir });
  t.equal(f.port, 9000);
  t.equal(f.logLevel, 'warn');
  t.equal(f.climateWatchDir, '/srv/in');
  const e = loadConfig({ DATA_DIR: dir, PORT: '9100' });
  t.equal(e.port, 9100, 'the environment wins over the file');
  t.throws(() => loadConfig({ DATA_DIR: dir, PORT: 'eighty' }), /PORT/);
  t.throws(() => loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'loud' }), /LOG_LEVEL/);
  // Detection threads: one per core (at most 4) unless set; a whole number, 0 detecting on the job's own thread.
  t.equal(d.scoringThreads, Math.min(4, availableParallelism()));
  t.equal(loadConfig({ DATA_DIR: dir, SCORING_THREADS: '0' }).scoringThreads, 0);
  t.equal(loadConfig({ DATA_DIR: dir, SCORING_THREADS: '3' }).scoringThreads, 3);
  t.throws(() => loadConfig({ DATA_DIR: dir, SCORING_THREADS: '1.5' }), /SCORING_THREADS must be a whole number/);
  t.throws(() => loadConfig({ DATA_DIR: dir, SCORING_THREADS: '500' }), /SCORING_THREADS/);
  t.throws(() => loadConfig({ DATA_DIR: dir, SCORING_THREADS: '-1' }), /SCORING_THREADS/);
});

t.test('the admin token: generated once into DATA_DIR/admin-token (0600), its path logged, never itself', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-token-'));
  const lines: string[] = [];
  const log = createLogger('info', {}, (l) => lines.push(l));
  const a = loadAdminToken(undefined, dir, log);
  const file = path.join(dir, 'admin-token');
  t.equal(a.file, file);
  t.equal(statSync(file).mode & 0o777, 0o600);
  const token = readFileSync(file, 'utf8').trim();
  t.ok(token.length >= 40);
  t.match(lines.join('\n'), file);
  t.notMatch(lines.join('\n'), token);
  const b = loadAdminToken(undefined, dir, log);
  t.equal(b.hash, a.hash, 'the same token on the next start');
  const env = loadAdminToken('from-env', dir, log);
  t.equal(env.source, 'env');
  t.not(env.hash, a.hash);
});
