import type { Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// The appliance's own state, local to the box (not synced): what its schedules last did
// (src/schedules/tables.ts) and which crop cycle each scale records into (src/scales/tables.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('schedule_state')
    .addColumn('schedule', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('anchor_at', 'text', (c) => c.notNull())
    .addColumn('last_started_at', 'text')
    .addColumn('last_finished_at', 'text')
    .addColumn('last_outcome', 'text')
    .addColumn('last_duration_ms', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_result', 'text')
    .addPrimaryKeyConstraint('schedule_state_pk', ['schedule', 'target'])
    .execute();
  await db.schema
    .createTable('scale_assignments')
    .addColumn('port', 'text', (c) => c.primaryKey())
    .addColumn('cycle_id', 'text', (c) => c.references('cycles.id').onDelete('set null'))
    .addColumn('assigned_at', 'text', (c) => c.notNull())
    .execute();
}
