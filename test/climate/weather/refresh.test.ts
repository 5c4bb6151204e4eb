// POST {cycle}/weather against a real HTTP server on loopback that answers like Open-Meteo, or fails
// like a service fails: stored hours, past and forecast apart, a refresh that updates and never
// doubles, a clock change in the middle, and every failure a clear 502/503 with nothing stored.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { SettableClock } from '../../../src/clock.js';
import { createOrg, createTree, dbCount, dbRows, startServer } from '../../helpers/server.js';
import { startFakeWeather } from '../../helpers/open-meteo.js';

const fake = await startFakeWeather(t, '2026-03-30');
// Monday 30 March 2026, 10:30 in Amsterdam (summer time since Sunday 29 March, 02:00).
const clock = new SettableClock('2026-03-30T08:30:00Z');
const s = await startServer(t, { weatherUrl: fake.url, weatherTimeoutMs: 500 }, { clock });
const tree = await createTree(s, { startedOn: '2026-01-05' });
const key = tree.adminKey;
const url = `${tree.cyclePath}/weather`;
const stored = () =>
  dbRows<{ at_ms: number; forecast: number; temperature_c: number }>(
    s,
    'select at_ms, forecast, temperature_c from weather_hours where greenhouse_id = ? order by at_ms',
    tree.greenhouseId,
  );
const logged = () => dbCount(s, `select count(*) as n from change_log where entity = 'weather_refreshes'`);

t.test('a refresh stores the hours, past and forecast apart, across the clock change', async (t) => {
  const r = await s.request('POST', url, { key, body: { past_days: 3, forecast_days: 2 } });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.hours, 5 * 24);
  t.equal(r.body.added, 120);
  t.equal(r.body.updated, 0);
  t.equal(r.body.from, '2026-03-27T01:00:00+01:00', 'three UTC days back, shown on the greenhouse clock');
  t.equal(r.body.to, '2026-04-01T02:00:00+02:00');
  t.equal(r.body.fetched_at, '2026-03-30T10:30:00+02:00');
  t.equal(r.body.past_hours, 3 * 24 + 8 + 1, 'hours that began before 08:30 UTC today');
  t.equal(r.body.forecast_hours, 120 - r.body.past_hours);
  t.same(r.body.units, { temperature: '°C', relative_humidity: '%', shortwave_radiation: 'W/m²', precipitation: 'mm', wind_speed: 'm/s' });
  const q = fake.requests.at(-1)!.searchParams;
  t.equal(q.get('latitude'), '52');
  t.equal(q.get('longitude'), '4.3');
  t.equal(q.get('timezone'), 'GMT');
  t.equal(q.get('past_days'), '3');
  const rows = await stored();
  t.equal(rows.length, 120);
  t.ok(
    rows.every((h, i) => i === 0 || h.at_ms - rows[i - 1]!.at_ms === 3_600_000),
    'one row per UTC hour through the night the clocks went forward',
  );
  t.equal(rows.filter((h) => h.forecast).length, r.body.forecast_hours);
  t.equal(await logged(), 1, 'one change-log entry for the refresh');

  // The week read shows the local days, the one with the clock change 23 hours long.
  const week = await s.request('GET', `${tree.cyclePath}/weeks/2026-W13`, { key });
  t.equal(week.status, 200, week.text);
  const sunday = week.body.outdoor_weather.days.find((d: any) => d.date === '2026-03-29');
  t.equal(sunday.hours_in_day, 23);
  t.equal(sunday.hours, 23);
  t.equal(week.body.outdoor_weather.days.find((d: any) => d.date === '2026-03-28').hours, 24);
  t.equal(week.body.outdoor_weather.past_hours, week.body.outdoor_weather.hours);
});

t.test('refreshing again updates the hours and never doubles them; hours now past turn past', async (t) => {
  clock.advance(5 * 3_600_000);
  fake.shift = 0.5;
  const r = await s.request('POST', url, { key, body: { past_days: 3, forecast_days: 2 } });
  t.equal(r.status, 200);
  t.equal(r.body.added, 0);
  t.equal(r.body.updated, 120, 'every temperature moved by 0.5 °C');
  const rows = await stored();
  t.equal(rows.length, 120, 'never doubled');
  t.equal(rows.filter((h) => h.forecast).length, r.body.forecast_hours);
  t.equal(r.body.forecast_hours, 120 - (3 * 24 + 13 + 1));
  fake.shift = 0.5;
  const same = await s.request('POST', url, { key, body: { past_days: 3, forecast_days: 2 } });
  t.equal(same.body.unchanged, 120);
  t.equal(same.body.updated, 0);
  // A longer span adds only the hours not stored.
  const more = await s.request('POST', url, { key, body: { past_days: 4, forecast_days: 2 } });
  t.equal(more.body.added, 24);
  t.equal((await stored()).length, 144);
  t.equal(await logged(), 4);
});

