// A walk's clips and frames leave the disk after the days they are kept: the walk keeps its
// counts, a removed frame answers 410 and a walk without clips cannot be scored again.
import { waitFor } from '../../helpers/wait.js';
import { sqliteOf } from '../../helpers/postgres.js';
import t from 'tap';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../../src/config.js';
import { keptUntil, MediaRetention, removalCutoff, retentionOf } from '../../../src/walks/jobs/retention.js';
import { runnerOf } from '../../../src/walks/jobs/runner.js';
import { startServer, createTree, type TestServer } from '../../helpers/server.js';
import { ballast, serverOnSmallDisk, smallDiskSkip } from '../../helpers/small-disk.js';
import { poll, upload } from '../../helpers/walks.js';

const PHOTO = fileURLToPath(new URL('../../../examples/row-close.jpg', import.meta.url));
const DAY = 86_400_000;

async function scoredPhoto(s: TestServer, cyclePath: string, key: string, week = '2026-W10') {
  const r = await upload(s, `${cyclePath}/videos`, key, [{ field: 'file', file: PHOTO }], { week });
  if (r.status !== 201) throw new Error(`upload: ${r.status} ${r.text}`);
  const seen = await poll(s, r.body.job_id, key);
  return seen[seen.length - 1];
}

const dirOf = (s: TestServer, id: string, part: 'clips' | 'frames') => path.join(s.dataDir, 'walks', id, part);
const files = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
/** A sweep at `at`, once the sweep each finished walk sets off has had its turn (sweeps run one after another). */
async function sweepAt(s: TestServer, at: number) {
  await waitFor('the walks being scored to finish', () => runnerOf(s.app.services)!.activeWalks().length === 0, { intervalMs: 20 });
  return retentionOf(s.app.services)!.sweep(new Date(at));
}
const row = (s: TestServer, id: string) =>
  sqliteOf(s.app.services)
    .prepare('select status, count_total, clips_removed_at, frames_removed_at, version from walks where id = ?')
    .get(id) as any;

t.test('keep times: due from the end of scoring; 0 keeps for ever; settings from the environment', async (t) => {
  t.equal(keptUntil('2026-03-01T10:00:00.000Z', 30), '2026-03-31T10:00:00.000Z');
  t.equal(keptUntil('2026-03-01T10:00:00.000Z', 0.5), '2026-03-01T22:00:00.000Z', 'fractions of a day');
  t.equal(keptUntil('2026-03-01T10:00:00.000Z', 0), null, '0: for ever');
  t.equal(keptUntil(null, 30), null, 'not scored yet');
  t.equal(removalCutoff(new Date('2026-03-31T10:00:00.000Z'), 30), '2026-03-01T10:00:00.000Z');
  t.equal(removalCutoff(new Date(), 0), null);
  const dir = t.testdir();
  t.match(
    loadConfig({ DATA_DIR: dir }),
    { walkClipKeepDays: 30, walkFrameKeepDays: 0, diskReserve: 2 * 1024 ** 3 },
    'defaults: clips a month, frames for ever, 2 GiB kept free',
  );
  t.match(loadConfig({ DATA_DIR: dir, DISK_RESERVE: '0' }), { diskReserve: 0 });
  t.match(loadConfig({ DATA_DIR: dir, WALK_CLIP_KEEP_DAYS: '7', WALK_FRAME_KEEP_DAYS: '365' }), {
    walkClipKeepDays: 7,
    walkFrameKeepDays: 365,
  });
  t.throws(() => loadConfig({ DATA_DIR: dir, WALK_CLIP_KEEP_DAYS: '-1' }), /WALK_CLIP_KEEP_DAYS/);
  t.throws(() => loadConfig({ DATA_DIR: dir, WALK_FRAME_KEEP_DAYS: 'a year' }), /WALK_FRAME_KEEP_DAYS/);
});

t.test('a walk that ends as the service stops sets off no sweep', async (t) => {
  // The runner nudges when a walk's worker exits, which can be after the retention stopped and
  // just before the database closes: a sweep begun then fails on a closed connection.
  const errors: string[] = [];
  const services = { log: { error: (msg: string) => errors.push(msg) } } as never;
  const running = new MediaRetention(services);
  running.nudge();
  await running.idle();
  t.same(errors, ['walk media sweep failed'], 'before stop a nudge sweeps (here against no database, so it fails and says so)');
  const stopped = new MediaRetention(services);
  await stopped.stop();
  stopped.nudge();
  await stopped.idle();
  t.equal(errors.length, 1, 'after stop a nudge begins nothing');
  t.equal(stopped.lastSweep, null);
});

