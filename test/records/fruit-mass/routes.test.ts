import t from 'tap';
import { startServer, createTree } from '../../helpers/server.js';
import { fruitMassForWeek } from '../../../src/records/fruit-mass/history.js';
import { SettableClock } from '../../../src/clock.js';

t.test('fruitMassForWeek: the values known for that week', async (t) => {
  const history = [
    { week: '2026-W20', green_g: 3, turning_g: 3, red_g: 3 },
    { week: '2026-W05', green_g: 1, turning_g: 1, red_g: 1 },
    { week: '2026-W10', green_g: 2, turning_g: 2, red_g: 2 },
  ];
  t.equal(fruitMassForWeek(history, '2026-W04'), null, 'before the first entry');
  t.equal(fruitMassForWeek(history, '2026-W05')!.green_g, 1, 'from its own week');
  t.equal(fruitMassForWeek(history, '2026-W09')!.green_g, 1, 'until the next entry');
  t.equal(fruitMassForWeek(history, '2026-W10')!.green_g, 2);
  t.equal(fruitMassForWeek(history, '2026-W19')!.green_g, 2, 'a past week keeps the mass known then');
  t.equal(fruitMassForWeek(history, '2027-W01')!.green_g, 3, 'across a year');
  t.equal(fruitMassForWeek([], '2026-W10'), null);
  t.equal(fruitMassForWeek([{ week: '2025-W52', green_g: 9, turning_g: 9, red_g: 9 }], '2026-W01')!.green_g, 9);
});

t.test('fruit mass over HTTP', async (t) => {
  // Sunday 23:30 UTC is already Monday of the next week in Amsterdam: the default week is the greenhouse's.
  const clock = new SettableClock('2026-02-15T23:30:00Z');
  const s = await startServer(t, {}, { clock });
  const tree = await createTree(s);
  const key = tree.adminKey;
  const url = `${tree.cyclePath}/fruit-mass`;
  const get = async (q = '') => (await s.request('GET', url + q, { key })).body;

  const w10 = await s.request('POST', url, { key, body: { week: '2026-03-04', green_g: 80, turning_g: 95, red_g: 110 } });
  t.equal(w10.status, 200);
  t.match(w10.body, { week: '2026-W10', green_g: 80, turning_g: 95, red_g: 110, cycle_id: tree.cycleId });

  const w14 = await s.request('POST', url, { key, body: { week: '2026-W14', green_g: 90, turning_g: 100, red_g: 120 } });
  t.equal(w14.status, 200);
  let h = await get('?week=2026-W12');
  t.same(
    h.items.map((e: any) => [e.week, e.red_g]),
    [
      ['2026-W10', 110],
      ['2026-W14', 120],
    ],
    'a later week adds to the history',
  );
  t.equal(h.week, '2026-W12');
  t.equal(h.in_force.red_g, 110, 'W12 uses the mass saved for W10');
  t.equal((await get('?week=2026-W14')).in_force.red_g, 120);
  t.equal((await get('?week=2026-W09')).in_force, null, 'nothing known before W10');
  const paged = await get('?week=2026-W14&limit=1&offset=0');
  t.match(paged, { total: 2, limit: 1, offset: 0 });
  t.same(
    paged.items.map((e: any) => e.week),
    ['2026-W10'],
  );
  t.equal(paged.in_force.week, '2026-W14', 'in force over the whole history, not the page');
  t.equal((await s.request('GET', `${url}?limit=501`, { key })).status, 422);

  const again = await s.request('POST', url, { key, body: { week: '2026-W10', green_g: 81, turning_g: 96, red_g: 111 } });
  t.equal(again.status, 200);
  h = await get('?week=2026-W12');
  t.same(
    h.items.map((e: any) => [e.week, e.red_g]),
    [
      ['2026-W10', 111],
      ['2026-W14', 120],
    ],
    'the same week replaces its values',
  );
  t.equal(h.in_force.red_g, 111);

  const now = await s.request('POST', url, { key, body: { green_g: 1, turning_g: 2, red_g: 3 } });
  t.equal(now.status, 200);
  t.equal(now.body.week, '2026-W08', 'default: the current week in the greenhouse zone, on the service clock');
  t.equal((await get()).week, '2026-W08');
  clock.advance(7 * 24 * 3600_000);
  t.equal((await get()).week, '2026-W09', 'the default follows the clock');

  t.test('bad input is a 422 and changes nothing', async (t) => {
    const before = await get('?week=2026-W12');
    const cases: [unknown, string][] = [
      [{ green_g: 80, turning_g: 95 }, 'red_g'],
      [{ green_g: 0, turning_g: 95, red_g: 100 }, 'green_g'],
      [{ green_g: -5, turning_g: 95, red_g: 100 }, 'green_g'],
      [{ green_g: 80, turning_g: '95', red_g: 100 }, 'turning_g'],
      [{ green_g: 80, turning_g: 95, red_g: 100, week: '2027-W53' }, 'week'],
      [{ green_g: 80, turning_g: 95, red_g: 100, week: 'W10' }, 'week'],
      [{ green_g: 80, turning_g: 95, red_g: 100, kg: 1 }, 'kg'],
    ];
    for (const [body, field] of cases) {
      const r = await s.request('POST', url, { key, body });
      t.equal(r.status, 422, JSON.stringify(body));
      t.ok(
        r.body.errors.some((e: any) => e.name === field),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    t.same(await get('?week=2026-W12'), before);
    t.equal((await s.request('GET', `${url}?week=nope`, { key })).status, 422);
  });

  t.test('404 for another organization', async (t) => {
    const other = await createTree(s);
    t.equal((await s.request('POST', `${other.cyclePath}/fruit-mass`, { key, body: { green_g: 1, turning_g: 1, red_g: 1 } })).status, 404);
    t.equal((await s.request('GET', `${other.cyclePath}/fruit-mass`, { key })).status, 404);
    t.same((await s.request('GET', `${other.cyclePath}/fruit-mass`, { key: other.adminKey })).body.items, []);
  });
});
