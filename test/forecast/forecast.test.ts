// GET {cycle}/forecast and GET {cycle}/backtest over HTTP: a crop typed week by week, the clock set
// to a Monday; what the answer rests on, no peeking, the area, bad weeks, and access.
import t from 'tap';
import { SettableClock } from '../../src/clock.js';
import { createOrg, createTree, startServer } from '../helpers/server.js';
import { iso, plusDays, typeCrop } from '../helpers/crop.js';

const START = '2026-01-05';
const clock = new SettableClock(iso(plusDays(START, 7 * 20), 'Europe/Amsterdam', 8));
const s = await startServer(t, {}, { clock });
const tree = await createTree(s, { startedOn: START });
const key = tree.adminKey;
const c = tree.cyclePath;
await s.request('PATCH', c, { key, body: { area_m2: 100 } });
await typeCrop(s, tree, START, { weeks: 20, harvestFrom: 9, climate: true });
const get = (q = '') => s.request('GET', `${c}/forecast${q}`, { key });

t.test('the forecast: eight weeks, kilos per m² of the area, a range, and what it rests on', async (t) => {
  const r = await get();
  t.equal(r.status, 200, r.text);
  t.equal(r.body.week, '2026-W22', 'no walks: the current week');
  t.equal(r.body.weeks.length, 8);
  t.same(
    r.body.weeks.map((w: any) => w.horizon),
    [0, 1, 2, 3, 4, 5, 6, 7],
  );
  t.same(r.body.area, { area_m2: 100, basis: 'cycle_area_m2', reason: null });
  for (const w of r.body.weeks) {
    t.ok(w.kg > 0, `${w.week}: ${w.kg} kg`);
    t.equal(w.kg_per_m2, Math.round((w.kg / 100) * 10_000) / 10_000);
    t.ok(w.p10_kg <= w.kg && w.kg <= w.p90_kg, 'the forecast inside its range');
  }
  t.equal(r.body.inputs.truss_counts.used, true);
  t.equal(r.body.inputs.truss_counts.counts, 20);
  t.equal(r.body.inputs.truss_counts.last_counted_on, plusDays(START, 7 * 19));
  t.equal(r.body.inputs.temperature.source, 'air_temperature');
  t.equal(r.body.inputs.pick_calendar.mode, 'picks');
  t.same(r.body.inputs.pick_calendar.pattern_days, [3, 4], 'from the last pick, a Friday: 3 days to Monday, then 4 to Friday');
  t.same(r.body.weeks[0].inputs.picks, [plusDays(START, 140), plusDays(START, 144)], 'this week: Monday and Friday');
  t.equal(r.body.weeks[0].model.calibration.basis, 'horizon', 'calibrated on its own horizon after 11 weeks of harvest');
  t.match(r.body.weeks[0].fallback.reason, /WAPE/);
  t.equal(r.body.total_kg, Math.round(r.body.weeks.reduce((a: number, w: any) => a + w.kg, 0) * 1000) / 1000);
});

t.test('as of a week: what came later does not change it, what came before does', async (t) => {
  const before = await get('?week=2026-W15');
  t.equal(before.status, 200);
  t.equal(before.body.week, '2026-W15');
  // A harvest in the week itself, a later truss count and later temperatures are not known as of W15.
  const h = await s.request('POST', `${c}/harvests`, { key, body: { harvested_on: '2026-04-08', kg: 500 } });
  t.equal(h.status, 201);
  await s.request('POST', `${c}/climate`, { key, body: { points: [{ metric: 'air_temperature', at: '2026-04-07T12:00:00', value: 35 }] } });
  t.same((await get('?week=2026-W15')).body, before.body, 'unchanged');
  // A harvest of the week before is.
  const earlier = await s.request('POST', `${c}/harvests`, { key, body: { harvested_on: '2026-04-03', kg: 200 } });
  t.not((await get('?week=2026-W15')).body.weeks[0].baselines.persistence_kg, before.body.weeks[0].baselines.persistence_kg);
  await s.request('DELETE', `${c}/harvests/${h.body.harvest_id}`, { key });
  await s.request('DELETE', `${c}/harvests/${earlier.body.harvest_id}`, { key });
  t.same((await get('?week=2026-W15')).body, before.body, 'and back when they go');
  // Warmer hours on the Sunday before W15 raise the temperature assumed ahead (a cached replay would not see them).
  const warm = [];
  for (let h = 0; h < 24; h++) warm.push({ metric: 'air_temperature', at: iso('2026-04-05', 'Europe/Amsterdam', h), value: 28 });
  t.equal((await s.request('POST', `${c}/climate`, { key, body: { points: warm } })).status, 200);
  const warmer = (await get('?week=2026-W15')).body;
  t.ok(warmer.inputs.temperature.ahead_c > before.body.inputs.temperature.ahead_c, `${warmer.inputs.temperature.ahead_c} °C`);
});

