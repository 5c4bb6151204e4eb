import { sql, type Kysely, type RawBuilder } from 'kysely';
import { engineKindOf } from './engine.js';

/**
 * Column types for a migration written once for both engines (Kysely's schema builder). Text
 * on PostgreSQL is COLLATE "C", so it compares and sorts byte by byte as SQLite's does: an HLC
 * version, an id, an ISO instant or a name orders the same on both (docs/postgres.md).
 */
export function ddl(db: Kysely<any>): { text: string | RawBuilder<unknown>; real: string; bigint: string; blob: string } {
  return engineKindOf(db) === 'postgres'
    ? { text: sql`text collate "C"`, real: 'double precision', bigint: 'bigint', blob: 'bytea' }
    : { text: 'text', real: 'real', bigint: 'integer', blob: 'blob' };
}

/** Runs PostgreSQL statements one after another (a migration under migrations/postgres/). */
export async function statements(db: Kysely<any>, ...texts: string[]): Promise<void> {
  for (const text of texts) await sql.raw(text).execute(db);
}

/** The synced columns of a PostgreSQL table, keyed by (id, organization_id): Citus distributes by the second (docs/citus.md). */
export const SYNCED_PG = `
  id text COLLATE "C" NOT NULL,
  organization_id text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  version text COLLATE "C" NOT NULL`;
