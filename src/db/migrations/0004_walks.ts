import { sql, type Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// A walk is a scoring job: the row is queued, claimed, scored and finished in
// place, so the queue survives a restart and a job can never become two walks.
export async function up(db: Kysely<any>): Promise<void> {
  const synced = (t: any) =>
    t
      .addColumn('id', 'text', (c: any) => c.primaryKey())
      .addColumn('organization_id', 'text', (c: any) => c.notNull().references('organizations.id'))
      .addColumn('created_at', 'text', (c: any) => c.notNull())
      .addColumn('updated_at', 'text', (c: any) => c.notNull())
      .addColumn('version', 'text', (c: any) => c.notNull());

  await synced(db.schema.createTable('walks'))
    // Null for POST /api/observations and examples: such a walk is scored but saved to no crop cycle.
    .addColumn('farm_id', 'text')
    .addColumn('greenhouse_id', 'text')
    .addColumn('row_id', 'text')
    .addColumn('cycle_id', 'text')
    .addColumn('week', 'text')
    .addColumn('source', 'text', (c: any) => c.notNull().check(sql`source in ('observation','cycle_video','cycle_batch','example')`))
    .addColumn('example_key', 'text')
    .addColumn('status', 'text', (c: any) => c.notNull().check(sql`status in ('queued','running','done','failed')`))
    .addColumn('progress', 'real', (c: any) => c.notNull().defaultTo(0))
    .addColumn('mode', 'text', (c: any) => c.notNull())
    .addColumn('options', 'text', (c: any) => c.notNull())
    .addColumn('detector', 'text')
    .addColumn('error', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('request_hash', 'text', (c: any) => c.notNull())
    .addColumn('created_by_key_id', 'text')
    .addColumn('attempts', 'integer', (c: any) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('count_green', 'integer')
    .addColumn('count_turning', 'integer')
    .addColumn('count_red', 'integer')
    .addColumn('count_total', 'integer')
    .addColumn('result', 'text')
    .execute();
  await db.schema.createIndex('walks_org').on('walks').columns(['organization_id', 'id']).execute();
  await db.schema.createIndex('walks_cycle_week').on('walks').columns(['cycle_id', 'week']).execute();
  // The runner's claim query walks this index: oldest queued first.
  await db.schema.createIndex('walks_status').on('walks').columns(['status', 'id']).execute();
  // One walk per Idempotency-Key per organization, enforced by the database so two racing retries cannot both insert.
  await sql`create unique index walks_idempotency on walks (organization_id, idempotency_key) where idempotency_key is not null`.execute(
    db,
  );

  await synced(db.schema.createTable('walk_clips'))
    .addColumn('walk_id', 'text', (c: any) => c.notNull().references('walks.id'))
    // Copied from the walk so a cascading delete of a crop cycle finds the clips by cycle, like the walks.
    .addColumn('cycle_id', 'text')
    .addColumn('position', 'integer', (c: any) => c.notNull())
    .addColumn('file_name', 'text', (c: any) => c.notNull())
    .addColumn('original_name', 'text', (c: any) => c.notNull())
    .addColumn('size_bytes', 'integer', (c: any) => c.notNull())
    .addColumn('sha256', 'text', (c: any) => c.notNull())
    .addColumn('kind', 'text', (c: any) => c.notNull().check(sql`kind in ('image','video')`))
    .addColumn('format', 'text', (c: any) => c.notNull())
    .addColumn('width', 'integer', (c: any) => c.notNull())
    .addColumn('height', 'integer', (c: any) => c.notNull())
    .addColumn('duration_s', 'real', (c: any) => c.notNull())
    .addColumn('status', 'text', (c: any) => c.notNull().check(sql`status in ('queued','running','done','failed')`))
    .addColumn('progress', 'real', (c: any) => c.notNull().defaultTo(0))
    .addColumn('frames', 'integer', (c: any) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('walk_clips_walk').on('walk_clips').columns(['walk_id', 'position']).unique().execute();
  await db.schema.createIndex('walk_clips_cycle').on('walk_clips').column('cycle_id').execute();
}