t.test('media steps run one at a time', async (t) => {
  const retention = new MediaRetention({} as never);
  const order: string[] = [];
  const step = (name: string, ms: number) =>
    retention.exclusive(async () => {
      order.push(`${name} in`);
      await new Promise((r) => setTimeout(r, ms));
      order.push(`${name} out`);
    });
  const failing = retention.exclusive(async () => {
    throw new Error('a failed step');
  });
  await Promise.all([step('a', 30), failing.catch(() => undefined), step('b', 1)]);
  t.same(order, ['a in', 'a out', 'b in', 'b out'], 'the second waits for the first; a failure in between does not break the chain');
});

t.test('clips after WALK_CLIP_KEEP_DAYS, frames after WALK_FRAME_KEEP_DAYS; counts stay; 409 and 410 afterwards', async (t) => {
  const s = await startServer(t, { walkClipKeepDays: 2, walkFrameKeepDays: 10 });
  const tree = await createTree(s);
  const key = tree.adminKey;
  const a = await scoredPhoto(s, tree.cyclePath, key);
  const b = await scoredPhoto(s, tree.cyclePath, key, '2026-W11');
  t.equal(a.status, 'done');
  const finished = Date.parse(a.finished_at);
  // Instants are on the greenhouse's clock (an offset, not Z): compared as instants.
  t.same(
    {
      clips: Date.parse(a.media.clips.kept_until),
      frames: Date.parse(a.media.frames.kept_until),
      removed: [a.media.clips.removed_at, a.media.frames.removed_at],
    },
    { clips: finished + 2 * DAY, frames: finished + 10 * DAY, removed: [null, null] },
    'the walk says until when its files are kept',
  );
  // Walk b was scored a day later.
  sqliteOf(s.app.services)
    .prepare('update walks set finished_at = ? where id = ?')
    .run(new Date(finished + DAY).toISOString(), b.job_id);
  const frameUrl = a.result.frames[0].image_url;
  t.ok(
    files(dirOf(s, a.job_id, 'clips')).length === 1 && files(dirOf(s, a.job_id, 'frames')).length === 3,
    'one photo, one frame, its overlay and its boxes',
  );

  t.same(await sweepAt(s, Date.now()), { clips: [], frames: [], clipsForSpace: [], framesForSpace: [] }, 'nothing is due today');
  t.same(
    await sweepAt(s, finished + 2 * DAY - 60_000),
    { clips: [], frames: [], clipsForSpace: [], framesForSpace: [] },
    'nor a minute before',
  );

  const health = async () => (await s.request('GET', '/api/health')).body.checks.scoring.media;
  const clipBytes = a.clips[0].size_bytes + b.clips[0].size_bytes;
  t.match(
    await health(),
    {
      clip_keep_days: 2,
      frame_keep_days: 10,
      disk_reserve_bytes: 0,
      clips_kept: { walks: 2, bytes: clipBytes },
      last_sweep: { clips: 0, frames: 0 },
    },
    '/api/health: the settings and the clips still kept',
  );

  const before = row(s, a.job_id);
  const first = await sweepAt(s, finished + 2 * DAY + 60_000);
  t.same(
    first,
    { clips: [a.job_id], frames: [], clipsForSpace: [], framesForSpace: [] },
    'a minute past: walk a loses its clips, b (a day younger) keeps them',
  );
  t.same(files(dirOf(s, a.job_id, 'clips')), [], 'the clip is gone from the disk');
  t.equal(files(dirOf(s, b.job_id, 'clips')).length, 1);
  t.equal(files(dirOf(s, a.job_id, 'frames')).length, 3, 'frames stay (image, overlay, boxes.json)');
  t.match(
    await health(),
    { clips_kept: { walks: 1, bytes: b.clips[0].size_bytes }, last_sweep: { clips: 1, frames: 0 } },
    "/api/health: one walk's clips left, what the last sweep removed",
  );
  const after = row(s, a.job_id);
  t.match(after, { status: 'done', count_total: before.count_total, frames_removed_at: null });
  t.ok(after.clips_removed_at && after.version > before.version, 'the row says when, under a new version');
  const log = sqliteOf(s.app.services)
    .prepare("select actor, after from change_log where entity = 'walks' and entity_id = ? and op = 'update' order by seq desc limit 1")
    .get(a.job_id) as any;
  t.equal(log.actor, 'system', "the removal is in the change log as the system's");
  t.equal(JSON.parse(log.after).clips_removed_at, after.clips_removed_at);

  const got = await s.request('GET', `/api/observations/${a.job_id}`, { key });
  t.same(got.body.counts, a.counts, 'counts kept');
  t.same(got.body.result, a.result, 'result kept');
  t.equal(got.body.clips.length, 1, 'the clip list stays: what was filmed');
  t.same(got.body.media.clips, { kept_until: null, removed_at: got.body.media.clips.removed_at });
  t.match(got.body.media.clips.removed_at, /^\d{4}-\d\d-\d\dT/);
  t.equal((await s.request('GET', frameUrl, { key })).status, 200, 'its frames are still served');

  const refused = await s.request('POST', `/api/observations/${a.job_id}/rescore`, { key, body: { max_frames: 8 } });
  t.equal(refused.status, 409);
  t.equal(refused.headers.get('content-type'), 'application/problem+json');
  t.match(refused.body, { code: 'clips_removed', job_id: a.job_id, detail: /WALK_CLIP_KEEP_DAYS/ });
  t.same(row(s, a.job_id), after, 'the refused rescore changed nothing');

  t.same(
    await sweepAt(s, finished + 2 * DAY + 120_000),
    { clips: [], frames: [], clipsForSpace: [], framesForSpace: [] },
    'a walk is removed once',
  );
  const second = await sweepAt(s, finished + 10 * DAY + 60_000);
  t.same(
    second,
    { clips: [b.job_id], frames: [a.job_id], clipsForSpace: [], framesForSpace: [] },
    'ten days on: a loses its frames, b its clips',
  );
  t.notOk(existsSync(dirOf(s, a.job_id, 'frames')), 'frames folder gone');
  for (const name of ['image.jpg', 'overlay.jpg']) {
    const gone = await s.request('GET', `/api/observations/${a.job_id}/frames/0/${name}`, { key });
    t.equal(gone.status, 410, `${name}: 410 Gone`);
    t.equal(gone.headers.get('content-type'), 'application/problem+json');
    t.match(gone.body, { code: 'frames_removed', title: 'Gone', detail: /WALK_FRAME_KEEP_DAYS/, frames_removed_at: /^\d{4}-/ });
  }
  t.equal((await s.request('GET', frameUrl.replace(a.job_id, b.job_id), { key })).status, 200, 'b keeps its frames');
  const listed = await s.request('GET', `${tree.cyclePath}/walks`, { key });
  t.same(listed.body.items.find((w: any) => w.job_id === a.job_id)?.counts, a.counts, 'the cycle still lists a with its counts');
});

