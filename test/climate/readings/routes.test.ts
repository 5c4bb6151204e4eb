import t from 'tap';
import { startServer, createTree, dbCount } from '../../helpers/server.js';

t.test('typed climate readings over HTTP', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s, { timeZone: 'Europe/Amsterdam' });
  const key = tree.adminKey;
  const url = `${tree.cyclePath}/climate`;
  const all = async (query = '') => (await s.request('GET', `${url}?limit=1000${query}`, { key })).body;

  t.test('stores points, converting units; answers on the greenhouse clock', async (t) => {
    const r = await s.request('POST', url, {
      key,
      body: {
        points: [
          { metric: 'air_temperature', value: 68, unit: '°F', at: '2026-03-01T12:00' },
          { metric: 'air_temperature', value: 294.15, unit: 'K', at: '2026-03-01T13:00:00+01:00' },
          { metric: 'substrate_ec', value: 2500, unit: 'µS/cm', at: '2026-03-01T12:00:00Z' },
          { metric: 'co2', value: 800, at: '2026-07-01T12:00' },
          { metric: 'global_radiation', value: 11.34, unit: 'klux', at: '2026-07-01T12:00' },
        ],
      },
    });
    t.equal(r.status, 200, r.text);
    t.same([r.body.added, r.body.updated], [5, 0]);
    t.equal(r.body.items.length, 5);
    t.ok(Math.abs(r.body.items[4].value - 100) < 1e-9, '11.34 klux of sunlight is about 100 W/m²');
    const temp = r.body.items[0];
    t.equal(temp.metric, 'air_temperature');
    t.equal(temp.unit, '°C');
    t.ok(Math.abs(temp.value - 20) < 1e-9, '68 °F is 20 °C');
    t.equal(temp.at, '2026-03-01T12:00:00+01:00', 'winter offset');
    t.equal(temp.source, 'manual');
    t.ok(Math.abs(r.body.items[1].value - 21) < 1e-9, '294.15 K is 21 °C');
    t.ok(Math.abs(r.body.items[2].value - 2.5) < 1e-9, '2500 µS/cm is 2.5 mS/cm');
    t.equal(r.body.items[2].at, '2026-03-01T13:00:00+01:00', 'Z shown on the greenhouse clock');
    t.equal(r.body.items[3].at, '2026-07-01T12:00:00+02:00', 'summer offset');
  });

  t.test('posting the same metric and instant again updates, never doubles', async (t) => {
    const before = await all();
    const r = await s.request('POST', url, { key, body: { points: [{ metric: 'co2', value: 900, at: '2026-07-01T10:00:00Z' }] } });
    t.equal(r.status, 200);
    t.same([r.body.added, r.body.updated, r.body.unchanged], [0, 1, 0]);
    const same = await s.request('POST', url, { key, body: { points: [{ metric: 'co2', value: 900, at: '2026-07-01T12:00+02:00' }] } });
    t.same([same.body.added, same.body.updated, same.body.unchanged], [0, 0, 1]);
    const after = await all();
    t.equal(after.total, before.total);
    t.equal(after.items.find((i: any) => i.metric === 'co2').value, 900);
  });

  t.test('one bad point refuses all, listing each bad field; nothing stored', async (t) => {
    const before = await all();
    const r = await s.request('POST', url, {
      key,
      body: {
        points: [
          { metric: 'air_temperature', value: 20, at: '2026-03-02T10:00' },
          { metric: 'air_temperature', value: 20, unit: 'ppm', at: '2026-03-02T11:00' },
          { metric: 'air_temperature', value: 20, unit: 'furlongs', at: '2026-03-02T12:00' },
          { metric: 'air_temperature', value: 20, at: '2026-03-29T02:30' },
          { metric: 'relative_humidity', value: 140, at: '2026-03-02T13:00' },
          { metric: 'not_a_metric', value: 1, at: '2026-03-02T13:00' },
          { metric: 'co2', value: 'lots', at: '2026-03-02T13:00' },
          { metric: 'co2', value: 400, at: 'yesterday' },
        ],
      },
    });
    t.equal(r.status, 422, r.text);
    t.match(r.headers.get('content-type'), /problem\+json/);
    const names = r.body.errors.map((e: any) => e.name).sort();
    t.ok(names.includes('points.5.metric'), 'unknown metric');
    t.ok(names.includes('points.6.value'), 'value not a number');
    // Schema errors are answered before the domain checks run.
    const r2 = await s.request('POST', url, {
      key,
      body: {
        points: [
          { metric: 'air_temperature', value: 20, at: '2026-03-02T10:00' },
          { metric: 'air_temperature', value: 20, unit: 'ppm', at: '2026-03-02T11:00' },
          { metric: 'air_temperature', value: 20, unit: 'furlongs', at: '2026-03-02T12:00' },
          { metric: 'air_temperature', value: 20, at: '2026-03-29T02:30' },
          { metric: 'relative_humidity', value: 140, at: '2026-03-02T13:00' },
          { metric: 'co2', value: 400, at: 'yesterday' },
          { metric: 'co2', value: 400, at: '3026-01-01T00:00:00Z' },
          { metric: 'co2', value: 20, unit: 'klux', at: '2026-03-02T13:00' },
        ],
      },
    });
    t.equal(r2.status, 422);
    t.same(
      r2.body.errors.map((e: any) => e.name),
      ['points.1.unit', 'points.2.unit', 'points.3.at', 'points.4.value', 'points.5.at', 'points.6.at', 'points.7.unit'],
    );
    t.match(r2.body.errors[3].message, /outside the plausible range/);
    t.match(r2.body.errors[2].message, /does not exist/);
    t.same(await all(), before, 'nothing stored');
  });

  t.test('body limits', async (t) => {
    const empty = await s.request('POST', url, { key, body: { points: [] } });
    t.equal(empty.status, 422);
    const points = Array.from({ length: 10_001 }, (_, i) => ({
      metric: 'co2',
      value: 400,
      at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    }));
    const tooMany = await s.request('POST', url, { key, body: { points } });
    t.equal(tooMany.status, 422);
    t.equal(tooMany.body.errors[0].name, 'points');
    const extra = await s.request('POST', url, {
      key,
      body: { points: [{ metric: 'co2', value: 1, at: '2026-01-01T00:00Z', note: 'x' }] },
    });
    t.equal(extra.status, 422);
    t.equal(extra.body.errors[0].name, 'points.0.note');
  });

  t.test('10,000 points in one request, all stored; items left out above 1,000', async (t) => {
    const points = Array.from({ length: 10_000 }, (_, i) => ({
      metric: 'par',
      value: i % 2000,
      at: new Date(Date.UTC(2025, 0, 1) + i * 300_000).toISOString(),
    }));
    const r = await s.request('POST', url, { key, body: { points } });
    t.equal(r.status, 200);
    t.equal(r.body.added, 10_000);
    t.notOk('items' in r.body);
    const page = await s.request('GET', `${url}?metric=par&limit=1`, { key });
    t.equal(page.body.total, 10_000);
  });

  t.test('history: newest first, metric, from/to in the greenhouse zone, paging', async (t) => {
    const r = await s.request('GET', `${url}?metric=air_temperature`, { key });
    t.equal(r.status, 200);
    t.same(
      r.body.items.map((i: any) => i.at),
      ['2026-03-01T13:00:00+01:00', '2026-03-01T12:00:00+01:00'],
    );
    t.same([r.body.total, r.body.limit, r.body.offset], [2, 50, 0]);
    const from = await s.request('GET', `${url}?metric=air_temperature&from=2026-03-01T12:30`, { key });
    t.same(
      from.body.items.map((i: any) => i.at),
      ['2026-03-01T13:00:00+01:00'],
    );
    const to = await s.request('GET', `${url}?metric=air_temperature&to=${encodeURIComponent('2026-03-01T12:00:00+01:00')}`, { key });
    t.same(
      to.body.items.map((i: any) => i.at),
      ['2026-03-01T12:00:00+01:00'],
      'to is inclusive',
    );
    const paged = await s.request('GET', `${url}?metric=par&limit=2&offset=1`, { key });
    t.same(
      paged.body.items.map((i: any) => i.value),
      [1998, 1997],
    );
    t.equal(paged.body.offset, 1);
  });

  t.test('history limits and bad bounds answer 422', async (t) => {
    for (const q of ['limit=1001', 'limit=0', 'offset=-1', 'metric=foo', 'from=yesterday', 'to=2026-03-29T02:30', 'colour=red']) {
      const r = await s.request('GET', `${url}?${q}`, { key });
      t.equal(r.status, 422, q);
      t.equal(r.body.code, 'validation_failed', q);
    }
    const max = await s.request('GET', `${url}?limit=1000`, { key });
    t.equal(max.status, 200);
    t.equal(max.body.items.length, 1000);
  });

  t.test('autumn: an ambiguous wall time is its first (summer) instant', async (t) => {
    const tz = await createTree(s, { timeZone: 'Europe/Amsterdam' });
    const u = `${tz.cyclePath}/climate`;
    await s.request('POST', u, {
      key: tz.adminKey,
      body: {
        points: [
          { metric: 'co2', value: 401, at: '2026-10-25T00:30:00Z' },
          { metric: 'co2', value: 402, at: '2026-10-25T01:30:00Z' },
          { metric: 'co2', value: 403, at: '2026-10-25T02:30' },
        ],
      },
    });
    const list = await s.request('GET', `${u}?metric=co2`, { key: tz.adminKey });
    t.same(
      list.body.items.map((i: any) => [i.at, i.value]),
      [
        ['2026-10-25T02:30:00+01:00', 402],
        ['2026-10-25T02:30:00+02:00', 403],
      ],
      'the typed 02:30 replaced the summer 02:30 (00:30Z), not the winter one',
    );
    const from = await s.request('GET', `${u}?metric=co2&from=2026-10-25T02:30&to=2026-10-25T02:30`, { key: tz.adminKey });
    t.same(
      from.body.items.map((i: any) => i.at),
      ['2026-10-25T02:30:00+02:00'],
    );
  });

  t.test('patch and delete one reading', async (t) => {
    const list = await s.request('GET', `${url}?metric=air_temperature`, { key });
    const [newest, older] = list.body.items;
    const p = await s.request('PATCH', `${url}/${older.point_id}`, { key, body: { value: 77, unit: '°F' } });
    t.equal(p.status, 200);
    t.ok(Math.abs(p.body.value - 25) < 1e-9);
    t.equal(p.body.at, older.at);
    const moved = await s.request('PATCH', `${url}/${older.point_id}`, { key, body: { at: '2026-03-01T11:00' } });
    t.equal(moved.status, 200);
    t.equal(moved.body.at, '2026-03-01T11:00:00+01:00');
    t.not(moved.body.point_id, older.point_id, 'a moved reading answers under the id of its new instant');
    t.equal(
      (await s.request('PATCH', `${url}/${older.point_id}`, { key, body: { value: 1 } })).status,
      404,
      'the old id names no reading now',
    );
    const back = await s.request('PATCH', `${url}/${moved.body.point_id}`, { key, body: { at: older.at } });
    t.equal(back.body.point_id, older.point_id, 'moved back, it has its first id again');
    const clash = await s.request('PATCH', `${url}/${older.point_id}`, { key, body: { at: newest.at } });
    t.equal(clash.status, 409);
    t.equal(clash.body.code, 'conflict');
    t.equal(clash.body.point_id, newest.point_id);
    for (const body of [{ unit: 'K' }, { value: 20, unit: 'ppm' }, { at: '2026-03-29T02:30' }, { value: 1000 }, {}, { metric: 'co2' }]) {
      const bad = await s.request('PATCH', `${url}/${older.point_id}`, { key, body });
      t.equal(bad.status, 422, JSON.stringify(body));
    }
    const still = await s.request('GET', `${url}?metric=air_temperature`, { key });
    t.same(still.body.items.find((i: any) => i.point_id === older.point_id).value, p.body.value, 'bad patches changed nothing');
    for (const id of ['00000000-0000-4000-8000-000000000000', older.point_id.replace(/^.{8}/, '00000000')]) {
      t.equal((await s.request('DELETE', `${url}/${id}`, { key })).status, 404, `no reading: ${id}`);
    }
    const d = await s.request('DELETE', `${url}/${older.point_id}`, { key });
    t.equal(d.status, 200);
    t.equal(d.body.reading.point_id, older.point_id);
    const again = await s.request('DELETE', `${url}/${older.point_id}`, { key });
    t.equal(again.status, 404);
    const gone = await s.request('GET', `${url}?metric=air_temperature`, { key });
    t.same(
      gone.body.items.map((i: any) => i.point_id),
      [newest.point_id],
    );
  });

  t.test('a reading of another cycle is not found through this one', async (t) => {
    const other = await createTree(s);
    const r = await s.request('POST', `${other.cyclePath}/climate`, {
      key: other.adminKey,
      body: { points: [{ metric: 'co2', value: 500, at: '2026-01-01T00:00Z' }] },
    });
    const id = r.body.items[0].point_id;
    const wrongOrg = await s.request('PATCH', `${url}/${id}`, { key, body: { value: 1 } });
    t.equal(wrongOrg.status, 404);
    const otherCycle = await s.request('POST', `${tree.greenhousePath}/rows/${tree.rowId}/cycles`, {
      key,
      body: { name: 'second', started_on: '2026-02-01' },
    });
    const sibling = `${tree.greenhousePath}/rows/${tree.rowId}/cycles/${otherCycle.body.cycle_id}/climate`;
    const mine = (await all('&metric=co2')).items[0];
    t.equal((await s.request('DELETE', `${sibling}/${mine.point_id}`, { key })).status, 404);
  });

  t.test('contents count readings, and a cascading delete removes them', async (t) => {
    const c = await s.request('GET', `${tree.cyclePath}/contents`, { key });
    t.equal(c.status, 200);
    const stored = (await all()).total;
    t.equal(c.body.counts.climate_readings, stored);
    const refused = await s.request('DELETE', tree.cyclePath, { key });
    t.equal(refused.status, 409);
    t.equal(refused.body.counts.climate_readings, stored);
    const d = await s.request('DELETE', `${tree.cyclePath}?cascade=true`, { key });
    t.equal(d.status, 200, d.text);
    t.equal(await dbCount(s, 'SELECT count(*) AS n FROM climate_readings WHERE cycle_id = ?', tree.cycleId), 0);
  });
});
