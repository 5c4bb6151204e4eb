// The sync routes one by one, over HTTP: who may call them, what they answer, and every bad
// input a clear 4xx with nothing stored; the feed paged by its cursor without a gap; resumable
// uploads that refuse a wrong offset and bytes that do not hash to their name; an upstream
// replaced under a box; a box restored from an old backup; a change the box itself refuses.
import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { ADMIN_TOKEN, createTree, dbRows } from '../helpers/server.js';
import { FaultProxy, seeded } from '../helpers/fault-proxy.js';
import { SYSTEM_ACTOR } from '../../src/db/store.js';
import { call, startBox, startUpstream, syncOnce, syncUntilQuiet } from './helpers.js';
import { waitFor } from '../helpers/wait.js';
import { apiOnPostgres, sqliteOf } from '../helpers/postgres.js';

t.test('status, sync now, digest: who may call them', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const member = await call(up, 'POST', `/api/organizations/${tree.orgId}/keys`, tree.adminKey, { name: 'm', role: 'member' });
  const st = await call(up, 'GET', '/api/sync', tree.adminKey);
  t.match(st, { role: 'upstream', state: 'serving', organization_id: tree.orgId, upstream: null }, 'an upstream says so');
  t.ok(st.feed_position >= 6, 'and how far its feed goes');
  for (const [method, url] of [
    ['GET', '/api/sync'],
    ['POST', '/api/sync'],
    ['GET', '/api/sync/digest'],
  ] as const) {
    t.equal((await up.request(method, url)).status, 401, `${method} ${url} without a key: 401`);
    t.equal((await up.request(method, url, { key: member.api_key })).status, 403, `${method} ${url} with a member key: 403`);
  }
  const now = await up.request('POST', '/api/sync', { key: tree.adminKey });
  t.equal(now.status, 409, 'sync now on an instance without an upstream: 409');
  t.equal(now.body.code, 'no_upstream');
  t.equal((await up.request('POST', '/api/admin/sync', { admin: true })).status, 409, 'likewise with the admin token');
  t.equal(
    (await up.request('POST', '/api/admin/sync', { key: tree.adminKey })).status,
    401,
    'the admin route takes the admin token, not a key',
  );
});

t.test('the feed: pages by an opaque cursor, in order, without a gap, without the asker’s own', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  for (let i = 0; i < 7; i++) await call(up, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: i + 1 });
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const r = await call(up, 'GET', `/api/sync/v1/changes?limit=2${cursor ? `&cursor=${cursor}` : ''}`, key);
    pages++;
    seen.push(...r.changes.map((c: any) => c.id));
    t.ok(r.changes.length <= 2, 'a page holds at most the limit');
    cursor = r.cursor;
    if (!r.more) break;
    if (pages > 20) throw new Error('the feed does not end');
  }
  const harvests = (await call(up, 'GET', `${tree.cyclePath}/harvests`, key)).items.length;
  t.equal(seen.length, 6 + harvests, 'every change of the organization, once');
  t.same(
    [...seen].sort((a, b) => Number(a.split(':')[1]) - Number(b.split(':')[1])),
    seen,
    'in the order they were made',
  );
  t.equal(new Set(seen).size, seen.length, 'none twice');
  // A box's own change, pushed: it reads the feed without it.
  const node = 'feedbeef0002';
  const v = `${String(Date.now()).padStart(13, '0')}.000000.${node}`;
  const at = new Date().toISOString();
  const pushed = await call(
    up,
    'POST',
    '/api/sync/v1/push',
    key,
    {
      changes: [
        {
          id: `${node}:1`,
          origin: node,
          org: tree.orgId,
          kind: 'farms',
          eid: tree.farmId,
          op: 'upsert',
          v,
          at,
          row: {
            id: tree.farmId,
            organization_id: tree.orgId,
            name: 'renamed by the box',
            location: null,
            notes: null,
            created_at: at,
            updated_at: at,
            version: v,
          },
          fv: { name: v },
        },
      ],
    },
    200,
  );
  t.equal(pushed.results[0].outcome, 'applied');
  const forBox = await call(up, 'GET', `/api/sync/v1/changes?node=${node}&cursor=${cursor}`, key);
  t.same(forBox.changes, [], "the asker's own change is left out");
  t.notSame(forBox.cursor, cursor, 'its number still passed');
  const forOthers = await call(up, 'GET', `/api/sync/v1/changes?cursor=${cursor}`, key);
  t.same(
    forOthers.changes.map((c: any) => c.id),
    [`${node}:1`],
    'another reader gets it, under its own id',
  );

  const bad = await up.request('GET', '/api/sync/v1/changes?cursor=not-a-cursor', { key });
  t.equal(bad.status, 422, 'a cursor this upstream did not give: 422');
  const foreign = Buffer.from('1|0123456789ab|3|aaaaaaaaaaaa').toString('base64url');
  const other = await up.request('GET', `/api/sync/v1/changes?cursor=${foreign}`, { key });
  t.equal(other.status, 409, "another upstream's cursor: 409");
  t.equal(other.body.code, 'cursor_unknown');
  t.equal((await up.request('GET', '/api/sync/v1/changes?limit=0', { key })).status, 422, 'limit 0: 422');
  t.equal((await up.request('GET', '/api/sync/v1/changes?limit=5000', { key })).status, 422, 'limit above 2000: 422');
});

