import type { Kysely } from 'kysely';
import { statements, SYNCED_PG } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// PostgreSQL's form of ../0003_climate.ts. The SQLite migration also made climate_readings and
// climate_import_effects, which 0005 replaced before any PostgreSQL database existed: here they
// are never made (postgres/0005 makes what replaced them).
export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `CREATE TABLE climate_imports (${SYNCED_PG},
       cycle_id text COLLATE "C" NOT NULL,
       greenhouse_id text COLLATE "C" NOT NULL,
       file_name text COLLATE "C" NOT NULL,
       content_hash text COLLATE "C" NOT NULL,
       size_bytes bigint NOT NULL,
       kind text COLLATE "C" NOT NULL CHECK (kind IN ('csv','file','ingest','watch')),
       actor text COLLATE "C" NOT NULL,
       rows_read bigint NOT NULL,
       readings_added bigint NOT NULL,
       readings_updated bigint NOT NULL,
       readings_skipped bigint NOT NULL,
       from_utc text COLLATE "C",
       to_utc text COLLATE "C",
       metrics text COLLATE "C" NOT NULL,
       status text COLLATE "C" NOT NULL CHECK (status IN ('done','failed','undone')),
       failure_reason text COLLATE "C",
       mapping text COLLATE "C",
       warnings text COLLATE "C" NOT NULL,
       undone_at text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       CONSTRAINT climate_imports_cycle_fk FOREIGN KEY (cycle_id, organization_id) REFERENCES cycles (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE INDEX climate_imports_cycle ON climate_imports (cycle_id, created_at)`,
    // The watcher asks "was this content already imported here?" for every file it sees.
    `CREATE INDEX climate_imports_hash ON climate_imports (cycle_id, content_hash)`,
    `CREATE TABLE climate_file_mappings (${SYNCED_PG},
       greenhouse_id text COLLATE "C" NOT NULL,
       mapping text COLLATE "C" NOT NULL,
       source_file_name text COLLATE "C" NOT NULL,
       PRIMARY KEY (id, organization_id),
       CONSTRAINT climate_file_mappings_greenhouse UNIQUE (greenhouse_id, organization_id),
       CONSTRAINT climate_file_mappings_greenhouse_fk FOREIGN KEY (greenhouse_id, organization_id) REFERENCES greenhouses (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
  );
}
