import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely, KyselyPlugin, Transaction } from 'kysely';
import type { Database, SyncedColumns } from './schema.js';
import type { HybridLogicalClock } from './hlc.js';
import { systemClock, type Clock } from '../clock.js';
import { newId } from './ids.js';
import { hasFeed, remoteIds, takeOrgSeqs, type RemoteOrigin } from './feed.js';

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
  /** Sync only: set while a change received from another site is applied (src/db/feed.ts). */
  remote?: RemoteOrigin;
}

const CHUNK = 500;
/** SQLite allows 32,766 bound values per statement; multi-row inserts stay under it. */
const MAX_BOUND = 30_000;

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
  async write<R>(actor: Actor, fn: (w: Writer) => Promise<R>): Promise<R> {
    const touched = new Set<string>();
    const committed: (() => Promise<void> | void)[] = [];
    openWrites++;
    let result: R;
    try {
      result = await insideWrite.run(true, () => this.db.transaction().execute((trx) => fn(this.writer(trx, actor, touched, committed))));
    } finally {
      if (--openWrites === 0) insideWrite.disable();
      if (touched.size) for (const l of this.listeners) l(touched);
    }
    for (const fn of committed) await fn();
    return result;
  }

  private writer(trx: Transaction<Database>, actor: Actor, touched: Set<string>, committed: (() => Promise<void> | void)[]): Writer {
    const db = trx as unknown as Kysely<any>;
    const now = this.clock.iso();
    const clock = this.hlc;
    // Sync (src/db/feed.ts): whether the feed's counters exist, asked once per store.
    const feed = async () => (this.feed ??= await hasFeed(db));
    const log: Writer['log'] = async (e) => {
      touched.add(e.entity);
      await db
        .insertInto('change_log')
        .values({
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
          // Sync (src/db/feed.ts): the organization's feed number, and where the change came from.
          ...((await feed())
            ? { org_seq: e.organization_id === null ? null : await takeOrgSeqs(db, e.organization_id, 1), ...remoteIds(writer.remote) }
            : {}),
        })
        .execute();
    };

    const writer: Writer = {
      trx,
      actor,
      now,
      log,
      stamp: () => clock.now(),
      afterCommit: (fn) => void committed.push(fn),
      async insert(table, values) {
        const version = clock.now();
        const row = { ...values, id: values.id ?? newId(), created_at: now, updated_at: now, version } as AnyRow;
        await db.insertInto(table).values(row).execute();
        await log({ organization_id: row.organization_id, entity: table, entity_id: row.id, op: 'insert', after: row });
        return row as any;
      },
      async insertMany(table, values) {
        if (!values.length) return [];
        touched.add(table);
        const rows = values.map((v) => ({ ...v, id: v.id ?? newId(), created_at: now, updated_at: now, version: clock.now() }) as AnyRow);
        const width = Object.keys(rows[0]!).length;
        const per = Math.max(1, Math.floor(MAX_BOUND / width));
        for (let i = 0; i < rows.length; i += per)
          await db
            .insertInto(table)
            .values(rows.slice(i, i + per))
            .execute();
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
        const logPer = Math.floor(MAX_BOUND / 13);
        for (let i = 0; i < entries.length; i += logPer)
          await db
            .insertInto('change_log')
            .values(entries.slice(i, i + logPer))
            .execute();
        return rows as any[];
      },
      async update(table, id, patch) {
        const before = (await db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst()) as AnyRow | undefined;
        if (!before) throw new Error(`${table} ${id} vanished inside its transaction`);
        const clean = Object.fromEntries(
          Object.entries(patch).filter(([k, v]) => v !== undefined && !['id', 'organization_id', 'created_at', 'version'].includes(k)),
        );
        const after = { ...before, ...clean, updated_at: now, version: clock.now() } as AnyRow;
        await db
          .updateTable(table)
          .set({ ...clean, updated_at: after.updated_at, version: after.version })
          .where('id', '=', id)
          .execute();
        await log({ organization_id: before.organization_id, entity: table, entity_id: id, op: 'update', before, after });
        return { before: before as any, after: after as any };
      },
      async remove(table, id) {
        const before = (await db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst()) as AnyRow | undefined;
        if (!before) return undefined;
        await db.deleteFrom(table).where('id', '=', id).execute();
        await log({ organization_id: before.organization_id, entity: table, entity_id: id, op: 'delete', before });
        return before as any;
      },
      async removeWhereIn(table, column, values) {
        let removed = 0;
        for (let i = 0; i < values.length; i += CHUNK) {
          const part = values.slice(i, i + CHUNK);
          const rows = (await db.selectFrom(table).selectAll().where(column, 'in', part).execute()) as AnyRow[];
          if (!rows.length) continue;
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
