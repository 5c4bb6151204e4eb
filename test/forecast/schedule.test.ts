// The plain domain functions a schedule calls outside any request: the weekly stored forecast of
// every running crop cycle, and the outdoor weather of every greenhouse with a location.
import t from 'tap';
import { SettableClock } from '../../src/clock.js';
import { activeCycles, storeForecastForCycle } from '../../src/forecast/commands.js';
import { greenhousesWithLocation, refreshWeather } from '../../src/climate/weather/commands.js';
import { SYSTEM_ACTOR } from '../../src/db/store.js';
import { createTree, dbCount, startServer } from '../helpers/server.js';
import { startFakeWeather } from '../helpers/open-meteo.js';
import { iso, typeCrop } from '../helpers/crop.js';
import { forecastSchedule } from '../../src/forecast/schedule.js';
import { weatherSchedule } from '../../src/climate/weather/schedule.js';

const fake = await startFakeWeather(t, '2026-03-16');
const clock = new SettableClock(iso('2026-03-16', 'Europe/Amsterdam', 9));
const s = await startServer(t, { weatherUrl: fake.url }, { clock });
const services = s.app.services;
const running = await createTree(s, { startedOn: '2026-01-05' });
const later = await createTree(s, { startedOn: '2026-04-06' });
const ended = await createTree(s, { startedOn: '2025-06-02' });
await s.request('PATCH', ended.cyclePath, { key: ended.adminKey, body: { ended_on: '2025-12-19' } });
await s.request('PATCH', later.greenhousePath, { key: later.adminKey, body: { latitude: null, longitude: null } });
await typeCrop(s, running, '2026-01-05', { weeks: 10, harvestFrom: 6 });

t.test('the weekly stored forecast of every running cycle', async (t) => {
  const active = await activeCycles(services.db, clock.now());
  t.same(
    active.map((c) => c.cycle_id),
    [running.cycleId],
    'not one that starts later, nor one that ended',
  );
  const stored = await storeForecastForCycle(services, running.cycleId);
  t.equal(stored.week, '2026-W12', 'as of the current week');
  t.equal(stored.made_by, 'system');
  t.equal(stored.made_by_key_id, null);
  const listed = await s.request('GET', `${running.cyclePath}/forecasts`, { key: running.adminKey });
  t.equal(listed.body.items[0].forecast_id, stored.id);
  t.equal(listed.body.items[0].made_by, 'system');
  await t.rejects(storeForecastForCycle(services, later.cycleId), { code: 'validation_failed' }, 'a cycle that has not started');
  await t.rejects(storeForecastForCycle(services, '0190a000-0000-7000-8000-000000000000'), { code: 'not_found' });
});

t.test('the hourly weather refresh of every greenhouse with a location', async (t) => {
  const greenhouses = await greenhousesWithLocation(services.db);
  t.same(greenhouses.map((g) => g.id).sort(), [running.greenhouseId, ended.greenhouseId].sort());
  for (const g of greenhouses) {
    const r = await refreshWeather(services, g, { pastDays: 1, forecastDays: 2 }, SYSTEM_ACTOR);
    t.equal(r.hours, 72);
    t.equal(r.greenhouse_id, g.id);
  }
  t.equal(await dbCount(s, 'select count(*) as n from weather_hours'), 144);
});

t.test("the schedules the appliance's scheduler runs: weekly forecast per running cycle, hourly weather per greenhouse", async (t) => {
  const ctx = (target: { key: string; label: string; timeZone?: string }) => ({
    services,
    target,
    dueAt: clock.now(),
    startedAt: clock.now(),
    signal: new AbortController().signal,
    log: services.log,
  });
  const cycles = await forecastSchedule.targets!(services);
  t.same(
    cycles.map((c) => [c.key, c.timeZone]),
    [[running.cycleId, 'Europe/Amsterdam']],
  );
  t.equal(forecastSchedule.zone, 'target', 'Monday 06:00 on each greenhouse clock');
  const ran = await forecastSchedule.run(ctx(cycles[0]!));
  t.match(ran, { week: '2026-W12' });
  const greenhouses = await weatherSchedule.targets!(services);
  t.equal(greenhouses.length, 2);
  t.match(await weatherSchedule.run(ctx(greenhouses[0]!)), { hours: 9 * 24 });
  const listed = await s.request('GET', '/api/schedules', { admin: true });
  t.equal(listed.status, 200, listed.text);
  const names = (listed.body.items ?? listed.body.schedules ?? []).map((x: { name: string }) => x.name);
  t.ok(names.includes('weather') && names.includes('forecast'), JSON.stringify(names));
});
