// What a `kill -9` of the box leaves behind, and what the next start does with it: uploads cut off
// mid-stream are removed, the scoring worker of the killed box (and its ffmpeg) does not outlive
// it, and a retry never starts while a worker of the same walk from before still runs.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderWalk } from '../../../scripts/render/walk.js';
import { createTree } from '../../helpers/server.js';
import { startServer } from '../../helpers/server.js';
import { startProcessServer } from '../../helpers/process-server.js';
import { poll, upload } from '../../helpers/walks.js';
import { WORKER_LOCK } from '../../../src/walks/jobs/worker-lock.js';

const LINUX = existsSync('/proc/self/stat');

/** Waits for `check` to hold, polling; fails (throws) at the deadline. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 25): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (dead, not yet reaped by its parent) is gone for what it could write.
  return !LINUX || !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
};

/** Processes whose command line names this walk (the worker and its ffmpeg: the walk's folder is in their arguments). */
function processesOf(walkId: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid)
    .filter((n) => {
      try {
        return readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(walkId) && alive(Number(n));
      } catch {
        return false;
      }
    })
    .map(Number);
}

t.test('an upload cut off by a kill -9 is removed at the next start', async (t) => {
  const dataDir = t.testdir();
  const box = await startProcessServer(t, dataDir);
  const tree = await createTree(box as never);
  // A multipart upload that sends its first megabyte and then stalls, as a phone's upload does when the box dies under it.
  const boundary = 'cropwalk-crash-test';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="week"\r\n\r\n2026-W10\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="walk.mp4"\r\nContent-Type: video/mp4\r\n\r\n`;
  let stall!: () => void;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(head));
      c.enqueue(new Uint8Array(1024 * 1024).fill(7));
      stall = () => c.close();
    },
  });
  const pending = fetch(`${box.base}${tree.cyclePath}/videos`, {
    method: 'POST',
    headers: { 'x-api-key': tree.adminKey, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: 'half',
  } as RequestInit).catch(() => null);
  const incoming = path.join(dataDir, 'uploads', 'incoming');
  const size = () => (existsSync(incoming) ? readdirSync(incoming).reduce((n, f) => n + statSync(path.join(incoming, f)).size, 0) : 0);
  await until('the upload reaches the disk', () => size() >= 1024 * 1024, 30_000);
  await box.kill9();
  stall();
  await pending;
  t.ok(readdirSync(incoming).length > 0, 'the killed box left the part-written upload');

  const next = await startServer(t, { dataDir, scoringConcurrency: 0 });
  t.same(readdirSync(incoming), [], 'the next start removed it');
  t.match(
    (next as unknown as { logLines: string[] }).logLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'interrupted uploads removed'),
    { files: 1 },
    'and said so',
  );
});

t.test(
  'a killed box leaves no worker behind, and a retry waits for an old worker of its walk',
  { skip: !LINUX && 'needs /proc' },
  async (t) => {
    const dir = t.testdir();
    const media = path.join(dir, 'media');
    // Long enough that its worker is still scoring a while after the kill: 20 s sampled every 0.1 s.
    const rendered = await renderWalk({ out: media, seconds: 20, fps: 10, width: 480, height: 270, seed: 5 });
    const dataDir = path.join(dir, 'data');
    const box = await startProcessServer(t, dataDir, { SCORING_CONCURRENCY: '1', SCORING_THREADS: '0' });
    const tree = await createTree(box as never);
    const r = await upload(box as never, `${tree.cyclePath}/videos`, tree.adminKey, [{ field: 'file', file: rendered.files[0]! }], {
      week: '2026-W10',
      sample_seconds: '0.1',
      max_frames: '2000',
    });
    t.equal(r.status, 201, 'uploaded');
    const id = r.body.job_id as string;
    const frames = path.join(dataDir, 'walks', id, 'frames');
    await until('the walk is being scored', () => existsSync(frames) && readdirSync(frames).length > 0, 120_000);
    const workers = processesOf(id);
    t.ok(workers.length >= 1, `the worker and its ffmpeg run (${workers.length} processes)`);

    await box.kill9();
    const gone = await until('the worker and its ffmpeg end after their box', () => processesOf(id).length === 0, 3_000).catch(
      (e: Error) => e,
    );
    t.type(gone, 'number', 'the worker and its ffmpeg end within 3 s of the kill');
    if (typeof gone !== 'number') for (const pid of processesOf(id)) process.kill(pid, 'SIGKILL');

    // An old worker of this walk that is still writing into its frames folder (one the box could not
    // tell to stop): the next start must stop it before it scores the walk again.
    const stale = spawn(
      process.execPath,
      [
        '-e',
        'const [dir] = process.argv.slice(1); let n = 0; setInterval(() => require("fs").writeFileSync(dir + "/stale-" + n++ + ".jpg", "x"), 20);',
        frames,
      ],
      { detached: true, stdio: 'ignore' },
    );
    // Not a child this test waits for: it is the box's to stop.
    stale.unref();
    t.teardown(() => {
      if (alive(stale.pid!)) process.kill(stale.pid!, 'SIGKILL');
    });
    writeFileSync(path.join(dataDir, 'walks', id, WORKER_LOCK), `${stale.pid}\n`);
    await until('the old worker writes', () => readdirSync(frames).some((f) => f.startsWith('stale-')), 10_000);

    const next = await startServer(t, { dataDir, scoringConcurrency: 1 });
    const seen = await poll(next, id, tree.adminKey, (w) => w.status === 'done' || w.status === 'failed');
    const done = seen.at(-1);
    t.equal(done.status, 'done', done.error ?? '');
    t.equal(done.attempts, 2, 'scored again as the same walk');
    t.notOk(alive(stale.pid!), 'the old worker was stopped');
    t.same(
      readdirSync(frames).filter((f) => f.startsWith('stale-')),
      [],
      "nothing of the old worker's is among the frames",
    );
    const lines = (next as unknown as { logLines: string[] }).logLines.map((l) => JSON.parse(l)).filter((l) => l.job_id === id);
    const stopped = lines.findIndex((l) => l.msg === 'old walk worker stopped');
    const started = lines.findIndex((l) => l.step === 'started');
    t.ok(stopped >= 0 && started > stopped, 'the old worker was stopped before the walk started again');
    const lockGone = await until(
      'the lock goes with the worker',
      () => !existsSync(path.join(dataDir, 'walks', id, WORKER_LOCK)),
      10_000,
    ).catch((e: Error) => e);
    t.type(lockGone, 'number', 'no lock left once the worker has ended');
  },
);
