import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { sql, type Kysely, type KyselyPlugin, type Transaction } from 'kysely';
import type { Database, SyncedColumns } from './schema.js';
import { HybridLogicalClock } from './hlc.js';
import { systemClock, type Clock } from '../clock.js';
import { newId } from './ids.js';
import { hasFeed, remoteIds, takeOrgSeqs, type RemoteOrigin } from './feed.js';
import type { Engine, PostgresEngine, TransactionEngine } from './engine.js';
import { isRetryable, kyselyOn, LOCK_SPACE } from './postgres.js';
import { Unavailable } from '../errors.js';
import { insertRows } from './bulk.js';

/** Who made a change: a key, the appliance admin token, or the box itself (watcher, jobs). */
export interface Actor {
  keyId: string | null;
  label: string;
}

export const SYSTEM_ACTOR: Actor = { keyId: null, label: 'system' };
export const ADMIN_TOKEN_ACTOR: Actor = { keyId: null, label: 'admin-token' };

type AnyRow = SyncedColumns & Record<string, unknown>;
type Synced = SyncedColumns;

/**
 * The one write path. Every insert, update and delete of a synced record goes
 * through a Writer, which stamps the record and appends to the change log in
 * the same transaction: a crash leaves either both or neither.
 */
export interface Writer {
  readonly trx: Transaction<Database>;
  /** The engine under the transaction: SQLite's one connection, or this transaction's own PostgreSQL connection (COPY). */
  readonly engine: TransactionEngine;
  readonly actor: Actor;
  /** The instant of this transaction, ISO 8601 UTC. */
  readonly now: string;
  insert<T extends Synced>(
    table: string,
    values: Omit<T, keyof SyncedColumns> & Partial<Pick<SyncedColumns, 'id'>> & { organization_id: string },
  ): Promise<T>;
  /** Inserts many records of one table with multi-row statements, each with its change-log entry. */
  insertMany<T extends Synced>(
    table: string,
    values: (Omit<T, keyof SyncedColumns> & Partial<Pick<SyncedColumns, 'id'>> & { organization_id: string })[],
  ): Promise<T[]>;
  update<T extends Synced>(table: string, id: string, patch: Partial<Omit<T, keyof SyncedColumns>>): Promise<{ before: T; after: T }>;
  remove<T extends Synced>(table: string, id: string): Promise<T | undefined>;
  /** Deletes every row matching `column IN values`, leaving a tombstone for each. Returns how many. */
  removeWhereIn(table: string, column: string, values: readonly string[]): Promise<number>;
  /** A new version stamp (HLC), for a record written without insert/update (e.g. a climate reading's row). */
  stamp(): string;
  /**
   * Runs `fn` once this transaction has committed, never if it rolls back: for what lives outside
   * the database (a deleted walk's files, a job to start), so nothing outside runs ahead of its rows.
   */
  afterCommit(fn: () => Promise<void> | void): void;
  /** Logs a change to a record that is not a synced row (e.g. an import's summary). */
  log(entry: {
    organization_id: string | null;
    entity: string;
    entity_id: string;
    op: 'insert' | 'update' | 'delete';
    before?: unknown;
    after?: unknown;
    /** Sync only: the version the change was made with elsewhere (default: a new stamp). */
    version?: string;
  }): Promise<void>;
  /**
   * Logs many changes in their order with multi-row statements and one run of feed numbers per
   * organization (a sync batch's gathered writes, src/sync/batch.ts). Each entry carries the
   * origin and change id it was queued under (remoteIds), since `remote` has moved on since.
   */
  logMany(entries: (LogEntry & { origin: string | null; change_id: string | null })[]): Promise<void>;
  /** Sync only: set while a change received from another site is applied (src/db/feed.ts). */
  remote?: RemoteOrigin;
}

/** A change-log entry as Writer.log takes it. */
export type LogEntry = Parameters<Writer['log']>[0];

/** How a write transaction is run. */
export interface WriteOptions {
  /**
   * The organization the transaction writes under. On PostgreSQL its writers queue on a lock
   * taken before anything is read, so what the transaction checks (a name taken, the last admin
   * key) cannot change under it: one organization's writes are serial, as every write is on
   * SQLite, while other organizations' run beside them. A Writer that writes a row of an
   * organization not named here takes that organization's lock at its first write.
   */
  organization?: string;
  /**
   * Whether `fn` may be run again when PostgreSQL gives up on the transaction (a deadlock, a
   * serialization failure, a check overtaken by a concurrent commit); default true. False for
   * work that cannot be run twice (an import consuming a file as it reads): such a transaction
   * answers 503 `database_busy` instead.
   */
  retry?: boolean;
}

