// The walk queue's domain functions on a real SQLite file, upload inspection
// with real ffprobe and hostile files, path confinement and detector choice.
import t, { type Test } from 'tap';
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { openDatabase, type OpenedDatabase } from '../../../src/db/database.js';
import { Store } from '../../../src/db/store.js';
import { newId } from '../../../src/db/ids.js';
import { createOrganization } from '../../../src/keys/commands.js';
import { problemOf, type HttpProblem } from '../../../src/http/problem.js';
import { DomainError } from '../../../src/errors.js';

/** The answer a domain error becomes over HTTP. */
const answered = (err: unknown) => problemOf(err) as HttpProblem;
import {
  claimNextWalk,
  clipsOf,
  createWalk,
  failWalk,
  findWalk,
  finishWalk,
  MAX_ATTEMPTS,
  queueDepth,
  recordProgress,
  recoverInterrupted,
  requeueWalk,
  type NewWalk,
} from '../../../src/walks/jobs/commands.js';
import { checkKinds, inspectUpload, requestHash } from '../../../src/walks/jobs/intake.js';
import { chooseDetector, configuredDetector } from '../../../src/walks/jobs/detector-choice.js';
import { framePath, frameFileName, inside, walkDir } from '../../../src/walks/jobs/storage.js';
import { presentWalk } from '../../../src/walks/jobs/presenters.js';
import { DEFAULT_OPTIONS } from '../../../src/walks/jobs/options.js';
import type { StoredResult } from '../../../src/walks/jobs/result.js';

const run = promisify(execFile);
const ACTOR = { keyId: null, label: 'test' };

async function openStore(t: Test): Promise<{ opened: OpenedDatabase; store: Store; orgId: string }> {
  const dir = t.testdir();
  const opened = await openDatabase(dir);
  t.teardown(() => opened.close());
  const store = new Store(opened.db, opened.hlc);
  const { org } = await store.write(ACTOR, (w) => createOrganization(w, 'Growers', 'first'));
  return { opened, store, orgId: org.id };
}

function newWalk(orgId: string, extra: Partial<NewWalk> = {}): NewWalk {
  return {
    id: newId(),
    organizationId: orgId,
    cycle: null,
    source: 'observation',
    exampleKey: null,
    mode: 'auto',
    options: DEFAULT_OPTIONS,
    idempotencyKey: null,
    requestHash: 'h',
    keyId: null,
    clips: [
      {
        fileName: '00.mp4',
        originalName: 'a.mp4',
        size: 10,
        sha256: 'x',
        kind: 'video',
        format: 'mp4',
        width: 320,
        height: 240,
        durationSeconds: 2,
      },
      {
        fileName: '01.mp4',
        originalName: 'b.mp4',
        size: 10,
        sha256: 'y',
        kind: 'video',
        format: 'mp4',
        width: 320,
        height: 240,
        durationSeconds: 2,
      },
    ],
    ...extra,
  };
}

const RESULT: StoredResult = {
  detector: { name: 'builtin-test', kind: 'builtin', fallback_reason: null },
  frames: [
    {
      index: 0,
      clip: 0,
      time_s: 0,
      detections: 1,
      width: 320,
      height: 240,
      quality: { sharpness: 0.5, brightness: 0.5, dark_fraction: 0, bright_fraction: 0, motion_px_per_s: null, score: 1 },
    },
  ],
  fruit: [
    {
      track_id: 1,
      ripeness: 'red',
      votes: { green: 0, turning: 0, red: 1 },
      box: [1, 2, 3, 4],
      frame: 0,
      first_frame: 0,
      last_frame: 0,
      frames_seen: 1,
      score: 0.9,
      diameter_mm: null,
    },
  ],
  stems: { count: null, reason: 'no stems' },
  plants: { count: null, reason: 'no plants' },
  quality: { score: 1, warnings: [] },
  counts: { green: 0, turning: 0, red: 1, total: 1 },
  clips: [
    { position: 0, frames: 1 },
    { position: 1, frames: 0 },
  ],
};

