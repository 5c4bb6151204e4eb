import { sql, type Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// A walk's clips (up to 2 GiB each) and frames are removed a set number of days after it was
// scored, so a box that films every row every week does not fill its disk; the walk keeps its
// counts and result. These say when each went, so the API can tell a removed frame from a
// missing one and refuse to score again a walk whose clips are gone.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('walks').addColumn('clips_removed_at', 'text').execute();
  await db.schema.alterTable('walks').addColumn('frames_removed_at', 'text').execute();
  // The walks whose clips are still on disk, oldest first: what a sweep for room removes, and
  // what /api/health sums. Retention keeps them few, so both stay cheap however long the history.
  await sql`create index walks_clips_kept on walks (finished_at) where clips_removed_at is null`.execute(db);
}
