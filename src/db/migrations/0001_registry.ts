import { sql, type Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
export async function up(db: Kysely<any>): Promise<void> {
  const synced = (t: any) =>
    t
      .addColumn('id', 'text', (c: any) => c.primaryKey())
      .addColumn('organization_id', 'text', (c: any) => c.notNull())
      .addColumn('created_at', 'text', (c: any) => c.notNull())
      .addColumn('updated_at', 'text', (c: any) => c.notNull())
      .addColumn('version', 'text', (c: any) => c.notNull());

  await db.schema
    .createTable('meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await synced(db.schema.createTable('organizations'))
    .addColumn('name', 'text', (c: any) => c.notNull())
    .execute();

  await synced(db.schema.createTable('api_keys'))
    .addColumn('name', 'text', (c: any) => c.notNull())
    .addColumn('role', 'text', (c: any) => c.notNull().check(sql`role in ('admin','member')`))
    .addColumn('lookup', 'text', (c: any) => c.notNull().unique())
    .addColumn('secret_hash', 'text', (c: any) => c.notNull())
    .addColumn('display', 'text', (c: any) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .addForeignKeyConstraint('api_keys_org_fk', ['organization_id'], 'organizations', ['id'])
    .execute();
  await db.schema.createIndex('api_keys_org').on('api_keys').column('organization_id').execute();

  await synced(db.schema.createTable('farms'))
    .addColumn('name', 'text', (c: any) => c.notNull())
    .addColumn('location', 'text')
    .addColumn('notes', 'text')
    .addForeignKeyConstraint('farms_org_fk', ['organization_id'], 'organizations', ['id'])
    .execute();
  await db.schema.createIndex('farms_org').on('farms').column('organization_id').execute();

  await synced(db.schema.createTable('greenhouses'))
    .addColumn('farm_id', 'text', (c: any) => c.notNull().references('farms.id'))
    .addColumn('name', 'text', (c: any) => c.notNull())
    .addColumn('time_zone', 'text', (c: any) => c.notNull())
    .addColumn('latitude', 'real')
    .addColumn('longitude', 'real')
    .addColumn('area_m2', 'real')
    .addColumn('notes', 'text')
    .execute();
  await db.schema.createIndex('greenhouses_farm').on('greenhouses').column('farm_id').execute();
  await db.schema.createIndex('greenhouses_org').on('greenhouses').column('organization_id').execute();

  await synced(db.schema.createTable('rows'))
    .addColumn('farm_id', 'text', (c: any) => c.notNull())
    .addColumn('greenhouse_id', 'text', (c: any) => c.notNull().references('greenhouses.id'))
    .addColumn('name', 'text', (c: any) => c.notNull())
    .addColumn('length_m', 'real')
    .addColumn('plant_count', 'integer')
    .addColumn('notes', 'text')
    .execute();
  await db.schema.createIndex('rows_greenhouse').on('rows').column('greenhouse_id').execute();
  await db.schema.createIndex('rows_org').on('rows').column('organization_id').execute();

  await synced(db.schema.createTable('cycles'))
    .addColumn('farm_id', 'text', (c: any) => c.notNull())
    .addColumn('greenhouse_id', 'text', (c: any) => c.notNull())
    .addColumn('row_id', 'text', (c: any) => c.notNull().references('rows.id'))
    .addColumn('name', 'text', (c: any) => c.notNull())
    .addColumn('crop', 'text')
    .addColumn('variety', 'text')
    .addColumn('started_on', 'text', (c: any) => c.notNull())
    .addColumn('ended_on', 'text')
    .addColumn('plants_per_m2', 'real')
    .addColumn('stems_per_m2', 'real')
    .addColumn('notes', 'text')
    .execute();
  await db.schema.createIndex('cycles_row').on('cycles').column('row_id').execute();
  await db.schema.createIndex('cycles_org').on('cycles').column('organization_id').execute();

  // The audit trail now, the sync outbox later: one row per write, in the writer's transaction.
  await db.schema
    .createTable('change_log')
    .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('organization_id', 'text')
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('op', 'text', (c) => c.notNull().check(sql`op in ('insert','update','delete')`))
    .addColumn('actor_key_id', 'text')
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('change_log_entity').on('change_log').columns(['entity', 'entity_id']).execute();
  await db.schema.createIndex('change_log_org_seq').on('change_log').columns(['organization_id', 'seq']).execute();
}
