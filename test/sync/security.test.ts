// What an upstream accepts, and from whom: only the key's organization (a batch naming another
// is 403 and applies nothing), every change checked by the API's own schemas and rules (a
// refusal is quarantined with its reason, visible, and the changes behind it go on), a revoked
// key stops syncing at once, and no secret ever crosses the link.
import t from 'tap';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { ADMIN_TOKEN, createTree } from '../helpers/server.js';
import { FaultProxy, seeded } from '../helpers/fault-proxy.js';
import { call, digest, digestDiff, startBox, startUpstream, syncOnce, syncUntilQuiet } from './helpers.js';
import { SYSTEM_ACTOR } from '../../src/db/store.js';

async function push(base: string, key: string, changes: unknown[], gzip = false) {
  const body = Buffer.from(JSON.stringify({ changes }));
  const res = await fetch(`${base}/api/sync/v1/push`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
    body: gzip ? gzipSync(body) : body,
  });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('the upstream takes changes for the key’s organization only, checked as the API checks them', async (t) => {
  const up = await startUpstream(t);
  const a = await createTree(up);
  const b = await createTree(up);
  await call(up, 'POST', `${b.cyclePath}/harvests`, b.adminKey, { week: '2026-W10', kg: 4 });
  const bBefore = await digest(up, b.adminKey);
  const node = 'feedbeef0001';
  // One instant for every version of the test, so a change and its row always carry the same one.
  const ms = Date.now();
  const v = (n: number) => `${String(ms).padStart(13, '0')}.${String(n).padStart(6, '0')}.${node}`;
  const now = new Date().toISOString();
  const harvest = (tree: typeof a, id: string, kg: number, n: number, extra: Record<string, unknown> = {}) => ({
    id: `${node}:${n}`,
    origin: node,
    org: tree.orgId,
    kind: 'harvests',
    eid: id,
    op: 'upsert',
    v: v(n),
    at: now,
    row: {
      id,
      organization_id: tree.orgId,
      farm_id: tree.farmId,
      greenhouse_id: tree.greenhouseId,
      row_id: tree.rowId,
      cycle_id: tree.cycleId,
      week: '2026-W10',
      kg,
      note: null,
      harvested_on: null,
      created_at: now,
      updated_at: now,
      version: v(n),
      ...extra,
    },
  });
  const id = (n: number) => `01a2a000-0000-7000-8000-${String(n).padStart(12, '0')}`;

  // A batch with one change for organization B, sent with A's key: 403, nothing applied.
  const cross = await push(up.base, a.adminKey, [harvest(a, id(1), 5, 1), harvest(b, id(2), 5, 2)]);
  t.equal(cross.status, 403, 'a change for another organization refuses the batch');
  t.equal(cross.body.code, 'forbidden');
  t.same(cross.body.change_ids, [`${node}:2`], 'naming the change');
  t.equal((await call(up, 'GET', `${a.cyclePath}/harvests`, a.adminKey)).items.length, 0, 'nothing of the batch was applied');

  // A's key, A's organization, but B's crop cycle: not held for A (404), as the API answers a path across organizations.
  const bCycle = harvest(a, id(3), 5, 3, { farm_id: b.farmId, greenhouse_id: b.greenhouseId, row_id: b.rowId, cycle_id: b.cycleId });
  const ok = harvest(a, id(4), 6, 4);
  const invalid = harvest(a, id(5), -2, 5);
  const badWeek = harvest(a, id(6), 1, 6, { week: '2026-W10', harvested_on: '2026-03-20' });
  const r = await push(up.base, a.adminKey, [bCycle, invalid, ok, badWeek], true);
  t.equal(r.status, 200);
  t.same(
    r.body.results.map((x: any) => [x.outcome, x.status ?? null, x.code ?? null]),
    [
      ['refused', 404, 'not_found'],
      ['refused', 422, 'validation_failed'],
      ['applied', null, null],
      ['refused', 422, 'validation_failed'],
    ],
    'each change checked on its own: refusals with the status the API gives, and the good one applied',
  );
  t.same(
    r.body.results[1].errors.map((e: any) => e.name),
    ['kg'],
    'the field at fault is named',
  );
  t.match(r.body.results[3].detail, /harvested_on/, 'the rule that failed is named');
  t.same(
    (await call(up, 'GET', `${a.cyclePath}/harvests`, a.adminKey)).items.map((h: any) => h.kg),
    [6],
    'only the good change is stored',
  );

  // The same batch again answers the same and applies nothing twice.
  const again = await push(up.base, a.adminKey, [bCycle, invalid, ok, badWeek]);
  t.same(again.body.results, r.body.results, 'a batch sent again answers as the first time');
  t.equal((await call(up, 'GET', `${a.cyclePath}/harvests`, a.adminKey)).items.length, 1, 'and applies nothing twice');

  // A record id held by another organization cannot be written through this one.
  const bHarvest = (await call(up, 'GET', `${b.cyclePath}/harvests`, b.adminKey)).items[0];
  const hijack = await push(up.base, a.adminKey, [harvest(a, bHarvest.harvest_id, 99, 7)]);
  t.equal(hijack.body.results[0].outcome, 'refused', 'a record of another organization is refused');
  t.equal(hijack.body.results[0].status, 403);
  t.same(digestDiff(bBefore, await digest(up, b.adminKey)), [], 'organization B is untouched');

  // Hostile bodies: not JSON, not a batch, gzip that is not.
  for (const [what, body, headers] of [
    ['not JSON', 'hello', {}],
    ['not a batch', '{"items": []}', {}],
    ['bad gzip', 'not gzip at all', { 'content-encoding': 'gzip' }],
  ] as const) {
    const res = await fetch(`${up.base}/api/sync/v1/push`, {
      method: 'POST',
      headers: { 'x-api-key': a.adminKey, 'content-type': 'application/json', ...headers },
      body,
    });
    t.equal(res.status, 422, `${what}: 422`);
    t.equal(res.headers.get('content-type'), 'application/problem+json', `${what}: a problem`);
  }
  const member = await call(up, 'POST', `/api/organizations/${a.orgId}/keys`, a.adminKey, { name: 'm', role: 'member' });
  t.equal((await push(up.base, member.api_key, [ok])).status, 403, 'a member key cannot push');
  t.equal((await fetch(`${up.base}/api/sync/v1/changes`)).status, 401, 'no key: 401');
});

