import type { Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// PostgreSQL only (postgres/0013_climate_undo_storage.ts): how the server stores an import's undo
// blobs. SQLite stores a blob as it is given and has no such setting, so here there is nothing to do.
export async function up(_db: Kysely<any>): Promise<void> {}
