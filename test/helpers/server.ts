import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApp, type App, type AppOptions } from '../../src/app.js';
import { createLogger } from '../../src/log.js';
import type { Config } from '../../src/config.js';
import { CompiledQuery } from 'kysely';
import { apiOnPostgres, createDatabase } from './postgres.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestServer {
  app: App;
  base: string;
  dataDir: string;
  /** fetch against the server; JSON bodies are encoded and decoded for you. */
  request(
    method: string,
    url: string,
    options?: { body?: unknown; headers?: Record<string, string>; key?: string; admin?: boolean; raw?: RequestInit['body'] },
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * A real server on port 0 over a fresh SQLite file in a temp DATA_DIR, one per
 * test file (conventions of the test suite). Response bodies are checked
 * against their schemas.
 *
 * In the PostgreSQL pass of `npm test` (CROPWALK_TEST_ENGINE=postgres, scripts/test-postgres.mjs)
 * the same server stores in a PostgreSQL database of its own instead, made for it and dropped
 * when it closes; a server started again on the same DATA_DIR (a restart) gets the same database.
 * A test that sets `databaseUrl` itself keeps it; `databaseUrl: ''` keeps a server on SQLite in
 * that pass too (a box beside an upstream on PostgreSQL).
 */
export async function startServer(
  t: { teardown(fn: () => unknown): void },
  config: Partial<Config> = {},
  options: Partial<AppOptions> = {},
): Promise<TestServer> {
  const dataDir = config.dataDir ?? mkdtempSync(path.join(tmpdir(), 'cropwalk-test-'));
  let dropDatabase: (() => Promise<void>) | null = null;
  if (apiOnPostgres() && config.databaseUrl === undefined) {
    const marker = path.join(dataDir, '.test-database-url');
    if (existsSync(marker)) config = { ...config, databaseUrl: readFileSync(marker, 'utf8') };
    else {
      const made = await createDatabase('cwapi');
      writeFileSync(marker, made.url);
      config = { ...config, databaseUrl: made.url };
      // Dropped with the DATA_DIR it belongs to: a test that restarts on the same folder keeps it.
      if (!config.dataDir) dropDatabase = made.drop;
    }
  }
  const lines: string[] = [];
  const app = await createApp({
    // No early removal of clips for room unless a test asks: the host's free space must not decide a test.
    // No detection threads unless a test asks: under tap's TypeScript loader each thread takes about
    // 3 s of CPU to start (0.5 s under tsx), more than the few frames of a test walk can repay, and
    // the answers are the same either way (test/vision/builtin/detect-ahead.test.ts; api-restart.test.ts
    // scores one walk over the API both ways).
    // The built-in detector unless a test asks for a model: its answers on drawn frames are what the walk
    // tests were written against, and the shipped model is tested in test/walks/jobs/detector-choice.test.ts.
    // The weather and weekly-forecast schedules are off unless a test turns them on: on their own they would reach
    // the real weather service, and write into a test's records whenever its clock passed their time.
    config: {
      adminToken: ADMIN_TOKEN,
      logLevel: 'info',
      diskReserve: 0,
      scoringThreads: 0,
      detector: 'builtin',
      ...config,
      schedules: { weather: 'off', forecast: 'off', ...config.schedules },
      dataDir,
    },
    env: {},
    logger: createLogger('info', {}, (l) => lines.push(l)),
    validateResponses: true,
    ...options,
  });
  const server = await app.listen(0, '127.0.0.1');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const base = `http://127.0.0.1:${port}`;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close();
    if (!config.dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (dropDatabase) await dropDatabase();
  };
  t.teardown(close);
  return {
    app,
    base,
    dataDir,
    logLines: lines,
    async request(method, url, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.key) headers['x-api-key'] = opts.key;
      if (opts.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
      let body: RequestInit['body'] = opts.raw;
      if (opts.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      }
      const res = await fetch(base + url, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    close,
  } as TestServer & { logLines: string[] };
}

/** Creates an organization with the admin token; returns its id and first admin key. */
export async function createOrg(s: TestServer, name = 'Test Growers'): Promise<{ orgId: string; adminKey: string; adminKeyId: string }> {
  const r = await s.request('POST', '/api/organizations', { admin: true, body: { name } });
  if (r.status !== 201) throw new Error(`create org failed: ${r.status} ${r.text}`);
  return { orgId: r.body.organization_id, adminKey: r.body.key.api_key, adminKeyId: r.body.key.key_id };
}

export interface Tree {
  orgId: string;
  adminKey: string;
  farmId: string;
  greenhouseId: string;
  rowId: string;
  cycleId: string;
  /** Path of the crop cycle: {cycle} of docs/api-conventions.md. */
  cyclePath: string;
  greenhousePath: string;
}

/** An organization with one farm > greenhouse > row > crop cycle. */
export async function createTree(s: TestServer, options: { timeZone?: string; startedOn?: string } = {}): Promise<Tree> {
  const { orgId, adminKey } = await createOrg(s);
  const post = async (url: string, body: unknown) => {
    const r = await s.request('POST', url, { key: adminKey, body });
    if (r.status !== 201) throw new Error(`POST ${url}: ${r.status} ${r.text}`);
    return r.body;
  };
  const org = `/api/organizations/${orgId}`;
  const farm = await post(`${org}/farms`, { name: 'Farm' });
  const gh = await post(`${org}/farms/${farm.farm_id}/greenhouses`, {
    name: 'GH 1',
    time_zone: options.timeZone ?? 'Europe/Amsterdam',
    latitude: 52.0,
    longitude: 4.3,
  });
  const greenhousePath = `${org}/farms/${farm.farm_id}/greenhouses/${gh.greenhouse_id}`;
  const row = await post(`${greenhousePath}/rows`, { name: 'Row 1' });
  const cycle = await post(`${greenhousePath}/rows/${row.row_id}/cycles`, {
    name: '2026 tomatoes',
    started_on: options.startedOn ?? '2026-01-05',
    plants_per_m2: 2.5,
    stems_per_m2: 3.3,
  });
  return {
    orgId,
    adminKey,
    farmId: farm.farm_id,
    greenhouseId: gh.greenhouse_id,
    rowId: row.row_id,
    cycleId: cycle.cycle_id,
    greenhousePath,
    cyclePath: `${greenhousePath}/rows/${row.row_id}/cycles/${cycle.cycle_id}`,
  };
}

/**
 * Rows of a query on the server's database, whichever engine it runs on: `?` for each parameter
 * (numbered for PostgreSQL here). For tests that look at what was stored beside what the API answers.
 */
export async function dbRows<R = Record<string, unknown>>(s: TestServer, text: string, ...params: unknown[]): Promise<R[]> {
  let n = 0;
  const compiled = s.app.services.engine.kind === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
  const r = await s.app.services.db.executeQuery(CompiledQuery.raw(compiled, params));
  return r.rows as R[];
}

/** `select count(*) as n ...` as a number. */
export async function dbCount(s: TestServer, text: string, ...params: unknown[]): Promise<number> {
  const [row] = await dbRows<{ n: number }>(s, text, ...params);
  return Number(row!.n);
}