t.test('storage: frame paths are built from a job id and a number, and stay in their folder', async (t) => {
  const data = '/srv/data';
  const id = newId();
  t.equal(framePath(data, id, 3, 'overlay.jpg'), path.join(data, 'walks', id, 'frames', frameFileName(3, 'overlay.jpg')));
  t.equal(framePath(data, id, 3, '../../clips/00.mp4'), null, 'a name outside the enum');
  t.equal(framePath(data, id, -1, 'image.jpg'), null, 'a negative frame');
  t.equal(framePath(data, id, 1.5, 'image.jpg'), null, 'a fractional frame');
  t.equal(framePath(data, '../etc', 0, 'image.jpg'), null, 'a walk id that is no id');
  t.throws(() => walkDir(data, `${id}/..`), /not a walk id/);
  t.throws(() => inside('/srv/x', '../y'), /escapes/);
  t.throws(() => inside('/srv/x', '/etc/passwd'), /escapes/);
  t.throws(() => inside('/srv/x', 'a/b'), /escapes/);
  t.throws(() => inside('/srv/x', '.'), /escapes/);
  t.equal(inside('/srv/x', 'ok.jpg'), '/srv/x/ok.jpg');
});

t.test('requestHash: the same upload hashes the same, anything different does not', async (t) => {
  const base = { operation: 'cycle_video', scope: { cycle_id: 'c', week: '2026-W07' }, fields: { conf: 0.4, mode: 'auto' }, files: ['aa'] };
  const h = requestHash(base);
  t.equal(requestHash({ ...base, fields: { mode: 'auto', conf: 0.4 } }), h, 'field order does not matter');
  t.equal(requestHash({ ...base, fields: { mode: 'auto', conf: '0.4' } }), h, 'a number and its text are the same field value');
  t.not(requestHash({ ...base, files: ['ab'] }), h, 'other bytes');
  t.not(requestHash({ ...base, fields: { conf: 0.5, mode: 'auto' } }), h, 'other fields');
  t.not(requestHash({ ...base, scope: { cycle_id: 'd', week: '2026-W07' } }), h, 'other cycle');
  t.not(requestHash({ ...base, scope: { cycle_id: 'c', week: '2026-W08' } }), h, 'other week');
  t.not(requestHash({ ...base, operation: 'cycle_batch' }), h, 'other operation');
  t.not(requestHash({ ...base, files: ['aa', 'bb'] }), requestHash({ ...base, files: ['bb', 'aa'] }), 'clip order matters');
});

t.test('detector choice: builtin, a manifest in models/, and what each mode runs', async (t) => {
  const models = t.testdir({ 'tomato.json': '{}' });
  const builtin = configuredDetector('builtin', models);
  t.same(chooseDetector(builtin, 'auto'), { manifest: null, strict: false, reason: null });
  t.same(chooseDetector(builtin, 'photo'), { manifest: null, strict: false, reason: null });
  const noModel = answered(t.throws(() => chooseDetector(builtin, 'model')));
  t.equal(noModel.status, 422);
  t.match(noModel.toBody(), { errors: [{ name: 'mode', message: /no model detector is configured/ }] });

  const model = configuredDetector('tomato.json', models);
  t.same(chooseDetector(model, 'model'), { manifest: path.join(models, 'tomato.json'), strict: true, reason: null });
  t.same(chooseDetector(model, 'auto'), { manifest: path.join(models, 'tomato.json'), strict: false, reason: null });
  t.same(chooseDetector(model, 'builtin'), { manifest: null, strict: false, reason: null }, 'builtin whatever is configured');

  const missing = configuredDetector('gone.json', models);
  t.match(chooseDetector(missing, 'auto'), { manifest: null, reason: /not in models/ }, 'auto falls back and says why');
  t.equal(answered(t.throws(() => chooseDetector(missing, 'model'))).status, 422);

  for (const hostile of ['../secret.json', '/etc/passwd', 'sub/model.json', '..']) {
    const c = configuredDetector(hostile, models);
    t.equal(c.model?.available, false, `${hostile} is not followed`);
    t.match(c.model?.reason, /not a path|not in models/);
  }
});

