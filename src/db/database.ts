import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type Migration,
  type MigrationProvider,
} from 'kysely';
import type { Database } from './schema.js';
import { HybridLogicalClock } from './hlc.js';
import { systemClock, type Clock } from '../clock.js';

export type Db = Kysely<Database>;

export interface OpenedDatabase {
  db: Db;
  sqlite: SQLite.Database;
  /** Version stamps for this node, on the service clock. */
  hlc: HybridLogicalClock;
  file: string;
  close(): Promise<void>;
}

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Migrations are the numbered files in db/migrations (`NNNN_name.ts`), applied
 * in order at start. They only go forward: none has a `down`, and a database
 * that has a migration this build lacks refuses to open.
 */
class FolderMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    const files = readdirSync(MIGRATIONS_DIR).filter((f) => /^\d{4}_[a-z0-9_]+\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'));
    for (const file of files.sort()) {
      const mod = (await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href)) as Migration;
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

/** Applies the migrations not yet applied; with `upTo`, only as far as that one (tests of a later migration build the database it starts from). */
export async function migrate(db: Db, upTo?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new FolderMigrationProvider() });
  const { error, results } = upTo ? await migrator.migrateTo(upTo) : await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
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

  let node = (await db.selectFrom('meta').select('value').where('key', '=', 'node_id').executeTakeFirst())?.value;
  if (!node) {
    node = randomBytes(6).toString('hex');
    await db.insertInto('meta').values({ key: 'node_id', value: node }).execute();
  }
  const hlc = new HybridLogicalClock(node, () => clock.now());
  const last = await db
    .selectFrom('change_log')
    .select((eb) => eb.fn.max('version').as('v'))
    .executeTakeFirst();
  hlc.seed(last?.v as string | undefined);

  return {
    db,
    sqlite,
    hlc,
    file,
    close: async () => {
      await db.destroy();
    },
  };
}
