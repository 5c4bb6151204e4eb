import { sql, type Kysely } from 'kysely';

/**
 * Records kept on a crop cycle: harvests, irrigation entries, fruit mass
 * history, truss counts (a count date owning its rows) and week notes.
 * Every table carries the synced columns and the ids of its registry parents,
 * so the registry can count and cascade by `cycle_id` without knowing them.
 */
// Forward-only: never edit a migration that has shipped; add the next number.
export async function up(db: Kysely<any>): Promise<void> {
  const underCycle = (t: any) =>
    t
      .addColumn('id', 'text', (c: any) => c.primaryKey())
      .addColumn('organization_id', 'text', (c: any) => c.notNull())
      .addColumn('created_at', 'text', (c: any) => c.notNull())
      .addColumn('updated_at', 'text', (c: any) => c.notNull())
      .addColumn('version', 'text', (c: any) => c.notNull())
      .addColumn('farm_id', 'text', (c: any) => c.notNull())
      .addColumn('greenhouse_id', 'text', (c: any) => c.notNull())
      .addColumn('row_id', 'text', (c: any) => c.notNull())
      .addColumn('cycle_id', 'text', (c: any) => c.notNull().references('cycles.id'));

  await underCycle(db.schema.createTable('harvests'))
    .addColumn('week', 'text', (c: any) => c.notNull())
    .addColumn('kg', 'real', (c: any) => c.notNull().check(sql`kg >= 0`))
    .addColumn('note', 'text')
    .addColumn('harvested_on', 'text')
    .execute();
  await db.schema.createIndex('harvests_cycle_week').on('harvests').columns(['cycle_id', 'week', 'id']).execute();

  await underCycle(db.schema.createTable('irrigation_entries'))
    .addColumn('at', 'text', (c: any) => c.notNull())
    .addColumn('volume_l', 'real')
    .addColumn('drain_l', 'real')
    .addColumn('ec_in', 'real')
    .addColumn('ec_drain', 'real')
    .addColumn('ph_in', 'real')
    .addColumn('ph_drain', 'real')
    .addColumn('duration_min', 'real')
    .addColumn('note', 'text')
    // The last-measurement rule is checked in the domain with a clear 422; this is the backstop.
    .addCheckConstraint(
      'irrigation_has_measurement',
      sql`coalesce(volume_l, drain_l, ec_in, ec_drain, ph_in, ph_drain, duration_min) is not null`,
    )
    .execute();
  await db.schema.createIndex('irrigation_cycle_at').on('irrigation_entries').columns(['cycle_id', 'at', 'id']).execute();

  await underCycle(db.schema.createTable('fruit_masses'))
    .addColumn('week', 'text', (c: any) => c.notNull())
    .addColumn('green_g', 'real', (c: any) => c.notNull())
    .addColumn('turning_g', 'real', (c: any) => c.notNull())
    .addColumn('red_g', 'real', (c: any) => c.notNull())
    .addUniqueConstraint('fruit_masses_cycle_week', ['cycle_id', 'week'])
    .execute();

  await underCycle(db.schema.createTable('truss_counts'))
    .addColumn('counted_on', 'text', (c: any) => c.notNull())
    .addUniqueConstraint('truss_counts_cycle_date', ['cycle_id', 'counted_on'])
    .execute();

  await underCycle(db.schema.createTable('truss_count_rows'))
    .addColumn('count_id', 'text', (c: any) => c.notNull().references('truss_counts.id'))
    .addColumn('counted_on', 'text', (c: any) => c.notNull())
    .addColumn('position', 'integer', (c: any) => c.notNull())
    .addColumn('plant', 'text', (c: any) => c.notNull())
    .addColumn('truss', 'integer', (c: any) => c.notNull())
    .addColumn('fruits', 'integer', (c: any) => c.notNull())
    .addColumn('flowers', 'integer')
    .addUniqueConstraint('truss_count_rows_unique', ['count_id', 'plant', 'truss'])
    .execute();
  await db.schema.createIndex('truss_count_rows_cycle').on('truss_count_rows').column('cycle_id').execute();

  await underCycle(db.schema.createTable('week_notes'))
    .addColumn('week', 'text', (c: any) => c.notNull())
    .addColumn('body', 'text', (c: any) => c.notNull())
    .addUniqueConstraint('week_notes_cycle_week', ['cycle_id', 'week'])
    .execute();
}