/** Runs of a transaction on PostgreSQL before it answers 503 `database_busy`. */
export const MAX_ATTEMPTS = 8;
/** PostgreSQL's channel that tells every process sharing the database that keys changed (src/auth/principal.ts). */
export const KEYS_CHANNEL = 'cropwalk_api_keys';

const CHUNK = 500;

const insideWrite = new AsyncLocalStorage<true>();
/**
 * On Node 20 an enabled AsyncLocalStorage hooks every promise in the process,
 * which roughly doubles what a promise costs on every request, reads included.
 * It is enabled only while a write is open and disabled when the last one ends
 * (disable() exits no context then, since none is open).
 */
let openWrites = 0;

/**
 * better-sqlite3 gives Kysely one connection: a query on the outer `db` issued
 * inside `store.write` waits for the transaction that is waiting for it, and the
 * request hangs. This plugin, on the `db` handed to request handlers, turns that
 * deadlock into an immediate error that says what to do.
 */
export const outsideWriteGuard: KyselyPlugin = {
  transformQuery(args) {
    if (insideWrite.getStore()) {
      throw new Error(
        'services.db was used inside store.write(): use w.trx for every query in the transaction (one SQLite connection would deadlock)',
      );
    }
    return args.node;
  },
  async transformResult(args) {
    return args.result;
  },
};

export class Store {
  constructor(
    readonly db: Kysely<Database>,
    readonly hlc: HybridLogicalClock,
    /** The service clock: a transaction's `now` (created_at, updated_at, the change log's `at`). */
    readonly clock: Clock = systemClock,
    readonly engine: Engine = { kind: 'sqlite', sqlite: undefined },
  ) {}

  private readonly listeners: ((tables: ReadonlySet<string>) => void)[] = [];
  private feed: boolean | undefined;

  /**
   * Called after every write transaction ends (committed or rolled back) with
   * the tables it touched: in-memory caches of stored rows drop what may have
   * changed. After the end, never before, so no reader can cache a state the
   * transaction had not settled yet.
   */
  afterWrite(listener: (tables: ReadonlySet<string>) => void): void {
    this.listeners.push(listener);
  }

  /** Runs `fn` in one transaction with a Writer bound to it. */
  async write<R>(actor: Actor, fn: (w: Writer) => Promise<R>, options: WriteOptions = {}): Promise<R> {
    if (this.engine.kind === 'postgres') return this.writePostgres(this.engine, actor, fn, options);
    const touched = new Set<string>();
    const committed: (() => Promise<void> | void)[] = [];
    const engine = this.engine;
    openWrites++;
    let result: R;
    try {
      result = await insideWrite.run(true, () =>
        this.db.transaction().execute((trx) => fn(this.writer(trx, engine, actor, touched, committed, null))),
      );
    } finally {
      if (--openWrites === 0) insideWrite.disable();
      if (touched.size) for (const l of this.listeners) l(touched);
    }
    for (const fn of committed) await fn();
    return result;
  }

  /**
   * PostgreSQL: the transaction takes a pooled connection of its own, at READ COMMITTED, with
   * the organization's lock (WriteOptions.organization) before anything else. What the database
   * gives up on (deadlock, serialization failure, a unique or foreign key check overtaken by a
   * concurrent commit) is run again from the start, a few times, after a short random pause;
   * past that, 503 `database_busy`, never a 500. Nothing of an attempt that rolled back is kept:
   * its afterCommit work is dropped with it.
   */
  private async writePostgres<R>(engine: PostgresEngine, actor: Actor, fn: (w: Writer) => Promise<R>, options: WriteOptions): Promise<R> {
    const attempts = options.retry === false ? 1 : MAX_ATTEMPTS;
    for (let attempt = 1; ; attempt++) {
      const touched = new Set<string>();
      const committed: (() => Promise<void> | void)[] = [];
      const locked = new Set<string>();
      const client = await engine.pool.connect().catch((err: Error) => {
        throw new Unavailable('database_unavailable', `The database cannot be reached (${err.message}); nothing was stored. Try again.`);
      });
      let result: R | undefined;
      let failure: unknown = null;
      try {
        result = await kyselyOn(client)
          .transaction()
          .execute(async (trx) => {
            if (options.organization) await lockOrganization(trx, options.organization, locked);
            const r = await fn(this.writer(trx, { ...engine, client }, actor, touched, committed, locked));
            // Other processes keep keys in memory too: this tells them, once it commits.
            if (touched.has('api_keys')) await sql`select pg_notify(${KEYS_CHANNEL}, '')`.execute(trx);
            return r;
          });
      } catch (err) {
        failure = err;
      } finally {
        client.release(failure !== null && connectionBroken(failure) ? (failure as Error) : undefined);
        if (touched.size) for (const l of this.listeners) l(touched);
      }
      if (failure === null) {
        for (const f of committed) await f();
        return result as R;
      }
      if (!isRetryable(failure)) throw failure;
      if (attempt >= attempts) {
        throw new Unavailable(
          'database_busy',
          'The database could not fit this write in beside the others at the same time; nothing was stored. Try again.',
        );
      }
      // Apart, so that the transactions that collided do not collide again at once.
      await sleep(Math.random() * 10 * attempt);
    }
  }

