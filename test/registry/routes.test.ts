import t from 'tap';
import { startServer, createTree, createOrg, dbCount } from '../helpers/server.js';

t.test('registry', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const key = tree.adminKey;
  const org = `/api/organizations/${tree.orgId}`;
  const farm = `${org}/farms/${tree.farmId}`;

  t.test('GET {org} returns the tree', async (t) => {
    const r = await s.request('GET', org, { key });
    t.equal(r.status, 200);
    t.equal(r.body.organization_id, tree.orgId);
    t.equal(r.body.farms.length, 1);
    const gh = r.body.farms[0].greenhouses[0];
    t.equal(gh.greenhouse_id, tree.greenhouseId);
    t.equal(gh.time_zone, 'Europe/Amsterdam');
    t.equal(gh.rows[0].cycles[0].cycle_id, tree.cycleId);
    t.equal(gh.rows[0].cycles[0].started_on, '2026-01-05');
  });

  t.test('the tree follows every change; ETag and If-None-Match', async (t) => {
    const a = await s.request('GET', org, { key });
    const etag = a.headers.get('etag')!;
    t.ok(etag);
    const same = await s.request('GET', org, { key, headers: { 'if-none-match': etag } });
    t.equal(same.status, 304);
    const renamed = await s.request('PATCH', farm, { key, body: { name: 'Renamed farm' } });
    t.equal(renamed.status, 200);
    const b = await s.request('GET', org, { key, headers: { 'if-none-match': etag } });
    t.equal(b.status, 200, 'a change invalidates the cached tree');
    t.equal(b.body.farms[0].name, 'Renamed farm');
    t.not(b.headers.get('etag'), etag);
  });

  t.test('the cached tree is sent as the same UTF-8 bytes each time, with their length', async (t) => {
    const name = 'Kas Zuid — tomaten 🍅 "noord"';
    t.equal((await s.request('PATCH', farm, { key, body: { name } })).status, 200);
    const first = await s.request('GET', org, { key });
    const second = await s.request('GET', org, { key });
    t.equal(first.body.farms[0].name, name);
    t.equal(second.text, first.text, 'the second answer comes from the cache, unchanged');
    t.equal(second.headers.get('etag'), first.headers.get('etag'));
    t.equal(Number(second.headers.get('content-length')), Buffer.byteLength(second.text), 'Content-Length counts bytes, not characters');
    t.match(second.headers.get('content-type'), /^application\/json; charset=utf-8/);
    const head = await s.request('HEAD', org, { key });
    t.equal(head.status, 200);
    t.equal(head.text, '');
    t.equal(Number(head.headers.get('content-length')), Buffer.byteLength(first.text));
  });

  t.test('create answers the whole resource with parents and a UUIDv7 id', async (t) => {
    const r = await s.request('POST', `${farm}/greenhouses`, { key, body: { name: 'GH 2', time_zone: 'America/Chicago', area_m2: 1200 } });
    t.equal(r.status, 201);
    t.match(r.body.greenhouse_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    t.equal(r.headers.get('location'), `${farm}/greenhouses/${r.body.greenhouse_id}`, 'Location: the new greenhouse');
    t.equal((await s.request('GET', r.headers.get('location')!, { key })).body.greenhouse_id, r.body.greenhouse_id, 'and it reads back');
    t.equal(r.body.farm_id, tree.farmId);
    t.equal(r.body.organization_id, tree.orgId);
    t.equal(r.body.area_m2, 1200);
    t.equal(r.body.latitude, null);
    t.ok(r.body.version && r.body.created_at);
  });

  t.test('validation: one entry per failing field, nothing stored', async (t) => {
    const before = await s.request('GET', `${farm}/greenhouses`, { key });
    const cases: [unknown, string[]][] = [
      [{}, ['name', 'time_zone']],
      [{ name: '', time_zone: 'Mars/Olympus' }, ['name', 'time_zone']],
      [{ name: 'x', time_zone: 'Europe/Amsterdam', latitude: 95 }, ['latitude']],
      [{ name: 'x', time_zone: 'Europe/Amsterdam', latitude: 52 }, ['longitude']],
      [{ name: 'x', time_zone: 'Europe/Amsterdam', greenhouse_id: 'mine' }, ['greenhouse_id']],
      [{ name: 'x', time_zone: 'Europe/Amsterdam', area_m2: -5 }, ['area_m2']],
      [{ name: 7, time_zone: 'Europe/Amsterdam' }, ['name']],
    ];
    for (const [body, names] of cases) {
      const r = await s.request('POST', `${farm}/greenhouses`, { key, body });
      t.equal(r.status, 422, JSON.stringify(body));
      t.equal(r.body.code, 'validation_failed');
      t.match(r.headers.get('content-type'), /problem\+json/);
      t.same(r.body.errors.map((e: any) => e.name).sort(), names.sort(), `fields for ${JSON.stringify(body)}`);
      for (const e of r.body.errors) t.equal(e.in, 'body');
    }
    const bad = await s.request('POST', `${farm}/greenhouses`, { key, body: '{not json' });
    t.equal(bad.status, 422);
    const wrongType = await s.request('POST', `${farm}/greenhouses`, {
      key,
      raw: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.equal(wrongType.status, 415);
    const after = await s.request('GET', `${farm}/greenhouses`, { key });
    t.same(after.body, before.body, 'nothing stored');
  });

  t.test('path and query are validated too', async (t) => {
    const r = await s.request('GET', `${org}/farms/not-a-uuid`, { key });
    t.equal(r.status, 422);
    t.same(r.body.errors, [{ in: 'path', name: 'farm_id', message: r.body.errors[0].message }]);
    const q = await s.request('DELETE', `${farm}?cascade=perhaps`, { key });
    t.equal(q.status, 422);
    t.equal(q.body.errors[0].in, 'query');
  });

  t.test('a cycle checks its dates', async (t) => {
    const rows = `${tree.greenhousePath}/rows/${tree.rowId}/cycles`;
    const r = await s.request('POST', rows, { key, body: { name: 'c', started_on: '2026-02-30' } });
    t.equal(r.status, 422);
    const r2 = await s.request('POST', rows, { key, body: { name: 'c', started_on: '2026-03-01', ended_on: '2026-02-01' } });
    t.equal(r2.status, 422);
    t.equal(r2.body.errors[0].name, 'ended_on');
  });

  t.test('PATCH changes details, never ids; required fields are not cleared', async (t) => {
    const url = `${tree.greenhousePath}`;
    const r = await s.request('PATCH', url, { key, body: { name: 'Glasshouse North', notes: 'east wing' } });
    t.equal(r.status, 200);
    t.equal(r.body.name, 'Glasshouse North');
    t.equal(r.body.greenhouse_id, tree.greenhouseId);
    t.equal(r.body.time_zone, 'Europe/Amsterdam', 'left-out field kept');
    const idChange = await s.request('PATCH', url, { key, body: { greenhouse_id: 'x' } });
    t.equal(idChange.status, 422);
    const clear = await s.request('PATCH', url, { key, body: { name: null } });
    t.equal(clear.status, 422);
    const clearNotes = await s.request('PATCH', url, { key, body: { notes: null } });
    t.equal(clearNotes.body.notes, null);
    const empty = await s.request('PATCH', url, { key, body: {} });
    t.equal(empty.status, 422);
    const lat = await s.request('PATCH', url, { key, body: { latitude: null } });
    t.equal(lat.status, 422, 'latitude without longitude');
    t.ok(BigInt(r.body.version.split('.')[0]) <= BigInt(clearNotes.body.version.split('.')[0]));
    t.ok(clearNotes.body.version > r.body.version, 'version grows');
  });

  t.test('a path that mixes parents is a 404', async (t) => {
    const other = await createTree(s);
    const r = await s.request('GET', `${org}/farms/${other.farmId}`, { key });
    t.equal(r.status, 404);
    const mixed = await s.request('GET', `${org}/farms/${tree.farmId}/greenhouses/${other.greenhouseId}`, { key });
    t.equal(mixed.status, 404);
    const cyc = await s.request('GET', `${tree.greenhousePath}/rows/${tree.rowId}/cycles/${other.cycleId}`, { key });
    t.equal(cyc.status, 404);
  });

  t.test('contents, 409 while not empty, cascade in one transaction', async (t) => {
    const c = await s.request('GET', `${farm}/contents`, { key });
    t.equal(c.status, 200);
    t.equal(c.body.counts.greenhouses, 2);
    t.equal(c.body.counts.rows, 1);
    t.equal(c.body.counts.cycles, 1);
    const rowContents = await s.request('GET', `${tree.greenhousePath}/rows/${tree.rowId}/contents`, { key });
    t.same(Object.keys(rowContents.body.counts).slice(0, 1), ['cycles']);

    const refused = await s.request('DELETE', farm, { key });
    t.equal(refused.status, 409);
    t.equal(refused.body.code, 'conflict');
    t.same(refused.body.counts, c.body.counts, '409 carries the counts');
    const still = await s.request('GET', farm, { key });
    t.equal(still.status, 200, 'nothing deleted');

    const logBefore = await dbCount(s, "select count(*) n from change_log where op = 'delete'");
    const del = await s.request('DELETE', `${farm}?cascade=true`, { key });
    t.equal(del.status, 200);
    t.same(del.body.counts, c.body.counts);
    for (const table of ['farms', 'greenhouses', 'rows', 'cycles']) {
      t.equal(await dbCount(s, `select count(*) n from ${table} where organization_id = ?`, tree.orgId), 0, `${table} emptied`);
    }
    const logAfter = await dbCount(s, "select count(*) n from change_log where op = 'delete'");
    t.equal(logAfter - logBefore, 1 + 2 + 1 + 1, 'a tombstone for every removed row');
    const gone = await s.request('GET', farm, { key });
    t.equal(gone.status, 404);
  });

  t.test('an empty level deletes without cascade', async (t) => {
    const f = await s.request('POST', `${org}/farms`, { key, body: { name: 'Empty' } });
    const d = await s.request('DELETE', `${org}/farms/${f.body.farm_id}`, { key });
    t.equal(d.status, 200);
    t.same(d.body.counts.greenhouses, 0);
  });

  t.test('a member key may use the registry', async (t) => {
    const { orgId, adminKey } = await createOrg(s, 'Members');
    const m = await s.request('POST', `/api/organizations/${orgId}/keys`, { key: adminKey, body: { name: 'm', role: 'member' } });
    const f = await s.request('POST', `/api/organizations/${orgId}/farms`, { key: m.body.api_key, body: { name: 'F' } });
    t.equal(f.status, 201);
  });
});
