import type { Kysely } from 'kysely';
import { statements } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// PostgreSQL's form of ../0010_sync.ts (docs/sync.md, docs/postgres.md "The upstream role"):
// - text is COLLATE "C": change ids, origins and HLC versions compare byte by byte, as on SQLite;
// - every table keys with organization_id (Citus distributes by it, docs/citus.md): a change id
//   is unique per organization, a tombstone, a field's version, a walk file and an upload too;
// - sync_origins and sync_field_versions carry organization_id here only (SQLite's have none):
//   src/sync/apply.ts and src/sync/kinds/rows.ts write it on PostgreSQL;
// - no WITHOUT ROWID; counters and sizes are bigint.
export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `ALTER TABLE change_log ADD COLUMN origin text COLLATE "C"`,
    `ALTER TABLE change_log ADD COLUMN change_id text COLLATE "C"`,
    `ALTER TABLE change_log ADD COLUMN org_seq bigint`,
    `CREATE TABLE sync_counters (
       organization_id text COLLATE "C" PRIMARY KEY,
       next bigint NOT NULL
     )`,
    // The history written before this migration joins each organization's feed in its order.
    `UPDATE change_log SET org_seq = n.n
       FROM (SELECT seq, organization_id, row_number() OVER (PARTITION BY organization_id ORDER BY seq) AS n FROM change_log) n
      WHERE n.seq = change_log.seq AND n.organization_id = change_log.organization_id`,
    `INSERT INTO sync_counters (organization_id, next)
     SELECT organization_id, max(org_seq) FROM change_log GROUP BY organization_id`,
    `CREATE UNIQUE INDEX change_log_feed ON change_log (organization_id, org_seq) WHERE org_seq IS NOT NULL`,
    `CREATE UNIQUE INDEX change_log_change_id ON change_log (change_id, organization_id) WHERE change_id IS NOT NULL`,
    `CREATE TABLE sync_received (
       change_id text COLLATE "C" NOT NULL,
       organization_id text COLLATE "C" NOT NULL,
       origin text COLLATE "C" NOT NULL,
       outcome text COLLATE "C" NOT NULL CHECK (outcome IN ('applied','superseded','refused')),
       status integer,
       code text COLLATE "C",
       detail text COLLATE "C",
       errors text COLLATE "C",
       at text COLLATE "C" NOT NULL,
       PRIMARY KEY (change_id, organization_id)
     )`,
    `CREATE TABLE sync_origins (
       origin text COLLATE "C" NOT NULL,
       organization_id text COLLATE "C" NOT NULL,
       last_seq bigint NOT NULL,
       PRIMARY KEY (origin, organization_id)
     )`,
    `CREATE TABLE sync_links (
       organization_id text COLLATE "C" PRIMARY KEY,
       upstream_url text COLLATE "C" NOT NULL,
       upstream_key text COLLATE "C",
       upstream_node text COLLATE "C",
       linked_at text COLLATE "C" NOT NULL,
       pushed_seq bigint NOT NULL DEFAULT 0,
       pull_cursor text COLLATE "C",
       state text COLLATE "C" NOT NULL DEFAULT 'idle',
       last_push_at text COLLATE "C",
       last_push_count integer,
       last_push_error text COLLATE "C",
       last_pull_at text COLLATE "C",
       last_pull_count integer,
       last_pull_error text COLLATE "C",
       last_ok_at text COLLATE "C",
       failures integer NOT NULL DEFAULT 0
     )`,
    `CREATE TABLE sync_quarantine (
       change_id text COLLATE "C" NOT NULL,
       organization_id text COLLATE "C" NOT NULL,
       direction text COLLATE "C" NOT NULL CHECK (direction IN ('push','pull')),
       seq bigint,
       entity text COLLATE "C" NOT NULL,
       entity_id text COLLATE "C" NOT NULL,
       op text COLLATE "C" NOT NULL,
       status integer NOT NULL,
       code text COLLATE "C" NOT NULL,
       reason text COLLATE "C" NOT NULL,
       errors text COLLATE "C",
       at text COLLATE "C" NOT NULL,
       PRIMARY KEY (change_id, organization_id)
     )`,
    `CREATE INDEX sync_quarantine_org ON sync_quarantine (organization_id, at)`,
    `CREATE TABLE sync_tombstones (
       entity text COLLATE "C" NOT NULL,
       entity_id text COLLATE "C" NOT NULL,
       organization_id text COLLATE "C" NOT NULL,
       version text COLLATE "C" NOT NULL,
       PRIMARY KEY (entity, entity_id, organization_id)
     )`,
    `CREATE TABLE sync_field_versions (
       entity text COLLATE "C" NOT NULL,
       entity_id text COLLATE "C" NOT NULL,
       field text COLLATE "C" NOT NULL,
       organization_id text COLLATE "C" NOT NULL,
       version text COLLATE "C" NOT NULL,
       PRIMARY KEY (entity, entity_id, field, organization_id)
     )`,
    `CREATE TABLE sync_walk_files (
       walk_id text COLLATE "C" NOT NULL,
       name text COLLATE "C" NOT NULL,
       organization_id text COLLATE "C" NOT NULL,
       sha256 text COLLATE "C" NOT NULL,
       size bigint NOT NULL,
       present integer NOT NULL,
       PRIMARY KEY (walk_id, name, organization_id)
     )`,
    `CREATE INDEX sync_walk_files_sha ON sync_walk_files (sha256)`,
    `CREATE TABLE sync_uploads (
       sha256 text COLLATE "C" NOT NULL,
       organization_id text COLLATE "C" NOT NULL,
       size bigint NOT NULL,
       queued_at text COLLATE "C" NOT NULL,
       done_at text COLLATE "C",
       outcome text COLLATE "C" CHECK (outcome IN ('sent','had','gone','unwanted')),
       bytes_sent bigint NOT NULL DEFAULT 0,
       PRIMARY KEY (sha256, organization_id)
     )`,
    `CREATE INDEX sync_uploads_pending ON sync_uploads (queued_at) WHERE done_at IS NULL`,
  );
}
