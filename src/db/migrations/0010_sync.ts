import { sql, type Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// Upstream sync (docs/sync.md). The change log becomes the outbox and the feed:
// - `origin`: the node (site) that made the change; null for a change made here.
// - `change_id`: the change's id on the wire; null for a change made here, whose id is
//   `<this node>:<seq>`. Unique, so a change applied twice is seen, whichever way it came.
// - `org_seq`: a per-organization counter taken from `sync_counters` in the transaction that
//   writes the change, so a reader of one organization's feed never skips a change that
//   commits late (no `seq > cursor` over a table-wide sequence; docs/sync.md, "Pull").
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('change_log').addColumn('origin', 'text').execute();
  await db.schema.alterTable('change_log').addColumn('change_id', 'text').execute();
  await db.schema.alterTable('change_log').addColumn('org_seq', 'integer').execute();

  await db.schema
    .createTable('sync_counters')
    .addColumn('organization_id', 'text', (c) => c.primaryKey())
    .addColumn('next', 'integer', (c) => c.notNull())
    .execute();

  // The history written before this migration joins each organization's feed in its order.
  await sql`
    UPDATE change_log SET org_seq = (
      SELECT n FROM (SELECT seq AS s, row_number() OVER (PARTITION BY organization_id ORDER BY seq) AS n FROM change_log WHERE organization_id IS NOT NULL)
       WHERE s = change_log.seq)
     WHERE organization_id IS NOT NULL`.execute(db);
  await sql`
    INSERT INTO sync_counters (organization_id, next)
    SELECT organization_id, max(org_seq) FROM change_log WHERE organization_id IS NOT NULL GROUP BY organization_id`.execute(db);
  await sql`CREATE UNIQUE INDEX change_log_feed ON change_log (organization_id, org_seq) WHERE org_seq IS NOT NULL`.execute(db);
  await sql`CREATE UNIQUE INDEX change_log_change_id ON change_log (change_id) WHERE change_id IS NOT NULL`.execute(db);

  // Every change received (pushed to this upstream, or pulled by this box) and what became of it:
  // a batch sent again is answered from here and applies nothing twice.
  await sql`
    CREATE TABLE sync_received (
      change_id text PRIMARY KEY,
      organization_id text NOT NULL,
      origin text NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('applied','superseded','refused')),
      status integer,
      code text,
      detail text,
      errors text,
      at text NOT NULL
    ) WITHOUT ROWID`.execute(db);

  // The highest change number received from each node, by its own `<node>:<seq>` ids: a box
  // asks for it on first contact (docs/sync.md, "Restoring from a backup").
  await sql`
    CREATE TABLE sync_origins (
      origin text PRIMARY KEY,
      last_seq integer NOT NULL
    ) WITHOUT ROWID`.execute(db);

  // A box's link to its upstream, one per organization it syncs.
  await db.schema
    .createTable('sync_links')
    .addColumn('organization_id', 'text', (c) => c.primaryKey())
    .addColumn('upstream_url', 'text', (c) => c.notNull())
    // Set when the link was made by POST /api/admin/sync/link rather than UPSTREAM_KEY.
    .addColumn('upstream_key', 'text')
    .addColumn('upstream_node', 'text')
    .addColumn('linked_at', 'text', (c) => c.notNull())
    // Local change_log.seq up to which every change of this organization has been acknowledged.
    .addColumn('pushed_seq', 'integer', (c) => c.notNull().defaultTo(0))
    // The upstream's opaque cursor; null before the first page.
    .addColumn('pull_cursor', 'text')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('idle'))
    .addColumn('last_push_at', 'text')
    .addColumn('last_push_count', 'integer')
    .addColumn('last_push_error', 'text')
    .addColumn('last_pull_at', 'text')
    .addColumn('last_pull_count', 'integer')
    .addColumn('last_pull_error', 'text')
    .addColumn('last_ok_at', 'text')
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  // Changes refused by the other side (push) or by this one (pull), with the reason: kept for
  // people to see, never retried by themselves, never in the way of the changes behind them.
  await db.schema
    .createTable('sync_quarantine')
    .addColumn('change_id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull().check(sql`direction in ('push','pull')`))
    .addColumn('seq', 'integer')
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('op', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('errors', 'text')
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sync_quarantine_org').on('sync_quarantine').columns(['organization_id', 'at']).execute();

  // Deleted records whose ids can come back: a climate reading's id is made from its cycle,
  // metric and instant, so a reading typed again at a deleted one's place is the same id.
  // The version says which writes the delete beats. (A UUIDv7 record's delete is final and
  // is read from the change log.)
  await sql`
    CREATE TABLE sync_tombstones (
      entity text NOT NULL,
      entity_id text NOT NULL,
      organization_id text NOT NULL,
      version text NOT NULL,
      PRIMARY KEY (entity, entity_id)
    ) WITHOUT ROWID`.execute(db);

  // The version each field of a registry record or setting took from a received change. Fields
  // written here are read from the change log; a received write is recorded here too, since
  // one that sets a field to the value it already had leaves no trace in the log's images.
  await sql`
    CREATE TABLE sync_field_versions (
      entity text NOT NULL,
      entity_id text NOT NULL,
      field text NOT NULL,
      version text NOT NULL,
      PRIMARY KEY (entity, entity_id, field)
    ) WITHOUT ROWID`.execute(db);

  // A synced walk's files by content: its manifest (frames, overlays, clips with SYNC_CLIPS).
  // `present`: the file is in the walk's folder here.
  await sql`
    CREATE TABLE sync_walk_files (
      walk_id text NOT NULL,
      name text NOT NULL,
      organization_id text NOT NULL,
      sha256 text NOT NULL,
      size integer NOT NULL,
      present integer NOT NULL,
      PRIMARY KEY (walk_id, name)
    ) WITHOUT ROWID`.execute(db);
  await db.schema.createIndex('sync_walk_files_sha').on('sync_walk_files').column('sha256').execute();

  // A box's queue of file contents to send, one row per content: sent once, whatever uses it.
  await sql`
    CREATE TABLE sync_uploads (
      sha256 text PRIMARY KEY,
      organization_id text NOT NULL,
      size integer NOT NULL,
      queued_at text NOT NULL,
      done_at text,
      outcome text CHECK (outcome IN ('sent','had','gone','unwanted')),
      bytes_sent integer NOT NULL DEFAULT 0
    ) WITHOUT ROWID`.execute(db);
  await sql`CREATE INDEX sync_uploads_pending ON sync_uploads (queued_at) WHERE done_at IS NULL`.execute(db);
}
