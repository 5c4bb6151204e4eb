import type { Kysely } from 'kysely';
import { statements } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
// PostgreSQL's form of ../0006_walk_media_removal.ts (text COLLATE "C").
export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `ALTER TABLE walks ADD COLUMN clips_removed_at text COLLATE "C"`,
    `ALTER TABLE walks ADD COLUMN frames_removed_at text COLLATE "C"`,
    `CREATE INDEX walks_clips_kept ON walks (finished_at) WHERE clips_removed_at IS NULL`,
  );
}
