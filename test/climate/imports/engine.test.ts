import t from 'tap';
import { startServer, createTree, dbCount, dbRows } from '../../helpers/server.js';
import { storeImport, type ImportMeta, type IncomingReading } from '../../../src/climate/imports/engine.js';
import { undoImport, laterChanges } from '../../../src/climate/imports/undo.js';
import { SYSTEM_ACTOR } from '../../../src/db/store.js';
import { problemOf } from '../../../src/http/problem.js';
import { Conflict } from '../../../src/errors.js';

/** The import engine and undo, against a real database (SQLite, and PostgreSQL in its pass), without HTTP. */
t.test('import bookkeeping and undo', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const { store, db } = s.app.services;
  const cycle = await db.selectFrom('cycles').selectAll().where('id', '=', tree.cycleId).executeTakeFirstOrThrow();
  const meta = (name: string, hash = name): ImportMeta => ({
    kind: 'csv',
    fileName: name,
    contentHash: hash,
    sizeBytes: 10,
    actor: 'watcher',
    mapping: { columns: [] },
    warnings: [],
  });
  const run = (name: string, readings: IncomingReading[], hash?: string) =>
    store.write(SYSTEM_ACTOR, (w) => storeImport(w, cycle, meta(name, hash), [readings]));
  const readings = () =>
    dbRows<any>(
      s,
      'SELECT metric, at_utc, value, import_id FROM climate_readings WHERE cycle_id = ? ORDER BY metric, at_utc',
      tree.cycleId,
    );
  const count = (table: string) => dbCount(s, `SELECT count(*) AS n FROM ${table}`);
  const undo = (id: string, confirm = false) =>
    store.write(SYSTEM_ACTOR, async (w) =>
      undoImport(w, await w.trx.selectFrom('climate_imports').selectAll().where('id', '=', id).executeTakeFirstOrThrow(), confirm),
    );

  const fileA: IncomingReading[] = [
    { at: '2026-03-01T12:00:00+01:00', metric: 'air_temperature', value: 20 },
    { at: '2026-03-01T12:00:00+01:00', metric: 'co2', value: 600 },
    { at: '2026-03-01T13:00:00+01:00', metric: 'air_temperature', value: 21 },
  ];
  const a = await run('a.csv', fileA);
  t.same([a.readings_added, a.readings_updated, a.readings_skipped, a.status], [3, 0, 0, 'done']);
  t.equal(a.from_utc, '2026-03-01T11:00:00.000Z');
  t.equal(a.to_utc, '2026-03-01T12:00:00.000Z');
  t.same(JSON.parse(a.metrics), ['air_temperature', 'co2']);
  t.ok((await readings()).every((r) => r.import_id === a.id));

  const again = await run('a.csv', fileA);
  t.same([again.readings_added, again.readings_updated, again.readings_skipped], [0, 0, 3], 'the same content again changes nothing');
  t.equal(await count('climate_readings'), 3);
  t.ok(
    (await readings()).every((r) => r.import_id === a.id),
    'unchanged readings keep their source',
  );

  const b = await run('b.csv', [
    { at: Date.UTC(2026, 2, 1, 11), metric: 'air_temperature', value: 20 },
    { at: Date.UTC(2026, 2, 1, 12), metric: 'air_temperature', value: 22.5 },
    { at: Date.UTC(2026, 2, 1, 13), metric: 'air_temperature', value: 23 },
    { at: Date.UTC(2026, 2, 1, 13), metric: 'air_temperature', value: 24 },
  ]);
  t.same(
    [b.readings_added, b.readings_updated, b.readings_skipped, b.duplicates],
    [1, 1, 2, 1],
    'one skipped as equal, one repeat within the file',
  );
  t.same(
    (await readings()).map((r) => r.value),
    [20, 22.5, 24, 600],
    'the later repeat wins',
  );

  t.test('undo refused while a later import changed the same readings', async (t) => {
    const err = await undo(a.id).catch((e) => e);
    t.ok(err instanceof Conflict);
    t.equal(problemOf(err)!.status, 409);
    t.same(err.extra.later_imports, [b.id]);
    t.equal((await readings()).length, 4, 'nothing changed');
  });

  t.test('undo of the later import restores values and removes what it added', async (t) => {
    const r = await undo(b.id);
    t.same([r.removed, r.restored, r.missing], [1, 1, 0]);
    t.same(
      (await readings()).map((x) => [x.value, x.import_id]),
      [
        [20, a.id],
        [21, a.id],
        [600, a.id],
      ],
    );
    const rec = await db.selectFrom('climate_imports').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow();
    t.same((await store.write(SYSTEM_ACTOR, (w) => laterChanges(w, rec))).later_imports, [], 'no conflict left');
    const twice = await undo(b.id).catch((e) => e);
    t.equal(problemOf(twice)!.status, 409, 'undoing twice is refused');
  });

  t.test('then the first import undoes cleanly', async (t) => {
    const r = await undo(a.id);
    t.equal(r.removed, 3);
    t.equal((await readings()).length, 0);
    const rec = await db.selectFrom('climate_imports').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow();
    t.equal(rec.status, 'undone');
    t.ok(rec.undone_at);
  });

  t.test('hand edits after an import need confirm; confirm undoes anyway', async (t) => {
    const c = await run('c.csv', [{ at: '2026-04-01T00:00:00Z', metric: 'co2', value: 700 }]);
    const point = (await readings())[0];
    const listed = await s.request('GET', `${tree.cyclePath}/climate`, { key: tree.adminKey });
    const pid = listed.body.items.find((r: any) => r.source === c.id).point_id;
    const edit = await s.request('PATCH', `${tree.cyclePath}/climate/${pid}`, { key: tree.adminKey, body: { value: 710 } });
    t.equal(edit.status, 200);
    t.equal(edit.body.source, 'manual');
    const refused = await undo(c.id).catch((e) => e);
    t.equal(problemOf(refused)!.status, 409);
    t.equal(refused.extra.manual_edits, 1);
    t.equal((await readings())[0].value, 710);
    const done = await undo(c.id, true);
    t.equal(done.removed, 1);
    t.equal((await readings()).length, 0, `${point.metric} removed with confirm`);
  });

  t.test('batches: repeats across batches, and the one-by-one path for exports out of time order', async (t) => {
    for (const prefetchMax of [50_000, 0]) {
      const other = await createTree(s);
      const c2 = await db.selectFrom('cycles').selectAll().where('id', '=', other.cycleId).executeTakeFirstOrThrow();
      const go = (name: string, batches: IncomingReading[][]) =>
        store.write(SYSTEM_ACTOR, (w) => storeImport(w, c2, meta(name), batches, prefetchMax));
      const at = (h: number) => Date.UTC(2026, 5, 1, h);
      const first = await go('one', [
        [
          { at: at(0), metric: 'co2', value: 1 },
          { at: at(1), metric: 'co2', value: 2 },
          { at: at(0), metric: 'co2', value: 3 },
        ],
        [
          { at: at(1), metric: 'co2', value: 4 },
          { at: at(2), metric: 'co2', value: 5 },
        ],
      ]);
      t.same([first.readings_added, first.duplicates], [3, 2], `prefetchMax ${prefetchMax}: repeats within and across batches`);
      const stored = async () =>
        (await dbRows<any>(s, 'SELECT at_utc, value FROM climate_readings WHERE cycle_id = ? ORDER BY at_utc', other.cycleId)).map(
          (r) => r.value,
        );
      t.same(await stored(), [3, 4, 5], 'the later value wins');
      const second = await go('two', [
        [
          { at: at(2), metric: 'co2', value: 5 },
          { at: at(0), metric: 'co2', value: 9 },
          { at: at(3), metric: 'co2', value: 6 },
        ],
      ]);
      t.same([second.readings_added, second.readings_updated, second.readings_skipped], [1, 1, 1]);
      t.same(await stored(), [9, 4, 5, 6]);
      await undo(second.id);
      t.same(await stored(), [3, 4, 5]);
    }
  });

  t.test('a repeat of a reading already written out of the buffer (over 500 rows back) still wins', async (t) => {
    for (const preStored of [false, true]) {
      const other = await createTree(s);
      const c3 = await db.selectFrom('cycles').selectAll().where('id', '=', other.cycleId).executeTakeFirstOrThrow();
      const go = (name: string, batches: IncomingReading[][]) => store.write(SYSTEM_ACTOR, (w) => storeImport(w, c3, meta(name), batches));
      const at = Date.UTC(2026, 6, 1, 12);
      // A reading already in the span sends the batch down the path with a lookup per reading.
      if (preStored) await go('before', [[{ at, metric: 'zz_before', value: 1 }]]);
      const batch: IncomingReading[] = Array.from({ length: 600 }, (_, i) => ({ at, metric: `m${i}`, value: 1 }));
      batch.push({ at, metric: 'm0', value: 2 }, { at, metric: 'm599', value: 3 });
      const r = await go('wide', [batch]);
      t.same([r.readings_added, r.duplicates], [600, 2], `pre-stored ${preStored}`);
      const value = async (m: string) =>
        (await dbRows<{ value: number }>(s, 'SELECT value FROM climate_readings WHERE cycle_id = ? AND metric = ?', other.cycleId, m))[0]!
          .value;
      t.same(
        [await value('m0'), await value('m1'), await value('m599')],
        [2, 1, 3],
        'written or still buffered, the later value is stored',
      );
      await undo(r.id);
      t.equal(
        await dbCount(s, 'SELECT count(*) AS n FROM climate_readings WHERE cycle_id = ?', other.cycleId),
        preStored ? 1 : 0,
        'undo removes them all',
      );
    }
  });

  t.test('a large import written in chunks as it reads: every reading once, a late repeat of an early one wins', async (t) => {
    const other = await createTree(s);
    const c4 = await db.selectFrom('cycles').selectAll().where('id', '=', other.cycleId).executeTakeFirstOrThrow();
    const t0 = Date.UTC(2025, 0, 1);
    const batch = (from: number, n: number, bump = 0): IncomingReading[] =>
      Array.from({ length: n }, (_, i) => ({ at: t0 + (from + i) * 60_000, metric: 'big', value: ((from + i) % 1000) + bump }));
    // 30,000 readings: more than one chunk is written (COPY on PostgreSQL) before the repeats come.
    const r = await store.write(SYSTEM_ACTOR, (w) =>
      storeImport(w, c4, meta('big.csv'), [batch(0, 15_000), batch(15_000, 15_000), batch(0, 100, 0.5)]),
    );
    t.same([r.readings_added, r.duplicates], [30_000, 100]);
    t.equal(await dbCount(s, 'SELECT count(*) AS n FROM climate_readings WHERE cycle_id = ?', other.cycleId), 30_000);
    const early = await dbRows<{ value: number }>(
      s,
      'SELECT value FROM climate_readings WHERE cycle_id = ? ORDER BY at_utc LIMIT 3',
      other.cycleId,
    );
    t.same(
      early.map((e) => e.value),
      [0.5, 1.5, 2.5],
      'the repeats, written after the first chunks, replaced them',
    );
    const again = await store.write(SYSTEM_ACTOR, (w) => storeImport(w, c4, meta('big2.csv'), [batch(14_990, 20)]));
    t.same(
      [again.readings_added, again.readings_updated, again.readings_skipped],
      [0, 0, 20],
      'a re-import across the chunk boundary finds them all',
    );
    await undo(r.id, true);
    t.equal(await dbCount(s, 'SELECT count(*) AS n FROM climate_readings WHERE cycle_id = ?', other.cycleId), 0, 'undo removes them all');
  });

  t.test('a failure half way leaves nothing: no readings, no record, no effects, no log', async (t) => {
    const before = {
      readings: await count('climate_readings'),
      imports: await count('climate_imports'),
      effects: await count('climate_import_undo'),
      log: await count('change_log'),
    };
    async function* batches(): AsyncGenerator<IncomingReading[]> {
      yield Array.from({ length: 5000 }, (_, i) => ({ at: Date.UTC(2026, 4, 1) + i * 60_000, metric: 'par', value: i % 1000 }));
      // An empty metric name breaks the table's CHECK constraint.
      yield [{ at: Date.UTC(2026, 5, 1), metric: '', value: 1 }];
    }
    const err = await store.write(SYSTEM_ACTOR, (w) => storeImport(w, cycle, meta('crash.csv'), batches())).catch((e) => e);
    // SQLite's words, or PostgreSQL's.
    t.match(String(err), /CHECK constraint failed|violates check constraint/);
    t.same(
      {
        readings: await count('climate_readings'),
        imports: await count('climate_imports'),
        effects: await count('climate_import_undo'),
        log: await count('change_log'),
      },
      before,
    );
  });
});
