// The staff app's rules that need no browser: its forms refuse what the box refuses, named as the box
// names it (web/src/schema.ts against the served /openapi.json and the box's own 422s); ISO weeks on
// the greenhouse clock (web/src/weeks.ts); the forecast routes' answers read as issue 35 shapes them
// (web/src/forecast-shapes.ts).
import t from 'tap';
import { createTree, startServer } from '../helpers/server.js';
import { validate } from '../../web/src/schema.js';
import { addWeeks, isWeekLabel, mondayOf, weekOfDate } from '../../web/src/weeks.js';
import { isMissingRoute, readBacktest, readForecast, readStored } from '../../web/src/forecast-shapes.js';

t.test('a form refuses exactly what the box refuses, at the same fields', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const doc = (await s.request('GET', '/openapi.json')).body;
  const schemaOf = (op: string) => {
    for (const item of Object.values(doc.paths) as any[])
      for (const o of Object.values(item) as any[]) if (o.operationId === op) return o.requestBody.content['application/json'].schema;
    throw new Error(op);
  };
  const farmUrl = `/api/organizations/${tree.orgId}/farms/${tree.farmId}`;
  const cases: [string, string, string, unknown][] = [
    ['create_greenhouse', 'POST', `${farmUrl}/greenhouses`, { name: 'Kas', time_zone: 'Europe/Amsterdam', latitude: 100 }],
    ['create_greenhouse', 'POST', `${farmUrl}/greenhouses`, { name: '', time_zone: 'Mars/Base', longitude: -181, area_m2: 0 }],
    ['create_greenhouse', 'POST', `${farmUrl}/greenhouses`, { time_zone: 'Europe/Amsterdam', latitude: '52' }],
    ['create_harvest', 'POST', `${tree.cyclePath}/harvests`, { week: '2026-W07', kg: -3 }],
    ['create_harvest', 'POST', `${tree.cyclePath}/harvests`, { week: 'last week', kg: 'x', note: 'n'.repeat(501) }],
    ['create_irrigation_entry', 'POST', `${tree.cyclePath}/irrigation`, { at: '2026-03-01T07:30', ec_in: 51, ph_in: 15 }],
    [
      'save_truss_count',
      'PUT',
      `${tree.cyclePath}/truss-counts`,
      { counted_on: '2026-02-30', rows: [{ plant: '1', truss: 0, fruits: 2.5 }] },
    ],
    ['create_row', 'POST', `${tree.greenhousePath}/rows`, { name: 'Row', plant_count: 1.5, length_m: 0 }],
    ['create_key', 'POST', `/api/organizations/${tree.orgId}/keys`, { name: 'tablet', role: 'owner' }],
  ];
  for (const [op, method, url, body] of cases) {
    const local = validate(schemaOf(op), body)
      .map((e) => e.name)
      .sort();
    const r = await s.request(method, url, { key: tree.adminKey, body });
    t.equal(r.status, 422, `${op} ${JSON.stringify(body)}: the box refuses it`);
    const remote = [...new Set((r.body.errors as { name: string }[]).map((e) => e.name))].sort();
    t.same([...new Set(local)], remote, `${op}: the form names the same fields as the box`);
  }
  // And lets through what the box takes.
  for (const [op, body] of [
    ['create_greenhouse', { name: 'Kas', time_zone: 'America/Toronto', latitude: 43.6, longitude: -79.4, area_m2: 5000 }],
    ['create_harvest', { week: '2026-03-04', kg: 12.5, note: 'first truss' }],
    ['save_truss_count', { counted_on: '2026-02-28', rows: [{ plant: 'A1', truss: 3, fruits: 5 }] }],
  ] as const)
    t.same(validate(schemaOf(op), body), [], `${op}: a good body passes`);
});

