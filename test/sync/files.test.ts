// A walk's frames and overlays (and clips with SYNC_CLIPS) travel by content: a real walk scored
// on box 1 (real ffmpeg, the built-in detector), its files sent to the upstream over a link that
// cuts every upload mid-body, and fetched by box 2 over a link that cuts downloads mid-body.
// Each content arrives intact (its sha256), goes on from where the cut left it instead of
// starting again, and is never sent twice.
import t from 'tap';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderStill } from '../../scripts/render/walk.js';
import { createTree, type TestServer } from '../helpers/server.js';
import { upload, poll } from '../helpers/walks.js';
import { unzip } from '../helpers/unzip.js';
import { FaultProxy, seeded, type FaultPlan } from '../helpers/fault-proxy.js';
import { call, digest, digestDiff, startBox, startUpstream, syncOnce, syncUntilQuiet } from './helpers.js';

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const CUT_EVERYTHING: FaultPlan = {
  drop: 0,
  cutRequest: 1,
  dropResponse: 0,
  cutResponse: 1,
  duplicate: 0,
  replayLater: 0,
  delay: 0,
  delayMs: [0, 0],
};

function walkFiles(s: TestServer, walkId: string): Record<string, string> {
  const dir = path.join(s.dataDir, 'walks', walkId);
  const out: Record<string, string> = {};
  for (const sub of ['frames', 'clips']) {
    const folder = path.join(dir, sub);
    if (!existsSync(folder)) continue;
    const names = readdirSync(folder);
    for (const n of names) out[`${sub}/${n}`] = sha(path.join(dir, sub, n));
  }
  return out;
}

