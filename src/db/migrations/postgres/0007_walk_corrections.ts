import type { Kysely } from 'kysely';
import { statements, SYNCED_PG } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
// PostgreSQL's form of ../0007_walk_corrections.ts: corrections refer to their walk by (walk_id, organization_id).
export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `CREATE TABLE walk_corrections (${SYNCED_PG},
       walk_id text COLLATE "C" NOT NULL,
       cycle_id text COLLATE "C",
       kind text COLLATE "C" NOT NULL CHECK (kind IN ('ripeness','remove','add','counts')),
       track_id integer,
       ripeness text COLLATE "C" CHECK (ripeness IN ('green','turning','red')),
       frame_id integer,
       box text COLLATE "C",
       counts text COLLATE "C",
       note text COLLATE "C",
       created_by_key_id text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       CONSTRAINT walk_corrections_org_fk FOREIGN KEY (organization_id) REFERENCES organizations (organization_id) DEFERRABLE INITIALLY IMMEDIATE,
       CONSTRAINT walk_corrections_walk_fk FOREIGN KEY (walk_id, organization_id) REFERENCES walks (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE INDEX walk_corrections_walk ON walk_corrections (walk_id, id)`,
    `CREATE INDEX walk_corrections_cycle ON walk_corrections (cycle_id)`,
    `ALTER TABLE walks ADD COLUMN corrected_green integer`,
    `ALTER TABLE walks ADD COLUMN corrected_turning integer`,
    `ALTER TABLE walks ADD COLUMN corrected_red integer`,
    `ALTER TABLE walks ADD COLUMN corrected_total integer`,
  );
}
