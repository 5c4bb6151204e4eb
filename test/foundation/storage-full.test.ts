// A full disk is the appliance's condition, not a fault of the upload: 507 with the reason,
// nothing stored, an error in the log, and /api/health says the box is short of room.
// The uploads are written to a real filesystem that is really full: a small tmpfs.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { insufficientStorage, isStorageFull } from '../../src/http/problem.js';
import { LOW_STORAGE_BYTES, storageCheck, storageOf } from '../../src/health/routes.js';
import { startServer, createTree, type TestServer } from '../helpers/server.js';
import { leftovers, upload, walkCount } from '../helpers/walks.js';

t.test('what counts as a full disk', async (t) => {
  for (const code of ['ENOSPC', 'EDQUOT', 'SQLITE_FULL']) t.ok(isStorageFull(Object.assign(new Error('x'), { code })), code);
  for (const err of [Object.assign(new Error('x'), { code: 'EACCES' }), Object.assign(new Error('x'), { code: 'EIO' }), new Error('ENOSPC in a message only'), null, undefined, 'ENOSPC'])
    t.notOk(isStorageFull(err), String((err as { code?: string } | null)?.code ?? err));
  t.match(insufficientStorage().toBody(), { status: 507, code: 'insufficient_storage', title: 'Insufficient Storage', detail: /disk is full, so nothing was stored/ });
});

t.test('the storage check reads the filesystem under DATA_DIR', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-storage-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const space = await storageOf(dir);
  t.ok(space.free_bytes > 0 && space.total_bytes >= space.free_bytes, `${space.free_bytes} of ${space.total_bytes} bytes free`);
  t.equal(LOW_STORAGE_BYTES, 1024 ** 3);
  t.match(await storageCheck({ config: { dataDir: dir } as any }, 0).check(), { ok: true, detail: { low_below_bytes: 0 } });
  t.match(await storageCheck({ config: { dataDir: dir } as any }, space.total_bytes + 1).check(), { ok: false }, 'less free than asked for: not ok');
});

t.test('the OpenAPI document lists 507 on every route that takes an upload, and only there', async (t) => {
  const s = await startServer(t);
  const doc = (await s.request('GET', '/openapi.json')).body;
  const ops = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((p) => Object.values(p));
  const uploads = ops.filter((op) => op.requestBody?.content?.['multipart/form-data'] || Object.keys(op.requestBody?.content ?? {}).some((c) => !c.includes('json')));
  t.ok(uploads.length >= 5, `${uploads.length} upload operations`);
  t.same(uploads.filter((op) => !op.responses['507']).map((op) => op.operationId), [], 'each upload may answer 507');
  t.same(ops.filter((op) => op.responses['507'] && !uploads.includes(op)).map((op) => op.operationId), []);
});

/** Mounts a tmpfs of `bytes` at a new folder; the reason when this machine does not allow it (not root, no mount). */
function smallDisk(bytes: number): { dir: string } | { reason: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: ((err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message).split('\n')[0]! };
  }
}

const disk = smallDisk(24 * 1024 * 1024);
t.test('uploads that do not fit: 507, nothing stored, logged; health degraded', { skip: 'reason' in disk ? `a small tmpfs cannot be mounted here (${disk.reason}); the full-disk uploads need one` : false }, async (t) => {
  const dir = (disk as { dir: string }).dir;
  let s: TestServer | undefined;
  t.teardown(async () => {
    await s?.close();
    // Lazy: a handle still closing (a worker's SQLite file) must not fail the teardown.
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  s = await startServer(t, { dataDir: dir });
  const tree = await createTree(s);
  const lines = (s as TestServer & { logLines: string[] }).logLines;
  // What is left of 24 MiB after the database: a 32 MiB upload cannot fit.
  const big = path.join(tmpdir(), `cropwalk-full-${process.pid}.mp4`);
  writeFileSync(big, Buffer.alloc(32 * 1024 * 1024, 0x41));
  t.teardown(() => rmSync(big, { force: true }));
  const before = await walkCount(s);

  const clip = await upload(s, `${tree.cyclePath}/videos`, tree.adminKey, [{ field: 'file', file: big, name: 'row 3.mp4' }], { week: '2026-W07' });
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
  t.match(health.body.checks.storage, { ok: false, low_below_bytes: LOW_STORAGE_BYTES });
  t.ok(health.body.checks.storage.total_bytes <= 24 * 1024 * 1024);

  // Room again: the same upload's smaller sibling goes through.
  const small = await s.request('POST', `${tree.cyclePath}/climate/ingest`, {
    key: tree.adminKey,
    raw: new Blob(['time,Temperature (°C)\n2026-02-11 10:00,21.5\n']),
    headers: { 'content-type': 'text/csv', 'x-file-name': 'export.csv' },
  });
  t.not(small.status, 507, `with room the box answers as usual (${small.status})`);
});
