import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Kysely, PostgresDialect, sql, type KyselyPlugin } from 'kysely';
import type { Database } from './schema.js';
import { Unavailable } from '../errors.js';

/**
 * PostgreSQL underneath the service (DATABASE_URL=postgres://...): the pool, how values come
 * back, one Kysely per pooled connection (so a transaction can also reach its own connection,
 * for COPY), which errors are worth running a transaction again for, and the advisory locks.
 * The rest of the code meets PostgreSQL only through src/db/engine.ts.
 */

const INT8 = 20;
const NUMERIC = 1700;

/**
 * `pg` answers BIGINT (count(*), sum of integers, epoch milliseconds) and NUMERIC as strings, so
 * that no value loses precision. Every such value the service stores or counts fits a double
 * exactly (epoch ms, byte sizes, counts), so they come back as numbers, as SQLite answers them;
 * one that would not fit is an error rather than a silently rounded number.
 */
function int8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`a BIGINT from PostgreSQL (${text}) does not fit a JavaScript number exactly`);
  return n;
}

export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8) return int8;
    if (oid === NUMERIC) return Number;
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PoolOptions {
  /** Connections this process keeps at most (PG_POOL_MAX). */
  max?: number;
}

export function createPool(url: string, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    types: PG_TYPES,
    application_name: 'cropwalk',
    // A connection that cannot be had within this is a database in trouble, not a request to hold.
    connectionTimeoutMillis: 10_000,
  });
  // An idle pooled connection that the server closes (a restart, a terminated backend) emits
  // 'error' on the pool; without a listener that would end the process. The pool drops it and
  // opens another on the next request.
  pool.on('error', () => undefined);
  // A connection closed by the server while a request holds it between statements emits 'error'
  // on the client, where the pool listens only while it is idle: the same end of the process. The
  // request's next statement fails with the reason, and release(err) drops the connection.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * The pool as Kysely's reads see it: a connection that cannot be had (the pool's wait over, every
 * connection busy or the server not answering; the server refusing) is a 503 that says so, as a
 * write's is in Store.write, not a 500.
 */
export function readerPool(pool: pg.Pool): { connect(): Promise<pg.PoolClient>; end(): Promise<void> } {
  return {
    connect: () =>
      pool.connect().catch((err: Error) => {
        throw new Unavailable('database_unavailable', `The database cannot be reached (${err.message}); nothing was changed. Try again.`);
      }),
    end: () => pool.end(),
  };
}

/** The Kysely on one pooled connection: the pool's client, never released by Kysely itself. */
const perClient = new WeakMap<pg.PoolClient, Kysely<Database>>();

export function kyselyOn(client: pg.PoolClient, plugins: KyselyPlugin[] = []): Kysely<Database> {
  let db = perClient.get(client);
  if (!db) {
    const held = {
      query: (text: string, values: unknown[]) => client.query(text, values),
      // The transaction's owner (Store.write) releases the client once it is over.
      release: () => undefined,
    };
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: { connect: async () => held as never, end: async () => undefined } }),
      plugins,
    });
    perClient.set(client, db);
  }
  return db;
}

/**
 * SQLSTATEs after which the same transaction, run again, can succeed:
 * - 40001 serialization_failure, 40P01 deadlock_detected: the database chose this transaction
 *   to give way;
 * - 23505 unique_violation, 23503 foreign_key_violation: a check the code made inside the
 *   transaction was overtaken by a concurrent commit outside the organization lock (two
 *   organizations made with one id, a parent deleted by a cascade). Run again, the check sees
 *   the committed row and answers as it would have on SQLite (409, 404).
 */
const RETRYABLE = new Set(['40001', '40P01', '23505', '23503']);

export function isRetryable(err: unknown): boolean {
  return RETRYABLE.has((err as { code?: unknown } | null)?.code as string);
}

/** Keys of the advisory locks the service takes (pg_advisory_lock's first int4). */
export const LOCK_SPACE = {
  /** Migrations at start: one process migrates, the others wait and find nothing left to do. */
  migrate: 0x63770001,
  /** An organization's writers (Store.write), by a hash of the organization id. */
  organization: 0x63770002,
  /** A process alive: held by each process for its life, by its instance number (walk claims). */
  process: 0x63770003,
  /** A scheduled job: whoever holds it runs this round (src/db/engine.ts, `exclusively`). */
  schedule: 0x63770004,
} as const;

