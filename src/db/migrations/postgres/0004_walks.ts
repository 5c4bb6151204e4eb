import type { Kysely } from 'kysely';
import { statements, SYNCED_PG } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// PostgreSQL's form of ../0004_walks.ts: a walk is a scoring job, its row the queue entry.
export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `CREATE TABLE walks (${SYNCED_PG},
       farm_id text COLLATE "C",
       greenhouse_id text COLLATE "C",
       row_id text COLLATE "C",
       cycle_id text COLLATE "C",
       week text COLLATE "C",
       source text COLLATE "C" NOT NULL CHECK (source IN ('observation','cycle_video','cycle_batch','example')),
       example_key text COLLATE "C",
       status text COLLATE "C" NOT NULL CHECK (status IN ('queued','running','done','failed')),
       progress double precision NOT NULL DEFAULT 0,
       mode text COLLATE "C" NOT NULL,
       options text COLLATE "C" NOT NULL,
       detector text COLLATE "C",
       error text COLLATE "C",
       idempotency_key text COLLATE "C",
       request_hash text COLLATE "C" NOT NULL,
       created_by_key_id text COLLATE "C",
       attempts integer NOT NULL DEFAULT 0,
       started_at text COLLATE "C",
       finished_at text COLLATE "C",
       count_green integer,
       count_turning integer,
       count_red integer,
       count_total integer,
       result text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       CONSTRAINT walks_org_fk FOREIGN KEY (organization_id) REFERENCES organizations (organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE INDEX walks_org ON walks (organization_id, id)`,
    `CREATE INDEX walks_cycle_week ON walks (cycle_id, week)`,
    // The runner's claim query walks this index: oldest queued first.
    `CREATE INDEX walks_status ON walks (status, id)`,
    // One walk per Idempotency-Key per organization, enforced by the database so two racing retries cannot both insert.
    `CREATE UNIQUE INDEX walks_idempotency ON walks (organization_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    `CREATE TABLE walk_clips (${SYNCED_PG},
       walk_id text COLLATE "C" NOT NULL,
       cycle_id text COLLATE "C",
       position integer NOT NULL,
       file_name text COLLATE "C" NOT NULL,
       original_name text COLLATE "C" NOT NULL,
       size_bytes bigint NOT NULL,
       sha256 text COLLATE "C" NOT NULL,
       kind text COLLATE "C" NOT NULL CHECK (kind IN ('image','video')),
       format text COLLATE "C" NOT NULL,
       width integer NOT NULL,
       height integer NOT NULL,
       duration_s double precision NOT NULL,
       status text COLLATE "C" NOT NULL CHECK (status IN ('queued','running','done','failed')),
       progress double precision NOT NULL DEFAULT 0,
       frames integer NOT NULL DEFAULT 0,
       error text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       CONSTRAINT walk_clips_walk_fk FOREIGN KEY (walk_id, organization_id) REFERENCES walks (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE UNIQUE INDEX walk_clips_walk ON walk_clips (walk_id, position, organization_id)`,
    `CREATE INDEX walk_clips_cycle ON walk_clips (cycle_id)`,
  );
}