t.test('a walk queued or being scored is never swept; scoring again keeps new frames from their own end', async (t) => {
  const s = await startServer(t, { walkClipKeepDays: 0, walkFrameKeepDays: 1 });
  const tree = await createTree(s);
  const key = tree.adminKey;
  const w = await scoredPhoto(s, tree.cyclePath, key);
  t.same(
    w.media,
    { clips: { kept_until: null, removed_at: null }, frames: { kept_until: w.media.frames.kept_until, removed_at: null } },
    'clips kept for ever (0)',
  );
  const finished = Date.parse(w.finished_at);

  // Claimed again with its old end still on the row (the runner clears it; the sweep does not rely on that).
  sqliteOf(s.app.services).prepare("update walks set status = 'running' where id = ?").run(w.job_id);
  t.same(
    await sweepAt(s, finished + 400 * DAY),
    { clips: [], frames: [], clipsForSpace: [], framesForSpace: [] },
    'being scored: not swept',
  );
  sqliteOf(s.app.services).prepare("update walks set status = 'done' where id = ?").run(w.job_id);
  t.same(
    await sweepAt(s, finished + 100 * 365 * DAY),
    { clips: [], frames: [w.job_id], clipsForSpace: [], framesForSpace: [] },
    'a century on: the frames go, the clips (0 days) stay',
  );
  t.equal((await s.request('GET', w.result.frames[0].image_url, { key })).status, 410);

  const again = await s.request('POST', `/api/observations/${w.job_id}/rescore`, { key, body: {} });
  t.equal(again.status, 202, 'with its clips kept, the walk can be scored again');
  t.same(again.body.media.frames, { kept_until: null, removed_at: null }, 'queued again: no frames removed, no end yet');
  const seen = await poll(s, w.job_id, key);
  const done = seen[seen.length - 1];
  t.equal(done.status, 'done');
  t.same(done.counts, w.counts, 'the same photo counts the same');
  t.equal(Date.parse(done.media.frames.kept_until), Date.parse(done.finished_at) + DAY, 'a day from the new end');
  t.equal((await s.request('GET', done.result.frames[0].image_url, { key })).status, 200, 'the new frames are served');
});