t.test('uploads: offsets, hashes and contents nobody lists', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  const content = Buffer.from('a frame of a walk, or so it says'.repeat(100));
  const sha = createHash('sha256').update(content).digest('hex');
  // A walk file the upstream awaits: what a walk's unit leaves behind when it is applied.
  const walkId = '01a2a000-0000-7000-8000-000000000001';
  await up.app.services.store.write(SYSTEM_ACTOR, (w) =>
    w.insert('walks', {
      id: walkId,
      organization_id: tree.orgId,
      farm_id: null,
      greenhouse_id: null,
      row_id: null,
      cycle_id: null,
      week: null,
      source: 'observation',
      example_key: null,
      status: 'failed',
      progress: 0,
      mode: 'photo',
      options: '{}',
      detector: null,
      error: 'no fruit',
      idempotency_key: null,
      request_hash: 'x',
      created_by_key_id: null,
      attempts: 1,
      started_at: null,
      finished_at: null,
      count_green: null,
      count_turning: null,
      count_red: null,
      count_total: null,
      corrected_green: null,
      corrected_turning: null,
      corrected_red: null,
      corrected_total: null,
      result: null,
      clips_removed_at: null,
      frames_removed_at: null,
    } as never),
  );
  await dbRows(
    up,
    'INSERT INTO sync_walk_files (walk_id, name, organization_id, sha256, size, present) VALUES (?, ?, ?, ?, ?, 0)',
    walkId,
    'frames/00000-image.jpg',
    tree.orgId,
    sha,
    content.length,
  );
  const patch = (offset: number, body: Buffer, name = sha) =>
    fetch(`${up.base}/api/sync/v1/uploads/${name}`, {
      method: 'PATCH',
      headers: { 'x-api-key': key, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
      body,
    });

  t.match(
    await call(up, 'GET', `/api/sync/v1/uploads/${sha}`, key),
    { offset: 0, size: content.length, complete: false },
    'awaited, nothing held',
  );
  t.equal((await up.request('GET', `/api/sync/v1/uploads/${'0'.repeat(64)}`, { key })).status, 404, 'a content no walk lists: 404');
  t.equal((await up.request('GET', '/api/sync/v1/uploads/XYZ', { key })).status, 422, 'not a sha256: 422');
  let r = await patch(0, content.subarray(0, 1000));
  t.equal(r.status, 200);
  t.match(await r.json(), { offset: 1000, complete: false }, 'part of it held');
  r = await patch(0, content.subarray(0, 1000));
  t.equal(r.status, 409, 'sent again from a byte already held: 409');
  t.match(await r.json(), { code: 'offset_mismatch', offset: 1000 }, 'saying where to go on from');
  const wrong = Buffer.from(content);
  wrong[2000] = wrong[2000]! ^ 1;
  r = await patch(1000, wrong.subarray(1000));
  t.equal(r.status, 422, 'bytes that do not hash to the name: 422');
  t.equal(((await r.json()) as any).code, 'hash_mismatch');
  t.match(await call(up, 'GET', `/api/sync/v1/uploads/${sha}`, key), { offset: 0, complete: false }, 'and dropped whole');
  r = await patch(0, Buffer.concat([content, Buffer.from('more')]));
  t.equal(r.status, 413, 'more bytes than the content has: 413');
  await patch(0, content.subarray(0, 10)).then(() => undefined);
  r = await patch(10, content.subarray(10));
  t.match(await r.json(), { offset: content.length, complete: true }, 'sent in two parts, complete');
  t.match(await call(up, 'GET', `/api/sync/v1/uploads/${sha}`, key), { complete: true }, 'and held');
  const statuses = await call(up, 'POST', '/api/sync/v1/uploads/status', key, { contents: [sha, 'f'.repeat(64)] }, 200);
  t.same(
    statuses.items.map((i: any) => [i.complete, i.wanted]),
    [
      [true, true],
      [false, false],
    ],
    'many at once',
  );
  t.equal((await up.request('POST', '/api/sync/v1/uploads/status', { key, body: { contents: ['nope'] } })).status, 422, 'a bad list: 422');
  const other = await createTree(up);
  t.equal(
    (await up.request('GET', `/api/sync/v1/uploads/${sha}`, { key: other.adminKey })).status,
    404,
    "another organization's content: 404",
  );
  t.equal((await up.request('GET', `/api/sync/v1/files/${sha}`, { key: other.adminKey })).status, 404, 'and not fetched by it');
});