t.test('the service failing: a clear 502 or 503, and what was stored stays as it was', async (t) => {
  const before = JSON.stringify(await stored());
  const refreshes = await logged();
  const cases: [typeof fake.mode, number, string, RegExp][] = [
    ['error', 502, 'weather_upstream_error', /answered 400/],
    ['html-500', 502, 'weather_upstream_error', /answered 500/],
    ['garbage', 502, 'weather_bad_answer', /not JSON/],
    ['hang', 503, 'weather_timeout', /did not answer within 500 ms/],
    ['stall', 503, 'weather_timeout', /did not answer within 500 ms/],
  ];
  for (const [mode, status, code, detail] of cases) {
    fake.mode = mode;
    const r = await s.request('POST', url, { key, body: { past_days: 1, forecast_days: 1 } });
    t.equal(r.status, status, mode);
    t.equal(r.body.code, code, mode);
    t.match(r.body.detail, detail, mode);
    t.match(r.headers.get('content-type'), /problem\+json/);
    t.equal(JSON.stringify(await stored()), before, `${mode}: nothing stored`);
  }
  fake.mode = 'fixed';
  fake.fixed = JSON.parse(readFileSync(new URL('../../fixtures/weather/open-meteo-local-dst.json', import.meta.url), 'utf8'));
  const local = await s.request('POST', url, { key, body: { past_days: 1, forecast_days: 1 } });
  t.equal(local.status, 502, 'a local-time answer across the clock change');
  t.match(local.body.detail, /more than an hour after/);
  fake.mode = 'ok';
  t.equal(JSON.stringify(await stored()), before);
  t.equal(await logged(), refreshes);

  // Nothing listening there.
  const gone = await startServer(t, { weatherUrl: 'http://127.0.0.1:9', weatherTimeoutMs: 500 }, { clock });
  const g = await createTree(gone, { startedOn: '2026-01-05' });
  const r = await gone.request('POST', `${g.cyclePath}/weather`, { key: g.adminKey, body: {} });
  t.equal(r.status, 503);
  t.equal(r.body.code, 'weather_unreachable');
});

t.test('bad requests: no location is a 422 that says so; bad days are a 422; other organizations a 404', async (t) => {
  const gh = await s.request('PATCH', tree.greenhousePath, { key, body: { latitude: null, longitude: null } });
  t.equal(gh.status, 200);
  const r = await s.request('POST', url, { key, body: {} });
  t.equal(r.status, 422);
  t.equal(r.body.code, 'greenhouse_location_missing');
  t.match(r.body.detail, /no location/);
  t.match(r.body.errors[0].message, /latitude and longitude/);
  await s.request('PATCH', tree.greenhousePath, { key, body: { latitude: 52, longitude: 4.3 } });
  for (const body of [{ past_days: -1 }, { past_days: 93 }, { forecast_days: 17 }, { forecast_days: 1.5 }, { days: 3 }]) {
    const bad = await s.request('POST', url, { key, body });
    t.equal(bad.status, 422, JSON.stringify(body));
  }
  const other = await createOrg(s, 'Others');
  t.equal((await s.request('POST', url, { key: other.adminKey, body: {} })).status, 404);
});

t.test('weather counts in the greenhouse’s contents and goes with its cascade', async (t) => {
  const contents = await s.request('GET', `${tree.greenhousePath}/contents`, { key });
  t.equal(contents.body.counts.weather_hours, 144, JSON.stringify(contents.body.counts));
  t.equal(contents.body.counts.weather_refreshes, 4);
  const refused = await s.request('DELETE', tree.greenhousePath, { key });
  t.equal(refused.status, 409);
  const gone = await s.request('DELETE', `${tree.greenhousePath}?cascade=true`, { key });
  t.equal(gone.status, 200, gone.text);
  t.equal((await stored()).length, 0);
  const log = await dbRows<{ before: string }>(s, `select before from change_log where entity = 'weather_hours' and op = 'delete'`);
  t.same(
    log.map((l) => JSON.parse(l.before)),
    [{ greenhouse_id: tree.greenhouseId, hours: 144 }],
  );
});