t.test('upload inspection: by content, with real ffprobe, refusing hostile files', async (t) => {
  const dir = t.testdir();
  const file = (name: string, bytes: Buffer | string) => {
    const p = path.join(dir, name);
    writeFileSync(p, bytes);
    return { path: p, originalName: name, size: Buffer.byteLength(bytes) };
  };
  await run('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x240:rate=10',
    '-t',
    '1',
    '-pix_fmt',
    'yuv420p',
    '-c:v',
    'libx264',
    path.join(dir, 'ok.mp4'),
  ]);
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=160x120', '-frames:v', '1', path.join(dir, 'ok.jpg')]);
  const okVideo = await inspectUpload({ path: path.join(dir, 'ok.mp4'), originalName: 'walk.mp4', size: 1 }, 'file');
  t.match(okVideo, { sniffed: { kind: 'video', format: 'mp4' }, info: { kind: 'video', width: 320, height: 240 } });
  t.match(okVideo.sha256, /^[0-9a-f]{64}$/);
  const okPhoto = await inspectUpload({ path: path.join(dir, 'ok.jpg'), originalName: 'renamed.mp4', size: 1 }, 'file');
  t.match(
    okPhoto,
    { sniffed: { kind: 'image', format: 'jpeg' }, info: { kind: 'image' } },
    'a JPEG named .mp4 is a photo: content decides',
  );

  const hostile: [string, Buffer | string, RegExp][] = [
    ['empty.mp4', '', /empty/],
    ['notes.mp4', 'just some text, not a video\n'.repeat(20), /not a photo .* or video/],
    ['tool.jpg', Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(200)]), /not a photo/],
    ['page.jpg', '<html><script>alert(1)</script></html>', /not a photo/],
    [
      'fake.png',
      Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('garbage'.repeat(50))]),
      /starts like png but cannot be read/,
    ],
    [
      'fake.mp4',
      Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(12), Buffer.from('nothing here'.repeat(40))]),
      /starts like mp4 but cannot be read/,
    ],
    ['playlist.mp4', '#EXTM3U\n#EXT-X-VERSION:3\nhttp://example.com/a.ts\n', /not a photo/],
  ];
  for (const [name, bytes, message] of hostile) {
    const err = await inspectUpload(file(name, bytes), 'file').then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof DomainError, `${name} is refused`);
    t.equal(answered(err).status, 415, `${name}: 415`);
    t.match(answered(err).message, message, `${name}: says why`);
    t.notMatch(answered(err).message, dir, `${name}: without the box's folders`);
  }

  // A PNG header declaring 20000×20000 pixels: a decompression bomb, refused before any decoding.
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(20000, 0);
  ihdr.writeUInt32BE(20000, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const { crc32 } = await import('node:zlib').then((z) => ({ crc32: (z as any).crc32 as ((b: Buffer) => number) | undefined }));
  if (crc32) {
    const chunk = (type: string, data: Buffer) => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type), data])) >>> 0);
      return Buffer.concat([len, Buffer.from(type), data, crc]);
    };
    const bomb = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr),
      chunk('IDAT', Buffer.alloc(16)),
      chunk('IEND', Buffer.alloc(0)),
    ]);
    const err = await inspectUpload(file('bomb.png', bomb), 'file').then(
      () => null,
      (e: unknown) => e,
    );
    t.equal(answered(err)?.status, 415, 'a 400-megapixel PNG is refused');
  }

  t.equal(answered(t.throws(() => checkKinds([okVideo], 'photo', ['file']))).status, 422, 'mode photo refuses a video');
  t.equal(answered(t.throws(() => checkKinds([okPhoto], 'video', ['file']))).status, 422, 'mode video refuses a photo');
  t.doesNotThrow(() => checkKinds([okVideo, okPhoto], 'auto', ['a', 'b']));
});