  private writer(
    trx: Transaction<Database>,
    engine: TransactionEngine,
    actor: Actor,
    touched: Set<string>,
    committed: (() => Promise<void> | void)[],
    /** PostgreSQL: the organizations whose lock this transaction holds; null on SQLite (one writer). */
    locked: Set<string> | null,
  ): Writer {
    const db = trx as unknown as Kysely<any>;
    const now = this.clock.iso();
    const clock = this.hlc;
    // Sync (src/db/feed.ts): whether the feed's counters exist, asked once per store.
    const feed = async () => (this.feed ??= await hasFeed(db));
    const lock = async (org: string | null | undefined): Promise<void> => {
      if (locked && org && !locked.has(org)) await lockOrganization(trx, org, locked);
    };
    /** The row as it is before a change; on PostgreSQL locked, so a writer outside this organization's lock waits for it. */
    const current = (table: string, id: string) =>
      db
        .selectFrom(table)
        .selectAll()
        .where('id', '=', id)
        .$if(locked !== null, (q) => q.forUpdate())
        .executeTakeFirst() as Promise<AnyRow | undefined>;
    /** A change-log row as every writer stamps it: who, when, and the version (the feed's columns are the caller's). */
    const logRow = (e: LogEntry) => ({
      organization_id: e.organization_id,
      entity: e.entity,
      entity_id: e.entity_id,
      op: e.op,
      actor_key_id: actor.keyId,
      actor: actor.label,
      before: e.before === undefined ? null : JSON.stringify(e.before),
      after: e.after === undefined ? null : JSON.stringify(e.after),
      version: e.version ?? clock.now(),
      at: now,
    });
    const log: Writer['log'] = async (e) => {
      await lock(e.organization_id);
      touched.add(e.entity);
      await db
        .insertInto('change_log')
        .values({
          ...logRow(e),
          // Sync (src/db/feed.ts): the organization's feed number, and where the change came from.
          ...((await feed())
            ? { org_seq: e.organization_id === null ? null : await takeOrgSeqs(db, e.organization_id, 1), ...remoteIds(writer.remote) }
            : {}),
        })
        .execute();
    };

    const logMany: Writer['logMany'] = async (entries) => {
      if (!entries.length) return;
      for (const org of new Set(entries.map((e) => e.organization_id))) await lock(org);
      const withFeed = await feed();
      const next = new Map<string, number>();
      for (const e of entries) {
        touched.add(e.entity);
        if (e.organization_id !== null) next.set(e.organization_id, (next.get(e.organization_id) ?? 0) + 1);
      }
      if (withFeed) for (const [org, n] of next) next.set(org, await takeOrgSeqs(db, org, n));
      const rows = entries.map((e) => {
        let orgSeq: number | null = null;
        if (e.organization_id !== null) {
          orgSeq = next.get(e.organization_id)!;
          next.set(e.organization_id, orgSeq + 1);
        }
        return { ...logRow(e), ...(withFeed ? { org_seq: orgSeq, origin: e.origin, change_id: e.change_id } : {}) };
      });
      await insertRows(db, 'change_log', rows);
    };

    const writer: Writer = {
      trx,
      engine,
      actor,
      now,
      log,
      logMany,
      stamp: () => clock.now(),
      afterCommit: (fn) => void committed.push(fn),
      async insert(table, values) {
        await lock(values.organization_id);
        const version = clock.now();
        const row = { ...values, id: values.id ?? newId(), created_at: now, updated_at: now, version } as AnyRow;
        await db.insertInto(table).values(row).execute();
        await log({ organization_id: row.organization_id, entity: table, entity_id: row.id, op: 'insert', after: row });
        return row as any;
      },
      async insertMany(table, values) {
        if (!values.length) return [];
        for (const org of new Set(values.map((v) => v.organization_id))) await lock(org);
        touched.add(table);
        const rows = values.map((v) => ({ ...v, id: v.id ?? newId(), created_at: now, updated_at: now, version: clock.now() }) as AnyRow);
        await insertRows(db, table, rows);
        // Sync (src/db/feed.ts): one run of feed numbers per organization for the whole batch.
        const withFeed = await feed();
        const next = new Map<string, number>();
        for (const row of rows) next.set(row.organization_id, (next.get(row.organization_id) ?? 0) + 1);
        if (withFeed) for (const [org, n] of next) next.set(org, await takeOrgSeqs(db, org, n));
        const orgSeq = (org: string) => {
          const n = next.get(org)!;
          next.set(org, n + 1);
          return n;
        };
        const entries = rows.map((row) => ({
          ...(withFeed ? { org_seq: orgSeq(row.organization_id), ...remoteIds(writer.remote) } : {}),
          organization_id: row.organization_id,
          entity: table,
          entity_id: row.id,
          op: 'insert',
          actor_key_id: actor.keyId,
          actor: actor.label,
          before: null,
          after: JSON.stringify(row),
          version: row.version,
          at: now,
        }));
        await insertRows(db, 'change_log', entries);
        return rows as any[];
      },
      async update(table, id, patch) {
        const before = await current(table, id);
        if (!before) throw new Error(`${table} ${id} vanished inside its transaction`);
        await lock(before.organization_id);
        const clean = Object.fromEntries(
          Object.entries(patch).filter(([k, v]) => v !== undefined && !['id', 'organization_id', 'created_at', 'version'].includes(k)),
        );
        // Past the version it replaces, whichever process or site stamped that one.
        const after = {
          ...before,
          ...clean,
          updated_at: now,
          version: HybridLogicalClock.isStamp(before.version) ? clock.receive(before.version) : clock.now(),
        } as AnyRow;
        await db
          .updateTable(table)
          .set({ ...clean, updated_at: after.updated_at, version: after.version })
          .where('id', '=', id)
          .execute();
        await log({ organization_id: before.organization_id, entity: table, entity_id: id, op: 'update', before, after });
        return { before: before as any, after: after as any };
      },
      async remove(table, id) {
        const before = await current(table, id);
        if (!before) return undefined;
        await lock(before.organization_id);
        await db.deleteFrom(table).where('id', '=', id).execute();
        await log({ organization_id: before.organization_id, entity: table, entity_id: id, op: 'delete', before });
        return before as any;
      },
      async removeWhereIn(table, column, values) {
        let removed = 0;
        for (let i = 0; i < values.length; i += CHUNK) {
          const part = values.slice(i, i + CHUNK);
          const rows = (await db
            .selectFrom(table)
            .selectAll()
            .where(column, 'in', part)
            .$if(locked !== null, (q) => q.forUpdate())
            .execute()) as AnyRow[];
          if (!rows.length) continue;
          for (const org of new Set(rows.map((r) => r.organization_id))) await lock(org);
          for (const before of rows) {
            await log({ organization_id: before.organization_id, entity: table, entity_id: before.id, op: 'delete', before });
          }
          await db.deleteFrom(table).where(column, 'in', part).execute();
          removed += rows.length;
        }
        return removed;
      },
    };
    return writer;
  }
}

/**
 * The lock an organization's writers queue on (PostgreSQL, until the transaction ends). Keyed by
 * a 32-bit hash of the id: two organizations that share a hash only wait for each other.
 */
async function lockOrganization(trx: Transaction<Database>, org: string, locked: Set<string>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE.organization}, hashtext(${org}))`.execute(trx);
  locked.add(org);
}

/** An error after which the connection cannot be handed to the next transaction. */
function connectionBroken(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) {
    const code = err.code ?? '';
    return code.startsWith('08') || code.startsWith('57P');
  }
  const message = (err as Error | null)?.message ?? '';
  return /Connection terminated|not queryable|ECONNRESET|EPIPE/i.test(message);
}
