// Walk scoring through the HTTP API, second part: batches of clips scored as
// one walk, Idempotency-Key retries, organization scope. Same real ffmpeg,
// rendered clips and worker process as api.test.ts.
import t from 'tap';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderStill, renderWalk } from '../../scripts/render/walk.js';
import { upload, poll, walkCount, leftovers } from '../helpers/walks.js';
import { startServer, createTree, createOrg } from '../helpers/server.js';

const dir = t.testdir();
const walk = await renderWalk({ out: path.join(dir, 'walk'), seconds: 2, fps: 10, width: 480, height: 270, speed: 0.3, seed: 5 });
const batch = await renderWalk({
  out: path.join(dir, 'batch'),
  seconds: 3,
  fps: 10,
  width: 480,
  height: 270,
  speed: 0.3,
  seed: 6,
  clips: 3,
});
const still = await renderStill({ seed: 7, width: 480, height: 360 });
const CLIP = walk.files[0]!;
const PHOTO = path.join(dir, 'photo.jpg');
writeFileSync(PHOTO, still.jpeg);
const TEXT = path.join(dir, 'notes.mp4');
writeFileSync(TEXT, 'this is a shopping list, not a video\n'.repeat(100));

const s = await startServer(t);
const tree = await createTree(s);
const KEY = tree.adminKey;

t.test('a batch of clips in walking order is one walk with per-clip progress', async (t) => {
  const files = batch.files.map((f, i) => ({ field: 'files', file: f, name: `part ${i + 1}.mp4` }));
  const r = await upload(s, `${tree.cyclePath}/videos/batch`, KEY, files, { week: '2026-02-11', sample_seconds: '0.25' });
  t.equal(r.status, 201, r.status === 201 ? 'created' : r.text);
  t.equal(r.headers.get('location'), `/api/observations/${r.body.job_id}`, 'Location says where to poll');
  t.match(r.body, {
    source: 'cycle_batch',
    cycle_id: tree.cycleId,
    row_id: tree.rowId,
    greenhouse_id: tree.greenhouseId,
    farm_id: tree.farmId,
    week: '2026-W07',
  });
  t.same(
    r.body.clips.map((c: any) => [c.position, c.name]),
    [
      [0, 'part 1.mp4'],
      [1, 'part 2.mp4'],
      [2, 'part 3.mp4'],
    ],
  );
  t.match(r.body.created_at, /\+01:00$/, 'instants on the greenhouse clock (Europe/Amsterdam in winter)');
  const seen = await poll(s, r.body.job_id, KEY);
  const done = seen.at(-1);
  t.equal(done.status, 'done', done.error ?? '');
  t.ok(
    seen.some((w) => w.clips[0].status === 'done' && w.clips[2].status !== 'done'),
    'clips finish one after another',
  );
  t.same(
    done.clips.map((c: any) => [c.status, c.progress, c.frames]),
    [
      ['done', 1, 4],
      ['done', 1, 4],
      ['done', 1, 4],
    ],
  );
  t.same(
    done.result.frames.map((f: any) => f.clip),
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2],
    'frames in walking order',
  );
  t.same(
    done.result.frames.map((f: any) => f.index),
    [...Array(12).keys()],
    'frame numbers run across the clips',
  );
  t.equal(done.counts.total, done.result.fruit.length);
  const stored = await s.app.services.db
    .selectFrom('walk_clips')
    .select(['file_name', 'position'])
    .where('walk_id', '=', r.body.job_id)
    .orderBy('position')
    .execute();
  t.same(
    stored.map((c) => c.file_name),
    ['00.mp4', '01.mp4', '02.mp4'],
    'the box names the files',
  );
  t.same(readdirSync(path.join(s.dataDir, 'walks', r.body.job_id, 'clips')).sort(), ['00.mp4', '01.mp4', '02.mp4']);
});

