import { sql, type Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
// Climate readings, the imports that wrote them, what each import did to each
// reading (so it can be undone), and the column choices saved per greenhouse.
export async function up(db: Kysely<any>): Promise<void> {
  const synced = (t: any) =>
    t
      .addColumn('id', 'text', (c: any) => c.primaryKey())
      .addColumn('organization_id', 'text', (c: any) => c.notNull())
      .addColumn('created_at', 'text', (c: any) => c.notNull())
      .addColumn('updated_at', 'text', (c: any) => c.notNull())
      .addColumn('version', 'text', (c: any) => c.notNull());

  await synced(db.schema.createTable('climate_imports'))
    .addColumn('cycle_id', 'text', (c: any) => c.notNull().references('cycles.id'))
    .addColumn('greenhouse_id', 'text', (c: any) => c.notNull())
    .addColumn('file_name', 'text', (c: any) => c.notNull())
    .addColumn('content_hash', 'text', (c: any) => c.notNull())
    .addColumn('size_bytes', 'integer', (c: any) => c.notNull())
    .addColumn('kind', 'text', (c: any) => c.notNull().check(sql`kind in ('csv','file','ingest','watch')`))
    .addColumn('actor', 'text', (c: any) => c.notNull())
    .addColumn('rows_read', 'integer', (c: any) => c.notNull())
    .addColumn('readings_added', 'integer', (c: any) => c.notNull())
    .addColumn('readings_updated', 'integer', (c: any) => c.notNull())
    .addColumn('readings_skipped', 'integer', (c: any) => c.notNull())
    .addColumn('from_utc', 'text')
    .addColumn('to_utc', 'text')
    .addColumn('metrics', 'text', (c: any) => c.notNull())
    .addColumn('status', 'text', (c: any) => c.notNull().check(sql`status in ('done','failed','undone')`))
    .addColumn('failure_reason', 'text')
    .addColumn('mapping', 'text')
    .addColumn('warnings', 'text', (c: any) => c.notNull())
    .addColumn('undone_at', 'text')
    .execute();
  await db.schema.createIndex('climate_imports_cycle').on('climate_imports').columns(['cycle_id', 'created_at']).execute();
  // The watcher asks "was this content already imported here?" for every file it sees.
  await db.schema.createIndex('climate_imports_hash').on('climate_imports').columns(['cycle_id', 'content_hash']).execute();

  await synced(db.schema.createTable('climate_readings'))
    .addColumn('cycle_id', 'text', (c: any) => c.notNull().references('cycles.id'))
    .addColumn('metric', 'text', (c: any) => c.notNull().check(sql`length(metric) between 1 and 64`))
    // Fixed-width UTC text (toISOString) so that text order is time order and equal
    // instants are equal strings: the unique index below depends on it.
    .addColumn('at_utc', 'text', (c: any) =>
      c
        .notNull()
        .check(
          sql`length(at_utc) = 24 and at_utc glob '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'`,
        ),
    )
    .addColumn('value', 'real', (c: any) => c.notNull())
    // null: typed or edited by hand; otherwise the import that last set the value.
    .addColumn('import_id', 'text')
    .execute();
  await db.schema.createIndex('climate_readings_key').unique().on('climate_readings').columns(['cycle_id', 'metric', 'at_utc']).execute();
  await db.schema.createIndex('climate_readings_time').on('climate_readings').columns(['cycle_id', 'at_utc']).execute();

  // Not a synced record of its own: the bookkeeping that lets an import be undone.
  // It has id and organization_id so that a cascading delete can leave tombstones.
  await db.schema
    .createTable('climate_import_effects')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('cycle_id', 'text', (c) => c.notNull())
    .addColumn('import_id', 'text', (c) => c.notNull())
    .addColumn('point_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull().check(sql`action in ('added','updated')`))
    .addColumn('previous_value', 'real')
    .addColumn('previous_import_id', 'text')
    .execute();
  await db.schema.createIndex('climate_import_effects_import').on('climate_import_effects').columns(['cycle_id', 'import_id']).execute();

  await synced(db.schema.createTable('climate_file_mappings'))
    .addColumn('greenhouse_id', 'text', (c: any) => c.notNull().unique().references('greenhouses.id'))
    .addColumn('mapping', 'text', (c: any) => c.notNull())
    .addColumn('source_file_name', 'text', (c: any) => c.notNull())
    .execute();
}
