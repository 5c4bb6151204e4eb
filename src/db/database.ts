import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes, randomInt } from 'node:crypto';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type Driver,
  type Migration,
  type MigrationProvider,
} from 'kysely';
import type { Database } from './schema.js';
import { HybridLogicalClock } from './hlc.js';
import { systemClock, type Clock } from '../clock.js';
import { engineKindOf, engineOfUrl, type Engine, type EngineKind } from './engine.js';
import { createPool, ProcessLink, readerPool, redactUrl, underMigrationLock } from './postgres.js';

export type Db = Kysely<Database>;

export interface OpenedDatabase {
  db: Db;
  engine: Engine;
  /** Version stamps for this node, on the service clock. */
  hlc: HybridLogicalClock;
  /** The SQLite file, or the PostgreSQL database's URL without its password. */
  file: string;
  close(): Promise<void>;
}

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Migrations are the numbered files in db/migrations (`NNNN_name.ts`), applied
 * in order at start. They only go forward: none has a `down`, and a database
 * that has a migration this build lacks refuses to open.
 *
 * One list for both engines: a migration written with Kysely's schema builder runs on either.
 * Where PostgreSQL needs its own statements (types, COLLATE "C", keys that carry
 * organization_id for Citus), `migrations/postgres/NNNN_name.ts` stands in for the file of the
 * same name on PostgreSQL; SQLite never reads that folder.
 */
class FolderMigrationProvider implements MigrationProvider {
  constructor(private readonly engine: EngineKind) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    const files = readdirSync(MIGRATIONS_DIR).filter((f) => /^\d{4}_[a-z0-9_]+\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'));
    for (const file of files.sort()) {
      const own = path.join(MIGRATIONS_DIR, 'postgres', file);
      const chosen = this.engine === 'postgres' && existsSync(own) ? own : path.join(MIGRATIONS_DIR, file);
      const mod = (await import(pathToFileURL(chosen).href)) as Migration;
      out[file.replace(/\.(ts|js)$/, '')] = { up: mod.up };
    }
    return out;
  }
}

/** The names of the migrations this build has, in order (what a backup may hold at most). */
export function migrationNames(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => f.replace(/\.(ts|js)$/, ''))
    .sort();
}

/**
 * Applies the migrations not yet applied; with `upTo`, only as far as that one (tests of a later
 * migration build the database it starts from). On PostgreSQL under an advisory lock held from
 * before Kysely creates its own tables, so that processes starting at once migrate one after
 * another: the second finds nothing left to do.
 */
export async function migrate(db: Db, upTo?: string): Promise<string[]> {
  const engine = engineKindOf(db);
  const run = async (on: Db) => {
    const migrator = new Migrator({ db: on, provider: new FolderMigrationProvider(engine) });
    const { error, results } = upTo ? await migrator.migrateTo(upTo) : await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  return engine === 'postgres' ? underMigrationLock(db, run) : run(db);
}

/**
 * On SQLITE_FULL (a full disk), IOERR, BUSY or NOMEM, SQLite may roll a transaction back by
 * itself. Kysely then sends its own ROLLBACK, which fails with "cannot rollback - no transaction
 * is active" and is thrown in place of the error that mattered: a full disk read as an internal
 * error. This driver rolls back only a transaction that is still open, so the cause comes through.
 */
class CauseKeepingSqliteDialect extends SqliteDialect {
  constructor(private readonly sqlite: SQLite.Database) {
    super({ database: sqlite });
  }

  override createDriver(): Driver {
    const sqlite = this.sqlite;
    return new (class extends SqliteDriver {
      override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
        if (sqlite.inTransaction) await super.rollbackTransaction(connection);
      }
    })({ database: sqlite });
  }
}

export interface StorageOptions {
  /** postgres://... to store in PostgreSQL; absent: SQLite under dataDir. */
  databaseUrl?: string;
  /** PostgreSQL connections this process keeps at most. */
  poolMax?: number;
  /** Told when the process's own PostgreSQL connection drops or fails to come back. */
  onLinkError?: (err: Error) => void;
}

/** Opens the service's database: PostgreSQL when `databaseUrl` names one, else the SQLite file under `dataDir`. */
export async function openStorage(dataDir: string, options: StorageOptions = {}, clock: Clock = systemClock): Promise<OpenedDatabase> {
  return engineOfUrl(options.databaseUrl) === 'postgres'
    ? openPostgres(options.databaseUrl!, options, clock)
    : openDatabase(dataDir, undefined, clock);
}

export async function openDatabase(dataDir: string, fileName = 'cropwalk.sqlite', clock: Clock = systemClock): Promise<OpenedDatabase> {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, fileName);
  const sqlite = new SQLite(file);
  // WAL lets readers run beside the writer; FULL makes a committed transaction survive power loss.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new CauseKeepingSqliteDialect(sqlite) });
  await migrate(db);
  const hlc = await startClock(db, clock);
  return {
    db,
    engine: { kind: 'sqlite', sqlite },
    hlc,
    file,
    close: async () => {
      await db.destroy();
    },
  };
}

async function openPostgres(url: string, options: StorageOptions, clock: Clock): Promise<OpenedDatabase> {
  const pool = createPool(url, { max: options.poolMax });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: readerPool(pool) }) });
  // A number for this process among those that share the database: the walks it claims carry it.
  const link = new ProcessLink(url, randomInt(1, 2 ** 31 - 1), options.onLinkError);
  try {
    await migrate(db);
    const hlc = await startClock(db, clock);
    await link.start();
    const where = redactUrl(url);
    return {
      db,
      engine: { kind: 'postgres', pool, where, instance: link.instance, link },
      hlc,
      file: where,
      close: async () => {
        await link.close();
        await db.destroy();
      },
    };
  } catch (err) {
    await link.close();
    await db.destroy();
    throw err;
  }
}

/** The node id (made once per database) and a clock that continues after the highest stamp stored. */
async function startClock(db: Db, clock: Clock): Promise<HybridLogicalClock> {
  // Two processes opening a new PostgreSQL database at once: one id wins, both read it.
  await db
    .insertInto('meta')
    .values({ key: 'node_id', value: randomBytes(6).toString('hex') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const node = (await db.selectFrom('meta').select('value').where('key', '=', 'node_id').executeTakeFirstOrThrow()).value;
  const hlc = new HybridLogicalClock(node, () => clock.now());
  const last = await db
    .selectFrom('change_log')
    .select((eb) => eb.fn.max('version').as('v'))
    .executeTakeFirst();
  hlc.seed(last?.v as string | undefined);
  return hlc;
}

/** `select 1`: whether the database answers (the health check). */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
