// A truss-count date may carry stems_per_m2 (extra stems kept from that date): it holds until the
// next date that carries one, scales that date's fruit per m², and is stored and answered as typed.
import t from 'tap';
import { createTree, startServer } from '../../helpers/server.js';

const s = await startServer(t);
const tree = await createTree(s); // the cycle: 3.3 stems/m², 2.5 plants/m²
const key = tree.adminKey;
const url = `${tree.cyclePath}/truss-counts`;
const rows = [
  { plant: 'A', truss: 1, fruits: 10 },
  { plant: 'A', truss: 2, fruits: 8 },
];

t.test('stems_per_m2 on a count date', async (t) => {
  t.equal((await s.request('PUT', url, { key, body: { counted_on: '2026-02-02', rows } })).status, 200);
  const carried = await s.request('PUT', url, { key, body: { counted_on: '2026-02-09', stems_per_m2: 4.5, rows } });
  t.equal(carried.status, 200, carried.text);
  t.equal(carried.body.stems_per_m2, 4.5);
  t.match(carried.body.figures, { density_basis: 'truss_count', density_per_m2: 4.5, density_from: '2026-02-09', fruit_per_m2: 81 });
  await s.request('PUT', url, { key, body: { counted_on: '2026-02-16', rows } });
  const list = (await s.request('GET', url, { key })).body.items;
  t.same(
    list.map((c: any) => [c.counted_on, c.stems_per_m2, c.figures.density_basis, c.figures.density_per_m2]),
    [
      ['2026-02-16', null, 'truss_count', 4.5],
      ['2026-02-09', 4.5, 'truss_count', 4.5],
      ['2026-02-02', null, 'stems_per_m2', 3.3],
    ],
    "held from its date on; before it, the cycle's",
  );
  // Saving the date again without it: the date carries none any more.
  const cleared = await s.request('PUT', url, { key, body: { counted_on: '2026-02-09', rows } });
  t.equal(cleared.body.stems_per_m2, null);
  t.equal(cleared.body.figures.density_basis, 'stems_per_m2');
});

t.test('a bad stem density is a 422 and stores nothing', async (t) => {
  const before = (await s.request('GET', url, { key })).text;
  for (const stems of [0, -1, 101, '4']) {
    const r = await s.request('PUT', url, { key, body: { counted_on: '2026-02-02', stems_per_m2: stems, rows } });
    t.equal(r.status, 422, String(stems));
    t.ok(
      r.body.errors.some((e: any) => e.name === 'stems_per_m2'),
      JSON.stringify(r.body.errors),
    );
  }
  t.equal((await s.request('GET', url, { key })).text, before);
});

t.test('a crop cycle carries area_m2', async (t) => {
  const r = await s.request('PATCH', tree.cyclePath, { key, body: { area_m2: 62.5 } });
  t.equal(r.status, 200);
  t.equal(r.body.area_m2, 62.5);
  t.equal((await s.request('PATCH', tree.cyclePath, { key, body: { area_m2: -3 } })).status, 422);
  t.equal((await s.request('GET', `/api/organizations/${tree.orgId}`, { key })).status, 200);
});