/** Runs `fn` on one connection holding the migration lock, so processes starting at once migrate one after another. */
export async function underMigrationLock<R>(db: Kysely<Database>, fn: (conn: Kysely<Database>) => Promise<R>): Promise<R> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${LOCK_SPACE.migrate}, 0)`.execute(conn);
    try {
      return await fn(conn);
    } finally {
      await sql`select pg_advisory_unlock(${LOCK_SPACE.migrate}, 0)`.execute(conn);
    }
  });
}

/** Only the scheme and where, never the password, for logs and /api/health. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable)';
  }
}

/**
 * A connection of this process's own beside the pool, for as long as the process runs:
 * - it holds the process's advisory lock (LOCK_SPACE.process, `instance`), which tells the other
 *   processes sharing the database that this one is alive: a running walk whose claimer's lock
 *   can be taken was left by a process that died (src/walks/jobs/commands.ts);
 * - it LISTENs for what other processes announce (keys changed: src/auth/principal.ts).
 * When it drops, `onState(false)` says so (caches stop trusting what they hold) and it connects
 * again, a little later each time, until `close()`.
 */
export class ProcessLink {
  private client: pg.Client | null = null;
  private closed = false;
  private retryMs = 250;
  private timer: NodeJS.Timeout | null = null;
  private readonly channels = new Map<string, (() => void)[]>();
  private readonly stateListeners: ((up: boolean) => void)[] = [];

  constructor(
    private readonly url: string,
    readonly instance: number,
    private readonly onError: (err: Error) => void = () => undefined,
  ) {}

  get up(): boolean {
    return this.client !== null;
  }

  subscribe(channel: string, fn: () => void): void {
    const list = this.channels.get(channel) ?? [];
    list.push(fn);
    this.channels.set(channel, list);
    if (this.client) void this.client.query(`LISTEN ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
  }

  onState(fn: (up: boolean) => void): void {
    this.stateListeners.push(fn);
  }

  /** Connects once; the caller learns of a failure at start (a wrong URL is not retried in silence). */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, types: PG_TYPES, application_name: 'cropwalk-link' });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the link connection ended')));
    client.on('notification', (n) => {
      for (const fn of this.channels.get(n.channel) ?? []) fn();
    });
    await client.connect();
    try {
      await client.query('select pg_advisory_lock($1, $2)', [LOCK_SPACE.process, this.instance]);
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = 250;
    for (const fn of this.stateListeners) fn(true);
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.client !== client) return;
    this.client = null;
    for (const fn of this.stateListeners) fn(false);
    if (this.closed) return;
    this.onError(err);
    client.end().catch(() => undefined);
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect().catch((err: Error) => {
        this.onError(err);
        this.retryMs = Math.min(this.retryMs * 2, 30_000);
        this.schedule();
      });
    }, this.retryMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }
}

/**
 * Rows into a table by COPY ... FROM STDIN on the transaction's own connection: the bulk path
 * (climate imports). `data` is COPY's text format (tab between values, a newline after each row,
 * `\N` for null; the caller writes only numbers and plain ids, which need no escaping) or, with
 * `format` 'binary', its binary format, header and trailer included.
 */
export async function copyInto(
  client: pg.PoolClient,
  table: string,
  columns: readonly string[],
  data: string | Buffer,
  format: 'text' | 'binary' = 'text',
): Promise<void> {
  if (!data.length) return;
  const names = columns.map((c) => pg.escapeIdentifier(c)).join(', ');
  const stream = client.query(
    copyFrom(`COPY ${pg.escapeIdentifier(table)} (${names}) FROM STDIN${format === 'binary' ? ' (FORMAT binary)' : ''}`),
  );
  await pipeline(Readable.from([data]), stream);
}

/**
 * Runs `fn` in this process only if no other process sharing the database runs the job of that
 * name now; otherwise skips it and answers undefined (the process that holds it does this round).
 * A session advisory lock on a pooled connection held for the run: released when it ends, or by
 * the server when the process dies.
 */
export async function exclusively<R>(pool: pg.Pool, name: string, fn: () => Promise<R>): Promise<R | undefined> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const got = await client.query<{ got: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as got', [LOCK_SPACE.schedule, name]);
    if (!got.rows[0]!.got) return undefined;
    try {
      return await fn();
    } finally {
      await client.query('select pg_advisory_unlock($1, hashtext($2))', [LOCK_SPACE.schedule, name]).catch((err: Error) => {
        // A lock that cannot be let go must not stay with a pooled connection.
        broken = err;
      });
    }
  } finally {
    client.release(broken);
  }
}
