import { sql, type Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// Sync asks, for every record a pushed batch brings that is not held here, whether it was deleted
// here (src/sync/kinds/rows.ts tombstones). Through change_log_entity that read visited every
// change of the record's kind whenever the planner had no statistics of the change log yet (a new
// upstream filling fast: 37 ms for 350 ids at 25,000 harvests), and every change of each id when
// it had. The tombstones are few: their own index answers from them alone. Non-unique, so it
// needs no organization_id for Citus (docs/citus.md); the same statement on both engines.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX change_log_tombstones ON change_log (entity, entity_id) WHERE op = 'delete' AND "after" IS NULL`.execute(db);
}
