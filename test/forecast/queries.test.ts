// The model's input read from the database: daily temperatures grouped by local day in SQL across
// clock changes, and truss counts aggregated per date, checked against the same figures in plain code.
import t from 'tap';
import { createTree, startServer } from '../helpers/server.js';
import { dailyTemperatures, offsetSpans, trussInputs } from '../../src/forecast/queries.js';
import { dayNumber, localDayCursor } from '../../src/time/days.js';

t.test('offset spans: the clock changes of a zone', async (t) => {
  const spans = offsetSpans(Date.parse('2026-03-01T00:00:00Z'), Date.parse('2026-11-01T00:00:00Z'), 'Europe/Amsterdam');
  t.same(spans, [
    { untilMs: Date.parse('2026-03-29T01:00:00Z'), offsetMs: 3_600_000 },
    { untilMs: Date.parse('2026-10-25T01:00:00Z'), offsetMs: 7_200_000 },
    { untilMs: Date.parse('2026-11-01T00:00:00Z'), offsetMs: 3_600_000 },
  ]);
  t.same(offsetSpans(0, 86_400_000 * 3, 'UTC'), [{ untilMs: 86_400_000 * 3, offsetMs: 0 }]);
});

t.test('daily temperatures on local days, across both clock changes', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s, { timeZone: 'Europe/Amsterdam' });
  const key = tree.adminKey;
  // Every hour from 27 March to 30 March and 24 to 27 October 2026 (UTC), the value the UTC hour.
  const hours: { at: string; value: number }[] = [];
  for (const [from, n] of [
    ['2026-03-27T00:00:00Z', 96],
    ['2026-10-24T00:00:00Z', 96],
  ] as const)
    for (let i = 0; i < n; i++) hours.push({ at: new Date(Date.parse(from) + i * 3_600_000).toISOString(), value: 10 + (i % 24) });
  const r = await s.request('POST', `${tree.cyclePath}/climate`, {
    key,
    body: { points: hours.map((h) => ({ metric: 'air_temperature', at: h.at, value: h.value })) },
  });
  t.equal(r.status, 200);
  const days = await dailyTemperatures(
    s.app.services.db,
    tree.cycleId,
    'Europe/Amsterdam',
    dayNumber('2026-03-20'),
    dayNumber('2026-11-01'),
  );
  // The same by hand: each hour to its local day with the cursor.
  const cursor = localDayCursor(dayNumber('2026-03-20'), dayNumber('2026-11-01'), 'Europe/Amsterdam');
  const expected = new Map<number, { sum: number; n: number }>();
  for (const h of hours) {
    const d = cursor(Date.parse(h.at));
    const e = expected.get(d) ?? { sum: 0, n: 0 };
    e.sum += h.value;
    e.n++;
    expected.set(d, e);
  }
  const want = [...expected]
    .filter(([, e]) => e.n >= 12)
    .sort((a, b) => a[0] - b[0])
    .map(([day, e]) => ({ day, meanC: e.sum / e.n, hours: e.n, source: 'air_temperature' }));
  t.same(days, want);
  t.ok(
    days.some((d) => d.day === dayNumber('2026-03-29') && d.hours === 23),
    'the spring day has 23 hours',
  );
  t.ok(
    days.some((d) => d.day === dayNumber('2026-10-25') && d.hours === 25),
    'the autumn day 25',
  );
});

t.test('truss counts: the mean top truss per plant, fruit per set truss; a date without rows is no count', async (t) => {
  const x = trussInputs(
    [
      { id: 'a', counted_on: '2026-03-02', stems_per_m2: null },
      { id: 'b', counted_on: '2026-03-09', stems_per_m2: 4 },
      { id: 'c', counted_on: '2026-03-16', stems_per_m2: null },
    ],
    [
      { count_id: 'a', top: 5, fruits: 36, set_trusses: 3 },
      { count_id: 'a', top: 7, fruits: 24, set_trusses: 2 },
      { count_id: 'b', top: 8, fruits: 0, set_trusses: 0 },
    ],
  );
  t.same(x, [
    { day: dayNumber('2026-03-02'), trussesPerStem: 6, fruitPerTruss: 12, stemsPerM2: null },
    { day: dayNumber('2026-03-09'), trussesPerStem: 8, fruitPerTruss: null, stemsPerM2: 4 },
  ]);
});