t.test('a walk waiting in the queue keeps its clips however long it waits', async (t) => {
  const s = await startServer(t, { walkClipKeepDays: 1, walkFrameKeepDays: 1, scoringConcurrency: 0 });
  const tree = await createTree(s);
  const r = await upload(s, `${tree.cyclePath}/videos`, tree.adminKey, [{ field: 'file', file: PHOTO }], { week: '2026-W10' });
  t.equal(r.body.status, 'queued');
  t.same(
    r.body.media,
    { clips: { kept_until: null, removed_at: null }, frames: { kept_until: null, removed_at: null } },
    'no end yet, so no date',
  );
  t.same(await sweepAt(s, Date.now() + 1000 * DAY), { clips: [], frames: [], clipsForSpace: [], framesForSpace: [] });
  t.equal(files(dirOf(s, r.body.job_id, 'clips')).length, 1);
});

t.test('a stop between marking and removing: the folders go at the next start', async (t) => {
  const dataDir = t.testdir();
  const first = await startServer(t, { dataDir, walkClipKeepDays: 0, walkFrameKeepDays: 0 });
  const tree = await createTree(first);
  const w = await scoredPhoto(first, tree.cyclePath, tree.adminKey);
  // What a stop right after the batch committed leaves: marked removed, files still there.
  sqliteOf(first.app.services)
    .prepare('update walks set clips_removed_at = ?, frames_removed_at = ? where id = ?')
    .run(new Date().toISOString(), new Date().toISOString(), w.job_id);
  t.equal(files(dirOf(first, w.job_id, 'clips')).length, 1);
  await first.close();
  const second = await startServer(t, { dataDir, walkClipKeepDays: 0, walkFrameKeepDays: 0 });
  t.notOk(existsSync(dirOf(second, w.job_id, 'clips')), 'clips removed at start');
  t.notOk(existsSync(dirOf(second, w.job_id, 'frames')), 'frames removed at start');
  const got = await second.request('GET', `/api/observations/${w.job_id}`, { key: tree.adminKey });
  t.same(got.body.counts, w.counts, 'the walk itself is untouched');
});

const DISK_BYTES = 40 * 1024 * 1024;
const RESERVE = 16 * 1024 * 1024;
const skip = smallDiskSkip(DISK_BYTES, 'the tests of files removed for room');

