import type { Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// Which process is scoring a running walk: several service processes may share one PostgreSQL
// database, and a process that starts must put back in the queue only the walks whose process
// died, not those another live process is scoring (src/walks/jobs/commands.ts,
// docs/postgres.md). On SQLite one process runs, and the column stays as the claim left it.
// One migration for both engines: an integer column reads the same on each.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('walks').addColumn('claimed_by', 'integer').execute();
}
