import t from 'tap';
import { startServer, createTree, createOrg } from '../../helpers/server.js';
import { harvestWeek } from '../../../src/records/harvests/commands.js';
import { loadConfig } from '../../../src/config.js';

// tap's typings want an Error as the pattern; the thrown HttpProblem is matched on its status.
const unprocessable = { code: 'validation_failed' } as unknown as Error;

t.test('harvest upload cap: a setting like the other caps, 5 MiB by default', async (t) => {
  t.equal(loadConfig({}).harvestUploadLimit, 5 * 1024 * 1024);
  t.equal(loadConfig({ HARVEST_UPLOAD_LIMIT: '2048' }).harvestUploadLimit, 2048, 'from the environment');
  t.throws(() => loadConfig({ HARVEST_UPLOAD_LIMIT: 'lots' }), /HARVEST_UPLOAD_LIMIT/, 'nonsense is refused at start');
});

t.test('harvestWeek: week, date or both', async (t) => {
  t.equal(harvestWeek('2026-W07', undefined).label, '2026-W07');
  t.equal(harvestWeek('2026-02-11', null).label, '2026-W07', 'a date of the week names the week');
  t.equal(harvestWeek(undefined, '2026-02-15').label, '2026-W07', 'Sunday is still in the ISO week');
  t.equal(harvestWeek(undefined, '2026-02-16').label, '2026-W08', 'Monday starts the next');
  t.equal(harvestWeek(undefined, '2021-01-03').label, '2020-W53', 'ISO week-year differs from the calendar year');
  t.throws(() => harvestWeek(undefined, undefined), unprocessable);
  t.throws(() => harvestWeek('2026-W07', '2026-02-16'), unprocessable);
  t.throws(() => harvestWeek('2027-W53', undefined), unprocessable, '2027 has 52 weeks');
});

