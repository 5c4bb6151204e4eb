import type { Kysely } from 'kysely';
import { statements, SYNCED_PG } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// PostgreSQL's form of ../0001_registry.ts (docs/postgres.md). Every table that belongs to an
// organization is keyed by (id, organization_id), and refers to its parent by
// (parent_id, organization_id): Citus distributes them by organization_id and keeps an
// organization's rows together (docs/citus.md; test/db/postgres-schema.test.ts holds it to that).
// Text is COLLATE "C": ids, versions (HLC) and instants compare byte by byte, as on SQLite.
export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `CREATE TABLE meta (
       key text COLLATE "C" PRIMARY KEY,
       value text COLLATE "C" NOT NULL
     )`,
    `CREATE TABLE organizations (${SYNCED_PG},
       name text COLLATE "C" NOT NULL,
       PRIMARY KEY (id, organization_id),
       -- What the other tables refer to: an organization's own row carries its id twice.
       CONSTRAINT organizations_organization UNIQUE (organization_id)
     )`,
    `CREATE TABLE api_keys (${SYNCED_PG},
       name text COLLATE "C" NOT NULL,
       role text COLLATE "C" NOT NULL CHECK (role IN ('admin','member')),
       lookup text COLLATE "C" NOT NULL,
       secret_hash text COLLATE "C" NOT NULL,
       display text COLLATE "C" NOT NULL,
       revoked_at text COLLATE "C",
       last_used_at text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       CONSTRAINT api_keys_lookup UNIQUE (lookup, organization_id),
       CONSTRAINT api_keys_org_fk FOREIGN KEY (organization_id) REFERENCES organizations (organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    // A presented key is found by its lookup part alone (src/auth/principal.ts).
    `CREATE INDEX api_keys_by_lookup ON api_keys (lookup)`,
    `CREATE INDEX api_keys_org ON api_keys (organization_id)`,
    `CREATE TABLE farms (${SYNCED_PG},
       name text COLLATE "C" NOT NULL,
       location text COLLATE "C",
       notes text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       CONSTRAINT farms_org_fk FOREIGN KEY (organization_id) REFERENCES organizations (organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE INDEX farms_org ON farms (organization_id)`,
    `CREATE TABLE greenhouses (${SYNCED_PG},
       farm_id text COLLATE "C" NOT NULL,
       name text COLLATE "C" NOT NULL,
       time_zone text COLLATE "C" NOT NULL,
       latitude double precision,
       longitude double precision,
       area_m2 double precision,
       notes text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       CONSTRAINT greenhouses_farm_fk FOREIGN KEY (farm_id, organization_id) REFERENCES farms (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE INDEX greenhouses_farm ON greenhouses (farm_id)`,
    `CREATE INDEX greenhouses_org ON greenhouses (organization_id)`,
    `CREATE TABLE rows (${SYNCED_PG},
       farm_id text COLLATE "C" NOT NULL,
       greenhouse_id text COLLATE "C" NOT NULL,
       name text COLLATE "C" NOT NULL,
       length_m double precision,
       plant_count integer,
       notes text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       CONSTRAINT rows_greenhouse_fk FOREIGN KEY (greenhouse_id, organization_id) REFERENCES greenhouses (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE INDEX rows_greenhouse ON rows (greenhouse_id)`,
    `CREATE INDEX rows_org ON rows (organization_id)`,
    `CREATE TABLE cycles (${SYNCED_PG},
       farm_id text COLLATE "C" NOT NULL,
       greenhouse_id text COLLATE "C" NOT NULL,
       row_id text COLLATE "C" NOT NULL,
       name text COLLATE "C" NOT NULL,
       crop text COLLATE "C",
       variety text COLLATE "C",
       started_on text COLLATE "C" NOT NULL,
       ended_on text COLLATE "C",
       plants_per_m2 double precision,
       stems_per_m2 double precision,
       notes text COLLATE "C",
       PRIMARY KEY (id, organization_id),
       CONSTRAINT cycles_row_fk FOREIGN KEY (row_id, organization_id) REFERENCES rows (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE INDEX cycles_row ON cycles (row_id)`,
    `CREATE INDEX cycles_org ON cycles (organization_id)`,
    // The audit trail and the sync outbox: one row per write, in the writer's transaction. Every
    // entry names its organization (Citus has no row without its distribution value).
    `CREATE TABLE change_log (
       seq bigint GENERATED ALWAYS AS IDENTITY,
       organization_id text COLLATE "C" NOT NULL,
       entity text COLLATE "C" NOT NULL,
       entity_id text COLLATE "C" NOT NULL,
       op text COLLATE "C" NOT NULL CHECK (op IN ('insert','update','delete')),
       actor_key_id text COLLATE "C",
       actor text COLLATE "C" NOT NULL,
       before text COLLATE "C",
       after text COLLATE "C",
       version text COLLATE "C" NOT NULL,
       at text COLLATE "C" NOT NULL,
       PRIMARY KEY (seq, organization_id)
     )`,
    `CREATE INDEX change_log_entity ON change_log (entity, entity_id)`,
    `CREATE INDEX change_log_org_seq ON change_log (organization_id, seq)`,
  );
}