t.test('queue: create, claim atomically, progress, finish', async (t) => {
  const { opened, store, orgId } = await openStore(t);
  const db = opened.db;
  const first = await store.write(ACTOR, (w) => createWalk(w, newWalk(orgId)));
  t.equal(first.walk.status, 'queued');
  t.same(
    first.clips.map((c) => c.position),
    [0, 1],
  );
  t.same(await queueDepth(db), { queued: 1, running: 0 });

  // Five runners race for one queued walk: exactly one wins.
  const claims = await Promise.all([1, 2, 3, 4, 5].map(() => claimNextWalk(store)));
  const won = claims.filter((c) => c !== null);
  t.equal(won.length, 1, 'one claim wins');
  t.equal(won[0]!.id, first.walk.id);
  t.equal(won[0]!.status, 'running');
  t.equal(won[0]!.attempts, 1);
  t.equal(await claimNextWalk(store), null, 'nothing left to claim');

  const logBefore = await db
    .selectFrom('change_log')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  await recordProgress(db, first.walk.id, 0.4, [{ position: 0, progress: 0.8, frames: 4, status: 'running' }]);
  const logAfter = await db
    .selectFrom('change_log')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  t.equal(Number(logAfter.n), Number(logBefore.n), 'progress ticks stay out of the change log');
  t.equal((await findWalk(db, first.walk.id))!.progress, 0.4);
  t.match((await clipsOf(db, first.walk.id))[0], { progress: 0.8, frames: 4, status: 'running' });

  t.equal(await store.write(ACTOR, (w) => finishWalk(w, first.walk.id, RESULT)), true);
  const done = (await findWalk(db, first.walk.id))!;
  t.match(done, { status: 'done', progress: 1, detector: 'builtin-test', count_red: 1, count_total: 1 });
  t.same(JSON.parse(done.result!).counts, RESULT.counts);
  t.same(
    (await clipsOf(db, first.walk.id)).map((c) => [c.status, c.frames]),
    [
      ['done', 1],
      ['done', 0],
    ],
  );

  await recordProgress(db, first.walk.id, 0.1, []);
  t.equal((await findWalk(db, first.walk.id))!.progress, 1, 'a late progress tick does not touch a finished walk');
  t.equal(await store.write(ACTOR, (w) => finishWalk(w, first.walk.id, RESULT)), false, 'a walk is finished once');
  t.equal(await store.write(ACTOR, (w) => failWalk(w, first.walk.id, 'late')), false, 'a done walk does not fail afterwards');

  const ops = await db
    .selectFrom('change_log')
    .select(['op', 'after'])
    .where('entity', '=', 'walks')
    .where('entity_id', '=', first.walk.id)
    .orderBy('seq')
    .execute();
  t.same(
    ops.map((o) => [o.op, JSON.parse(o.after!).status]),
    [
      ['insert', 'queued'],
      ['update', 'running'],
      ['update', 'done'],
    ],
    'each state change is logged once',
  );
});

t.test('queue: oldest first, failure with the clip at fault, requeue', async (t) => {
  const { opened, store, orgId } = await openStore(t);
  const a = await store.write(ACTOR, (w) => createWalk(w, newWalk(orgId)));
  const b = await store.write(ACTOR, (w) => createWalk(w, newWalk(orgId)));
  t.equal((await claimNextWalk(store))!.id, a.walk.id, 'oldest first');
  t.equal(await store.write(ACTOR, (w) => failWalk(w, a.walk.id, 'clip 2 of 2: ffmpeg could not decode this file', 1)), true);
  const failed = (await findWalk(opened.db, a.walk.id))!;
  t.match(failed, { status: 'failed', error: /could not decode/ });
  t.match((await clipsOf(opened.db, a.walk.id))[1], { status: 'failed', error: /could not decode/ });

  t.equal((await claimNextWalk(store))!.id, b.walk.id);
  t.equal(await store.write(ACTOR, (w) => requeueWalk(w, b.walk.id)), true);
  t.match(await findWalk(opened.db, b.walk.id), { status: 'queued', progress: 0, started_at: null });
  t.equal(await store.write(ACTOR, (w) => requeueWalk(w, b.walk.id)), false, 'only a running walk is re-queued');
  t.equal((await claimNextWalk(store))!.attempts, 2, 'the next claim counts a second attempt');
});