t.test('walk files travel by content, resume after cuts, and are never sent twice', async (t) => {
  const dir = t.testdir();
  const photo = path.join(dir, 'row.jpg');
  writeFileSync(photo, (await renderStill({ seed: 11, width: 640, height: 480 })).jpeg);

  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  const p1 = await new FaultProxy(up.base, seeded(1), null).start();
  const p2 = await new FaultProxy(up.base, seeded(2), null).start();
  t.teardown(() => Promise.all([p1.close(), p2.close()]));
  const b1 = await startBox(t, p1.url, key, { syncClips: true });
  const b2 = await startBox(t, p2.url, key, { syncClips: true });
  await syncUntilQuiet([b1, b2]);

  const r = await upload(b1, `${tree.cyclePath}/videos`, key, [{ field: 'file', file: photo }], { week: '2026-W10', mode: 'photo' });
  t.equal(r.status, 201, 'box 1 takes the walk');
  const walkId = r.body.job_id as string;
  const seen = await poll(b1, walkId, key);
  t.equal(seen.at(-1).status, 'done', 'box 1 scores it');
  const onB1 = walkFiles(b1, walkId);
  t.ok(
    Object.keys(onB1).some((n) => n.startsWith('frames/')),
    'it has frames',
  );
  t.ok(
    Object.keys(onB1).some((n) => n.startsWith('clips/')),
    'and its clip',
  );
  t.ok('frames/boxes.json' in onB1, "and its frames' fruit boxes (the training export's labels)");

  // Before a file has reached the upstream, a box that pulls its walk asks after the walk's files
  // in one call and fetches none of them (it was a request a file, every round).
  p1.chaos({ ...CUT_EVERYTHING, cutRequest: 0, cutResponse: 0, drop: 1 });
  p1.only = (c) => c.method === 'PATCH';
  t.notOk((await syncOnce(b1)).ok, 'box 1 pushes the walk, and its round fails on the uploads the link drops');
  t.equal(p1.uploads.length, 0, 'no byte of a file reached the upstream');
  const asked = p2.forwarded.length;
  t.ok((await syncOnce(b2)).ok, 'box 2 pulls the walk');
  const b2Asked = p2.forwarded.slice(asked).map((c) => `${c.method} ${c.path.split('?')[0]}`);
  t.equal(b2Asked.filter((r) => r.includes('/files/')).length, 0, 'and fetches none of its files');
  t.equal(b2Asked.filter((r) => r.endsWith('/uploads/status')).length, 1, 'having asked after all of them in one call');
  t.ok((await b2.request('GET', '/api/sync', { key })).body.files.downloads_pending > 0, 'they are still awaited there');
  p1.heal();

  // Every upload is cut mid-body (each time at another byte); everything else goes through.
  p1.chaos(CUT_EVERYTHING);
  const cutOnce = new Set<string>();
  p1.only = (c) => {
    if (c.method !== 'PATCH' || cutOnce.has(c.path)) return false;
    cutOnce.add(c.path);
    return true;
  };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const round = await syncOnce(b1);
    const st = (await b1.request('GET', '/api/sync', { key })).body;
    if (st.files.uploads_pending === 0 && round.ok) break;
  }
  t.equal(p1.counters.cutRequests, Object.keys(onB1).length, 'every upload was cut once');
  const forwarded = new Map<string, number>();
  for (const u of p1.uploads) forwarded.set(u.sha, (forwarded.get(u.sha) ?? 0) + u.bytes);
  for (const u of p1.uploads.filter((x) => x.cut && x.bytes > 0)) {
    const next = p1.uploads.find((x) => x.sha === u.sha && x.offset > u.offset);
    t.ok(next, `after a cut at byte ${u.offset + u.bytes} the upload of ${u.sha.slice(0, 8)} went on`);
    if (next) t.ok(next.offset > 0 && next.offset <= u.offset + u.bytes, `from byte ${next.offset}, not from the start`);
  }
  const sizes = new Map(Object.entries(onB1).map(([n, h]) => [h, readFileSync(path.join(b1.dataDir, 'walks', walkId, n)).length]));
  for (const [h, bytes] of forwarded)
    t.ok(bytes < 2 * sizes.get(h)!, `content ${h.slice(0, 8)}: ${bytes} bytes sent for ${sizes.get(h)} (not sent again in full)`);
  t.same(walkFiles(up, walkId), onB1, 'the upstream holds every file, intact by its hash');

  // Box 2 fetches them over a link that cuts every download mid-body.
  p2.chaos(CUT_EVERYTHING);
  const cutDown = new Set<string>();
  p2.only = (c) => {
    if (!c.path.includes('/files/') || cutDown.has(c.path)) return false;
    cutDown.add(c.path);
    return true;
  };
  let rounds = 0;
  while (rounds++ < 30) {
    const round = await syncOnce(b2);
    const st = (await b2.request('GET', '/api/sync', { key })).body;
    if (round.ok && st.files.downloads_pending === 0) break;
  }
  t.equal(p2.counters.cutResponses, Object.keys(onB1).length, 'every download was cut once');
  t.ok(
    p2.forwarded.filter((c) => c.path.includes('/files/')).some((c) => /^bytes=[1-9]/.test(String(c.headers.range))),
    'a download went on from where the cut left it (Range)',
  );
  t.same(walkFiles(b2, walkId), onB1, 'box 2 holds every file, intact by its hash');
  p1.heal();
  p2.heal();
  await syncUntilQuiet([b1, b2]);

  // Never twice: the same content again (a second walk of the same photo) is not sent.
  const before = p1.uploads.length;
  const r2 = await upload(b1, `${tree.cyclePath}/videos`, key, [{ field: 'file', file: photo }], { week: '2026-W11', mode: 'photo' });
  await poll(b1, r2.body.job_id, key);
  await syncUntilQuiet([b1, b2]);
  const again = p1.uploads.slice(before).filter((u) => Object.values(onB1).includes(u.sha));
  t.same(again, [], 'contents the upstream holds are not sent again');
  t.same(walkFiles(up, r2.body.job_id), walkFiles(b1, r2.body.job_id), 'and the second walk has them upstream');
  const frame = await up.request('GET', `/api/observations/${walkId}/frames/0/image.jpg`, { key });
  t.equal(frame.status, 200, 'the upstream serves the frame');
  t.same(digestDiff(await digest(up, key), await digest(b2, key)), [], 'the walks are the same records on both');
  // The corrected counts are made where a walk lands, never sent: a walk made by sync has them at once.
  const countsOn = async (s: TestServer) => (await call(s, 'GET', `/api/observations/${walkId}`, key)).corrected_counts;
  const boxCounts = await countsOn(b1);
  t.match(boxCounts, { total: Number }, 'the scored walk has corrected counts on the box');
  t.same(await countsOn(up), boxCounts, 'the same on the upstream, where sync made the walk');
  t.same(await countsOn(b2), boxCounts, 'and on the other box');

  // Corrections travel and the corrected counts are made again from them where they land.
  const result = (await call(b2, 'GET', `/api/observations/${walkId}`, key)).result;
  t.ok(result.fruit.length > 0, 'the walk found fruit');
  {
    await call(b2, 'POST', `/api/organizations/${tree.orgId}/walks/${walkId}/corrections`, key, {
      kind: 'remove',
      track_id: result.fruit[0].track_id,
    });
    await syncUntilQuiet([b1, b2]);
    const c1 = (await call(b1, 'GET', `/api/organizations/${tree.orgId}/walks/${walkId}/corrections`, key)).corrected_counts;
    const c2 = (await call(b2, 'GET', `/api/organizations/${tree.orgId}/walks/${walkId}/corrections`, key)).corrected_counts;
    t.same(c1, c2, 'the corrected counts agree');
    t.same(await countsOn(up), c2, 'and the upstream made them again from the correction');
    t.not(c2.total, boxCounts.total, 'which changed them');

    // A reviewed walk is the same training data wherever it is exported: its frames' boxes travel with its frames.
    const labels = async (s: TestServer) => {
      const res = await fetch(`${s.base}/api/organizations/${tree.orgId}/training-data`, { headers: { 'x-api-key': key } });
      t.equal(res.status, 200, `the training export answers on ${s.base}`);
      const files = unzip(Buffer.from(await res.arrayBuffer()));
      return [...files].filter(([n]) => n.startsWith('labels/')).map(([n, b]) => [n, b.toString()]);
    };
    const onBox = await labels(b1);
    t.ok(onBox.length > 0, "box 1 exports the corrected walk's frames");
    t.same(await labels(up), onBox, 'the upstream exports the same labels');
    t.same(await labels(b2), onBox, 'and so does box 2, where it was corrected');
  }
});
