import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import { PostgresAdapter, type Kysely } from 'kysely';
import { exclusively, type ProcessLink } from './postgres.js';

/**
 * The two databases the service runs on, and the one place that says what differs between
 * them (docs/postgres.md). A box runs on one SQLite file (DATA_DIR); an upstream may run on
 * PostgreSQL (DATABASE_URL=postgres://...). Repositories write Kysely builder calls that
 * compile for both; what cannot be said the same way on both is asked of the engine here:
 *
 * - SQLite: better-sqlite3 gives one connection and synchronous statements; a write
 *   transaction is the only writer. The climate import engine writes through prepared
 *   multi-row statements on that connection.
 * - PostgreSQL: a pool of connections, several writers at once. Each write transaction takes
 *   a connection of its own (`Writer.engine.client`, where COPY runs), an organization's
 *   writers queue on its advisory lock, and a transaction the database gives up on is run
 *   again (src/db/store.ts).
 */
export type Engine = SqliteEngine | PostgresEngine;

export interface SqliteEngine {
  readonly kind: 'sqlite';
  /** The one connection (undefined for a Store built by a test over a bare Kysely). */
  readonly sqlite: SQLite.Database | undefined;
}

export interface PostgresEngine {
  readonly kind: 'postgres';
  readonly pool: pg.Pool;
  /** DATABASE_URL without its password. */
  readonly where: string;
  /** This process's number among those sharing the database (walk claims, src/walks/jobs/commands.ts). */
  readonly instance: number;
  /** This process's own connection: its liveness lock and what other processes announce. */
  readonly link: ProcessLink;
}

/** What a write transaction has of its engine: the SQLite connection, or its own PostgreSQL connection. */
export type TransactionEngine = SqliteEngine | (PostgresEngine & { readonly client: pg.PoolClient });

export type EngineKind = Engine['kind'];

/** The engine a DATABASE_URL names: PostgreSQL for postgres:// and postgresql://, else none (SQLite under DATA_DIR). */
export function engineOfUrl(url: string | undefined): EngineKind {
  if (!url) return 'sqlite';
  if (/^postgres(ql)?:\/\//i.test(url)) return 'postgres';
  throw new Error(
    `DATABASE_URL must be a postgres:// URL (without it the service stores in SQLite under DATA_DIR), got ${url.split(':')[0]}:...`,
  );
}

/**
 * Columns that only PostgreSQL's tables carry: the climate storage's organization_id, which
 * Citus distributes by (docs/citus.md). SQLite's climate tables are keyed by small integers
 * alone (migration 0005) and stay so.
 */
export function pgOnlyOrganization(engine: Engine | TransactionEngine, organizationId: string): { organization_id?: string } {
  return engine.kind === 'postgres' ? { organization_id: organizationId } : {};
}

/** The engine a Kysely instance talks to, from its dialect's adapter (migrations, tests). */
export function engineKindOf(db: Kysely<any>): EngineKind {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * A scheduled job (a sweep each hour): on SQLite one process runs it; on PostgreSQL, where
 * several processes share the database, the one that takes the job's advisory lock runs this
 * round and the others skip it (undefined).
 */
export function scheduled<R>(engine: Engine, name: string, fn: () => Promise<R>): Promise<R | undefined> {
  return engine.kind === 'postgres' ? exclusively(engine.pool, name, fn) : fn();
}

/**
 * The columns of a key as a table has it on this engine: PostgreSQL's tables carry
 * organization_id in every key (Citus, docs/citus.md) where SQLite's were made without it
 * (sync's tables, migration 0010). For `ON CONFLICT (...)`, which names the key exactly.
 */
export function orgKey<C extends string>(db: Kysely<any>, columns: C[]): C[] {
  return engineKindOf(db) === 'postgres' ? [...columns, 'organization_id' as C] : columns;
}
