// A full disk is the appliance's condition, not a fault of the upload: 507 with the reason,
// nothing stored, an error in the log, and /api/health says the box is short of room.
// The uploads are written to a real filesystem that is really full: a small tmpfs.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { problemOf } from '../../src/http/problem.js';
import { isStorageFull, StorageFull } from '../../src/errors.js';
import { LOW_STORAGE_BYTES, storageCheck, storageOf } from '../../src/health/routes.js';
import { startServer, createTree, type TestServer } from '../helpers/server.js';
import { ballast as ballastFile, serverOnSmallDisk, smallDiskSkip } from '../helpers/small-disk.js';
import { leftovers, poll, upload, walkCount } from '../helpers/walks.js';
import { renderWalk } from '../../scripts/render/walk.js';
import { WalkRunner, attachRunner } from '../../src/walks/jobs/runner.js';

t.test('what counts as a full disk', async (t) => {
  for (const code of ['ENOSPC', 'EDQUOT', 'SQLITE_FULL']) t.ok(isStorageFull(Object.assign(new Error('x'), { code })), code);
  for (const err of [
    Object.assign(new Error('x'), { code: 'EACCES' }),
    Object.assign(new Error('x'), { code: 'EIO' }),
    new Error('ENOSPC in a message only'),
    null,
    undefined,
    'ENOSPC',
  ])
    t.notOk(isStorageFull(err), String((err as { code?: string } | null)?.code ?? err));
  t.match(problemOf(new StorageFull())!.toBody(), {
    status: 507,
    code: 'insufficient_storage',
    title: 'Insufficient Storage',
    detail: /disk is full, so nothing was stored/,
  });
});

t.test('the storage check reads the filesystem under DATA_DIR', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-storage-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const space = await storageOf(dir);
  t.ok(space.free_bytes > 0 && space.total_bytes >= space.free_bytes, `${space.free_bytes} of ${space.total_bytes} bytes free`);
  t.equal(LOW_STORAGE_BYTES, 1024 ** 3);
  t.match(await storageCheck({ config: { dataDir: dir } as any }, 0).check(), { ok: true, detail: { low_below_bytes: 0 } });
  t.match(
    await storageCheck({ config: { dataDir: dir } as any }, space.total_bytes + 1).check(),
    { ok: false },
    'less free than asked for: not ok',
  );
});

t.test('the OpenAPI document lists 507 on every route that takes an upload, and only there', async (t) => {
  const s = await startServer(t);
  const doc = (await s.request('GET', '/openapi.json')).body;
  const ops = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((p) => Object.values(p));
  const uploads = ops.filter(
    (op) => op.requestBody?.content?.['multipart/form-data'] || Object.keys(op.requestBody?.content ?? {}).some((c) => !c.includes('json')),
  );
  t.ok(uploads.length >= 5, `${uploads.length} upload operations`);
  t.same(
    uploads.filter((op) => !op.responses['507']).map((op) => op.operationId),
    [],
    'each upload may answer 507',
  );
  t.same(
    ops.filter((op) => op.responses['507'] && !uploads.includes(op)).map((op) => op.operationId),
    [],
  );
});

const DISK_BYTES = 24 * 1024 * 1024;
const skip = smallDiskSkip(DISK_BYTES, 'the full-disk tests');

/** A server whose DATA_DIR is a fresh 24 MiB filesystem of its own, scoring paused. */
const serverOnFullableDisk = (t: Test) => serverOnSmallDisk(t, DISK_BYTES, { scoringConcurrency: 0 });

t.test('uploads that do not fit: 507, nothing stored, logged; health degraded', { skip }, async (t) => {
  const s = await serverOnFullableDisk(t);
  const tree = await createTree(s);
  const lines = (s as TestServer & { logLines: string[] }).logLines;
  // What is left of 24 MiB after the database: a 32 MiB upload cannot fit.
  const big = path.join(tmpdir(), `cropwalk-full-${process.pid}.mp4`);
  writeFileSync(big, Buffer.alloc(32 * 1024 * 1024, 0x41));
  t.teardown(() => rmSync(big, { force: true }));
  const before = await walkCount(s);

  const clip = await upload(s, `${tree.cyclePath}/videos`, tree.adminKey, [{ field: 'file', file: big, name: 'row 3.mp4' }], {
    week: '2026-W07',
  });
  t.equal(clip.status, 507, 'a clip being spooled');
  t.equal(clip.headers.get('content-type'), 'application/problem+json');
  t.match(clip.body, { code: 'insufficient_storage', detail: /disk is full/ });
  t.equal(await walkCount(s), before, 'no walk');
  t.same(leftovers(s), [], 'the part that was written is removed');

  const ingest = await s.request('POST', `${tree.cyclePath}/climate/ingest`, {
    key: tree.adminKey,
    raw: new Blob([Buffer.alloc(32 * 1024 * 1024, 0x41)]),
    headers: { 'content-type': 'text/csv', 'x-file-name': 'export.csv' },
  });
  t.equal(ingest.status, 507, 'a raw body being spooled');
  t.equal(ingest.body.code, 'insufficient_storage');
  t.same(leftovers(s), []);

  const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'disk full');
  t.equal(logged.length, 2, 'each is an error in the log');
  t.ok(logged.every((l) => l.level === 'error'));

  const health = await s.request('GET', '/api/health');
  t.equal(health.status, 200);
  t.equal(health.body.status, 'degraded', 'short of room is degraded, not down');
  t.match(health.body.checks.storage, { ok: false, low_below_bytes: LOW_STORAGE_BYTES, warning: /short of disk space/ });
  t.ok(health.body.checks.storage.total_bytes <= DISK_BYTES);

  // Room again: the same upload's smaller sibling goes through.
  const small = await s.request('POST', `${tree.cyclePath}/climate/ingest`, {
    key: tree.adminKey,
    raw: new Blob(['time,Temperature (°C)\n2026-02-11 10:00,21.5\n']),
    headers: { 'content-type': 'text/csv', 'x-file-name': 'export.csv' },
  });
  t.not(small.status, 507, `with room the box answers as usual (${small.status})`);
});