t.test('batch limits: 13 clips or none is a 422, nothing stored', async (t) => {
  const before = await walkCount(s);
  const thirteen = Array.from({ length: 13 }, () => ({ field: 'files', file: PHOTO }));
  const over = await upload(s, `${tree.cyclePath}/videos/batch`, KEY, thirteen, { week: '2026-W07' });
  t.equal(over.status, 422);
  t.match(over.body.errors, [{ name: 'files', message: /more than 12 files/ }]);
  const none = await upload(s, `${tree.cyclePath}/videos/batch`, KEY, [], { week: '2026-W07' });
  t.equal(none.status, 422);
  t.match(none.body.errors, [{ name: 'files', message: /required/ }]);
  const noWeek = await upload(s, `${tree.cyclePath}/videos/batch`, KEY, [{ field: 'files', file: PHOTO }]);
  t.equal(noWeek.status, 422);
  t.match(noWeek.body.errors, [{ name: 'week' }]);
  const badWeek = await upload(s, `${tree.cyclePath}/videos`, KEY, [{ field: 'file', file: PHOTO }], { week: '2026-W54' });
  t.equal(badWeek.status, 422);
  t.match(badWeek.body.errors, [{ name: 'week', message: /2026-W07/ }]);
  const badOne = await upload(
    s,
    `${tree.cyclePath}/videos/batch`,
    KEY,
    [
      { field: 'files', file: PHOTO },
      { field: 'files', file: TEXT },
    ],
    { week: '2026-W07' },
  );
  t.equal(badOne.status, 415, 'one bad file refuses the batch');
  t.match(badOne.body, { field: 'files[1]' });
  t.equal(await walkCount(s), before);
  t.same(leftovers(s), []);
});

t.test('Idempotency-Key: a retry returns the same walk, a different upload with the key is a 409', async (t) => {
  const url = `${tree.cyclePath}/videos`;
  const headers = { 'idempotency-key': 'walk-2026-02-11-row-1' };
  const before = await walkCount(s);
  const first = await upload(s, url, KEY, [{ field: 'file', file: PHOTO }], { week: '2026-W07' }, headers);
  t.equal(first.status, 201, first.status === 201 ? 'created' : first.text);
  t.match(first.body, { source: 'cycle_video', week: '2026-W07', cycle_id: tree.cycleId });
  const again = await upload(s, url, KEY, [{ field: 'file', file: PHOTO }], { week: '2026-02-10' }, headers);
  t.equal(again.status, 201, 'a retry answers 201 again');
  t.equal(again.body.job_id, first.body.job_id, 'the same walk (a date of the same week is the same week)');
  t.equal(again.headers.get('location'), `/api/observations/${first.body.job_id}`, 'and Location points at it');
  t.equal(await walkCount(s), before + 1, 'one walk, not two');

  const otherFile = await upload(s, url, KEY, [{ field: 'file', file: CLIP }], { week: '2026-W07' }, headers);
  t.equal(otherFile.status, 409);
  t.match(otherFile.body, { code: 'conflict', job_id: first.body.job_id });
  const otherFields = await upload(s, url, KEY, [{ field: 'file', file: PHOTO }], { week: '2026-W07', conf: '0.9' }, headers);
  t.equal(otherFields.status, 409, 'same bytes, other fields');
  const otherWeek = await upload(s, url, KEY, [{ field: 'file', file: PHOTO }], { week: '2026-W08' }, headers);
  t.equal(otherWeek.status, 409, 'same bytes, other week');
  t.equal(await walkCount(s), before + 1);
  t.same(leftovers(s), []);

  // Keys are per organization: another organization may use the same key for its own walk.
  const other = await createTree(s);
  const theirs = await upload(
    s,
    `${other.cyclePath}/videos`,
    other.adminKey,
    [{ field: 'file', file: PHOTO }],
    { week: '2026-W07' },
    headers,
  );
  t.equal(theirs.status, 201);
  t.not(theirs.body.job_id, first.body.job_id);
  await poll(s, first.body.job_id, KEY);
  await poll(s, theirs.body.job_id, other.adminKey);
});

