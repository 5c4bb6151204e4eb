import { sql, type Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// Staff correct a walk's fruit (a ripeness, a fruit removed or added) or its counts outright.
// The detector's counts stay as scored (count_*); the corrected counts are kept beside them,
// written in the same transaction as each correction, so a list of walks reads both without
// opening every walk's result.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('walk_corrections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('walk_id', 'text', (c) => c.notNull().references('walks.id'))
    // Copied from the walk, like its clips, so a cascading delete of a crop cycle finds them by cycle.
    .addColumn('cycle_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('ripeness','remove','add','counts')`))
    .addColumn('track_id', 'integer')
    .addColumn('ripeness', 'text', (c) => c.check(sql`ripeness in ('green','turning','red')`))
    .addColumn('frame_id', 'integer')
    // JSON: [x1, y1, x2, y2] for add; {green?, turning?, red?} for counts.
    .addColumn('box', 'text')
    .addColumn('counts', 'text')
    .addColumn('note', 'text')
    .addColumn('created_by_key_id', 'text')
    .execute();
  await db.schema.createIndex('walk_corrections_walk').on('walk_corrections').columns(['walk_id', 'id']).execute();
  await db.schema.createIndex('walk_corrections_cycle').on('walk_corrections').column('cycle_id').execute();

  for (const c of ['green', 'turning', 'red', 'total']) {
    await db.schema.alterTable('walks').addColumn(`corrected_${c}`, 'integer').execute();
  }
  // Walks scored before corrections existed have none: their corrected counts are the detector's.
  await sql`update walks set corrected_green = count_green, corrected_turning = count_turning, corrected_red = count_red, corrected_total = count_total`.execute(
    db,
  );
}
