// Jobs survive the process: a walk left running by a crash is scored again
// (once, as the same walk) on the next start, and a shutdown re-queues the
// walk it interrupts.
import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderWalk } from '../../../scripts/render/walk.js';
import { startServer, createOrg, createTree, dbRows, type TestServer } from '../../helpers/server.js';

const media = t.testdir();
const rendered = await renderWalk({ out: media, seconds: 4, fps: 10, width: 480, height: 270, seed: 11 });
const CLIP = rendered.files[0]!;

async function upload(s: TestServer, url: string, key: string, fields: Record<string, string>) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([readFileSync(CLIP)]), 'walk.mp4');
  return s.request('POST', url, { key, raw: form });
}

async function uploadWithKey(s: TestServer, url: string, key: string, idempotencyKey: string, fields: Record<string, string>) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([readFileSync(CLIP)]), 'walk.mp4');
  return s.request('POST', url, { key, raw: form, headers: { 'idempotency-key': idempotencyKey } });
}

async function poll(s: TestServer, id: string, key: string, until: (w: any) => boolean, timeoutMs = 240_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await s.request('GET', `/api/observations/${id}`, { key });
    if (until(r.body)) return r.body;
    if (Date.now() > deadline) throw new Error(`walk ${id} still ${r.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 60));
  }
}

const steps = (s: TestServer, id: string) =>
  ((s as any).logLines as string[])
    .map((l) => JSON.parse(l))
    .filter((l) => l.job_id === id)
    .map((l) => l.step);

t.test('a walk left running by a crash is queued again at start and scored once', async (t) => {
  const dataDir = t.testdir();
  // Scoring paused (concurrency 0): the walk stays queued, so the test can play the crash.
  const first = await startServer(t, { dataDir, scoringConcurrency: 0 });
  const tree = await createTree(first);
  const r = await upload(first, `${tree.cyclePath}/videos`, tree.adminKey, { week: '2026-W10', sample_seconds: '0.5' });
  t.equal(r.status, 201);
  const id = r.body.job_id;
  t.equal(r.body.status, 'queued');

  // What a crash mid-scoring leaves: the row claimed and running, half its frames on disk.
  await first.app.services.db
    .updateTable('walks')
    .set({ status: 'running', attempts: 1, progress: 0.5, started_at: new Date().toISOString() })
    .where('id', '=', id)
    .execute();
  const frames = path.join(dataDir, 'walks', id, 'frames');
  mkdirSync(frames, { recursive: true });
  writeFileSync(path.join(frames, '00000-image.jpg'), 'half-written');
  writeFileSync(path.join(frames, '00042-image.jpg'), 'from the crashed attempt');
  // And files of an upload whose walk row never committed.
  const orphan = path.join(dataDir, 'walks', '01900000-0000-7000-8000-00000000abcd');
  mkdirSync(path.join(orphan, 'clips'), { recursive: true });
  writeFileSync(path.join(orphan, 'clips', '00.mp4'), 'orphaned');
  const hoursAgo = new Date(Date.now() - 2 * 3600_000);
  utimesSync(orphan, hoursAgo, hoursAgo);
  // One from a minute ago: on PostgreSQL another process sharing DATA_DIR may be uploading it now.
  const fresh = path.join(dataDir, 'walks', '01900000-0000-7000-8000-00000000abce');
  mkdirSync(path.join(fresh, 'clips'), { recursive: true });
  const postgres = first.app.services.engine.kind === 'postgres';
  await first.close();

  const second = await startServer(t, { dataDir, scoringConcurrency: 1 });
  t.notOk(existsSync(orphan), 'files without a walk are swept at start');
  if (postgres) t.ok(existsSync(fresh), 'on PostgreSQL, not those of the last hour');
  else t.notOk(existsSync(fresh), 'of any age on SQLite (one process)');
  const done = await poll(second, id, tree.adminKey, (w) => w.status === 'done' || w.status === 'failed');
  t.equal(done.status, 'done', done.error ?? '');
  t.equal(done.attempts, 2, 'scored by a second attempt');
  t.equal(done.result.frames.length, 8);
  const count = await second.app.services.db
    .selectFrom('walks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  t.equal(Number(count.n), 1, 'one walk: the job row is the walk');
  t.same(
    readdirSync(frames).sort(),
    done.result.frames
      .flatMap((f: any) => [`${String(f.index).padStart(5, '0')}-image.jpg`, `${String(f.index).padStart(5, '0')}-overlay.jpg`])
      .concat(['boxes.json'])
      .sort(),
    "the crashed attempt's frames are gone",
  );
  t.not(readFileSync(path.join(frames, '00000-image.jpg'), 'utf8').slice(0, 12), 'half-written');
  t.same(steps(second, id), ['requeued', 'started', 'done']);
  const log = await second.app.services.db
    .selectFrom('change_log')
    .select(['op', 'after'])
    .where('entity', '=', 'walks')
    .where('entity_id', '=', id)
    .orderBy('seq')
    .execute();
  t.same(
    log.map((l) => JSON.parse(l.after!).status),
    ['queued', 'queued', 'running', 'done'],
    'created, re-queued at start, claimed, done',
  );
});

t.test('shutting down stops the running walk and puts it back in the queue', async (t) => {
  const dataDir = t.testdir();
  const first = await startServer(t, { dataDir, scoringConcurrency: 1 });
  const tree = await createTree(first);
  const r = await upload(first, '/api/observations', tree.adminKey, { sample_seconds: '0.25' });
  t.equal(r.status, 202);
  const id = r.body.job_id;
  await poll(first, id, tree.adminKey, (w) => w.status === 'running' && w.clips[0].frames >= 1);
  await first.close();
  t.same(steps(first, id), ['queued', 'started', 'requeued'], 'one log line per step');

  const second = await startServer(t, { dataDir, scoringConcurrency: 0 });
  const back = await second.request('GET', `/api/observations/${id}`, { key: tree.adminKey });
  t.match(back.body, { status: 'queued', progress: 0, started_at: null, result: null, attempts: 1 });
  t.notOk(existsSync(path.join(dataDir, 'walks', id, 'frames')), 'partial frames removed');
  t.ok(existsSync(path.join(dataDir, 'walks', id, 'clips', '00.mp4')), 'the clip is kept for the next attempt');
  await second.close();

  const third = await startServer(t, { dataDir, scoringConcurrency: 1 });
  const done = await poll(third, id, tree.adminKey, (w) => w.status === 'done' || w.status === 'failed');
  t.equal(done.status, 'done', done.error ?? '');
  t.equal(done.attempts, 2);
  t.equal(done.result.frames.length, 16);
});

t.test('deleting a crop cycle with its walks stops the one being scored and removes their files, without a restart', async (t) => {
  const dataDir = t.testdir();
  const s = await startServer(t, { dataDir, scoringConcurrency: 1 });
  const tree = await createTree(s);
  const walkFolder = (id: string) => path.join(dataDir, 'walks', id);
  const scored = await upload(s, `${tree.cyclePath}/videos`, tree.adminKey, { week: '2026-W10', sample_seconds: '0.5' });
  t.equal(scored.status, 201);
  await poll(s, scored.body.job_id, tree.adminKey, (w) => w.status === 'done');
  // A quick score outside any crop cycle: not under the cycle, so it stays.
  const other = await upload(s, '/api/observations', tree.adminKey, { sample_seconds: '0.5' });
  await poll(s, other.body.job_id, tree.adminKey, (w) => w.status === 'done');
  const running = await upload(s, `${tree.cyclePath}/videos`, tree.adminKey, { week: '2026-W11', sample_seconds: '0.1' });
  await poll(s, running.body.job_id, tree.adminKey, (w) => w.status === 'running' && w.clips[0].frames >= 1);

  const refused = await s.request('DELETE', tree.cyclePath, { key: tree.adminKey });
  t.equal(refused.status, 409, 'without cascade the cycle is not deleted');
  t.ok(existsSync(walkFolder(scored.body.job_id)), 'and its walk files stay');

  const deleted = await s.request('DELETE', `${tree.cyclePath}?cascade=true`, { key: tree.adminKey });
  t.equal(deleted.status, 200, deleted.text);
  t.match(deleted.body.counts, { walks: 2, walk_clips: 2 });
  const deadline = Date.now() + 60_000;
  while ((existsSync(walkFolder(scored.body.job_id)) || existsSync(walkFolder(running.body.job_id))) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  t.notOk(existsSync(walkFolder(scored.body.job_id)), "the scored walk's clips and frames are removed");
  t.notOk(existsSync(walkFolder(running.body.job_id)), 'so are those of the walk that was being scored');
  t.ok(existsSync(path.join(walkFolder(other.body.job_id), 'clips', '00.mp4')), 'a walk outside the cycle keeps its files');
  const health = await s.request('GET', '/api/health');
  t.match(
    health.body.checks.scoring,
    { queue: { running: 0 }, runner: { alive: true, scoring: [] } },
    'the runner is idle again, not scoring a walk that is gone',
  );
  const lines = ((s as any).logLines as string[]).map((l) => JSON.parse(l));
  t.ok(
    lines.some((l) => l.msg === 'walk stopped' && l.job_id === running.body.job_id),
    'the stop is logged',
  );
  t.notOk(
    lines.some((l) => l.job_id === running.body.job_id && l.step === 'done'),
    'and no result was stored for it',
  );
  t.equal((await s.request('GET', `/api/observations/${running.body.job_id}`, { key: tree.adminKey })).status, 404);
});

t.test('DELETE a walk: gone from the cycle with its files, a walk being scored stopped first, 404 for another organization', async (t) => {
  const dataDir = t.testdir();
  const s = await startServer(t, { dataDir, scoringConcurrency: 1 });
  const tree = await createTree(s);
  const stranger = await createOrg(s, 'Other Growers');
  const walkFolder = (id: string) => path.join(dataDir, 'walks', id);
  const key = tree.adminKey;
  const done = await upload(s, `${tree.cyclePath}/videos`, key, { week: '2026-W10', sample_seconds: '0.5' });
  await poll(s, done.body.job_id, key, (w) => w.status === 'done');
  const kept = await upload(s, `${tree.cyclePath}/videos`, key, { week: '2026-W11', sample_seconds: '0.5' });
  await poll(s, kept.body.job_id, key, (w) => w.status === 'done');
  t.equal((await s.request('GET', `${tree.cyclePath}/walks`, { key })).body.total, 2);

  const foreign = await s.request('DELETE', `/api/observations/${done.body.job_id}`, { key: stranger.adminKey });
  t.equal(foreign.status, 404, "another organization's key cannot delete it");
  t.ok(existsSync(path.join(walkFolder(done.body.job_id), 'clips', '00.mp4')), 'and its files stay');

  const r = await s.request('DELETE', `/api/observations/${done.body.job_id}`, { key });
  t.equal(r.status, 200, r.text);
  t.same(r.body, { deleted: true, job_id: done.body.job_id });
  t.notOk(existsSync(walkFolder(done.body.job_id)), 'clips and frames are removed before the answer');
  t.equal((await s.request('GET', `/api/observations/${done.body.job_id}`, { key })).status, 404);
  t.equal((await s.request('GET', `/api/observations/${done.body.job_id}/frames/0/image.jpg`, { key })).status, 404);
  const list = await s.request('GET', `${tree.cyclePath}/walks`, { key });
  t.same(
    list.body.items.map((w: any) => w.job_id),
    [kept.body.job_id],
    'the cycle lists only the walk left',
  );
  t.ok(existsSync(path.join(walkFolder(kept.body.job_id), 'clips', '00.mp4')), 'whose files stay');
  t.equal((await s.request('DELETE', `/api/observations/${done.body.job_id}`, { key })).status, 404, 'deleting again: 404');
  const bad = await s.request('DELETE', '/api/observations/..%2F..%2Fcropwalk.sqlite', { key });
  t.equal(bad.status, 422, 'an id that is no id: 422, before anything is touched');
  t.match(bad.headers.get('content-type'), /^application\/problem\+json/);
  t.equal((await s.request('DELETE', `/api/observations/${kept.body.job_id}`)).status, 401, 'no key: 401');
  t.ok(existsSync(path.join(walkFolder(kept.body.job_id), 'clips', '00.mp4')), 'and nothing was removed');
  const log = await dbRows(
    s,
    "select op, actor_key_id from change_log where entity = 'walks' and entity_id = ? and op = 'delete'",
    done.body.job_id,
  );
  t.equal(log.length, 1, 'the delete is in the change log once');
  t.ok((log[0] as { actor_key_id: string | null } | undefined)?.actor_key_id, 'with the key that made it');

  // A retry of a deleted walk's upload, same Idempotency-Key: a new walk, since the one it named is gone.
  const first = await uploadWithKey(s, `${tree.cyclePath}/videos`, key, 'row-1-w13', { week: '2026-W13', sample_seconds: '0.5' });
  t.equal(
    (await uploadWithKey(s, `${tree.cyclePath}/videos`, key, 'row-1-w13', { week: '2026-W13', sample_seconds: '0.5' })).body.job_id,
    first.body.job_id,
    'a retry answers the same walk',
  );
  await poll(s, first.body.job_id, key, (w) => w.status === 'done');
  t.equal((await s.request('DELETE', `/api/observations/${first.body.job_id}`, { key })).status, 200);
  const again = await uploadWithKey(s, `${tree.cyclePath}/videos`, key, 'row-1-w13', { week: '2026-W13', sample_seconds: '0.5' });
  t.equal(again.status, 201, again.text);
  t.not(again.body.job_id, first.body.job_id, 'after the delete the same key makes a new walk');
  await poll(s, again.body.job_id, key, (w) => w.status === 'done');

  const running = await upload(s, `${tree.cyclePath}/videos`, key, { week: '2026-W12', sample_seconds: '0.1' });
  await poll(s, running.body.job_id, key, (w) => w.status === 'running' && w.clips[0].frames >= 1);
  const stop = await s.request('DELETE', `/api/observations/${running.body.job_id}`, { key });
  t.equal(stop.status, 200, stop.text);
  t.notOk(existsSync(walkFolder(running.body.job_id)), 'a walk being scored: stopped, then its files removed');
  const health = await s.request('GET', '/api/health');
  t.match(health.body.checks.scoring, { queue: { running: 0, queued: 0 }, runner: { scoring: [] } }, 'the runner is idle');
});

t.test('a walk whose row goes while its worker runs, unseen by the runner, leaves no files when the worker ends', async (t) => {
  const dataDir = t.testdir();
  const s = await startServer(t, { dataDir, scoringConcurrency: 1 });
  const tree = await createTree(s);
  const r = await upload(s, '/api/observations', tree.adminKey, { sample_seconds: '0.1' });
  const id = r.body.job_id;
  await poll(s, id, tree.adminKey, (w) => w.status === 'running' && w.clips[0].frames >= 1);
  // What a delete racing the claim looks like to the runner: the rows are gone, nobody told it.
  await dbRows(s, 'delete from walk_clips where walk_id = ?', id);
  await dbRows(s, 'delete from walks where id = ?', id);
  const folder = path.join(dataDir, 'walks', id);
  const deadline = Date.now() + 120_000;
  while (existsSync(folder) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  t.notOk(existsSync(folder), 'the folder goes when the worker ends');
  const lines = ((s as any).logLines as string[]).map((l) => JSON.parse(l));
  t.ok(
    lines.some((l) => l.msg === 'walk result dropped' && l.job_id === id),
    'its result was dropped',
  );
  t.ok(
    lines.some((l) => l.msg === 'walk files removed' && l.job_id === id),
    'and its files removed',
  );
});

t.test('progress reaches the database at most once per progress interval', async (t) => {
  // The app without its own runner; a runner whose interval is longer than the walk takes.
  const s = await startServer(t, {}, { startBackground: false });
  const { WalkRunner, attachRunner } = await import('../../../src/walks/jobs/runner.js');
  const runner = new WalkRunner(s.app.services, { concurrency: 1, progressIntervalMs: 10 * 60_000 });
  attachRunner(s.app.services, runner);
  s.app.services.onClose.push(() => runner.stop());
  await runner.start();
  const tree = await createTree(s);
  const r = await upload(s, '/api/observations', tree.adminKey, { sample_seconds: '0.25' });
  const seen = new Set<number>();
  const done = await poll(s, r.body.job_id, tree.adminKey, (w) => {
    if (w.status === 'running') seen.add(w.progress);
    return w.status === 'done' || w.status === 'failed';
  });
  t.equal(done.status, 'done');
  t.equal(done.result.frames.length, 16);
  const moving = [...seen].filter((p) => p > 0);
  t.ok(moving.length <= 1, `one progress write in the interval (saw ${[...seen].join(', ')})`);
});

t.test('SCORING_THREADS: a walk scored on two detection threads answers exactly as on none', async (t) => {
  const results = [];
  for (const scoringThreads of [2, 0]) {
    const s = await startServer(t, { scoringThreads });
    const tree = await createTree(s);
    const id = (await upload(s, '/api/observations', tree.adminKey, { sample_seconds: '0.25' })).body.job_id;
    const walk = await poll(s, id, tree.adminKey, (w) => ['done', 'failed'].includes(w.status));
    t.equal(walk.status, 'done', `scored with SCORING_THREADS=${scoringThreads}`);
    const done = ((s as any).logLines as string[]).map((l) => JSON.parse(l)).find((l) => l.job_id === id && l.step === 'done');
    if (scoringThreads) {
      // The job's worker read the walk ahead on its threads: every frame but the first came from them.
      t.ok(
        done.read_ahead.used >= walk.result.frames.length - 2,
        `${done.read_ahead.used} of ${walk.result.frames.length} frames analysed on the threads`,
      );
    } else t.equal(done.read_ahead, null, 'without threads nothing is read ahead');
    // Frame URLs name the walk: the rest must be the same to the byte.
    results.push(JSON.parse(JSON.stringify(walk.result).split(id).join('WALK')));
    await s.close();
  }
  t.ok(results[0].counts.total > 0, `${results[0].counts.total} fruit counted`);
  t.same(results[0], results[1], 'the same result: frames, fruit, counts, quality');
});

t.test('SCORING_CONCURRENCY: one walk at a time by default, two at once when set to 2', async (t) => {
  for (const concurrency of [1, 2]) {
    const s = await startServer(t, { scoringConcurrency: concurrency });
    const tree = await createTree(s);
    const a = (await upload(s, '/api/observations', tree.adminKey, { sample_seconds: '0.25' })).body.job_id;
    const b = (await upload(s, '/api/observations', tree.adminKey, { sample_seconds: '0.25' })).body.job_id;
    let together = false;
    let bQueuedWhileARan = false;
    const deadline = Date.now() + 240_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error(`concurrency ${concurrency}: the two walks were not both scored within 240 s`);
      const [wa, wb] = await Promise.all(
        [a, b].map(async (id) => (await s.request('GET', `/api/observations/${id}`, { key: tree.adminKey })).body),
      );
      if (wa.status === 'running' && wb.status === 'running') together = true;
      if (wa.status === 'running' && wb.status === 'queued') bQueuedWhileARan = true;
      if (['done', 'failed'].includes(wa.status) && ['done', 'failed'].includes(wb.status)) {
        t.same([wa.status, wb.status], ['done', 'done'], `concurrency ${concurrency}: both scored`);
        if (concurrency === 1) t.ok(wb.started_at >= wa.finished_at, 'the second started after the first finished');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    if (concurrency === 1) {
      t.notOk(together, 'never two at once');
      t.ok(bQueuedWhileARan, 'the second waited in the queue');
    } else t.ok(together, 'both scored at the same time');
    await s.close();
  }
});