t.test('a walk belongs to the organization of the key that made it', async (t) => {
  const mine = await upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }]);
  const id = mine.body.job_id;
  await poll(s, id, KEY);
  const other = await createOrg(s, 'Other Growers');
  const r = await s.request('GET', `/api/observations/${id}`, { key: other.adminKey });
  t.equal(r.status, 404);
  t.equal(r.body.code, 'not_found');
  t.equal((await s.request('GET', `/api/observations/${id}/frames/0/image.jpg`, { key: other.adminKey })).status, 404, 'nor its frames');
  t.equal((await s.request('GET', `/api/observations/${id}/frames/0/image.jpg`, { key: KEY })).status, 200);
  t.equal((await s.request('GET', `/api/observations/01900000-0000-7000-8000-000000000000`, { key: KEY })).status, 404, 'an unknown id');
  t.equal((await s.request('GET', `/api/observations/not-an-id`, { key: KEY })).status, 422);
  // A cycle path of another organization is a 404 too, before anything is stored.
  const before = await walkCount(s);
  const cross = await upload(s, `${tree.cyclePath}/videos`, other.adminKey, [{ field: 'file', file: PHOTO }], { week: '2026-W07' });
  t.equal(cross.status, 404);
  t.equal(await walkCount(s), before);
});

t.test('the walks are counted in the crop cycle contents', async (t) => {
  const r = await s.request('GET', `${tree.cyclePath}/contents`, { key: KEY });
  t.equal(r.status, 200);
  t.ok(r.body.counts.walks >= 2, `walks: ${r.body.counts.walks}`);
});

t.test("GET {cycle}/walks lists the cycle's walks newest first, by week, paged", async (t) => {
  const all = await s.request('GET', `${tree.cyclePath}/walks`, { key: KEY });
  t.equal(all.status, 200);
  const ids = await s.app.services.db.selectFrom('walks').select('id').where('cycle_id', '=', tree.cycleId).orderBy('id', 'desc').execute();
  t.equal(all.body.total, ids.length);
  t.same(
    all.body.items.map((w: any) => w.job_id),
    ids.map((r) => r.id),
    'newest first',
  );
  t.ok(all.body.items.every((w: any) => w.cycle_id === tree.cycleId));
  const batchWalk = all.body.items.find((w: any) => w.clips === 3);
  t.match(batchWalk, { source: 'cycle_batch', week: '2026-W07', status: 'done', counts: { total: Number } });

  const week = await s.request('GET', `${tree.cyclePath}/walks?week=2026-02-12`, { key: KEY });
  t.ok(week.body.items.length > 0 && week.body.items.every((w: any) => w.week === '2026-W07'), 'a date selects its week');
  const none = await s.request('GET', `${tree.cyclePath}/walks?week=2026-W30`, { key: KEY });
  t.same([none.body.items, none.body.total], [[], 0]);
  const page = await s.request('GET', `${tree.cyclePath}/walks?limit=1&offset=1`, { key: KEY });
  t.same(
    page.body.items.map((w: any) => w.job_id),
    [ids[1]!.id],
  );
  t.equal(page.body.total, ids.length);

  t.equal((await s.request('GET', `${tree.cyclePath}/walks?limit=501`, { key: KEY })).status, 422, 'limit above 500');
  t.equal((await s.request('GET', `${tree.cyclePath}/walks?week=2026-W54`, { key: KEY })).status, 422, 'a week that does not exist');
  t.equal((await s.request('GET', `${tree.cyclePath}/walks?week=soon`, { key: KEY })).status, 422);
  const other = await createOrg(s, 'Third Growers');
  t.equal((await s.request('GET', `${tree.cyclePath}/walks`, { key: other.adminKey })).status, 404, "another organization's cycle");
});