t.test('making an organization for a box: the admin token only, a key each time', async (t) => {
  const up = await startUpstream(t);
  const id = '01a2a000-0000-7000-8000-00000000abcd';
  const r = await up.request('POST', '/api/sync/v1/organizations', { admin: true, body: { organization_id: id, name: 'Box Org' } });
  t.equal(r.status, 201);
  t.match(r.body, { organization_id: id, created: true, key: { role: 'admin' } });
  const again = await up.request('POST', '/api/sync/v1/organizations', { admin: true, body: { organization_id: id, name: 'Other name' } });
  t.match(again.body, { organization_id: id, name: 'Box Org', created: false }, 'asked again: found, with a new key');
  t.not(again.body.key.api_key, r.body.key.api_key);
  t.equal(
    (await up.request('POST', '/api/sync/v1/organizations', { key: r.body.key.api_key, body: { organization_id: id, name: 'x' } })).status,
    401,
    'not with a key',
  );
  t.equal(
    (await up.request('POST', '/api/sync/v1/organizations', { admin: true, body: { organization_id: 'nope', name: 'x' } })).status,
    422,
    'not a UUIDv7: 422',
  );
  t.equal(
    (await up.request('POST', '/api/sync/v1/organizations', { admin: true, body: { organization_id: id } })).status,
    422,
    'no name: 422',
  );
});

// The upstream's backup here is SQLite's file; on PostgreSQL backups are the database's own (docs/postgres.md).
const sqliteUpstream = apiOnPostgres() && 'the upstream is restored from a SQLite file: on PostgreSQL, from pg_dump (not tried here)';

t.test('an upstream restored from an old backup: what it lost is sent again, its feed read again', { skip: sqliteUpstream }, async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  const proxy = await new FaultProxy(up.base, seeded(4), null).start();
  t.teardown(() => proxy.close());
  const box = await startBox(t, proxy.url, key);
  await syncUntilQuiet([box]);
  await call(box, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: 1 });
  await syncUntilQuiet([box]);
  // The backup: a copy of the upstream's data taken now.
  const backup = mkdtempSync(path.join(tmpdir(), 'cropwalk-backup-'));
  t.teardown(() => rmSync(backup, { recursive: true, force: true }));
  sqliteOf(up.app.services).exec(`VACUUM INTO '${path.join(backup, 'cropwalk.sqlite')}'`);
  // After it, the box sends a harvest and the upstream makes another; then the upstream is lost.
  await call(box, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: 2 });
  await call(up, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: 3 });
  await syncUntilQuiet([box]);
  await up.close();
  // It comes back from the backup at the same address, with a new node id as docs/sync.md says, and
  // makes a change before the box calls.
  const file = new SQLite(path.join(backup, 'cropwalk.sqlite'));
  file.prepare("DELETE FROM meta WHERE key = 'node_id'").run();
  file.close();
  const restored = await startUpstream(t, { dataDir: backup });
  proxy.target = restored.base;
  await call(restored, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: 4 });
  // A restart of the box (a failed round does the same): first contact again.
  await box.app.close();
  const again = await startBox(t, proxy.url, key, { dataDir: box.dataDir });
  await syncUntilQuiet([again]);
  const kgs = async (s: typeof up) => (await call(s, 'GET', `${tree.cyclePath}/harvests`, key)).items.map((h: any) => h.kg).sort();
  t.same(await kgs(restored), [1, 2, 4], "the box's harvest the upstream lost is back there");
  t.same(await kgs(again), [1, 2, 3, 4], "the box keeps what it had, and has the restored upstream's new one");
});