t.test('bad weeks are a 422 naming the week', async (t) => {
  for (const [q, message] of [
    ['?week=2026-W53', /week/],
    ['?week=soon', /must match/],
    ['?week=2025-12-29', /before the crop cycle started/],
    ['?week=2026-W30', /has not begun/],
  ] as const) {
    const r = await get(q);
    t.equal(r.status, 422, q);
    t.equal(r.body.code, 'validation_failed');
    t.ok(
      r.body.errors.some((e: any) => e.in === 'query' && e.name === 'week' && message.test(e.message)),
      `${q}: ${JSON.stringify(r.body.errors)}`,
    );
  }
});

t.test('without an area, kilos per m² are null and say why; without anything to go on, a baseline answers and says so', async (t) => {
  // The test tree's row has no plant_count and its cycle no area_m2.
  const bare = await createTree(s, { startedOn: START });
  await s.request('POST', `${bare.cyclePath}/harvests`, { key: bare.adminKey, body: { harvested_on: '2026-05-18', kg: 30 } });
  const r = await s.request('GET', `${bare.cyclePath}/forecast`, { key: bare.adminKey });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.area.area_m2, null);
  t.match(r.body.area.reason, /area_m2/);
  t.equal(r.body.weeks[0].kg_per_m2, null);
  t.not(r.body.weeks[0].method, 'model');
  t.match(r.body.weeks[0].fallback.reason, /nothing to go on.*truss count/);
  const w0 = r.body.weeks[0];
  t.equal(w0.kg, w0.baselines[`${w0.method}_kg`], 'the baseline it names');
  t.same(w0.baselines, { persistence_kg: 30, mean_3_weeks_kg: 10 });
});

t.test('access: another organization is a 404, no key a 401, a member key reads', async (t) => {
  const other = await createOrg(s, 'Others');
  t.equal((await s.request('GET', `${c}/forecast`, { key: other.adminKey })).status, 404);
  t.equal((await s.request('GET', `${c}/backtest`, { key: other.adminKey })).status, 404);
  t.equal((await s.request('GET', `${c}/forecast`)).status, 401);
  const member = await s.request('POST', `/api/organizations/${tree.orgId}/keys`, { key, body: { name: 'grower', role: 'member' } });
  t.equal((await s.request('GET', `${c}/forecast`, { key: member.body.api_key })).status, 200);
});

t.test('the backtest: every complete week per horizon, against both baselines on the same weeks', async (t) => {
  const r = await s.request('GET', `${c}/backtest`, { key });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.complete_before, '2026-W22');
  t.equal(r.body.weeks.length, 21, 'as of each week from the first to the current one');
  t.equal(r.body.horizons.length, 8);
  const h0 = r.body.horizons[0];
  t.equal(h0.n, 20, 'twenty complete weeks, W02 to W21');
  t.equal(r.body.horizons[7].n, 13);
  // The figures, by hand from the replayed weeks.
  const pairs = r.body.weeks.map((w: any) => w.forecasts[0]).filter((f: any) => f.actual_kg !== null);
  const act = pairs.reduce((a: number, f: any) => a + f.actual_kg, 0);
  t.ok(Math.abs(h0.actual_kg - act) < 0.01);
  const abs = pairs.reduce((a: number, f: any) => a + Math.abs(f.kg - f.actual_kg), 0);
  t.ok(Math.abs(h0.wape - abs / act) < 0.001, `wape ${h0.wape} = ${abs / act}`);
  const pers = pairs.reduce((a: number, f: any) => a + Math.abs(f.baselines.persistence_kg - f.actual_kg), 0);
  t.ok(Math.abs(h0.baselines.persistence.wape - pers / act) < 0.001);
  t.equal(r.body.weeks[20].forecasts[0].actual_kg, null, 'the current week is not complete');
  // The live forecast is the backtest's last week.
  const live = (await get()).body;
  t.same(
    r.body.weeks[20].forecasts.map((f: any) => f.kg),
    live.weeks.map((w: any) => w.kg),
  );

  // An edited harvest changes the next backtest.
  const list = await s.request('GET', `${c}/harvests?week=2026-W12`, { key });
  const edited = await s.request('PATCH', `${c}/harvests/${list.body.items[0].harvest_id}`, { key, body: { kg: 90 } });
  t.equal(edited.status, 200);
  const after = await s.request('GET', `${c}/backtest`, { key });
  t.not(after.body.horizons[0].actual_kg, h0.actual_kg);
  t.equal(after.body.horizons[0].actual_kg, Math.round((h0.actual_kg - list.body.items[0].kg + 90) * 1000) / 1000);
  await s.request('DELETE', `${c}/harvests/${list.body.items[0].harvest_id}`, { key });
  const deleted = await s.request('GET', `${c}/backtest`, { key });
  t.equal(deleted.body.horizons[0].actual_kg, Math.round((h0.actual_kg - list.body.items[0].kg) * 1000) / 1000);

  // A week later by the clock, one more week is complete.
  clock.advance(7 * 86_400_000);
  const later = await s.request('GET', `${c}/backtest`, { key });
  t.equal(later.body.horizons[0].n, 21);
  clock.advance(-7 * 86_400_000);
});

