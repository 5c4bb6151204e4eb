import t from 'tap';
import { startServer, createTree } from '../../helpers/server.js';
import { countChange, countFigures, countSeries } from '../../../src/records/truss-counts/figures.js';
import { duplicateRows } from '../../../src/records/truss-counts/commands.js';

const rowsA = [
  { plant: 'P1', truss: 1, fruits: 6, flowers: 0 },
  { plant: 'P1', truss: 2, fruits: 4, flowers: 2 },
  { plant: 'P2', truss: 1, fruits: 5 },
];

t.test('countFigures', async (t) => {
  const f = countFigures(rowsA, { stems_per_m2: 3, plants_per_m2: 2.5 });
  t.same(f, {
    plants: 2,
    trusses: 3,
    fruits: 15,
    flowers: 2,
    fruit_per_truss: 5,
    trusses_per_plant: 1.5,
    fruit_per_plant: 7.5,
    flowers_per_plant: 1,
    fruit_per_m2: 22.5,
    density_per_m2: 3,
    density_basis: 'stems_per_m2',
    density_from: null,
    fruit_per_m2_reason: null,
  });
  const byPlants = countFigures(rowsA, { stems_per_m2: null, plants_per_m2: 2.5 });
  t.equal(byPlants.fruit_per_m2, 18.75);
  t.equal(byPlants.density_basis, 'plants_per_m2');
  const none = countFigures(rowsA, { stems_per_m2: null, plants_per_m2: null });
  t.equal(none.fruit_per_m2, null);
  t.equal(none.density_basis, null);
  t.match(none.fruit_per_m2_reason, /no plants_per_m2/);
  const noFlowers = countFigures([{ plant: 'A', truss: 1, fruits: 3 }], { stems_per_m2: null, plants_per_m2: 2 });
  t.equal(noFlowers.flowers, null);
  t.equal(noFlowers.flowers_per_plant, null);
  t.equal(
    countFigures(
      [
        { plant: 'A', truss: 1, fruits: 1 },
        { plant: 'A', truss: 2, fruits: 1 },
        { plant: 'A', truss: 3, fruits: 2 },
      ],
      { stems_per_m2: null, plants_per_m2: null },
    ).fruit_per_truss,
    1.3333,
    'rounded to 4 places',
  );
});

t.test("a count date's stem density holds from it until the next date that carries one", async (t) => {
  const series = countSeries(
    [
      { counted_on: '2026-03-01', rows: rowsA, stems_per_m2: null },
      { counted_on: '2026-03-08', rows: rowsA, stems_per_m2: 4 },
      { counted_on: '2026-03-15', rows: rowsA, stems_per_m2: null },
      { counted_on: '2026-03-22', rows: rowsA, stems_per_m2: 5 },
    ],
    { stems_per_m2: 3, plants_per_m2: 2 },
  );
  t.same(
    series.map((x) => [
      x.count.counted_on,
      x.figures.density_basis,
      x.figures.density_per_m2,
      x.figures.density_from,
      x.figures.fruit_per_m2,
    ]),
    [
      ['2026-03-22', 'truss_count', 5, '2026-03-22', 37.5],
      ['2026-03-15', 'truss_count', 4, '2026-03-08', 30],
      ['2026-03-08', 'truss_count', 4, '2026-03-08', 30],
      ['2026-03-01', 'stems_per_m2', 3, null, 22.5],
    ],
  );
  t.equal(series[1]!.change!.delta.fruit_per_m2, 0, 'same density, same rows');
  t.equal(series[0]!.change!.delta.fruit_per_m2, 7.5, 'the density moved');
});

t.test('countChange and countSeries', async (t) => {
  const density = { stems_per_m2: 3, plants_per_m2: null };
  const older = { counted_on: '2026-03-01', figures: countFigures(rowsA, density) };
  const newer = { counted_on: '2026-03-15', figures: countFigures([...rowsA, { plant: 'P2', truss: 2, fruits: 3, flowers: 4 }], density) };
  const c = countChange(newer, older);
  t.equal(c.since, '2026-03-01');
  t.equal(c.days, 14);
  t.equal(c.delta.fruit_per_plant, 1.5, '9 - 7.5');
  t.equal(c.per_week.fruit_per_plant, 0.75, 'over two weeks');
  t.equal(c.delta.trusses_per_plant, 0.5);
  t.equal(c.delta.fruit_per_m2, 4.5);
  t.equal(c.delta.flowers_per_plant, 2, '3 - 1');
  const withNull = countChange({ counted_on: '2026-03-08', figures: countFigures([{ plant: 'A', truss: 1, fruits: 1 }], density) }, older);
  t.equal(withNull.delta.flowers_per_plant, null, 'no flowers counted on one side');

  const series = countSeries(
    [
      { counted_on: '2026-03-01', rows: rowsA },
      { counted_on: '2026-03-15', rows: rowsA },
      { counted_on: '2026-03-08', rows: rowsA },
    ],
    density,
  );
  t.same(
    series.map((x) => [x.count.counted_on, x.change?.since ?? null]),
    [
      ['2026-03-15', '2026-03-08'],
      ['2026-03-08', '2026-03-01'],
      ['2026-03-01', null],
    ],
    'newest first, each against the next older',
  );
});

