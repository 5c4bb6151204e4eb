// Every kind of record travels both ways between two boxes of one organization and their
// upstream, three real instances on loopback: what one box writes reaches the upstream and the
// other box, edits and deletes made there come back, and all three end with the same records.
import t from 'tap';
import { createTree } from '../helpers/server.js';
import { climateCsv, form } from '../climate/imports/helpers.js';
import { call, digest, digestDiff, fkViolations, startBox, startUpstream, syncUntilQuiet } from './helpers.js';

t.test('every kind travels, and two boxes converge through the upstream', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  const b1 = await startBox(t, up.base, key);
  const b2 = await startBox(t, up.base, key);
  await syncUntilQuiet([b1, b2]);

  // The organization came down with its keys and registry: the upstream's staff key works on the boxes.
  const member = await call(up, 'POST', `/api/organizations/${tree.orgId}/keys`, key, { name: 'tablet', role: 'member' });
  await syncUntilQuiet([b1, b2]);
  for (const b of [b1, b2])
    t.equal((await b.request('GET', '/api/session', { key: member.api_key })).status, 200, 'a staff key made upstream works on the box');

  const C = tree.cyclePath;
  // Box 1 writes one of every kind.
  const harvest = await call(b1, 'POST', `${C}/harvests`, key, { week: '2026-W10', kg: 12.5, note: 'first picking' });
  const irrigation = await call(b1, 'POST', `${C}/irrigation`, key, { at: '2026-03-02T07:30:00+01:00', volume_l: 400, ec_in: 2.6 });
  await call(b1, 'POST', `${C}/fruit-mass`, key, { week: '2026-W10', green_g: 90, turning_g: 110, red_g: 120 }, 200);
  await call(b1, 'POST', `${C}/weeks/2026-W10`, key, { plan: 'deleaf', rows: [1, 2] });
  await call(b1, 'PUT', `${C}/truss-counts`, key, {
    counted_on: '2026-03-04',
    rows: [
      { plant: 'A1', truss: 1, fruits: 5, flowers: 1 },
      { plant: 'A1', truss: 2, fruits: 3 },
    ],
  });
  const typed = await call(
    b1,
    'POST',
    `${C}/climate`,
    key,
    { points: [{ metric: 'air_temperature', value: 21.5, at: '2026-03-02T10:00:00+01:00' }] },
    200,
  );
  const imported = await b1.request('POST', `${C}/climate/csv`, {
    key,
    raw: form(climateCsv(24, { start: '2026-03-03T00:00' }), 'export.csv'),
  });
  t.equal(imported.status, 200, 'box 1 imports a climate file');
  const farm = `/api/organizations/${tree.orgId}/farms/${tree.farmId}`;
  await call(b1, 'PATCH', farm, key, { notes: 'north site' });
  await call(b1, 'PATCH', `/api/organizations/${tree.orgId}/keys/${member.key_id}`, key, { name: 'tablet 2' });

  await syncUntilQuiet([b1, b2]);
  const want = await digest(b1, key);
  t.same(digestDiff(want, await digest(up, key)), [], 'the upstream holds what box 1 holds');
  t.same(digestDiff(want, await digest(b2, key)), [], 'box 2 holds what box 1 holds');
  t.ok(want.climate_readings!.count >= 24 * 3 + 1, 'readings came as units, with the typed one');

  // Box 2 edits and deletes; the other two follow.
  await call(b2, 'PATCH', `${C}/harvests/${harvest.harvest_id}`, key, { kg: 13 });
  await call(b2, 'DELETE', `${C}/irrigation/${irrigation.entry_id}`, key);
  await call(b2, 'PATCH', `${C}/climate/${typed.items[0].point_id}`, key, { value: 22 });
  const imports = await call(b2, 'GET', `${C}/climate/imports`, key);
  await call(b2, 'POST', `${C}/climate/imports/${imports.items[0].id}/undo`, key, { confirm: true }, 200);
  await call(b2, 'DELETE', `${C}/truss-counts/2026-03-04`, key);
  await call(up, 'POST', `/api/organizations/${tree.orgId}/keys/${member.key_id}/revoke`, key, undefined, 200);

  await syncUntilQuiet([b1, b2]);
  const after = await digest(up, key);
  t.same(digestDiff(after, await digest(b1, key)), [], 'box 1 follows box 2');
  t.same(digestDiff(after, await digest(b2, key)), [], 'box 2 holds the same');
  t.equal(after.irrigation_entries!.count, 0, 'the deleted entry is gone everywhere');
  t.equal(after.truss_counts!.count, 0, 'the deleted count date is gone everywhere');
  t.equal(after.climate_imports!.count, 1, 'the undone import stays, undone');
  t.equal((await call(b1, 'GET', `${C}/harvests`, key)).items[0].kg, 13, 'the edit reached box 1');
  const onB1 = (await call(b1, 'GET', `${C}/climate?metric=air_temperature&limit=500`, key)).items;
  t.same(
    onB1.map((r: any) => r.value),
    [22],
    'the typed reading edited on box 2 is the only air temperature left on box 1 (the import was undone)',
  );
  t.equal((await b1.request('GET', '/api/session', { key: member.api_key })).status, 401, 'a key revoked upstream is refused on the box');
  for (const s of [up, b1, b2]) t.same(await fkViolations(s), [], 'no broken reference');
});
