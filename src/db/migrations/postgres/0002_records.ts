import type { Kysely } from 'kysely';
import { statements, SYNCED_PG } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// PostgreSQL's form of ../0002_records.ts: keys and unique constraints carry organization_id,
// and each record refers to its crop cycle by (cycle_id, organization_id) (docs/citus.md).
const UNDER_CYCLE = `${SYNCED_PG},
  farm_id text COLLATE "C" NOT NULL,
  greenhouse_id text COLLATE "C" NOT NULL,
  row_id text COLLATE "C" NOT NULL,
  cycle_id text COLLATE "C" NOT NULL`;
const cycleFk = (table: string) =>
  `CONSTRAINT ${table}_cycle_fk FOREIGN KEY (cycle_id, organization_id) REFERENCES cycles (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE`;

export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `CREATE TABLE harvests (${UNDER_CYCLE},
       week text COLLATE "C" NOT NULL,
       kg double precision NOT NULL CHECK (kg >= 0),
       note text COLLATE "C",
       harvested_on text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       ${cycleFk('harvests')}
     )`,
    `CREATE INDEX harvests_cycle_week ON harvests (cycle_id, week, id)`,
    `CREATE TABLE irrigation_entries (${UNDER_CYCLE},
       at text COLLATE "C" NOT NULL,
       volume_l double precision,
       drain_l double precision,
       ec_in double precision,
       ec_drain double precision,
       ph_in double precision,
       ph_drain double precision,
       duration_min double precision,
       note text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       ${cycleFk('irrigation_entries')},
       -- The last-measurement rule is checked in the domain with a clear 422; this is the backstop.
       CONSTRAINT irrigation_has_measurement CHECK (coalesce(volume_l, drain_l, ec_in, ec_drain, ph_in, ph_drain, duration_min) IS NOT NULL)
     )`,
    `CREATE INDEX irrigation_cycle_at ON irrigation_entries (cycle_id, at, id)`,
    `CREATE TABLE fruit_masses (${UNDER_CYCLE},
       week text COLLATE "C" NOT NULL,
       green_g double precision NOT NULL,
       turning_g double precision NOT NULL,
       red_g double precision NOT NULL,
       PRIMARY KEY (id, organization_id),
       ${cycleFk('fruit_masses')},
       CONSTRAINT fruit_masses_cycle_week UNIQUE (cycle_id, week, organization_id)
     )`,
    `CREATE TABLE truss_counts (${UNDER_CYCLE},
       counted_on text COLLATE "C" NOT NULL,
       PRIMARY KEY (id, organization_id),
       ${cycleFk('truss_counts')},
       CONSTRAINT truss_counts_cycle_date UNIQUE (cycle_id, counted_on, organization_id)
     )`,
    `CREATE TABLE truss_count_rows (${UNDER_CYCLE},
       count_id text COLLATE "C" NOT NULL,
       counted_on text COLLATE "C" NOT NULL,
       position integer NOT NULL,
       plant text COLLATE "C" NOT NULL,
       truss integer NOT NULL,
       fruits integer NOT NULL,
       flowers integer,
       PRIMARY KEY (id, organization_id),
       ${cycleFk('truss_count_rows')},
       CONSTRAINT truss_count_rows_count_fk FOREIGN KEY (count_id, organization_id) REFERENCES truss_counts (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE,
       CONSTRAINT truss_count_rows_unique UNIQUE (count_id, plant, truss, organization_id)
     )`,
    `CREATE INDEX truss_count_rows_cycle ON truss_count_rows (cycle_id)`,
    `CREATE TABLE week_notes (${UNDER_CYCLE},
       week text COLLATE "C" NOT NULL,
       body text COLLATE "C" NOT NULL,
       PRIMARY KEY (id, organization_id),
       ${cycleFk('week_notes')},
       CONSTRAINT week_notes_cycle_week UNIQUE (cycle_id, week, organization_id)
     )`,
  );
}
