import type { Kysely } from 'kysely';
import { statements } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// PostgreSQL's form of ../0008_appliance.ts: the appliance's own state. Both tables are local to
// the database's coordinator on Citus (src/db/citus.ts LOCAL_TABLES). scale_assignments has no
// foreign key to cycles here (cycles are keyed by (id, organization_id) on PostgreSQL, and a
// local table may not refer to a distributed one); what SQLite's ON DELETE SET NULL does, a
// trigger on cycles does: a deleted crop cycle leaves no scale recording into it.
export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `CREATE TABLE schedule_state (
       schedule text COLLATE "C" NOT NULL,
       target text COLLATE "C" NOT NULL,
       anchor_at text COLLATE "C" NOT NULL,
       last_started_at text COLLATE "C",
       last_finished_at text COLLATE "C",
       last_outcome text COLLATE "C",
       last_duration_ms bigint,
       last_error text COLLATE "C",
       last_result text COLLATE "C",
       CONSTRAINT schedule_state_pk PRIMARY KEY (schedule, target)
     )`,
    `CREATE TABLE scale_assignments (
       port text COLLATE "C" PRIMARY KEY,
       cycle_id text COLLATE "C",
       assigned_at text COLLATE "C" NOT NULL
     )`,
    `CREATE FUNCTION scale_assignments_cycle_gone() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       UPDATE scale_assignments SET cycle_id = NULL WHERE cycle_id = OLD.id;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER scale_assignments_cycle_gone AFTER DELETE ON cycles
       FOR EACH ROW EXECUTE FUNCTION scale_assignments_cycle_gone()`,
  );
}
