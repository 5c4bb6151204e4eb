import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrate } from '../../../src/db/database.js';
import { HybridLogicalClock } from '../../../src/db/hlc.js';
import { Store, SYSTEM_ACTOR } from '../../../src/db/store.js';
import { createOrganization } from '../../../src/keys/commands.js';

/**
 * Migration 0007 adds walk corrections. Walks scored before it have none, so their corrected
 * counts must read as the detector's; a walk not yet scored keeps null.
 */
t.test('0007: walks scored before corrections existed have corrected counts equal to their counts', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-migrate-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const sqlite = new SQLite(path.join(dataDir, 'cropwalk.sqlite'));
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) });
  t.teardown(() => db.destroy());
  await migrate(db, '0006_walk_media_removal');
  t.notOk(sqlite.prepare("select 1 from sqlite_master where name = 'walk_corrections'").get(), 'built at 0006');

  const store = new Store(db, new HybridLogicalClock('0a0b0c0d0e0f'));
  const { org } = await store.write(SYSTEM_ACTOR, (w) => createOrganization(w, 'Old Growers', 'admin'));
  const walk = sqlite.prepare(
    "insert into walks (id, organization_id, created_at, updated_at, version, source, status, mode, options, request_hash, count_green, count_turning, count_red, count_total) values (?, ?, '2026-03-01T10:00:00.000Z', '2026-03-01T10:00:00.000Z', 'v', 'observation', ?, 'auto', '{}', 'h', ?, ?, ?, ?)",
  );
  walk.run('0190a000-0000-7000-8000-000000000001', org.id, 'done', 5, 3, 2, 10);
  walk.run('0190a000-0000-7000-8000-000000000002', org.id, 'queued', null, null, null, null);

  t.same(await migrate(db, '0007_walk_corrections'), ['0007_walk_corrections'], 'the migration under test, and no later one');
  const rows = sqlite.prepare('select id, corrected_green, corrected_turning, corrected_red, corrected_total from walks order by id').all();
  t.same(rows, [
    { id: '0190a000-0000-7000-8000-000000000001', corrected_green: 5, corrected_turning: 3, corrected_red: 2, corrected_total: 10 },
    {
      id: '0190a000-0000-7000-8000-000000000002',
      corrected_green: null,
      corrected_turning: null,
      corrected_red: null,
      corrected_total: null,
    },
  ]);
  t.ok(sqlite.prepare("select 1 from sqlite_master where name = 'walk_corrections'").get(), 'the corrections table');
  t.throws(
    () =>
      sqlite
        .prepare(
          "insert into walk_corrections (id, organization_id, created_at, updated_at, version, walk_id, kind) values ('x', ?, 'a', 'a', 'v', '0190a000-0000-7000-8000-000000000001', 'recount')",
        )
        .run(org.id),
    /CHECK/,
    'the kinds are checked by the database too',
  );
});