t.test('a box restored from an old backup stops rather than reuse change ids', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  const box = await startBox(t, up.base, key);
  await syncUntilQuiet([box]);
  for (let i = 0; i < 3; i++) await call(box, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: i + 1 });
  await syncUntilQuiet([box]);
  // The backup: the box's changes after the first harvest are gone, as in a file from before them.
  const sqlite = sqliteOf(box.app.services);
  sqlite.exec('PRAGMA foreign_keys = OFF');
  const last = (sqlite.prepare("SELECT max(seq) AS s FROM change_log WHERE entity = 'harvests'").get() as { s: number }).s;
  sqlite.prepare('DELETE FROM change_log WHERE seq >= ?').run(last - 1);
  // Restored: the box starts again from the older file.
  await box.app.close();
  const restored = await startBox(t, up.base, key, { dataDir: box.dataDir });
  const round = await syncOnce(restored);
  t.notOk(round.ok, 'the round stops');
  t.equal(round.state, 'error');
  t.match(round.error, /older than what it sent/, 'and says why');
});

t.test('a change the box refuses is quarantined on the box', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  const box = await startBox(t, up.base, key);
  await syncUntilQuiet([box]);
  // Upstream, a record the API would refuse (a week note that is no JSON object), written past its routes.
  await up.app.services.store.write(SYSTEM_ACTOR, (w) =>
    w.insert('week_notes', {
      organization_id: tree.orgId,
      farm_id: tree.farmId,
      greenhouse_id: tree.greenhouseId,
      row_id: tree.rowId,
      cycle_id: tree.cycleId,
      week: '2026-W10',
      body: '[1, 2, 3]',
    } as never),
  );
  await call(up, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: 1 });
  const round = await syncOnce(box);
  t.equal(round.pull_refused, 1, 'refused on arrival');
  t.equal(round.pulled, 1, 'and the change behind it applied');
  const st = await call(box, 'GET', '/api/sync', key);
  t.match(st.quarantined.items[0], { direction: 'pull', kind: 'week_notes', status: 422 }, 'quarantined with its reason');
  t.equal((await call(box, 'GET', `${tree.cyclePath}/harvests`, key)).items.length, 1);
  void ADMIN_TOKEN;
});

t.test('a burst of writes starts a round by itself, once it is over', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  const box = await startBox(t, up.base, key);
  await syncUntilQuiet([box]);
  for (let i = 0; i < 5; i++) await call(box, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: i + 1 });
  // No interval and no request: the writes alone bring the round (two seconds after the last).
  const upstreamHas = await waitFor(
    'the burst to reach the upstream',
    async () => {
      const n = (await call(up, 'GET', `${tree.cyclePath}/harvests`, key)).items.length;
      return n === 5 ? n : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  t.equal(upstreamHas, 5, 'every harvest of the burst is upstream');
  // The box marks them sent when the acknowledgement arrives, a moment after the upstream committed.
  const pending = await waitFor(
    'the box to take the acknowledgement',
    async () => {
      const n = (await call(box, 'GET', '/api/sync', key)).pending.changes;
      return n === 0 ? 'none' : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  t.equal(pending, 'none', 'nothing pending on the box');
});