t.test('a refused change is quarantined with its reason and does not hold up the ones behind it', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  const box = await startBox(t, up.base, key);
  await syncUntilQuiet([box]);
  // A change the API would refuse (a note longer than 500 characters), made on the box the way an
  // older version of it might have: through its Writer, past the route's schema.
  await box.app.services.store.write(SYSTEM_ACTOR, (w) =>
    w.insert('harvests', {
      organization_id: tree.orgId,
      farm_id: tree.farmId,
      greenhouse_id: tree.greenhouseId,
      row_id: tree.rowId,
      cycle_id: tree.cycleId,
      week: '2026-W10',
      kg: 3,
      note: 'x'.repeat(600),
      harvested_on: null,
    } as never),
  );
  const good = await call(box, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W11', kg: 7 });
  const round = await syncOnce(box);
  t.equal(round.refused, 1, 'one change refused');
  t.ok(round.ok, 'the round went on');
  const st = (await box.request('GET', '/api/sync', { key })).body;
  t.equal(st.quarantined.count, 1, 'quarantined');
  t.match(
    st.quarantined.items[0],
    { direction: 'push', kind: 'harvests', status: 422, code: 'validation_failed' },
    'with its status and code',
  );
  t.same(
    st.quarantined.items[0].errors.map((e: any) => e.name),
    ['note'],
    'and the field at fault',
  );
  t.equal(st.pending.changes, 0, 'nothing is left pending');
  t.same(
    (await call(up, 'GET', `${tree.cyclePath}/harvests`, key)).items.map((h: any) => h.harvest_id),
    [good.harvest_id],
    'the change behind it reached the upstream',
  );
  t.equal((await syncOnce(box)).refused, 0, 'a quarantined change is not sent again by itself');
});

t.test('a revoked key stops syncing at once, and no secret crosses the link', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const second = await call(up, 'POST', `/api/organizations/${tree.orgId}/keys`, tree.adminKey, { name: 'box key', role: 'admin' });
  const staff = await call(up, 'POST', `/api/organizations/${tree.orgId}/keys`, tree.adminKey, { name: 'staff', role: 'member' });
  const proxy = await new FaultProxy(up.base, seeded(3), null).start();
  t.teardown(() => proxy.close());
  const box = await startBox(t, proxy.url, second.api_key);
  await syncUntilQuiet([box]);
  await call(box, 'POST', `/api/organizations/${tree.orgId}/keys`, tree.adminKey, { name: 'made on the box', role: 'member' });
  await call(box, 'POST', `${tree.cyclePath}/harvests`, staff.api_key, { week: '2026-W10', kg: 2 });
  await syncUntilQuiet([box]);

  // No secret in anything that went either way: keys travel as their hashes.
  const secrets = [tree.adminKey, second.api_key, staff.api_key, ADMIN_TOKEN];
  const wire = Buffer.concat([...proxy.forwarded.map((c) => c.body), ...proxy.answers]).toString('utf8');
  for (const s of secrets) t.notOk(wire.includes(s), 'no key secret and no admin token on the wire');
  t.ok(wire.includes(createHash('sha256').update(staff.api_key).digest('hex')), 'keys travel as their hashes');
  t.equal((await box.request('GET', '/api/session', { key: staff.api_key })).status, 200, 'so a staff key works on the box');

  // The box's key is revoked upstream: the very next round is refused, and the box stops.
  await call(up, 'POST', `/api/organizations/${tree.orgId}/keys/${second.key_id}/revoke`, tree.adminKey, undefined, 200);
  await call(box, 'POST', `${tree.cyclePath}/harvests`, staff.api_key, { week: '2026-W10', kg: 3 });
  const before = proxy.counters.requests;
  const round = await syncOnce(box);
  t.notOk(round.ok, 'the round fails');
  t.equal(round.state, 'key_refused', 'the box says why');
  t.equal(round.pushed, 0, 'nothing was pushed');
  t.equal(proxy.counters.requests - before, 1, 'one request, refused, and no other');
  const st = (await box.request('GET', '/api/sync', { key: tree.adminKey })).body;
  t.equal(st.state, 'key_refused', 'GET /api/sync says the key was refused');
  t.equal(st.pending.changes, 1, 'and the change made since waits');
  t.equal(
    (await call(up, 'GET', `${tree.cyclePath}/harvests`, tree.adminKey)).items.length,
    1,
    'the upstream took nothing with the revoked key',
  );
});
