// The records part of the week read (note, harvest, irrigation on the greenhouse clock, fruit mass in force).
import t from 'tap';
import { createTree, startServer } from '../helpers/server.js';

t.test('GET a week: note, harvest and irrigation totals, fruit mass in force', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s, { timeZone: 'Europe/Amsterdam' });
  const key = tree.adminKey;
  const c = tree.cyclePath;
  const empty = await s.request('GET', `${c}/weeks/2026-W07`, { key });
  t.equal(empty.status, 200, empty.text);
  t.match(empty.body, {
    week: '2026-W07',
    start: '2026-02-09',
    end: '2026-02-15',
    note: null,
    harvest: { kg: 0, harvests: 0 },
    irrigation: { entries: 0, volume_l: null, drain_l: null },
    fruit_mass: null,
    cycle_id: tree.cycleId,
  });

  await s.request('POST', `${c}/weeks/2026-W07`, { key, body: { pests: 'none' } });
  await s.request('POST', `${c}/harvests`, { key, body: { week: '2026-W07', kg: 10.5 } });
  await s.request('POST', `${c}/harvests`, { key, body: { harvested_on: '2026-02-15', kg: 4 } });
  await s.request('POST', `${c}/harvests`, { key, body: { week: '2026-W08', kg: 99 } });
  await s.request('POST', `${c}/fruit-mass`, { key, body: { week: '2026-W05', green_g: 70, turning_g: 80, red_g: 90 } });
  // Monday 00:30 local is in W07 though it is still Sunday in UTC; Sunday 23:30 local is in W07, Monday 00:00 local is W08.
  for (const [at, volume] of [
    ['2026-02-09T00:30', 100],
    ['2026-02-15T23:30', 50],
    ['2026-02-16T00:00', 7],
    ['2026-02-08T23:59', 3],
  ] as const) {
    t.equal((await s.request('POST', `${c}/irrigation`, { key, body: { at, volume_l: volume } })).status, 201);
  }
  await s.request('POST', `${c}/irrigation`, { key, body: { at: '2026-02-12T08:00', ec_in: 2.5 } });
  await s.request('POST', `${c}/irrigation`, { key, body: { at: '2026-02-12T09:00', drain_l: 20 } });

  const r = await s.request('GET', `${c}/weeks/2026-02-11`, { key });
  t.equal(r.status, 200);
  t.same(r.body.note, { pests: 'none' });
  t.match(r.body.harvest, { kg: 14.5, harvests: 2, picks: 2 });
  t.match(r.body.irrigation, { entries: 4, volume_l: 150, drain_l: 20, ec_in_mean: 2.5 });
  t.same(r.body.fruit_mass, { week: '2026-W05', green_g: 70, turning_g: 80, red_g: 90 });

  t.equal((await s.request('GET', `${c}/weeks/2027-W53`, { key })).status, 422);
  const other = await createTree(s);
  t.equal((await s.request('GET', `${other.cyclePath}/weeks/2026-W07`, { key })).status, 404);
});