t.test('harvests over HTTP', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const url = `${tree.cyclePath}/harvests`;
  const key = tree.adminKey;
  const list = async (q = '') => (await s.request('GET', url + q, { key })).body.items as any[];

  const a = await s.request('POST', url, { key, body: { week: '2026-02-11', kg: 120.5, note: 'first pick' } });
  t.equal(a.status, 201);
  t.match(a.body, {
    week: '2026-W07',
    kg: 120.5,
    note: 'first pick',
    harvested_on: null,
    cycle_id: tree.cycleId,
    organization_id: tree.orgId,
  });
  t.match(a.body.harvest_id, /^[0-9a-f-]{36}$/);

  const b = await s.request('POST', url, { key, body: { harvested_on: '2026-02-03', kg: 80 } });
  t.equal(b.status, 201);
  t.equal(b.body.week, '2026-W06', 'week derived from harvested_on');
  t.equal(b.body.harvested_on, '2026-02-03');

  const c = await s.request('POST', url, { key, body: { week: '2026-W07', harvested_on: '2026-02-09', kg: 0 } });
  t.equal(c.status, 201, 'kg 0 is allowed; date inside the week');

  t.test('bad input is a 422 and stores nothing', async (t) => {
    const before = await list();
    const cases: [unknown, string][] = [
      [{ kg: 5 }, 'week'],
      [{ week: '2026-W07' }, 'kg'],
      [{ week: '2026-W07', kg: -1 }, 'kg'],
      [{ week: '2026-W07', kg: '12' }, 'kg'],
      [{ week: 'week 7', kg: 1 }, 'week'],
      [{ week: '2027-W53', kg: 1 }, 'week'],
      [{ week: '2026-W00', kg: 1 }, 'week'],
      [{ week: '2026-02-30', kg: 1 }, 'week'],
      [{ week: '2026-W07', kg: 1, note: 'x'.repeat(501) }, 'note'],
      [{ week: '2026-W07', kg: 1, harvested_on: '2026-02-16' }, 'harvested_on'],
      [{ week: '2026-W07', kg: 1, harvested_on: '16/02/2026' }, 'harvested_on'],
      [{ week: '2026-W07', kg: 1, color: 'red' }, 'color'],
    ];
    for (const [body, field] of cases) {
      const r = await s.request('POST', url, { key, body });
      t.equal(r.status, 422, JSON.stringify(body));
      t.equal(r.body.code, 'validation_failed');
      t.match(r.headers.get('content-type'), /problem\+json/);
      t.ok(
        r.body.errors.some((e: any) => e.name === field),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    const notJson = await s.request('POST', url, { key, body: '{"week":', headers: { 'content-type': 'application/json' } });
    t.equal(notJson.status, 422);
    t.same(await list(), before, 'nothing stored');
  });

  t.test('list ordered by week then creation, filter by week', async (t) => {
    const items = await list();
    t.same(
      items.map((h) => h.week),
      ['2026-W06', '2026-W07', '2026-W07'],
    );
    t.same(
      items.slice(1).map((h) => h.harvest_id),
      [a.body.harvest_id, c.body.harvest_id],
      'creation order within a week',
    );
    t.same(
      (await list('?week=2026-W07')).map((h) => h.harvest_id),
      [a.body.harvest_id, c.body.harvest_id],
    );
    t.same(
      (await list('?week=2026-02-04')).map((h) => h.harvest_id),
      [b.body.harvest_id],
      'week filter by a date',
    );
    const page = await s.request('GET', `${url}?limit=2&offset=1`, { key });
    t.same(
      page.body.items.map((h: any) => h.harvest_id),
      [a.body.harvest_id, c.body.harvest_id],
      'limit and offset',
    );
    t.match(page.body, { total: 3, limit: 2, offset: 1 });
    const whole = await s.request('GET', url, { key });
    t.match(whole.body, { total: 3, limit: 500, offset: 0 }, 'default page of 500');
    const weekPage = await s.request('GET', `${url}?week=2026-W07&limit=1`, { key });
    t.match(weekPage.body, { total: 2, limit: 1 }, 'total counts the filtered harvests');
    for (const q of ['limit=501', 'limit=0', 'offset=-1', 'limit=x']) {
      const r = await s.request('GET', `${url}?${q}`, { key });
      t.equal(r.status, 422, q);
      t.equal(r.body.errors[0].in, 'query');
    }
    const bad = await s.request('GET', `${url}?week=2026-W99`, { key });
    t.equal(bad.status, 422);
    t.equal(bad.body.errors[0].in, 'query');
  });

  t.test('PATCH keeps left-out fields, clears nulls, checks the merged record', async (t) => {
    const item = `${url}/${c.body.harvest_id}`;
    const r1 = await s.request('PATCH', item, { key, body: { kg: 33.3 } });
    t.equal(r1.status, 200);
    t.match(r1.body, { kg: 33.3, week: '2026-W07', harvested_on: '2026-02-09', note: null });
    t.not(r1.body.version, c.body.version, 'version grows');

    const moved = await s.request('PATCH', item, { key, body: { week: '2026-W08' } });
    t.equal(moved.status, 422, 'the kept harvested_on is outside the new week');
    t.ok(moved.body.errors.some((e: any) => e.name === 'harvested_on'));
    const unchanged = (await list()).find((h) => h.harvest_id === c.body.harvest_id);
    t.match(unchanged, { kg: 33.3, week: '2026-W07', harvested_on: '2026-02-09' }, 'harvest unchanged after the 422');

    const both = await s.request('PATCH', item, { key, body: { week: '2026-W08', harvested_on: '2026-02-17', note: 'moved' } });
    t.equal(both.status, 200);
    t.match(both.body, { week: '2026-W08', harvested_on: '2026-02-17', note: 'moved', kg: 33.3 });

    const cleared = await s.request('PATCH', item, { key, body: { harvested_on: null, note: null } });
    t.match(cleared.body, { harvested_on: null, note: null, week: '2026-W08' });

    const empty = await s.request('PATCH', item, { key, body: {} });
    t.equal(empty.status, 422, 'an empty patch');
    const nullWeek = await s.request('PATCH', item, { key, body: { week: null } });
    t.equal(nullWeek.status, 422, 'week cannot be cleared');
    const nullKg = await s.request('PATCH', item, { key, body: { kg: null } });
    t.equal(nullKg.status, 422, 'kg cannot be cleared');

    const before = await list();
    for (const body of [
      { kg: -2 },
      { kg: '3' },
      { week: '2027-W53' },
      { week: 'soon' },
      { note: 'x'.repeat(501) },
      { harvested_on: '2026-02-31' },
      { harvested_on: '2026-01-01' },
      { harvest_id: c.body.harvest_id },
      { cycle_id: tree.cycleId },
    ]) {
      const r = await s.request('PATCH', item, { key, body });
      t.equal(r.status, 422, `PATCH ${JSON.stringify(body)}`);
    }
    t.same(await list(), before, 'no bad PATCH changed anything');
  });

  t.test('DELETE and 404s for other cycles and organizations', async (t) => {
    const other = await createTree(s);
    const foreign = await s.request('POST', `${other.cyclePath}/harvests`, { key: other.adminKey, body: { week: '2026-W07', kg: 1 } });
    t.equal(foreign.status, 201);

    // Another org's harvest id under my cycle path: not found.
    const cross = await s.request('PATCH', `${url}/${foreign.body.harvest_id}`, { key, body: { kg: 2 } });
    t.equal(cross.status, 404);
    t.equal(cross.body.code, 'not_found');
    const crossDel = await s.request('DELETE', `${url}/${foreign.body.harvest_id}`, { key });
    t.equal(crossDel.status, 404);
    // My key on the other org's path.
    t.equal((await s.request('GET', `${other.cyclePath}/harvests`, { key })).status, 404);
    t.equal((await s.request('POST', `${other.cyclePath}/harvests`, { key, body: { week: '2026-W07', kg: 1 } })).status, 404);
    // Mixed parents: my org, another org's cycle id.
    const mixed = url.replace(tree.cycleId, other.cycleId);
    t.equal((await s.request('GET', mixed, { key })).status, 404);
    const stillThere = await s.request('GET', `${other.cyclePath}/harvests`, { key: other.adminKey });
    t.same(
      stillThere.body.items.map((h: any) => h.kg),
      [1],
      "the other org's harvest untouched",
    );

    // A second cycle of my own org: its harvest is not reachable through my cycle.
    const cyc2 = await s.request('POST', `${tree.greenhousePath}/rows/${tree.rowId}/cycles`, {
      key,
      body: { name: 'second', started_on: '2026-06-01' },
    });
    const h2 = await s.request('POST', `${tree.greenhousePath}/rows/${tree.rowId}/cycles/${cyc2.body.cycle_id}/harvests`, {
      key,
      body: { week: '2026-W30', kg: 9 },
    });
    t.equal((await s.request('DELETE', `${url}/${h2.body.harvest_id}`, { key })).status, 404);

    const del = await s.request('DELETE', `${url}/${a.body.harvest_id}`, { key });
    t.equal(del.status, 200);
    t.same(del.body, { deleted: true, harvest_id: a.body.harvest_id });
    t.notOk((await list()).some((h) => h.harvest_id === a.body.harvest_id));
    t.equal((await s.request('DELETE', `${url}/${a.body.harvest_id}`, { key })).status, 404, 'gone');
    t.equal((await s.request('DELETE', `${url}/not-a-uuid`, { key })).status, 422);

    const log = await s.app.services.db
      .selectFrom('change_log')
      .selectAll()
      .where('entity', '=', 'harvests')
      .where('entity_id', '=', a.body.harvest_id)
      .orderBy('seq')
      .execute();
    t.same(
      log.map((l) => l.op),
      ['insert', 'delete'],
      'insert and tombstone in the change log',
    );
  });

  t.test('a member key may record harvests', async (t) => {
    const org = await createOrg(s, 'Members');
    t.ok(org.orgId);
    const m = await s.request('POST', `/api/organizations/${tree.orgId}/keys`, { key, body: { name: 'tablet', role: 'member' } });
    const r = await s.request('POST', url, { key: m.body.api_key, body: { week: '2026-W10', kg: 3 } });
    t.equal(r.status, 201);
  });
});
