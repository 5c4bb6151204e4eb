import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type SQLite from 'better-sqlite3';
import type { Engine } from '../../src/db/engine.js';
// @ts-expect-error: plain JavaScript (scripts/ runs before the TypeScript tooling)
import { findPgBin, startCluster } from '../../scripts/pg-cluster.mjs';

/**
 * PostgreSQL for the tests. A server is had, in this order:
 * - CROPWALK_TEST_POSTGRES, an admin URL (scripts/test-postgres.mjs sets it for the whole
 *   PostgreSQL pass of `npm test` after starting one throwaway server, or you point it at yours);
 * - else a throwaway server this test file starts (initdb in a temp folder, a free port) and
 *   stops at its end;
 * - else none: the test skips, saying why (PostgreSQL not installed).
 * Each caller gets a database of its own, dropped when the test ends.
 */

interface Cluster {
  url: string;
  stop(): void;
}

let own: Promise<Cluster | null> | null = null;
let whyNot = '';

async function server(): Promise<string | null> {
  if (process.env.CROPWALK_TEST_POSTGRES) return process.env.CROPWALK_TEST_POSTGRES;
  own ??= (async () => {
    if (!findPgBin()) {
      whyNot = 'PostgreSQL is not installed (apt-get install postgresql, or set CROPWALK_TEST_POSTGRES to an admin URL)';
      return null;
    }
    try {
      const c = (await startCluster()) as Cluster;
      // The server is this process's: it goes when the process does, also when tap stops it.
      process.once('exit', () => c.stop());
      for (const signal of ['SIGTERM', 'SIGINT'] as const)
        process.once(signal, () => {
          c.stop();
          process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
        });
      return c;
    } catch (err) {
      whyNot = `no PostgreSQL server could be started here: ${(err as Error).message}`;
      return null;
    }
  })();
  return (await own)?.url ?? null;
}

/** Why no server is to be had (for a skip message). */
export async function postgresMissing(): Promise<string | null> {
  return (await server()) ? null : whyNot;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<R>(url: string, fn: (c: pg.Client) => Promise<R>): Promise<R> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A new empty database; its URL. */
export async function createDatabase(prefix = 'cw'): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const base = await server();
  if (!base) throw new Error(whyNot);
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin(base, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`));
  let dropped = false;
  return {
    url: withDatabase(base, name),
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * A database for one test, dropped at its end; null (and the test skipped with the reason)
 * where no PostgreSQL can be had.
 */
export async function testDatabase(t: { skip(...args: any[]): unknown; teardown(fn: () => unknown): void }): Promise<string | null> {
  const missing = await postgresMissing();
  if (missing) {
    t.skip(missing);
    return null;
  }
  const db = await createDatabase();
  t.teardown(() => db.drop());
  return db.url;
}

/** Whether this run drives the API tests against PostgreSQL (the second pass of `npm test`). */
export function apiOnPostgres(): boolean {
  return process.env.CROPWALK_TEST_ENGINE === 'postgres';
}

/**
 * The SQLite connection under a server or an opened database, for a test that looks at
 * SQLite itself (pragmas, the file, prepared statements): such a test runs on SQLite only, and
 * says why where it is listed out of the PostgreSQL pass (scripts/test-postgres.mjs).
 */
export function sqliteOf(x: { engine: Engine }): SQLite.Database {
  if (x.engine.kind !== 'sqlite' || !x.engine.sqlite) throw new Error('this test reads SQLite itself and runs on SQLite only');
  return x.engine.sqlite;
}

/**
 * A test only PostgreSQL can run skips in the SQLite pass of `npm test` (scripts/test.mjs runs it
 * in the PostgreSQL pass); run on its own (`npx tap file`) it starts the server it needs.
 */
export function sqlitePassSkip(t: { skip(...args: any[]): unknown }): boolean {
  if (process.env.CROPWALK_TEST_PASS !== 'sqlite') return false;
  t.skip('PostgreSQL only: runs in the PostgreSQL pass of npm test');
  return true;
}

/**
 * Child rows without their parent, for every foreign key in PostgreSQL's catalog (which refuses
 * such a commit; a key dropped or never made would let one through). `query` runs one statement.
 */
export async function pgForeignKeyViolations(query: (text: string) => Promise<Record<string, unknown>[]>): Promise<unknown[]> {
  const fks = (await query(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent,
            array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS cols,
            array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS refs
       FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`,
  )) as { child: string; parent: string; cols: string[]; refs: string[] }[];
  if (fks.length === 0) throw new Error('no foreign key found in the PostgreSQL catalog');
  const out: unknown[] = [];
  for (const fk of fks) {
    const notNull = fk.cols.map((c) => `c.${c} IS NOT NULL`).join(' AND ');
    const join = fk.cols.map((c, i) => `p.${fk.refs[i]} = c.${c}`).join(' AND ');
    const cols = fk.cols.map((c) => `c.${c}`).join(', ');
    const rows = await query(
      `SELECT ${cols} FROM ${fk.child} c WHERE ${notNull} AND NOT EXISTS (SELECT 1 FROM ${fk.parent} p WHERE ${join}) LIMIT 3`,
    );
    for (const r of rows) out.push({ table: fk.child, parent: fk.parent, row: r });
  }
  return out;
}

/** Rows of one statement on a database by its URL (a test's look at a server it runs as a child process). */
export async function pgQuery(url: string, text: string): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}