t.test('below DISK_RESERVE free: the oldest scored walks lose their clips, then their frames, just enough of them', { skip }, async (t) => {
  // Kept for ever by days: only room can take the files.
  const s = await serverOnSmallDisk(t, DISK_BYTES, { walkClipKeepDays: 0, walkFrameKeepDays: 0, diskReserve: RESERVE });
  const tree = await createTree(s);
  const walks: any[] = [];
  for (const week of ['2026-W10', '2026-W11', '2026-W12']) walks.push(await scoredPhoto(s, tree.cyclePath, tree.adminKey, week));
  // Scored a minute apart, oldest first.
  walks.forEach((w, i) =>
    sqliteOf(s.app.services)
      .prepare('update walks set finished_at = ? where id = ?')
      .run(new Date(Date.parse(w.finished_at) + i * 60_000).toISOString(), w.job_id),
  );
  const [a, b, c] = walks.map((w) => w.job_id as string);
  const size = (i: number) => walks[i].clips[0].size_bytes as number;
  const warns = () => ((s as any).logLines as string[]).map((l) => JSON.parse(l)).filter((l) => l.level === 'warn');
  t.same(await sweepAt(s, Date.now()), { clips: [], frames: [], clipsForSpace: [], framesForSpace: [] }, 'room enough: nothing goes');

  // Short of the reserve by half of a's clip: a's clip goes, and only it.
  const extra = await ballast(s.dataDir, RESERVE - Math.floor(size(0) / 2));
  t.same((await sweepAt(s, Date.now())).clipsForSpace, [a], "the oldest walk's clips");
  t.notOk(existsSync(dirOf(s, a, 'clips')), 'its folder is gone');
  t.ok(existsSync(dirOf(s, b, 'clips')) && existsSync(dirOf(s, c, 'clips')), 'the younger walks keep theirs');
  t.equal(files(dirOf(s, a, 'frames')).length, 3, 'frames are not taken for room');
  t.match(warns().at(-1), { msg: 'walk clips removed', walks: 1, reserve_bytes: RESERVE, why: /DISK_RESERVE/ });
  const got = await s.request('GET', `/api/observations/${a}`, { key: tree.adminKey });
  t.match(got.body, { counts: walks[0].counts, media: { clips: { kept_until: null, removed_at: /^\d{4}-/ } } });
  t.match(await s.request('POST', `/api/observations/${a}/rescore`, { key: tree.adminKey, body: {} }), {
    status: 409,
    body: { code: 'clips_removed' },
  });

  // Short by b's clip and a little more, with c being scored again: b's clips go, c keeps its, and
  // with no scored walk's clips left the rest comes from the frames of the oldest walk, a.
  sqliteOf(s.app.services).prepare("update walks set status = 'running' where id = ?").run(c);
  const framesOfA = files(dirOf(s, a, 'frames')).reduce((n, f) => n + statSync(path.join(dirOf(s, a, 'frames'), f)).size, 0);
  await ballast(s.dataDir, RESERVE - size(1) - Math.floor(framesOfA / 2));
  const second = await sweepAt(s, Date.now());
  t.same([second.clipsForSpace, second.framesForSpace], [[b], [a]], "b's clips, then a's frames; c is being scored");
  t.ok(existsSync(dirOf(s, c, 'clips')), 'the walk being scored keeps its clips');
  t.notOk(existsSync(dirOf(s, a, 'frames')), "a's frames are gone");
  t.equal(files(dirOf(s, b, 'frames')).length, 3, "b's frames were not needed");
  t.match(warns().at(-1), { msg: 'walk frames removed', walks: 1, reserve_bytes: RESERVE });
  t.match(await s.request('GET', walks[0].result.frames[0].image_url, { key: tree.adminKey }), {
    status: 410,
    body: { code: 'frames_removed' },
  });

  // Far short: b's frames go too, and the box says it is still short (c's files are not taken).
  await ballast(s.dataDir, RESERVE - 8 * 1024 * 1024);
  const third = await sweepAt(s, Date.now());
  t.same([third.clipsForSpace, third.framesForSpace], [[], [b]], 'all a scored walk holds is gone; c keeps its files');
  t.match(warns().at(-1), { msg: 'disk short of room', reserve_bytes: RESERVE });
  t.same(await sweepAt(s, Date.now()), { clips: [], frames: [], clipsForSpace: [], framesForSpace: [] }, 'nothing left that may go');
  t.ok(existsSync(dirOf(s, c, 'clips')) && existsSync(dirOf(s, c, 'frames')));
  sqliteOf(s.app.services).prepare("update walks set status = 'done' where id = ?").run(c);

  // Still short of room, a walk that finishes scoring sets off a sweep by itself: c (now the oldest) goes.
  const d = await scoredPhoto(s, tree.cyclePath, tree.adminKey, '2026-W13');
  const deadline = Date.now() + 10_000;
  // The sweep marks the row, then removes the folder once that has committed: wait for both.
  await waitFor(
    "c's clips marked removed and their folder gone",
    () => row(s, c).clips_removed_at !== null && !existsSync(dirOf(s, c, 'clips')),
    {
      timeoutMs: deadline - Date.now(),
    },
  );
  t.ok(row(s, c).clips_removed_at, "the end of a walk's scoring sweeps");
  t.notOk(existsSync(dirOf(s, c, 'clips')), "and c's clips are gone");
  t.equal(d.status, 'done', d.error ?? 'scored');

  // With room again nothing more goes.
  rmSync(extra, { force: true });
  t.same(await sweepAt(s, Date.now()), { clips: [], frames: [], clipsForSpace: [], framesForSpace: [] }, 'above the reserve again');
});
