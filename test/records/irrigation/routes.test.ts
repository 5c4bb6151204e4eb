import t from 'tap';
import { startServer, createTree } from '../../helpers/server.js';

t.test('irrigation entries', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s, { timeZone: 'Europe/Amsterdam' });
  const key = tree.adminKey;
  const url = `${tree.cyclePath}/irrigation`;
  const all = async () => (await s.request('GET', `${url}?limit=500`, { key })).body;

  const first = await s.request('POST', url, {
    key,
    body: { at: '2026-03-01T07:30:00+01:00', volume_l: 1200, ec_in: 2.8, ph_in: 5.8, note: 'morning' },
  });
  t.equal(first.status, 201, first.text);
  t.match(first.body, {
    at: '2026-03-01T07:30:00+01:00',
    volume_l: 1200,
    drain_l: null,
    ec_in: 2.8,
    ec_drain: null,
    ph_in: 5.8,
    ph_drain: null,
    duration_min: null,
    note: 'morning',
    cycle_id: tree.cycleId,
  });

  t.test('at without an offset is read on the greenhouse clock', async (t) => {
    const winter = await s.request('POST', url, { key, body: { at: '2026-03-02T08:00', drain_l: 300 } });
    t.equal(winter.status, 201);
    t.equal(winter.body.at, '2026-03-02T08:00:00+01:00');
    const summer = await s.request('POST', url, { key, body: { at: '2026-06-02 08:00', drain_l: 310 } });
    t.equal(summer.body.at, '2026-06-02T08:00:00+02:00', 'summer time offset');
    const utc = await s.request('POST', url, { key, body: { at: '2026-06-02T06:00:00Z', drain_l: 311 } });
    t.equal(utc.body.at, '2026-06-02T08:00:00+02:00', 'an instant in UTC is answered on the greenhouse clock');

    const before = await all();
    const gap = await s.request('POST', url, { key, body: { at: '2026-03-29T02:30', volume_l: 5 } });
    t.equal(gap.status, 422, 'the spring-forward gap does not exist in Amsterdam');
    t.match(gap.body.errors, [{ in: 'body', name: 'at', message: /does not exist in Europe\/Amsterdam/ }]);
    const fallBack = await s.request('POST', url, { key, body: { at: '2026-10-25T02:30', volume_l: 5 } });
    t.equal(fallBack.status, 201, 'the repeated hour exists (twice)');
    t.equal(fallBack.body.at, '2026-10-25T02:30:00+02:00', 'the first of the two: still summer time, 00:30Z');
    const row = await s.app.services.db
      .selectFrom('irrigation_entries')
      .select('at')
      .where('id', '=', fallBack.body.entry_id)
      .executeTakeFirstOrThrow();
    t.equal(row.at, '2026-10-25T00:30:00.000Z', 'stored in UTC');
    const second = await s.request('POST', url, { key, body: { at: '2026-10-25T02:30+01:00', volume_l: 6 } });
    t.equal(second.body.at, '2026-10-25T02:30:00+01:00', 'the second one, named by its offset');
    await s.request('DELETE', `${url}/${second.body.entry_id}`, { key });
    await s.request('DELETE', `${url}/${fallBack.body.entry_id}`, { key });
    t.same(await all(), before);
  });

  t.test('bad input is a 422 and stores nothing', async (t) => {
    const before = await all();
    const cases: [unknown, string][] = [
      [{ at: '2026-03-01T07:00' }, 'volume_l|drain_l|ec_in|ec_drain|ph_in|ph_drain|duration_min'],
      [{ at: '2026-03-01T07:00', note: 'only a note' }, 'volume_l|drain_l|ec_in|ec_drain|ph_in|ph_drain|duration_min'],
      [{ volume_l: 3 }, 'at'],
      [{ at: 'yesterday morning', volume_l: 3 }, 'at'],
      [{ at: '2026-02-30T07:00', volume_l: 3 }, 'at'],
      [{ at: '2026-03-01T07:00', volume_l: -1 }, 'volume_l'],
      [{ at: '2026-03-01T07:00', ph_in: 14.5 }, 'ph_in'],
      [{ at: '2026-03-01T07:00', ph_drain: -0.1 }, 'ph_drain'],
      [{ at: '2026-03-01T07:00', ec_in: 'high' }, 'ec_in'],
      [{ at: '2026-03-01T07:00', volume_l: null }, 'volume_l'],
      [{ at: '2026-03-01T07:00', volume_l: 1, note: 'n'.repeat(501) }, 'note'],
      [{ at: '2026-03-01T07:00', volume_l: 1, flow: 3 }, 'flow'],
    ];
    for (const [body, field] of cases) {
      const r = await s.request('POST', url, { key, body });
      t.equal(r.status, 422, JSON.stringify(body));
      t.equal(r.body.code, 'validation_failed');
      t.ok(
        r.body.errors.some((e: any) => e.name === field),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    t.same(await all(), before, 'nothing stored');
  });

  t.test('PATCH: left out keeps, null clears, the last measurement stays', async (t) => {
    const item = `${url}/${first.body.entry_id}`;
    const r1 = await s.request('PATCH', item, { key, body: { ec_in: null, ph_in: null, drain_l: 250 } });
    t.equal(r1.status, 200);
    t.match(r1.body, { volume_l: 1200, drain_l: 250, ec_in: null, ph_in: null, note: 'morning', at: '2026-03-01T07:30:00+01:00' });

    const r2 = await s.request('PATCH', item, { key, body: { volume_l: null, note: null } });
    t.match(r2.body, { volume_l: null, drain_l: 250, note: null });

    const before = (await all()).items.find((e: any) => e.entry_id === first.body.entry_id);
    const last = await s.request('PATCH', item, { key, body: { drain_l: null, note: 'cleared all' } });
    t.equal(last.status, 422, 'clearing the last measurement');
    t.match(last.body.detail, /at least one measurement/);
    const after = (await all()).items.find((e: any) => e.entry_id === first.body.entry_id);
    t.same(after, before, 'entry unchanged after the 422');

    const swap = await s.request('PATCH', item, { key, body: { drain_l: null, duration_min: 12 } });
    t.equal(swap.status, 200, 'clearing one while setting another keeps a measurement');
    t.match(swap.body, { drain_l: null, duration_min: 12 });

    const moved = await s.request('PATCH', item, { key, body: { at: '2026-03-01T09:15' } });
    t.equal(moved.body.at, '2026-03-01T09:15:00+01:00');
    const gap = await s.request('PATCH', item, { key, body: { at: '2026-03-29T02:00' } });
    t.equal(gap.status, 422);
    t.equal((await s.request('PATCH', item, { key, body: { at: null } })).status, 422, 'at cannot be cleared');
    t.equal((await s.request('PATCH', item, { key, body: {} })).status, 422, 'empty patch');
    t.equal((await all()).items.find((e: any) => e.entry_id === first.body.entry_id).at, '2026-03-01T09:15:00+01:00');

    const snapshot = await all();
    for (const body of [
      { ph_in: 15 },
      { ec_in: -1 },
      { volume_l: 'lots' },
      { at: 'tomorrow' },
      { note: 'n'.repeat(501) },
      { entry_id: first.body.entry_id },
      { duration_min: 2000 },
    ]) {
      const r = await s.request('PATCH', item, { key, body });
      t.equal(r.status, 422, `PATCH ${JSON.stringify(body)}`);
    }
    t.same(await all(), snapshot, 'no bad PATCH changed anything');
  });

  t.test('GET: newest first, limit and offset', async (t) => {
    const s2 = await startServer(t);
    const tr = await createTree(s2, { timeZone: 'America/New_York' });
    const u = `${tr.cyclePath}/irrigation`;
    const k = tr.adminKey;
    // Posted out of order, so the list order is by `at`, not by creation.
    for (const day of [3, 1, 5, 2, 4]) {
      const r = await s2.request('POST', u, { key: k, body: { at: `2026-04-0${day}T06:00`, volume_l: day } });
      t.equal(r.status, 201);
    }
    const page = await s2.request('GET', u, { key: k });
    t.equal(page.status, 200);
    t.same(
      { ...page.body, items: page.body.items.map((e: any) => e.volume_l) },
      { items: [5, 4, 3, 2, 1], total: 5, limit: 50, offset: 0 },
      'defaults',
    );
    t.equal(page.body.items[0].at, '2026-04-05T06:00:00-04:00');
    const p2 = await s2.request('GET', `${u}?limit=2&offset=2`, { key: k });
    t.same(
      p2.body.items.map((e: any) => e.volume_l),
      [3, 2],
    );
    t.match(p2.body, { total: 5, limit: 2, offset: 2 });
    const past = await s2.request('GET', `${u}?offset=10`, { key: k });
    t.same(past.body.items, []);
    t.equal(past.body.total, 5);
    t.equal((await s2.request('GET', `${u}?limit=500`, { key: k })).status, 200, 'the maximum limit');
    for (const q of ['limit=501', 'limit=0', 'limit=-1', 'offset=-1', 'limit=abc', 'limit=2.5']) {
      const r = await s2.request('GET', `${u}?${q}`, { key: k });
      t.equal(r.status, 422, q);
      t.equal(r.body.errors[0].in, 'query', q);
    }
  });

  t.test('DELETE and 404s', async (t) => {
    const other = await createTree(s);
    const foreign = await s.request('POST', `${other.cyclePath}/irrigation`, {
      key: other.adminKey,
      body: { at: '2026-03-01T07:00', volume_l: 1 },
    });
    t.equal((await s.request('PATCH', `${url}/${foreign.body.entry_id}`, { key, body: { volume_l: 2 } })).status, 404);
    t.equal((await s.request('DELETE', `${url}/${foreign.body.entry_id}`, { key })).status, 404);
    t.equal((await s.request('GET', `${other.cyclePath}/irrigation`, { key })).status, 404, "another org's cycle");
    t.equal((await s.request('GET', `${other.cyclePath}/irrigation`, { key: other.adminKey })).body.items[0].volume_l, 1, 'untouched');

    const del = await s.request('DELETE', `${url}/${first.body.entry_id}`, { key });
    t.equal(del.status, 200);
    t.same(del.body, { deleted: true, entry_id: first.body.entry_id });
    t.equal((await s.request('DELETE', `${url}/${first.body.entry_id}`, { key })).status, 404);
    t.notOk((await all()).items.some((e: any) => e.entry_id === first.body.entry_id));
  });
});