t.test('duplicateRows names each repeat', async (t) => {
  t.same(duplicateRows(rowsA), []);
  const d = duplicateRows([...rowsA, { plant: 'P1', truss: 2, fruits: 1 }, { plant: 'P1 ', truss: 2, fruits: 1 }]);
  t.same(
    d.map((e) => e.name),
    ['rows.3'],
    'a different tag is a different plant',
  );
  t.match(d[0]!.message, /already counted in rows.1/);
});

t.test('truss counts over HTTP', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const key = tree.adminKey;
  const url = `${tree.cyclePath}/truss-counts`;
  const list = async () => (await s.request('GET', url, { key })).body.items as any[];
  const rowCount = async () =>
    Number(
      (
        await s.app.services.db
          .selectFrom('truss_count_rows')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('cycle_id', '=', tree.cycleId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  const first = await s.request('PUT', url, { key, body: { counted_on: '2026-03-02', rows: rowsA } });
  t.equal(first.status, 200, first.text);
  t.match(first.body, { counted_on: '2026-03-02', week: '2026-W10', change: null, cycle_id: tree.cycleId });
  t.same(first.body.rows, [
    { plant: 'P1', truss: 1, fruits: 6, flowers: 0 },
    { plant: 'P1', truss: 2, fruits: 4, flowers: 2 },
    { plant: 'P2', truss: 1, fruits: 5, flowers: null },
  ]);
  t.equal(first.body.figures.fruit_per_m2, 7.5 * 3.3, "scaled by the cycle's stems_per_m2 (3.3)");

  const second = await s.request('PUT', url, {
    key,
    body: { counted_on: '2026-03-09', rows: [...rowsA, { plant: 'P2', truss: 2, fruits: 3 }] },
  });
  t.equal(second.status, 200);
  t.match(second.body.change, { since: '2026-03-02', days: 7, delta: { fruit_per_plant: 1.5 }, per_week: { fruit_per_plant: 1.5 } });

  let items = await list();
  t.same(
    items.map((c) => c.counted_on),
    ['2026-03-09', '2026-03-02'],
    'newest first',
  );
  t.equal(await rowCount(), 7);

  t.test('saving a date again replaces all its rows', async (t) => {
    const firstVersion = first.body.version;
    const r = await s.request('PUT', url, { key, body: { counted_on: '2026-03-02', rows: [{ plant: 'Q9', truss: 4, fruits: 2 }] } });
    t.equal(r.status, 200);
    t.same(r.body.rows, [{ plant: 'Q9', truss: 4, fruits: 2, flowers: null }]);
    t.equal(r.body.count_id, first.body.count_id, 'the same count date record');
    t.not(r.body.version, firstVersion);
    items = await list();
    t.equal(items.length, 2);
    t.same(
      items[1].rows.map((x: any) => x.plant),
      ['Q9'],
    );
    t.equal(await rowCount(), 5, '4 rows of 03-09 + 1 of 03-02');
    const log = await s.app.services.db
      .selectFrom('change_log')
      .select(['op'])
      .where('entity', '=', 'truss_count_rows')
      .where('op', '=', 'delete')
      .execute();
    t.equal(log.length, 3, 'each replaced row leaves a tombstone');
  });

  t.test('bad input is a 422 and keeps what was saved', async (t) => {
    const before = await list();
    const cases: [unknown, string][] = [
      [
        {
          counted_on: '2026-03-02',
          rows: [
            { plant: 'A', truss: 1, fruits: 1 },
            { plant: 'B', truss: 1, fruits: 1 },
            { plant: 'A', truss: 1, fruits: 3 },
          ],
        },
        'rows.2',
      ],
      [{ counted_on: '2026-03-02', rows: [] }, 'rows'],
      [{ counted_on: '2026-02-30', rows: rowsA }, 'counted_on'],
      [{ counted_on: '2026-W10', rows: rowsA }, 'counted_on'],
      [{ rows: rowsA }, 'counted_on'],
      [{ counted_on: '2026-03-02', rows: [{ plant: '', truss: 1, fruits: 1 }] }, 'rows.0.plant'],
      [{ counted_on: '2026-03-02', rows: [{ plant: 'x'.repeat(51), truss: 1, fruits: 1 }] }, 'rows.0.plant'],
      [{ counted_on: '2026-03-02', rows: [{ plant: 'A', truss: 0, fruits: 1 }] }, 'rows.0.truss'],
      [{ counted_on: '2026-03-02', rows: [{ plant: 'A', truss: 1.5, fruits: 1 }] }, 'rows.0.truss'],
      [{ counted_on: '2026-03-02', rows: [{ plant: 'A', truss: 1, fruits: -1 }] }, 'rows.0.fruits'],
      [{ counted_on: '2026-03-02', rows: [{ plant: 'A', truss: 1, fruits: 1, flowers: -2 }] }, 'rows.0.flowers'],
      [{ counted_on: '2026-03-02', rows: [{ plant: 'A', truss: 1 }] }, 'rows.0.fruits'],
      [{ counted_on: '2026-03-02', rows: Array.from({ length: 5001 }, (_, i) => ({ plant: `P${i}`, truss: 1, fruits: 1 })) }, 'rows'],
    ];
    for (const [body, field] of cases) {
      const r = await s.request('PUT', url, { key, body });
      t.equal(r.status, 422, field);
      t.ok(
        r.body.errors.some((e: any) => e.name === field),
        `names ${field}: ${JSON.stringify(r.body.errors).slice(0, 300)}`,
      );
    }
    t.same(await list(), before, 'nothing changed');
  });

  t.test('5,000 rows are accepted', async (t) => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({ plant: `P${Math.floor(i / 10)}`, truss: (i % 10) + 1, fruits: i % 7 }));
    const r = await s.request('PUT', url, { key, body: { counted_on: '2026-03-16', rows } });
    t.equal(r.status, 200);
    t.equal(r.body.figures.plants, 500);
    t.equal(r.body.figures.trusses_per_plant, 10);
  });

  t.test('a cycle without density', async (t) => {
    const c = await s.request('POST', `${tree.greenhousePath}/rows/${tree.rowId}/cycles`, {
      key,
      body: { name: 'no density', started_on: '2026-01-05' },
    });
    const r = await s.request('PUT', `${tree.greenhousePath}/rows/${tree.rowId}/cycles/${c.body.cycle_id}/truss-counts`, {
      key,
      body: { counted_on: '2026-03-02', rows: rowsA },
    });
    t.equal(r.status, 200);
    t.equal(r.body.figures.fruit_per_m2, null);
    t.match(r.body.figures.fruit_per_m2_reason, /neither/);
  });

  t.test('paged by count date; change compares across pages', async (t) => {
    const page = await s.request('GET', `${url}?limit=1&offset=1`, { key });
    t.equal(page.status, 200);
    t.match(page.body, { total: 3, limit: 1, offset: 1 });
    t.same(
      page.body.items.map((c: any) => [c.counted_on, c.change?.since]),
      [['2026-03-09', '2026-03-02']],
    );
    t.equal((await s.request('GET', `${url}?limit=501`, { key })).status, 422);
    t.match((await s.request('GET', url, { key })).body, { limit: 50, offset: 0, total: 3 });
  });

  t.test('DELETE a date', async (t) => {
    const other = await createTree(s);
    await s.request('PUT', `${other.cyclePath}/truss-counts`, { key: other.adminKey, body: { counted_on: '2026-03-20', rows: rowsA } });
    t.equal((await s.request('DELETE', `${url}/2026-03-20`, { key })).status, 404, 'a date counted only in another org');
    t.equal((await s.request('DELETE', `${other.cyclePath}/truss-counts/2026-03-20`, { key })).status, 404, "another org's path");
    t.equal((await s.request('GET', `${other.cyclePath}/truss-counts`, { key: other.adminKey })).body.items.length, 1, 'untouched');
    t.equal((await s.request('DELETE', `${url}/2026-13-01`, { key })).status, 422);
    t.equal((await s.request('DELETE', `${url}/2026-04-01`, { key })).status, 404, 'nothing counted that date');

    const del = await s.request('DELETE', `${url}/2026-03-09`, { key });
    t.equal(del.status, 200);
    t.same(del.body, { deleted: true, counted_on: '2026-03-09', rows: 4 });
    t.same(
      (await list()).map((c) => c.counted_on),
      ['2026-03-16', '2026-03-02'],
    );
    t.equal((await s.request('DELETE', `${url}/2026-03-09`, { key })).status, 404);
  });
});
