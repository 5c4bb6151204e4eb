import t from 'tap';
import { startServer, createTree } from '../helpers/server.js';

const upload = (csv: string) => {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'h.csv');
  return form;
};

t.test('records join the registry: contents and cascading deletes', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const keep = await createTree(s);
  const key = tree.adminKey;

  const fill = async (cyclePath: string, k: string) => {
    const ok = (r: { status: number; text: string }, what: string) =>
      t.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${r.text.slice(0, 200)}`);
    ok(await s.request('POST', `${cyclePath}/harvests`, { key: k, body: { week: '2026-W07', kg: 1 } }), 'harvest');
    ok(await s.request('POST', `${cyclePath}/harvests/csv`, { key: k, raw: upload('week,kg\n2026-W08,2\n2026-W09,3\n') }), 'harvest csv');
    ok(await s.request('POST', `${cyclePath}/irrigation`, { key: k, body: { at: '2026-03-01T07:00', volume_l: 10 } }), 'irrigation');
    ok(
      await s.request('POST', `${cyclePath}/fruit-mass`, { key: k, body: { week: '2026-W07', green_g: 1, turning_g: 2, red_g: 3 } }),
      'fruit mass',
    );
    ok(
      await s.request('PUT', `${cyclePath}/truss-counts`, {
        key: k,
        body: {
          counted_on: '2026-03-02',
          rows: [
            { plant: 'A', truss: 1, fruits: 2 },
            { plant: 'A', truss: 2, fruits: 1 },
          ],
        },
      }),
      'truss count',
    );
    ok(await s.request('POST', `${cyclePath}/weeks/2026-W07`, { key: k, body: { a: 1 } }), 'week note');
  };
  await fill(tree.cyclePath, key);
  await fill(keep.cyclePath, keep.adminKey);

  const expected = { harvests: 3, irrigation: 1, fruit_mass: 1, truss_counts: 1, truss_count_rows: 2, week_notes: 1 };
  const farmPath = `/api/organizations/${tree.orgId}/farms/${tree.farmId}`;
  const contents = await s.request('GET', `${farmPath}/contents`, { key });
  t.equal(contents.status, 200);
  t.match(contents.body.counts, expected, 'the farm counts every record kind');
  t.match((await s.request('GET', `${tree.cyclePath}/contents`, { key })).body.counts, expected, 'and so does the cycle');

  const refused = await s.request('DELETE', farmPath, { key });
  t.equal(refused.status, 409, 'a farm holding records');
  t.match(refused.body.counts, expected);

  const del = await s.request('DELETE', `${farmPath}?cascade=true`, { key });
  t.equal(del.status, 200, del.text);
  t.match(del.body.counts, expected);

  const db = s.app.services.db;
  for (const table of ['harvests', 'irrigation_entries', 'fruit_masses', 'truss_counts', 'truss_count_rows', 'week_notes'] as const) {
    const gone = await db.selectFrom(table).select('id').where('cycle_id', '=', tree.cycleId).execute();
    t.equal(gone.length, 0, `${table} removed`);
    const kept = await db.selectFrom(table).select('id').where('cycle_id', '=', keep.cycleId).execute();
    t.ok(kept.length > 0, `${table} of another organization kept`);
  }
  const tombstones = await db
    .selectFrom('change_log')
    .select(['entity'])
    .where('op', '=', 'delete')
    .where('organization_id', '=', tree.orgId)
    .execute();
  const byEntity = tombstones.reduce<Record<string, number>>((m, r) => ({ ...m, [r.entity]: (m[r.entity] ?? 0) + 1 }), {});
  t.match(
    byEntity,
    { harvests: 3, irrigation_entries: 1, fruit_masses: 1, truss_counts: 1, truss_count_rows: 2, week_notes: 1 },
    'a tombstone for each',
  );
  t.match(
    (await s.request('GET', `${keep.cyclePath}/contents`, { key: keep.adminKey })).body.counts,
    expected,
    'the other organization untouched',
  );
});

t.test('every records route is in the OpenAPI document with units and errors', async (t) => {
  const s = await startServer(t);
  const doc = (await s.request('GET', '/openapi.json')).body;
  const cycle = '/api/organizations/{organization_id}/farms/{farm_id}/greenhouses/{greenhouse_id}/rows/{row_id}/cycles/{cycle_id}';
  const ops: [string, string, string[]][] = [
    ['post', '/harvests', ['201', '404', '413', '415', '422']],
    ['get', '/harvests', ['200', '404', '422']],
    ['patch', '/harvests/{harvest_id}', ['200', '404', '422']],
    ['delete', '/harvests/{harvest_id}', ['200', '404']],
    ['post', '/harvests/csv', ['201', '413', '415', '422']],
    ['post', '/irrigation', ['201', '422']],
    ['get', '/irrigation', ['200', '422']],
    ['patch', '/irrigation/{entry_id}', ['200', '404', '422']],
    ['delete', '/irrigation/{entry_id}', ['200', '404']],
    ['post', '/fruit-mass', ['200', '422']],
    ['get', '/fruit-mass', ['200']],
    ['put', '/truss-counts', ['200', '422']],
    ['get', '/truss-counts', ['200']],
    ['delete', '/truss-counts/{counted_on}', ['200', '404', '422']],
    ['post', '/weeks/{week}', ['201', '413', '422']],
    ['get', '/weeks/{week}', ['200', '404', '422']],
  ];
  for (const [method, suffix, statuses] of ops) {
    const op = doc.paths[cycle + suffix]?.[method];
    t.ok(op, `${method} ${suffix} documented`);
    if (!op) continue;
    for (const st of [...statuses, '401', '500']) t.ok(op.responses[st], `${method} ${suffix} documents ${st}`);
  }
  const harvestBody = doc.paths[`${cycle}/harvests`].post.requestBody.content['application/json'].schema;
  t.match(harvestBody.properties.kg.description, /kilograms/);
  const irrigation = doc.paths[`${cycle}/irrigation`].post.requestBody.content['application/json'].schema.properties;
  t.match(irrigation.volume_l.description, /litres/);
  t.match(irrigation.ec_in.description, /mS\/cm/);
  t.match(irrigation.at.description, /greenhouse time zone/);
  const fm = doc.paths[`${cycle}/fruit-mass`].post.requestBody.content['application/json'].schema.properties;
  t.match(fm.red_g.description, /grams/);
  t.match(doc.paths[`${cycle}/harvests/csv`].post.description, /5 MiB/);
});
