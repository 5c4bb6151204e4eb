// The conflict rule of each kind (docs/sync.md, "Conflicts, kind by kind"), one case at a time,
// on real instances: which write wins and why, whatever order the changes arrive in and however
// wrong a box's clock is. And the second way in: a box used on its own first, linked later.
import t from 'tap';
import { ADMIN_TOKEN, createOrg, createTree } from '../helpers/server.js';
import { call, digest, digestDiff, fkViolations, skew, startBox, startUpstream, syncOnce, syncUntilQuiet } from './helpers.js';
import { startServer } from '../helpers/server.js';

const DAY = 86_400_000;

t.test('conflicts, kind by kind', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  const b1 = await startBox(t, up.base, key);
  const b2 = await startBox(t, up.base, key);
  await syncUntilQuiet([b1, b2]);
  const farm = `/api/organizations/${tree.orgId}/farms/${tree.farmId}`;
  const C = tree.cyclePath;
  const same = async (what: string) => {
    await syncUntilQuiet([b1, b2]);
    const d = await digest(up, key);
    t.same(digestDiff(d, await digest(b1, key)), [], `${what}: box 1 agrees`);
    t.same(digestDiff(d, await digest(b2, key)), [], `${what}: box 2 agrees`);
    for (const s of [up, b1, b2]) t.same(await fkViolations(s), [], `${what}: no broken reference`);
  };

  t.test('registry: field by field, so two edits of different fields both stand', async (t) => {
    await call(b1, 'PATCH', farm, key, { name: 'North' });
    await call(b2, 'PATCH', farm, key, { notes: 'sandy soil' });
    await same('two fields');
    const f = await call(up, 'GET', farm, key);
    t.equal(f.name, 'North');
    t.equal(f.notes, 'sandy soil');
  });

  t.test('a slow clock cannot make an older edit win; a write made before seeing another loses to it', async (t) => {
    skew(b1, -2 * DAY);
    // Box 1 has seen the upstream's edit (it pulls it), then edits: its edit is later, whatever its clock says.
    const seen = await call(up, 'PATCH', farm, key, { notes: 'from the office' });
    await syncOnce(b1);
    const mine = await call(b1, 'PATCH', farm, key, { notes: 'from the greenhouse' });
    t.ok(mine.version > seen.version, 'the box’s version is after the one it saw, two days slow or not');
    await same('after seeing');
    t.equal((await call(b2, 'GET', farm, key)).notes, 'from the greenhouse', 'the later edit stands everywhere');
    // Concurrent: box 1 (two days slow) edits without having seen the upstream's edit: the greater version wins, on every side.
    const a = await call(b1, 'PATCH', farm, key, { name: 'slow box name' });
    const b = await call(up, 'PATCH', farm, key, { name: 'office name' });
    await same('concurrent');
    const want = a.version > b.version ? a.name : b.name;
    for (const s of [up, b1, b2]) t.equal((await call(s, 'GET', farm, key)).name, want, 'the same winner everywhere, by version');
    skew(b1, 0);
  });

  t.test('facts: a delete is final, a late edit does not bring the record back', async (t) => {
    const h = await call(b1, 'POST', `${C}/harvests`, key, { week: '2026-W10', kg: 10 });
    await syncUntilQuiet([b1, b2]);
    await call(b1, 'DELETE', `${C}/harvests/${h.harvest_id}`, key);
    skew(b2, 3 * DAY);
    const late = await call(b2, 'PATCH', `${C}/harvests/${h.harvest_id}`, key, { kg: 11 });
    t.ok(late.version > h.version, 'the edit is later than the delete');
    await same('delete and a later edit');
    for (const s of [up, b1, b2]) t.equal((await s.request('GET', `${C}/harvests`, { key })).body.items.length, 0, 'deleted everywhere');
    skew(b2, 0);
  });

  t.test('one fruit mass per week: the later save stands, on every side', async (t) => {
    await call(b1, 'POST', `${C}/fruit-mass`, key, { week: '2026-W12', green_g: 90, turning_g: 100, red_g: 111 }, 200);
    const later = await call(b2, 'POST', `${C}/fruit-mass`, key, { week: '2026-W12', green_g: 90, turning_g: 100, red_g: 222 }, 200);
    await same('fruit mass');
    for (const s of [up, b1, b2]) {
      const items = (await call(s, 'GET', `${C}/fruit-mass`, key)).items.filter((m: any) => m.week === '2026-W12');
      t.same(
        items.map((m: any) => [m.red_g, m.version]),
        [[222, later.version]],
        'one entry, the later one',
      );
    }
  });

  t.test('a key revocation always wins, even over a later rename', async (t) => {
    const k = await call(up, 'POST', `/api/organizations/${tree.orgId}/keys`, key, { name: 'tablet', role: 'member' });
    await syncUntilQuiet([b1, b2]);
    await call(up, 'POST', `/api/organizations/${tree.orgId}/keys/${k.key_id}/revoke`, key, undefined, 200);
    skew(b1, DAY);
    const renamed = await call(b1, 'PATCH', `/api/organizations/${tree.orgId}/keys/${k.key_id}`, key, { name: 'tablet 2' });
    t.equal(renamed.active, true, 'box 1 has not heard of the revocation');
    await same('revoke and rename');
    for (const s of [up, b1, b2]) {
      const held = (await call(s, 'GET', `/api/organizations/${tree.orgId}/keys`, key)).items.find((x: any) => x.key_id === k.key_id);
      t.equal(held.active, false, 'revoked everywhere');
      t.equal(held.name, 'tablet 2', 'with the later name');
      t.equal((await s.request('GET', '/api/session', { key: k.api_key })).status, 401, 'and refused everywhere');
    }
    skew(b1, 0);
  });

  t.test('a key revoked on two boxes: the earlier revocation stands, under the same version on every side', async (t) => {
    const k = await call(up, 'POST', `/api/organizations/${tree.orgId}/keys`, key, { name: 'phone', role: 'member' });
    await syncUntilQuiet([b1, b2]);
    const revoke = `/api/organizations/${tree.orgId}/keys/${k.key_id}/revoke`;
    const early = await call(b2, 'POST', revoke, key, undefined, 200);
    // Further ahead than any clock of the earlier subtests (every side's HLC has moved past those).
    skew(b1, 5 * DAY);
    const late = await call(b1, 'POST', revoke, key, undefined, 200);
    t.ok(late.version > early.version, "box 1's revocation has the greater version");
    // The later revocation reaches the upstream first; the earlier one then changes the time the
    // key was revoked there, and box 2 receives a record whose fields it already holds.
    await syncOnce(b1);
    await syncOnce(b2);
    await same('two revocations');
    for (const s of [up, b1, b2]) {
      const held = (await call(s, 'GET', `/api/organizations/${tree.orgId}/keys`, key)).items.find((x: any) => x.key_id === k.key_id);
      t.equal(held.revoked_at, early.revoked_at, 'the earlier revocation time');
      t.equal(held.version, late.version, 'the later version');
    }
    skew(b1, 0);
  });

  t.test('a crop cycle deleted on one box takes what another box added to it meanwhile', async (t) => {
    const gh = tree.greenhousePath;
    const row = await call(up, 'POST', `${gh}/rows`, key, { name: 'Row 9' });
    const cycle = await call(up, 'POST', `${gh}/rows/${row.row_id}/cycles`, key, { name: 'short', started_on: '2026-02-01' });
    const cyc = `${gh}/rows/${row.row_id}/cycles/${cycle.cycle_id}`;
    await syncUntilQuiet([b1, b2]);
    await call(b2, 'POST', `${cyc}/harvests`, key, { week: '2026-W10', kg: 5 });
    await call(b2, 'POST', `${cyc}/climate`, key, { points: [{ metric: 'co2', value: 800, at: '2026-03-02T10:00:00Z' }] }, 200);
    await call(b1, 'DELETE', `${cyc}?cascade=true`, key);
    await syncOnce(b1);
    await same('cascade');
    for (const s of [up, b1, b2]) t.equal((await s.request('GET', cyc, { key })).status, 404, 'the cycle is gone everywhere');
    t.equal((await digest(up, key)).harvests!.count, 0, 'with the harvest added to it meanwhile');
    const quarantine = [
      (await call(b1, 'GET', '/api/sync', key)).quarantined.count,
      (await call(b2, 'GET', '/api/sync', key)).quarantined.count,
    ];
    t.same(quarantine, [0, 0], 'nothing refused: a delete settles it');
  });
});

