import { sql, type Kysely } from 'kysely';

/**
 * The rules that let Citus spread the PostgreSQL schema over several servers by organization
 * (docs/citus.md), checked against the live catalog (test/db/postgres-schema.test.ts fails on a
 * migration that breaks one):
 *
 * 1. A table with an `organization_id` column belongs to an organization: Citus distributes it
 *    by that column, so its primary key and every unique constraint or index include it, and
 *    every foreign key it has includes it on both sides (a row and its parent on one server),
 *    unless the key points at a reference table.
 * 2. Every other table is named here: a reference table (the same few rows on every server) or
 *    a coordinator-local one. Neither has a foreign key to a distributed table.
 * 3. Text columns are COLLATE "C": versions (HLC), ids and instants compare byte by byte, as on SQLite.
 */

/** Shared by every organization: copied to every server (create_reference_table). */
export const REFERENCE_TABLES: Record<string, string> = {
  meta: "the database's node id and settings, read by every process",
  climate_metric_codes: 'metric names and their small numbers, the same for every organization',
};

/** On the coordinator only: bookkeeping of the service itself, read and written through the coordinator. */
export const LOCAL_TABLES: Record<string, string> = {
  kysely_migration: 'which migrations ran (Kysely)',
  kysely_migration_lock: "Kysely's migration lock row",
  schedule_state: 'what each schedule last did, one row per schedule and target, shared by the processes',
  scale_assignments: "a box's serial scales and the crop cycle each records into (an upstream has none)",
};

interface ColumnRow {
  table_name: string;
  column_name: string;
  data_type: string;
  collation_name: string | null;
}

interface IndexRow {
  table_name: string;
  index_name: string;
  is_primary: boolean;
  columns: string[];
}

interface ForeignKeyRow {
  table_name: string;
  name: string;
  columns: string[];
  ref_table: string;
  ref_columns: string[];
}

/** The tables Citus distributes by organization_id, from the catalog. */
export async function distributedTables(db: Kysely<any>): Promise<string[]> {
  const r = await sql<{ table_name: string }>`
    select c.table_name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where c.table_schema = current_schema() and t.table_type = 'BASE TABLE' and c.column_name = 'organization_id'
     order by c.table_name`.execute(db);
  return r.rows.map((x) => x.table_name);
}

/** What breaks the rules above, one sentence each; empty when the schema can be distributed. */
export async function citusViolations(db: Kysely<any>): Promise<string[]> {
  const tables = (
    await sql<{ table_name: string }>`
      select table_name from information_schema.tables
       where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(db)
  ).rows.map((r) => r.table_name);
  const columns = (
    await sql<ColumnRow>`
      select table_name, column_name, data_type, collation_name from information_schema.columns
       where table_schema = current_schema()`.execute(db)
  ).rows;
  const indexes = (
    await sql<IndexRow>`
      select t.relname as table_name, i.relname as index_name, x.indisprimary as is_primary,
             array(select a.attname from unnest(x.indkey) with ordinality k(attnum, n)
                     join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum order by k.n)::text[] as columns
        from pg_index x
        join pg_class t on t.oid = x.indrelid
        join pg_class i on i.oid = x.indexrelid
        join pg_namespace s on s.oid = t.relnamespace
       where s.nspname = current_schema() and (x.indisunique or x.indisprimary)`.execute(db)
  ).rows;
  const foreignKeys = (
    await sql<ForeignKeyRow>`
      select t.relname as table_name, c.conname as name, r.relname as ref_table,
             array(select a.attname from unnest(c.conkey) with ordinality k(attnum, n)
                     join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.n)::text[] as columns,
             array(select a.attname from unnest(c.confkey) with ordinality k(attnum, n)
                     join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum order by k.n)::text[] as ref_columns
        from pg_constraint c
        join pg_class t on t.oid = c.conrelid
        join pg_class r on r.oid = c.confrelid
        join pg_namespace s on s.oid = t.relnamespace
       where s.nspname = current_schema() and c.contype = 'f'`.execute(db)
  ).rows;

  const out: string[] = [];
  const hasOrg = new Set(columns.filter((c) => c.column_name === 'organization_id').map((c) => c.table_name));
  const isReference = (t: string) => t in REFERENCE_TABLES;

  for (const table of tables) {
    if (hasOrg.has(table)) {
      if (isReference(table) || table in LOCAL_TABLES)
        out.push(`${table} has organization_id but is listed as shared: distribute it, or drop it from the list`);
      const pk = indexes.find((i) => i.table_name === table && i.is_primary);
      if (!pk) out.push(`${table} has no primary key`);
      for (const i of indexes.filter((x) => x.table_name === table)) {
        if (!i.columns.includes('organization_id'))
          out.push(
            `${table}: ${i.is_primary ? 'primary key' : `unique index ${i.index_name}`} (${i.columns.join(', ')}) lacks organization_id`,
          );
      }
      for (const fk of foreignKeys.filter((f) => f.table_name === table)) {
        if (isReference(fk.ref_table)) continue;
        const at = fk.columns.indexOf('organization_id');
        if (at < 0 || fk.ref_columns[at] !== 'organization_id')
          out.push(
            `${table}: foreign key ${fk.name} (${fk.columns.join(', ')}) -> ${fk.ref_table} (${fk.ref_columns.join(', ')}) does not pair organization_id with organization_id`,
          );
      }
    } else if (!isReference(table) && !(table in LOCAL_TABLES)) {
      out.push(`${table} has no organization_id and is not listed as a reference or local table (src/db/citus.ts)`);
    } else {
      for (const fk of foreignKeys.filter((f) => f.table_name === table && hasOrg.has(f.ref_table)))
        out.push(`${table} is not distributed but has a foreign key (${fk.name}) to ${fk.ref_table}, which is`);
    }
  }
  for (const c of columns) {
    if (!tables.includes(c.table_name) || c.table_name in LOCAL_TABLES) continue;
    if (c.data_type === 'text' && c.collation_name !== 'C') out.push(`${c.table_name}.${c.column_name} is text without COLLATE "C"`);
  }
  return out;
}