t.test('a write SQLite cannot make room for: 507, nothing half written, and writes again once there is room', { skip }, async (t) => {
  const s = await serverOnFullableDisk(t);
  const tree = await createTree(s);
  const db = s.app.services.db;
  const post = (week: number) =>
    s.request('POST', `${tree.cyclePath}/weeks/2026-W${String(week).padStart(2, '0')}`, {
      key: tree.adminKey,
      body: { week, text: 'x'.repeat(60_000) },
    });
  const notes = async () =>
    (await db.selectFrom('week_notes').select('week').where('cycle_id', '=', tree.cycleId).orderBy('week').execute()).map((r) => r.week);
  const logged = async () =>
    Number(
      (
        await db
          .selectFrom('change_log')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('entity', '=', 'week_notes')
          .executeTakeFirstOrThrow()
      ).n,
    );
  t.equal((await post(1)).status, 201);

  // The filesystem filled to its last byte. SQLite may still reuse room in its WAL file for a
  // while, so notes of about 180 kB each (the row and its change-log entry) are written until one
  // needs more.
  const ballast = await ballastFile(s.dataDir);
  const statuses: number[] = [];
  for (let week = 2; week <= 50 && !statuses.includes(507); week++) statuses.push((await post(week)).status);
  t.equal(statuses.at(-1), 507, `a note SQLite has no room for (answers: ${statuses.join(', ')})`);
  t.same(
    statuses.slice(0, -1).filter((x) => x !== 201),
    [],
    'every other answer a 201, never an internal error',
  );
  const refused = statuses.length + 1;
  const stored = await notes();
  t.notOk(stored.includes(`2026-W${String(refused).padStart(2, '0')}`), 'the refused note is not stored');
  t.equal(await logged(), stored.length, 'and not in the change log: one entry per stored note');
  t.ok(
    (s as TestServer & { logLines: string[] }).logLines.some((l) => JSON.parse(l).msg === 'disk full'),
    'logged',
  );

  rmSync(ballast);
  const again = await post(refused);
  t.equal(again.status, 201, 'with room again the same note is stored');
  t.same(await notes(), [...stored, `2026-W${String(refused).padStart(2, '0')}`].sort());
});

t.test('a walk queued while the disk is full is scored once there is room again', { skip }, async (t) => {
  const s = await serverOnFullableDisk(t);
  const tree = await createTree(s);
  const clip = (await renderWalk({ out: t.testdir(), seconds: 2, fps: 10, width: 320, height: 180, speed: 0.3, seed: 3 })).files[0]!;
  const r = await upload(s, `${tree.cyclePath}/videos`, tree.adminKey, [{ field: 'file', file: clip }], {
    week: '2026-W07',
    sample_seconds: '0.5',
  });
  t.equal(r.status, 201);
  const ballast = await ballastFile(s.dataDir);
  // The server's own runner is paused (concurrency 0); this one scores, and looks again 200 ms after a failed claim.
  const runner = new WalkRunner(s.app.services, { concurrency: 1, retryAfterFailureMs: 200 });
  attachRunner(s.app.services, runner);
  s.app.services.onClose.unshift(() => runner.stop());
  await runner.start();
  const lines = (s as TestServer & { logLines: string[] }).logLines;
  const failedClaims = () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'walk runner could not claim a walk');
  for (let i = 0; i < 50 && failedClaims().length < 2; i++) await new Promise((res) => setTimeout(res, 100));
  t.ok(failedClaims().length >= 2, `the claim failed and was tried again (${failedClaims().length} tries)`);
  t.match(failedClaims()[0], { level: 'error', error: { message: /disk is full/ }, retry_in_ms: 200 });
  t.equal(
    (await s.request('GET', `/api/observations/${r.body.job_id}`, { key: tree.adminKey })).body.status,
    'queued',
    'still queued, nothing lost',
  );

  rmSync(ballast);
  const done = (await poll(s, r.body.job_id, tree.adminKey, (w) => w.status === 'done' || w.status === 'failed', 60_000)).at(-1);
  t.equal(done.status, 'done', done.error ?? 'scored without another upload or a restart');
  t.equal(done.attempts, 1);
});