t.test('a box used on its own first, linked to an upstream later', async (t) => {
  const up = await startUpstream(t);
  const box = await startServer(t, { syncIntervalS: 0 });
  const tree = await createTree(box);
  const key = tree.adminKey;
  const staff = await call(box, 'POST', `/api/organizations/${tree.orgId}/keys`, key, { name: 'staff', role: 'member' });
  await call(box, 'POST', `${tree.cyclePath}/harvests`, staff.api_key, { week: '2026-W10', kg: 8 });
  await call(
    box,
    'POST',
    `${tree.cyclePath}/climate`,
    key,
    { points: [{ metric: 'air_temperature', value: 20, at: '2026-03-02T10:00:00Z' }] },
    200,
  );
  // The upstream holds another organization already: ids never collide.
  const other = await createTree(up);

  const refusedLink = async (body: Record<string, unknown>, status: number, what: string) => {
    const r = await box.request('POST', '/api/admin/sync/link', { admin: true, body });
    t.equal(r.status, status, what);
    t.equal((await box.request('GET', '/api/sync', { key })).body.role, 'upstream', `${what}: not linked`);
  };
  await refusedLink({ upstream_url: up.base, organization_id: tree.orgId }, 422, 'neither token nor key');
  await refusedLink({ upstream_url: up.base, organization_id: tree.orgId, upstream_token: 'wrong' }, 422, 'a wrong upstream token');
  await refusedLink(
    { upstream_url: up.base, organization_id: other.orgId, upstream_token: ADMIN_TOKEN },
    404,
    'an organization this box does not hold',
  );
  await refusedLink(
    { upstream_url: up.base, organization_id: tree.orgId, upstream_key: other.adminKey },
    422,
    'a key of another organization',
  );
  t.equal(
    (await box.request('POST', '/api/admin/sync/link', { body: { upstream_url: up.base, organization_id: tree.orgId } })).status,
    401,
    'no admin token: 401',
  );

  const linked = await box.request('POST', '/api/admin/sync/link', {
    admin: true,
    body: { upstream_url: up.base, organization_id: tree.orgId, upstream_token: ADMIN_TOKEN },
  });
  t.equal(linked.status, 200, 'linked');
  t.ok(linked.body.round.ok, 'and the first round went through');
  t.ok(linked.body.round.pushed > 0, 'sending what the box holds');
  await syncUntilQuiet([box]);
  t.same(digestDiff(await digest(box, key), await digest(up, key)), [], 'the upstream holds all of it');
  t.equal((await up.request('GET', '/api/session', { key: staff.api_key })).status, 200, 'a staff key made on the box works upstream');
  t.equal(
    (await up.request('GET', `${tree.cyclePath}/harvests`, { key: staff.api_key })).body.items[0].kg,
    8,
    'with the harvest it recorded',
  );
  t.equal(
    (
      await box.request('POST', '/api/admin/sync/link', {
        admin: true,
        body: { upstream_url: up.base, organization_id: tree.orgId, upstream_token: ADMIN_TOKEN },
      })
    ).status,
    409,
    'linking again: 409',
  );
  const otherAfter = await digest(up, other.adminKey);
  t.equal(otherAfter.organizations!.count, 1, 'the other organization is still there, alone');

  // A second box of the organization, set up the first way, converges with the first through the upstream.
  const b2 = await startBox(t, up.base, key);
  await syncUntilQuiet([box, b2]);
  t.same(digestDiff(await digest(box, key), await digest(b2, key)), [], 'a second site holds the same');
  // The link survives a restart: it is stored, not in the settings.
  t.equal((await box.request('GET', '/api/sync', { key })).body.role, 'box');
  void createOrg;
});
