// GET {cycle}/weeks/{week} over HTTP: a real photo walk scored and corrected, harvests, irrigation,
// hourly climate, a note, a stored forecast; each figure checked by hand, per m² with the area it used.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SettableClock } from '../../src/clock.js';
import { createOrg, createTree, startServer } from '../helpers/server.js';
import { poll, upload } from '../helpers/walks.js';
import { iso, plusDays, typeCrop } from '../helpers/crop.js';

const PHOTO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples/row-close.jpg');
const START = '2026-01-05';
const clock = new SettableClock(iso('2026-03-16', 'Europe/Amsterdam', 9));
const s = await startServer(t, {}, { clock });
const tree = await createTree(s, { startedOn: START });
const key = tree.adminKey;
const c = tree.cyclePath;
// The area from the row: 250 plants at the cycle's 2.5 plants/m² is 100 m².
await s.request('PATCH', `${tree.greenhousePath}/rows/${tree.rowId}`, { key, body: { plant_count: 250 } });
await typeCrop(s, tree, START, { weeks: 8, harvestFrom: 99 });

const W = '2026-W10'; // 2 to 8 March 2026
const ok = async (method: string, url: string, body?: unknown) => {
  const r = await s.request(method, url, { key, body });
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${r.text}`);
  return r.body;
};

const up = await upload(s, `${c}/videos`, key, [{ field: 'file', file: PHOTO }], { week: W });
const JOB = up.body.job_id as string;
const scored = (await poll(s, JOB, key)).at(-1);
await ok('POST', `/api/organizations/${tree.orgId}/walks/${JOB}/corrections`, {
  kind: 'counts',
  counts: { red: 40, turning: 10, green: 50 },
});

await ok('POST', `${c}/harvests`, { harvested_on: '2026-03-02', kg: 30 });
await ok('POST', `${c}/harvests`, { harvested_on: '2026-03-02', kg: 5 });
await ok('POST', `${c}/harvests`, { harvested_on: '2026-03-06', kg: 25 });
await ok('POST', `${c}/harvests`, { week: W, kg: 10 });
await ok('POST', `${c}/harvests`, { harvested_on: '2026-02-27', kg: 7 }); // the week before
await ok('POST', `${c}/irrigation`, { at: '2026-03-03T08:00:00', volume_l: 4000, drain_l: 1000, ec_in: 3, ph_in: 5.6, ec_drain: 4 });
await ok('POST', `${c}/irrigation`, { at: '2026-03-05T08:00:00', volume_l: 6000, ec_in: 2.8 });
await ok('POST', `${c}/irrigation`, { at: '2026-03-08T23:30:00', volume_l: 1000 }); // Sunday night, still W10 in Amsterdam
await ok('POST', `${c}/irrigation`, { at: '2026-02-20T08:00:00', volume_l: 2000 }); // earlier
// Climate: two days of hours (Tuesday and Wednesday, local), light by day.
const points = [];
for (let h = 0; h < 48; h++) {
  const at = iso('2026-03-03', 'Europe/Amsterdam', h);
  const day = h % 24 >= 7 && h % 24 < 19;
  points.push({ metric: 'air_temperature', at, value: day ? 22 : 17 });
  points.push({ metric: 'relative_humidity', at, value: 80 });
  points.push({ metric: 'global_radiation', at, value: day ? 250 : 0 });
  points.push({ metric: 'par', at, value: day ? 500 : 0 });
  points.push({ metric: 'co2', at, value: day ? 900 : 500 });
}
await ok('POST', `${c}/climate`, { points });
await ok('POST', `${c}/weeks/${W}`, { text: 'leaf mould in the east end' });
const storedForecast = await ok('POST', `${c}/forecasts?week=2026-W09`);

t.test('the week read, every part', async (t) => {
  const r = await s.request('GET', `${c}/weeks/2026-03-04`, { key });
  t.equal(r.status, 200, r.text);
  const b = r.body;
  t.equal(b.week, W);
  t.equal(b.start, '2026-03-02');
  t.equal(b.time_zone, 'Europe/Amsterdam');
  t.same(b.area, { area_m2: 100, basis: 'row_plant_count_over_plants_per_m2', reason: null });
  t.same(b.note, { text: 'leaf mould in the east end' });

  t.equal(scored.status, 'done');
  t.equal(b.walks.items.length, 1);
  t.equal(b.walks.items[0].job_id, JOB);
  t.same(b.walks.model_counts, scored.counts, "the detector's counts");
  t.same(b.walks.corrected_counts, { green: 50, turning: 10, red: 40, total: 100 }, 'the corrected counts count');
  t.same(b.walks.fruit_per_m2, { green: 0.5, turning: 0.1, red: 0.4, total: 1 });

  t.same(
    b.harvest,
    { kg: 70, harvests: 4, picks: 3, kg_per_m2: 0.7, kg_per_m2_reason: null },
    'Monday twice is one pick; an undated harvest one more',
  );

  t.same(b.irrigation, {
    entries: 3,
    volume_l: 11000,
    water_m3: 11,
    drain_l: 1000,
    drain_pct: 25,
    ec_in_mean: 2.9,
    ec_drain_mean: 4,
    ph_in_mean: 5.6,
    ph_drain_mean: null,
  });
  t.same(b.water_productivity.week, { kg_per_m3: Math.round((70 / 11) * 1000) / 1000, reason: null });
  t.same(b.water_productivity.cycle_to_date, {
    kg_per_m3: Math.round((77 / 13) * 1000) / 1000,
    reason: null,
    harvest_kg: 77,
    water_m3: 13,
  });

  const cl = b.climate;
  t.equal(cl.hours, 48);
  t.equal(cl.day_basis, 'global_radiation');
  t.same(cl.air_temperature, { mean_24h_c: 19.5, mean_day_c: 22, mean_night_c: 17, hours: 48, day_hours: 24, night_hours: 24 });
  t.same(cl.relative_humidity, { mean_pct: 80, hours: 48 });
  t.same(cl.co2_day, { mean_ppm: 900, hours: 24 });
  t.same(cl.radiation_sum, { j_cm2: 24 * 250 * 0.36, hours: 48, basis: 'global_radiation' });
  t.same(cl.light_integral, { mol_m2: 43.2, hours: 48 }, '24 hours of 500 µmol/m²/s');
  t.equal(cl.vpd.basis, 'air_temperature_and_relative_humidity');
  t.equal(cl.vpd.hours, 48);

  t.equal(b.fruit_mass.red_g, 10);
  t.equal(b.outdoor_weather.hours, 0, 'no weather fetched');
  t.equal(b.outdoor_weather.days.length, 7);

  t.equal(b.forecast.live.as_of, W);
  t.equal(b.forecast.live.horizon, 0);
  const live = (await s.request('GET', `${c}/forecast?week=${W}`, { key })).body.weeks[0];
  t.equal(b.forecast.live.kg, live.kg, 'what GET forecast answers for it');
  t.equal(b.forecast.stored.forecast_id, storedForecast.forecast_id);
  t.equal(b.forecast.stored.as_of, '2026-W09');
  t.equal(b.forecast.stored.horizon, 1);
  t.equal(b.forecast.stored.kg, storedForecast.weeks[1].kg);
});

t.test('a week ahead reads the forecast as of the current week; a week without anything reads empty', async (t) => {
  const ahead = await s.request('GET', `${c}/weeks/2026-W14`, { key });
  t.equal(ahead.status, 200);
  t.equal(ahead.body.forecast.live.as_of, '2026-W12');
  t.equal(ahead.body.forecast.live.horizon, 2);
  t.equal(ahead.body.harvest.kg, 0);
  t.equal(ahead.body.walks.corrected_counts, null);
  t.equal(ahead.body.walks.fruit_per_m2, null);
  t.match(ahead.body.walks.fruit_per_m2_reason, /no scored walk/);
  t.same(ahead.body.water_productivity.week, { kg_per_m3: null, reason: 'no irrigation water logged (volume_l) in this span' });
  t.equal(ahead.body.climate.air_temperature.mean_24h_c, null);
  t.equal(ahead.body.climate.air_temperature.hours, 0);
  const far = await s.request('GET', `${c}/weeks/2026-W30`, { key });
  t.equal(far.body.forecast.live, null);
  t.match(far.body.forecast.live_reason, /more than seven weeks ahead/);
});

t.test('without an area every figure per m² is null and says why', async (t) => {
  await s.request('PATCH', `${tree.greenhousePath}/rows/${tree.rowId}`, { key, body: { plant_count: null } });
  const r = await s.request('GET', `${c}/weeks/${W}`, { key });
  t.equal(r.body.area.area_m2, null);
  t.match(r.body.area.reason, /plant_count/);
  t.equal(r.body.harvest.kg_per_m2, null);
  t.match(r.body.harvest.kg_per_m2_reason, /no growing area/);
  t.equal(r.body.walks.fruit_per_m2, null);
  t.match(r.body.walks.fruit_per_m2_reason, /no growing area/);
  // The cycle's own area wins over the row's.
  await s.request('PATCH', c, { key, body: { area_m2: 50 } });
  const own = await s.request('GET', `${c}/weeks/${W}`, { key });
  t.same(own.body.area, { area_m2: 50, basis: 'cycle_area_m2', reason: null });
  t.equal(own.body.harvest.kg_per_m2, 1.4);
  const bad = await s.request('PATCH', c, { key, body: { area_m2: 0 } });
  t.equal(bad.status, 422);
  t.equal((await s.request('GET', `${c}/weeks/${W}`, { key })).body.area.area_m2, 50, 'a refused area changes nothing');
});

t.test('bad weeks and other organizations', async (t) => {
  for (const w of ['2026-W54', 'W10', '2026-02-30']) t.equal((await s.request('GET', `${c}/weeks/${w}`, { key })).status, 422, w);
  const other = await createOrg(s, 'Others');
  t.equal((await s.request('GET', `${c}/weeks/${W}`, { key: other.adminKey })).status, 404);
  const elsewhere = await createTree(s);
  t.equal((await s.request('GET', `${elsewhere.cyclePath}/weeks/${W}`, { key })).status, 404, "another organization's cycle");
  t.equal(plusDays('2026-03-02', 6), '2026-03-08');
});