t.test('ISO weeks as the box labels them', async (t) => {
  t.equal(weekOfDate(2026, 1, 1), '2026-W01');
  t.equal(weekOfDate(2027, 1, 1), '2026-W53', 'a Friday 1 January belongs to the last week of the year before');
  t.equal(weekOfDate(2024, 12, 30), '2025-W01');
  t.equal(mondayOf('2026-W07'), '2026-02-09');
  t.equal(addWeeks('2026-W52', 2), '2027-W01', '2026 has 53 weeks');
  t.equal(addWeeks('2026-W01', -1), '2025-W52');
  t.ok(isWeekLabel('2026-W53'));
  t.notOk(isWeekLabel('2025-W53'), '2025 has 52 weeks');
  t.notOk(isWeekLabel('2026-7'));
});

t.test("the forecast routes' answers, as issue 35 shapes them and with a first release's variations", async (t) => {
  const f = readForecast({
    week: '2026-W10',
    weeks: [
      { week: '2026-W10', horizon: 0, kg: 410.5, kg_per_m2: 0.41, range: { p10: 380, p90: 450 }, inputs: { walk: 'x' } },
      { week: '2026-W11', horizon: 1, kg: 430, range: { low: 390, high: 480 } },
      { week: '2026-W12', horizon: 2, kg: 440, kg_p10: 395, kg_p90: 500 },
      { week: '2026-W13', horizon: 3, kg: null },
    ],
    naive: true,
  });
  t.equal(f.asOf, '2026-W10');
  t.same(
    f.weeks.map((w) => [w.week, w.horizon, w.kg, w.low, w.high]),
    [
      ['2026-W10', 0, 410.5, 380, 450],
      ['2026-W11', 1, 430, 390, 480],
      ['2026-W12', 2, 440, 395, 500],
      ['2026-W13', 3, null, null, null],
    ],
  );
  t.equal(f.weeks[0]!.kgPerM2, 0.41);
  t.match(f.notes.join(' '), /naive/, 'a naive answer says so');
  const stored = readStored({
    items: [
      { forecast_id: 'f1', week: '2026-W08', created_at: '2026-02-16T10:00:00Z', weeks: [{ week: '2026-W08', kg: 300, realized_kg: 320 }] },
    ],
  });
  t.same(
    stored.map((x) => [x.id, x.asOf, x.weeks[0]!.realized]),
    [['f1', '2026-W08', 320]],
  );
  const bt = readBacktest({
    horizons: [
      {
        horizon: 0,
        n: 12,
        actual_kg: 4000,
        mae_kg: 40,
        wape: 0.1,
        bias_kg: -5,
        baselines: { persistence: { mae_kg: 60, wape: 0.15 }, mean_3_weeks: { mae_kg: 55, wape: 0.14 } },
      },
    ],
    weeks: [],
  });
  t.same(bt, [
    {
      horizon: 0,
      n: 12,
      actualKg: 4000,
      maeKg: 40,
      wape: 0.1,
      biasKg: -5,
      persistence: { maeKg: 60, wape: 0.15 },
      mean3: { maeKg: 55, wape: 0.14 },
    },
  ]);
  // As the box answers them (src/forecast/schemas.ts).
  const box = readForecast({
    week: '2026-W10',
    notes: ['2026-W13: the model has nothing to go on: the better naive baseline answers'],
    weeks: [{ week: '2026-W10', horizon: 0, kg: 410.5, kg_per_m2: 0.41, p10_kg: 380, p90_kg: 450, method: 'model' }],
  });
  t.same(
    box.weeks.map((w) => [w.kg, w.low, w.high]),
    [[410.5, 380, 450]],
  );
  t.match(box.notes.join(' '), /naive baseline/);
  t.equal(
    readStored({ items: [{ forecast_id: 'f2', week: '2026-W10', made_at: '2026-03-02T06:00:00Z', weeks: [] }] })[0]!.createdAt,
    '2026-03-02T06:00:00Z',
  );
  t.same(readForecast('garbage').weeks, [], 'an answer of another shape reads as nothing, not a crash');
  t.same(readBacktest({ horizons: 'no' }), []);
  t.ok(isMissingRoute({ status: 404, detail: 'No route for GET /api/x.' }));
  t.notOk(isMissingRoute({ status: 404, detail: 'No such crop cycle.' }), 'a missing cycle is not a missing route');
});
