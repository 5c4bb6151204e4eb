import t from 'tap';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { openStorage } from '../../src/db/database.js';
import { citusViolations, distributedTables, LOCAL_TABLES, REFERENCE_TABLES } from '../../src/db/citus.js';
import { sqlitePassSkip, testDatabase } from '../helpers/postgres.js';

/**
 * The PostgreSQL schema can be spread over Citus by organization (docs/citus.md): the rules of
 * src/db/citus.ts hold for every table the migrations make, a table that breaks one is caught,
 * and docs/citus.md distributes exactly the tables there are.
 */
/** A migrated PostgreSQL database of the test's own, closed after it; null where the test skips. */
async function migrated(t: { skip(...args: any[]): unknown; teardown(fn: () => unknown): void }) {
  if (sqlitePassSkip(t)) return null;
  const url = await testDatabase(t);
  if (!url) return null;
  const opened = await openStorage('/nonexistent', { databaseUrl: url });
  t.teardown(() => opened.close());
  return opened;
}

t.test("an import's undo blobs are stored out of line without compression", async (t) => {
  const opened = await migrated(t);
  if (!opened) return;
  // pglz took 60–110 ms of a year's import (migrations/postgres/0013_climate_undo_storage.ts).
  const r = await sql<{ attname: string; attstorage: string }>`
    SELECT attname, attstorage FROM pg_attribute
     WHERE attrelid = 'climate_import_undo'::regclass AND attname IN ('added', 'updated') ORDER BY attname`.execute(opened.db);
  t.same(r.rows, [
    { attname: 'added', attstorage: 'e' },
    { attname: 'updated', attstorage: 'e' },
  ]);
});

t.test('the migrated schema keeps the Citus rules', async (t) => {
  const opened = await migrated(t);
  if (!opened) return;
  t.same(await citusViolations(opened.db), [], 'no table breaks a rule');

  const distributed = await distributedTables(opened.db);
  for (const table of ['organizations', 'api_keys', 'farms', 'cycles', 'harvests', 'walks', 'climate_points', 'change_log'])
    t.ok(distributed.includes(table), `${table} is distributed by organization_id`);

  const page = readFileSync(new URL('../../docs/citus.md', import.meta.url), 'utf8');
  const named = (fn: string) => [...page.matchAll(new RegExp(`${fn}\\('([a-z_]+)'`, 'g'))].map((m) => m[1]!).sort();
  t.same(named('create_distributed_table'), [...distributed].sort(), 'docs/citus.md distributes every organization table, and only those');
  t.same(named('create_reference_table'), Object.keys(REFERENCE_TABLES).sort(), 'and makes the shared tables reference tables');

  t.test('a table that breaks a rule fails the check', async (t) => {
    const bad = async (ddl: string, expect: RegExp, why: string) => {
      await sql.raw(ddl).execute(opened.db);
      const found = await citusViolations(opened.db);
      t.ok(
        found.some((v) => expect.test(v)),
        `${why}: ${found.join('; ') || 'nothing found'}`,
      );
      await sql.raw(`DROP TABLE ${/CREATE TABLE (\w+)/.exec(ddl)![1]} CASCADE`).execute(opened.db);
      t.same(await citusViolations(opened.db), [], 'clean again once it is gone');
    };
    await bad(
      `CREATE TABLE t_pk (id text COLLATE "C" PRIMARY KEY, organization_id text COLLATE "C" NOT NULL)`,
      /t_pk: primary key \(id\) lacks organization_id/,
      'a primary key without organization_id',
    );
    await bad(
      `CREATE TABLE t_unique (id text COLLATE "C", organization_id text COLLATE "C" NOT NULL, name text COLLATE "C", PRIMARY KEY (id, organization_id), UNIQUE (name))`,
      /t_unique: unique index .* \(name\) lacks organization_id/,
      'a unique constraint without organization_id',
    );
    await bad(
      `CREATE TABLE t_fk (id text COLLATE "C", organization_id text COLLATE "C" NOT NULL, farm_id text COLLATE "C", PRIMARY KEY (id, organization_id),
         FOREIGN KEY (farm_id) REFERENCES organizations (organization_id))`,
      /t_fk: foreign key .* does not pair organization_id/,
      'a foreign key that leaves organization_id out',
    );
    await bad(
      `CREATE TABLE t_shared (k text COLLATE "C" PRIMARY KEY)`,
      /t_shared has no organization_id and is not listed/,
      'an unlisted shared table',
    );
    await bad(
      `CREATE TABLE t_collate (id text COLLATE "C", organization_id text COLLATE "C" NOT NULL, version text, PRIMARY KEY (id, organization_id))`,
      /t_collate.version is text without COLLATE "C"/,
      'text compared by the locale',
    );
  });
  t.ok(Object.keys(LOCAL_TABLES).length > 0);
});
