import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrate } from '../../../src/db/database.js';
import { HybridLogicalClock } from '../../../src/db/hlc.js';
import { Store, SYSTEM_ACTOR } from '../../../src/db/store.js';
import { newId } from '../../../src/db/ids.js';
import { createOrganization } from '../../../src/keys/commands.js';
import { startServer } from '../../helpers/server.js';

/**
 * Migration 0005 moves climate readings to keyed rows and undo effects to packed records.
 * A database as the release before it left it (readings with random ids, an import that
 * added and one that updated) must come through with the same ids, values, sources and
 * a working undo.
 */
t.test("0005 keeps old readings, their ids and their imports' undo", async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-migrate-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const sqlite = new SQLite(path.join(dataDir, 'cropwalk.sqlite'));
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrate(db, '0004_walks');
  t.notOk(sqlite.prepare("SELECT 1 FROM sqlite_master WHERE name = 'climate_points'").get(), 'built at 0004');

  const store = new Store(db, new HybridLogicalClock('0a0b0c0d0e0f'));
  const { org, key } = await store.write(SYSTEM_ACTOR, (w) => createOrganization(w, 'Old Growers', 'admin'));
  const ids = { farm: newId(), greenhouse: newId(), row: newId(), cycle: newId() };
  await store.write(SYSTEM_ACTOR, async (w) => {
    await w.insert<any>('farms', { id: ids.farm, organization_id: org.id, name: 'F', location: null, notes: null });
    await w.insert<any>('greenhouses', {
      id: ids.greenhouse,
      organization_id: org.id,
      farm_id: ids.farm,
      name: 'G',
      time_zone: 'Europe/Amsterdam',
      latitude: null,
      longitude: null,
      area_m2: null,
      notes: null,
    });
    await w.insert<any>('rows', {
      id: ids.row,
      organization_id: org.id,
      farm_id: ids.farm,
      greenhouse_id: ids.greenhouse,
      name: 'R',
      length_m: null,
      plant_count: null,
      notes: null,
    });
    await w.insert<any>('cycles', {
      id: ids.cycle,
      organization_id: org.id,
      farm_id: ids.farm,
      greenhouse_id: ids.greenhouse,
      row_id: ids.row,
      name: 'C',
      crop: null,
      variety: null,
      started_on: '2026-01-05',
      ended_on: null,
      plants_per_m2: null,
      stems_per_m2: null,
      notes: null,
    });
  });
  const stamp = { created_at: '2026-03-01T10:00:00.000Z', updated_at: '2026-03-02T10:00:00.000Z' };
  const imp = (id: string, name: string) =>
    sqlite
      .prepare(
        `INSERT INTO climate_imports (id, organization_id, created_at, updated_at, version, cycle_id, greenhouse_id, file_name, content_hash, size_bytes, kind, actor, rows_read, readings_added, readings_updated, readings_skipped, from_utc, to_utc, metrics, status, failure_reason, mapping, warnings, undone_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 'file', 'watcher', 2, 2, 0, 0, '2026-03-01T11:00:00.000Z', '2026-03-01T12:00:00.000Z', '["air_temperature"]', 'done', NULL, NULL, '[]', NULL)`,
      )
      .run(id, org.id, stamp.created_at, stamp.created_at, `v-${name}`, ids.cycle, ids.greenhouse, name, name);
  const first = newId();
  const second = newId();
  imp(first, 'a.csv');
  imp(second, 'b.csv');
  const reading = (id: string, metric: string, at: string, value: number, importId: string | null) =>
    sqlite
      .prepare(
        'INSERT INTO climate_readings (id, organization_id, created_at, updated_at, version, cycle_id, metric, at_utc, value, import_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(id, org.id, stamp.created_at, stamp.updated_at, `v-${id}`, ids.cycle, metric, at, value, importId);
  const r1 = newId();
  const r2 = newId();
  const r3 = newId();
  reading(r1, 'air_temperature', '2026-03-01T11:00:00.000Z', 20, first);
  reading(r2, 'air_temperature', '2026-03-01T12:00:00.000Z', 22, second); // first added 21, second changed it to 22
  reading(r3, 'co2', '2026-03-01T11:00:00.000Z', 600, null);
  const effect = sqlite.prepare(
    'INSERT INTO climate_import_effects (organization_id, cycle_id, import_id, point_id, action, previous_value, previous_import_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  effect.run(org.id, ids.cycle, first, r1, 'added', null, null);
  effect.run(org.id, ids.cycle, first, r2, 'added', null, null);
  effect.run(org.id, ids.cycle, second, r2, 'updated', 21, first);
  await db.destroy();

  const s = await startServer(t, { dataDir });
  const url = `/api/organizations/${org.id}/farms/${ids.farm}/greenhouses/${ids.greenhouse}/rows/${ids.row}/cycles/${ids.cycle}/climate`;
  const k = { key: key.apiKey };
  const list = await s.request('GET', url, k);
  t.equal(list.status, 200, list.text);
  t.same(
    list.body.items.map((r: any) => [r.point_id, r.metric, r.at, r.value, r.source, r.created_at, r.updated_at, r.version]),
    [
      [r2, 'air_temperature', '2026-03-01T13:00:00+01:00', 22, second, stamp.created_at, stamp.updated_at, `v-${r2}`],
      [r1, 'air_temperature', '2026-03-01T12:00:00+01:00', 20, first, stamp.created_at, stamp.updated_at, `v-${r1}`],
      [r3, 'co2', '2026-03-01T12:00:00+01:00', 600, 'manual', stamp.created_at, stamp.updated_at, `v-${r3}`],
    ],
    'ids, values, sources and stamps as they were',
  );
  const edited = await s.request('PATCH', `${url}/${r3}`, { ...k, body: { value: 650 } });
  t.equal(edited.status, 200, 'an old id still finds its reading');
  t.equal(edited.body.point_id, r3);

  const refused = await s.request('POST', `${url}/imports/${first}/undo`, k);
  t.equal(refused.status, 409, 'the later import changed a reading the first added');
  t.same(refused.body.later_imports, [second]);
  const undoSecond = await s.request('POST', `${url}/imports/${second}/undo`, k);
  t.equal(undoSecond.status, 200, undoSecond.text);
  t.match(undoSecond.body, { removed: 0, restored: 1, missing: 0 });
  const afterSecond = await s.request('GET', `${url}?metric=air_temperature`, k);
  t.same(
    afterSecond.body.items.map((r: any) => [r.point_id, r.value, r.source]),
    [
      [r2, 21, first],
      [r1, 20, first],
    ],
    'the value the first import set is back',
  );
  const undoFirst = await s.request('POST', `${url}/imports/${first}/undo`, k);
  t.equal(undoFirst.status, 200, undoFirst.text);
  t.match(undoFirst.body, { removed: 2, restored: 0, missing: 0 });
  const left = await s.request('GET', url, k);
  t.same(
    left.body.items.map((r: any) => [r.point_id, r.value]),
    [[r3, 650]],
    'only the typed reading is left',
  );
});
