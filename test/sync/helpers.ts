import { dbRows, startServer, type TestServer } from '../helpers/server.js';
import type { Config } from '../../src/config.js';
import type { AppOptions } from '../../src/app.js';
import { SettableClock } from '../../src/clock.js';
import { pgForeignKeyViolations, sqliteOf } from '../helpers/postgres.js';

/** Two or more real instances on loopback: an upstream, and boxes pointed at it (or at a proxy in front of it). */

/** Each instance runs on a settable clock (src/clock.ts), set to the real time plus its skew. */
const clocks = new WeakMap<TestServer, { clock: SettableClock; offset: number }>();

async function start(t: { teardown(fn: () => unknown): void }, config: Partial<Config>, options: Partial<AppOptions>): Promise<TestServer> {
  const clock = new SettableClock();
  const s = await startServer(t, config, { clock, ...options });
  clocks.set(s, { clock, offset: 0 });
  return s;
}

export async function startUpstream(
  t: { teardown(fn: () => unknown): void },
  config: Partial<Config> = {},
  options: Partial<AppOptions> = {},
): Promise<TestServer> {
  return start(t, { syncIntervalS: 0, ...config }, options);
}

export async function startBox(
  t: { teardown(fn: () => unknown): void },
  upstreamUrl: string,
  upstreamKey: string,
  config: Partial<Config> = {},
  options: Partial<AppOptions> = {},
): Promise<TestServer> {
  // The interval is off: tests run rounds themselves (POST /api/admin/sync), so what moves when is theirs to say.
  // A box stays on SQLite in the PostgreSQL pass too (databaseUrl ''): there the upstream alone is on PostgreSQL.
  return start(t, { upstreamUrl, upstreamKey, syncIntervalS: 0, databaseUrl: '', ...config }, options);
}

export interface Round {
  ok: boolean;
  state: string;
  error: string | null;
  pushed: number;
  refused: number;
  pulled: number;
  pull_refused: number;
  files_sent: number;
  files_received: number;
  bytes_sent: number;
  bytes_received: number;
}

export async function syncOnce(box: TestServer): Promise<Round> {
  keepTime(box);
  const r = await box.request('POST', '/api/admin/sync', { admin: true });
  if (r.status !== 200) throw new Error(`POST /api/admin/sync: ${r.status} ${r.text}`);
  return r.body as Round;
}

/**
 * Rounds on every box, again and again, until one pass over all of them moves nothing and
 * every round reached its end; fails at the deadline, saying what the last rounds said.
 */
export async function syncUntilQuiet(boxes: TestServer[], options: { deadlineMs?: number; label?: string } = {}): Promise<Round[]> {
  const deadline = Date.now() + (options.deadlineMs ?? 60_000);
  for (;;) {
    const last: Round[] = [];
    for (const b of boxes) last.push(await syncOnce(b));
    const quiet = last.every((r) => r.ok && r.pushed + r.refused + r.pulled + r.pull_refused + r.files_sent + r.files_received === 0);
    if (quiet) return last;
    if (Date.now() > deadline)
      throw new Error(`${options.label ?? 'sync'}: not quiet by the deadline; last rounds: ${JSON.stringify(last)}`);
  }
}

export async function digest(s: TestServer, key: string): Promise<Record<string, { count: number; sha256: string }>> {
  const r = await s.request('GET', '/api/sync/digest', { key });
  if (r.status !== 200) throw new Error(`digest: ${r.status} ${r.text}`);
  return r.body.kinds;
}

/** Kinds whose records differ between two instances, with the counts each holds. */
export function digestDiff(
  a: Record<string, { count: number; sha256: string }>,
  b: Record<string, { count: number; sha256: string }>,
): string[] {
  const out: string[] = [];
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (a[k]?.sha256 !== b[k]?.sha256) out.push(`${k}: ${a[k]?.count} vs ${b[k]?.count}`);
  }
  return out;
}

/**
 * Rows that break a foreign key: none, always. SQLite: PRAGMA foreign_key_check. PostgreSQL
 * (which refuses such a commit, but a constraint dropped or never made would let one through):
 * every foreign key of the catalog asked for child rows without their parent.
 */
export async function fkViolations(s: TestServer): Promise<unknown[]> {
  if (s.app.services.engine.kind === 'sqlite') return sqliteOf(s.app.services).prepare('PRAGMA foreign_key_check').all();
  return pgForeignKeyViolations((text) => dbRows(s, text));
}

/** A request that must answer `status`; answers the body. */
export async function call(s: TestServer, method: string, url: string, key: string, body?: unknown, status?: number): Promise<any> {
  const r = await s.request(method, url, { key, ...(body !== undefined ? { body } : {}) });
  const want = status ?? (method === 'POST' ? 201 : 200);
  if (r.status !== want) throw new Error(`${method} ${url}: ${r.status} (wanted ${want}) ${r.text}`);
  return r.body;
}

/** Sets an instance's clock `ms` off the real time, forward or back (a box without a good clock); it stays so (keepTime). */
export function skew(s: TestServer, ms: number): void {
  const c = clocks.get(s);
  if (!c) throw new Error('skew: not an instance started by these helpers');
  c.offset = ms;
  c.clock.set(Date.now() + ms);
}

/** Moves each instance's settable clock on to the real time plus its skew (the clocks stand still between). */
export function keepTime(...servers: TestServer[]): void {
  for (const s of servers) {
    const c = clocks.get(s);
    if (c) c.clock.set(Date.now() + c.offset);
  }
}