t.test('a kept replay answers what a replay from scratch does, write after write', async (t) => {
  // Another cycle in the same organization, whose writes must not change this one's answers.
  const row2 = await s.request('POST', `${tree.greenhousePath}/rows`, { key, body: { name: 'Row 2' } });
  const cycle2 = await s.request('POST', `${tree.greenhousePath}/rows/${row2.body.row_id}/cycles`, {
    key,
    body: { name: 'B', started_on: START },
  });
  const c2 = `${tree.greenhousePath}/rows/${row2.body.row_id}/cycles/${cycle2.body.cycle_id}`;
  const reads = [`${c}/backtest`, `${c}/forecast`, `${c}/forecast?week=2026-W12`, `${c}/weeks/2026-W18`];
  const answers = async (server: typeof s) => Promise.all(reads.map(async (u) => (await server.request('GET', u, { key })).body));
  const fromScratch = async () => {
    // A second server on the same data keeps no replay of its own yet.
    const fresh = await startServer(t, { dataDir: s.dataDir }, { clock });
    try {
      return await answers(fresh);
    } finally {
      await fresh.close();
    }
  };
  let last = await answers(s);
  const writes: [string, () => Promise<unknown>, boolean][] = [
    ['a week note', () => s.request('POST', `${c}/weeks/2026-W10`, { key, body: { text: 'leaf curl in the east end' } }), false],
    ["another cycle's harvest", () => s.request('POST', `${c2}/harvests`, { key, body: { harvested_on: '2026-03-04', kg: 900 } }), false],
    // Known from next week on: the answers as of now stay.
    [
      'a harvest typed for today',
      () => s.request('POST', `${c}/harvests`, { key, body: { harvested_on: plusDays(START, 140), kg: 30 } }),
      false,
    ],
    ["last week's harvest", () => s.request('POST', `${c}/harvests`, { key, body: { harvested_on: plusDays(START, 137), kg: 30 } }), true],
    ['an early harvest', () => s.request('POST', `${c}/harvests`, { key, body: { harvested_on: '2026-03-10', kg: 60 } }), true],
    [
      'a truss count',
      () =>
        s.request('PUT', `${c}/truss-counts`, { key, body: { counted_on: '2026-03-16', rows: [{ plant: 'P1', truss: 14, fruits: 30 }] } }),
      true,
    ],
    [
      'a fruit mass',
      () => s.request('POST', `${c}/fruit-mass`, { key, body: { week: '2026-W11', green_g: 14, turning_g: 15, red_g: 16 } }),
      true,
    ],
    [
      'warmer hours',
      () =>
        s.request('POST', `${c}/climate`, { key, body: { points: [{ metric: 'air_temperature', at: '2026-03-01T12:00:00', value: 34 }] } }),
      true,
    ],
  ];
  for (const [what, write, changes] of writes) {
    const w = (await write()) as { status: number; text: string };
    t.ok(w.status < 300, `${what}: ${w.status} ${w.text}`);
    const kept = await answers(s);
    t.same(kept, await fromScratch(), `after ${what}: the kept replay's answers are a fresh one's`);
    if (changes) t.notSame(kept, last, `${what} changes the answers`);
    else t.same(kept, last, `${what} leaves them as they were`);
    last = kept;
  }
});