t.test('recovery at start: running walks go back to the queue, a walk that keeps killing the box fails', async (t) => {
  const { opened, store, orgId } = await openStore(t);
  const a = await store.write(ACTOR, (w) => createWalk(w, newWalk(orgId)));
  await claimNextWalk(store);
  await recordProgress(opened.db, a.walk.id, 0.5, [{ position: 0, progress: 1, frames: 4, status: 'done' }]);
  const r = await recoverInterrupted(store);
  t.same(r, { requeued: [a.walk.id], failed: [] });
  t.match(await findWalk(opened.db, a.walk.id), { status: 'queued', progress: 0 });
  t.same(
    (await clipsOf(opened.db, a.walk.id)).map((c) => [c.status, c.progress, c.frames]),
    [
      ['queued', 0, 0],
      ['queued', 0, 0],
    ],
    'partial clip progress is cleared',
  );

  // Interrupted again on attempts 2 .. MAX_ATTEMPTS - 1: still re-queued.
  for (let attempt = 2; attempt < MAX_ATTEMPTS; attempt++) {
    t.equal((await claimNextWalk(store))!.attempts, attempt);
    t.same((await recoverInterrupted(store)).requeued, [a.walk.id]);
  }
  t.equal((await claimNextWalk(store))!.attempts, MAX_ATTEMPTS);
  const last = await recoverInterrupted(store);
  t.same(last, { requeued: [], failed: [a.walk.id] });
  t.match(await findWalk(opened.db, a.walk.id), { status: 'failed', error: /interrupted 3 times/ });
  t.same(await queueDepth(opened.db), { queued: 0, running: 0 });
});

t.test('presenter: instants on the greenhouse clock, the same under any process zone', async (t) => {
  const walk = {
    id: '01900000-0000-7000-8000-000000000001',
    organization_id: 'o',
    farm_id: 'f',
    greenhouse_id: 'g',
    row_id: 'r',
    cycle_id: 'c',
    week: '2026-W07',
    source: 'cycle_video' as const,
    example_key: null,
    status: 'done' as const,
    progress: 1,
    mode: 'auto',
    options: JSON.stringify(DEFAULT_OPTIONS),
    detector: 'builtin-test',
    error: null,
    idempotency_key: null,
    request_hash: 'h',
    created_by_key_id: null,
    attempts: 1,
    started_at: '2026-02-11T23:30:00.000Z',
    finished_at: '2026-07-01T10:00:00.000Z',
    count_green: 0,
    count_turning: 0,
    count_red: 1,
    count_total: 1,
    corrected_green: 1,
    corrected_turning: 0,
    corrected_red: 1,
    corrected_total: 2,
    result: JSON.stringify(RESULT),
    created_at: '2026-02-11T23:29:00.000Z',
    updated_at: '2026-07-01T10:00:00.000Z',
    version: 'v',
    clips_removed_at: null,
    frames_removed_at: null,
  };
  const keep = { clips: 30, frames: 0 };
  const here = presentWalk(walk, [], keep, 'Europe/Amsterdam');
  t.equal(here.created_at, '2026-02-12T00:29:00+01:00', 'winter: +01:00, and the local date is the next day');
  t.equal(here.finished_at, '2026-07-01T12:00:00+02:00', 'summer: +02:00');
  t.equal(here.result!.frames[0]!.overlay_url, `/api/observations/${walk.id}/frames/0/overlay.jpg`);
  t.same(here.counts, { green: 0, turning: 0, red: 1, total: 1 });
  t.same(here.corrected_counts, { green: 1, turning: 0, red: 1, total: 2 }, "the corrected counts beside the model's");
  t.same(
    here.media,
    { clips: { kept_until: '2026-07-31T12:00:00+02:00', removed_at: null }, frames: { kept_until: null, removed_at: null } },
    'clips kept 30 days from the end of scoring, frames for ever',
  );
  const removed = presentWalk({ ...walk, clips_removed_at: '2026-11-01T09:00:00.000Z' }, [], keep, 'Europe/Amsterdam');
  t.same(removed.media.clips, { kept_until: null, removed_at: '2026-11-01T10:00:00+01:00' }, 'once removed: when, and no date to come');

  // The same presentation computed in a process running in New York and in UTC.
  const script = `import { presentWalk } from ${JSON.stringify(new URL('../../../src/walks/jobs/presenters.ts', import.meta.url).href)};
process.stdout.write(JSON.stringify(presentWalk(${JSON.stringify(walk)}, [], ${JSON.stringify(keep)}, 'Europe/Amsterdam')));`;
  for (const tz of ['America/New_York', 'UTC']) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, TZ: tz },
      encoding: 'utf8',
    });
    t.same(JSON.parse(out), JSON.parse(JSON.stringify(here)), `TZ=${tz} answers the same`);
  }
});

t.test('frame writer: one ffmpeg per run of same-sized consecutive frames, files named by walk-wide index', async (t) => {
  const { JpegSequenceWriter } = await import('../../../src/walks/jobs/frame-writer.js');
  const { readdirSync, readFileSync } = await import('node:fs');
  // Size from the JPEG's SOF0 header (ffprobe itself reads a path with %d in it as a pattern).
  const jpegSize = (bytes: Buffer) => {
    const at = bytes.indexOf(Buffer.from([0xff, 0xc0]));
    return { width: bytes.readUInt16BE(at + 7), height: bytes.readUInt16BE(at + 5) };
  };
  // A literal % in the folder must not be read as part of ffmpeg's file pattern.
  const dir = path.join(t.testdir(), 'walk 100%d');
  (await import('node:fs')).mkdirSync(dir);
  const image = (w: number, h: number, v: number) => ({ width: w, height: h, data: new Uint8Array(w * h * 3).fill(v) });
  const writer = new JpegSequenceWriter(dir, 'image.jpg');
  for (const i of [0, 1, 2]) await writer.write(i, image(16, 16, 40 * i));
  for (const i of [5, 6]) await writer.write(i, image(32, 16, 200)); // a new size and a gap: a new run
  await writer.close();
  t.same(readdirSync(dir).sort(), ['00000-image.jpg', '00001-image.jpg', '00002-image.jpg', '00005-image.jpg', '00006-image.jpg']);
  for (const f of readdirSync(dir)) t.same([...readFileSync(path.join(dir, f)).subarray(0, 3)], [0xff, 0xd8, 0xff], `${f} is a JPEG`);
  t.same(jpegSize(readFileSync(path.join(dir, '00006-image.jpg'))), { width: 32, height: 16 });
  t.same(jpegSize(readFileSync(path.join(dir, '00001-image.jpg'))), { width: 16, height: 16 });
  await writer.close();
  t.pass('closing twice is harmless');
});

t.test('openDetector: a real (tiny) ONNX model loads; a broken one fails mode model and falls back under auto', async (t) => {
  const { openDetector } = await import('../../../src/walks/jobs/detectors.js');
  const { buildYoloTestModel } = await import('../../helpers/onnx-model.js');
  const { createHash } = await import('node:crypto');
  const dir = t.testdir();
  const bytes = buildYoloTestModel({ inputWidth: 64, inputHeight: 64, base: [[20], [32], [10], [10], [0.9], [0]] });
  writeFileSync(path.join(dir, 'tiny.onnx'), bytes);
  const manifest = {
    name: 'tiny-test-model',
    file: 'tiny.onnx',
    input: { width: 64, height: 64 },
    classes: [
      { name: 'unripe', maps_to: 'green' },
      { name: 'ripe', maps_to: 'red' },
    ],
  };
  writeFileSync(path.join(dir, 'tiny.json'), JSON.stringify({ ...manifest, sha256: createHash('sha256').update(bytes).digest('hex') }));
  writeFileSync(path.join(dir, 'tampered.json'), JSON.stringify({ ...manifest, sha256: '0'.repeat(64) }));

  const ok = await openDetector({ manifest: path.join(dir, 'tiny.json'), strict: true, reason: null });
  t.match(ok, { fallbackReason: null, detector: { info: { name: 'tiny-test-model', kind: 'onnx' } } });
  const found = await ok.detector.detect({ width: 64, height: 64, data: new Uint8Array(64 * 64 * 3) }, { conf: 0.5 });
  t.match(found, [{ kind: 'fruit', ripeness: 'green' }], 'it detects through onnxruntime');
  await ok.detector.close?.();

  await t.rejects(
    openDetector({ manifest: path.join(dir, 'tampered.json'), strict: true, reason: null }),
    /could not be loaded/,
    'mode model: the walk fails with the reason',
  );
  const fallback = await openDetector({ manifest: path.join(dir, 'tampered.json'), strict: false, reason: null });
  t.match(
    fallback,
    { detector: { info: { name: 'builtin-colour' } }, fallbackReason: /tampered\.json could not be loaded/ },
    'mode auto: the built-in detector, with the reason',
  );
  const builtin = await openDetector({ manifest: null, strict: false, reason: null });
  t.equal(builtin.detector.info.name, 'builtin-colour');
});
