// Walk scoring through the HTTP API with real ffmpeg, real rendered clips and
// the real worker process: uploads, polling, results, frames, batches,
// idempotency, organization scope and every refusal with data left unchanged.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { renderStill, renderWalk } from '../../scripts/render/walk.js';
import { upload, poll, walkCount, leftovers } from '../helpers/walks.js';
import { startServer, createTree, createOrg, dbRows, type TestServer } from '../helpers/server.js';

const dir = t.testdir();
const walk = await renderWalk({ out: path.join(dir, 'walk'), seconds: 4, fps: 10, width: 480, height: 270, speed: 0.3, seed: 5 });
const still = await renderStill({ seed: 7, width: 480, height: 360 });
const CLIP = walk.files[0]!;
const PHOTO = path.join(dir, 'photo.jpg');
writeFileSync(PHOTO, still.jpeg);
const TEXT = path.join(dir, 'notes.mp4');
writeFileSync(TEXT, 'this is a shopping list, not a video\n'.repeat(100));
// A clip whose container is intact (sniffing and ffprobe pass) but whose picture data is noise.
const CORRUPT = path.join(dir, 'corrupt.mp4');
{
  const bytes = Buffer.from(readFileSync(CLIP));
  const mdat = bytes.indexOf('mdat');
  const moov = bytes.indexOf('moov');
  const end = moov > mdat ? moov - 8 : bytes.length;
  let x = 12345;
  for (let i = mdat + 4 + 64; i < end; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  writeFileSync(CORRUPT, bytes);
}
// A clip without its index (the moov box): an export or upload broken off before the index was
// written. ffprobe's reason names the file's path and a memory address, neither for a client.
const CUT = path.join(dir, 'no-index.mp4');
{
  const bytes = readFileSync(CLIP);
  const moov = bytes.indexOf('moov') - 4;
  writeFileSync(CUT, Buffer.concat([bytes.subarray(0, moov), bytes.subarray(moov + bytes.readUInt32BE(moov))]));
}
// A clip broken off part way with its index first (as the renderer and phones write it): ffprobe
// reads the whole length from the index, ffmpeg decodes the start and stops without failing.
const BROKEN_OFF = path.join(dir, 'broken-off.mp4');
{
  const bytes = readFileSync(CLIP);
  if (bytes.indexOf('moov') > bytes.indexOf('mdat')) throw new Error('the rendered clip should have its index first');
  writeFileSync(BROKEN_OFF, bytes.subarray(0, Math.floor(bytes.length * 0.4)));
}

function rawGet(s: TestServer, rawPath: string, key: string): Promise<{ status: number; body: string }> {
  // fetch() would normalise "..": send the path exactly as written.
  const url = new URL(s.base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: rawPath, method: 'GET', headers: { 'x-api-key': key } }, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const s = await startServer(t);
const tree = await createTree(s);
const KEY = tree.adminKey;

t.test('a clip: 202 at once, progress moves while the worker scores, then the result', async (t) => {
  const r = await upload(s, '/api/observations', KEY, [{ field: 'file', file: CLIP, name: 'row 4.mp4' }], { sample_seconds: '0.25' });
  t.equal(r.status, 202, r.status === 202 ? 'accepted' : r.text);
  t.match(r.body, {
    job_id: /^[0-9a-f-]{36}$/,
    status: /^(queued|running)$/,
    source: 'observation',
    cycle_id: null,
    week: null,
    result: null,
    counts: null,
  });
  t.equal(r.headers.get('location'), `/api/observations/${r.body.job_id}`, 'Location says where to poll');
  t.ok(r.body.progress >= 0 && r.body.progress < 1);
  t.match(r.body.clips, [{ position: 0, name: 'row 4.mp4', kind: 'video', format: 'mp4', width: 480, height: 270 }]);
  const id = r.body.job_id;

  // The API answers while the worker scores: a health request made while the walk is running is
  // answered, and the walk is still running afterwards (so it was served during scoring, not after).
  await poll(s, id, KEY, (w) => w.status === 'running' && w.clips[0].frames >= 1);
  const health = await s.request('GET', '/api/health');
  t.equal(health.status, 200);
  t.match(health.body.checks.scoring, {
    ok: true,
    ffmpeg: { available: true, version: /ffmpeg version/ },
    detector: { setting: 'builtin', runs: 'builtin-colour' },
    queue: { running: 1 },
    runner: { alive: true, concurrency: 1, scoring: [id] },
  });
  const during = await s.request('GET', `/api/observations/${id}`, { key: KEY });
  t.equal(during.body.status, 'running', 'the request was answered before the job finished');

  const seen = await poll(s, id, KEY);
  const done = seen.at(-1);
  t.equal(done.status, 'done', done.error ?? '');
  const progress = seen.map((w) => w.progress);
  t.ok(
    progress.some((p) => p > 0 && p < 1),
    `progress was seen between 0 and 1 (${[...new Set(progress)].join(', ')})`,
  );
  t.ok(
    progress.every((p, i) => i === 0 || p >= progress[i - 1]!),
    'progress never goes back',
  );
  t.equal(done.progress, 1);
  t.match(done, { attempts: 1, detector: 'builtin-colour', error: null, clips: [{ status: 'done', progress: 1, frames: 16 }] });
  t.ok(done.started_at && done.finished_at && done.finished_at >= done.started_at);

  const result = done.result;
  t.equal(result.frames.length, 16, '4 s sampled every 0.25 s');
  t.same(
    result.frames.map((f: any) => f.index),
    [...Array(16).keys()],
  );
  t.same(
    result.frames.map((f: any) => f.time_s),
    [...Array(16).keys()].map((i) => i * 0.25),
  );
  for (const f of result.frames) {
    t.equal(f.image_url, `/api/observations/${id}/frames/${f.index}/image.jpg`);
    t.equal(f.overlay_url, `/api/observations/${id}/frames/${f.index}/overlay.jpg`);
  }
  t.equal(result.frames[0].quality.motion_px_per_s, null, 'no motion for the first frame');
  t.ok(
    result.frames.slice(1).every((f: any) => typeof f.quality.motion_px_per_s === 'number'),
    'motion for the others',
  );
  t.type(result.quality.score, 'number');
  t.ok(Array.isArray(result.quality.warnings));
  t.same(result.stems.count, null);
  t.match(result.stems.reason, /stems/);
  t.same(result.plants.count, null);

  // Counts are the fruit list tallied by ripeness, each fruit once.
  const tally = { green: 0, turning: 0, red: 0, total: 0 };
  for (const f of result.fruit) {
    tally[f.ripeness as 'green' | 'turning' | 'red']++;
    tally.total++;
  }
  t.same(result.counts, tally);
  t.same(done.counts, tally);
  t.same(new Set(result.fruit.map((f: any) => f.track_id)).size, result.fruit.length, 'track ids are unique');
  t.ok(tally.total > 0, `fruit were counted (${tally.total}; the renderer put ${walk.truth.fruit.length} in view)`);
  t.ok(tally.total <= walk.truth.fruit.length * 2, 'not wildly over-counted');
  t.ok(
    result.fruit.every((f: any) => f.diameter_mm === null),
    'no diameters without mm_per_pixel',
  );

  // One log line per job step, with the duration when it ends.
  const lines = (s as any).logLines.map((l: string) => JSON.parse(l)).filter((l: any) => l.job_id === id);
  t.same(
    lines.map((l: any) => l.step),
    ['queued', 'started', 'done'],
  );
  t.type(lines[2].duration_ms, 'number');

  t.test('frames and overlays are served, confined to the walk', async (t) => {
    const image = await fetch(`${s.base}${result.frames[3].image_url}`, { headers: { 'x-api-key': KEY } });
    t.equal(image.status, 200);
    t.equal(image.headers.get('content-type'), 'image/jpeg');
    const imageBytes = Buffer.from(await image.arrayBuffer());
    t.same([...imageBytes.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG');
    const overlay = Buffer.from(
      await (await fetch(`${s.base}${result.frames[3].overlay_url}`, { headers: { 'x-api-key': KEY } })).arrayBuffer(),
    );
    t.same([...overlay.subarray(0, 3)], [0xff, 0xd8, 0xff]);
    t.not(overlay.equals(imageBytes), 'the overlay is not the bare image');
    const onDisk = readdirSync(path.join(s.dataDir, 'walks', id, 'frames'));
    t.equal(onDisk.filter((f) => f.endsWith('.jpg')).length, 32, 'an image and an overlay per frame');
    t.same(
      onDisk.filter((f) => !f.endsWith('.jpg')),
      ['boxes.json'],
      "and the frames' fruit boxes (the training export's labels), nothing else",
    );

    t.equal((await s.request('GET', `/api/observations/${id}/frames/16/image.jpg`, { key: KEY })).status, 404, 'a frame past the end');
    t.equal((await s.request('GET', `/api/observations/${id}/frames/0/thumb.jpg`, { key: KEY })).status, 422, 'a name outside the enum');
    t.equal((await s.request('GET', `/api/observations/${id}/frames/-1/image.jpg`, { key: KEY })).status, 422);
    t.equal((await s.request('GET', `/api/observations/${id}/frames/1.5/image.jpg`, { key: KEY })).status, 422);
    const hostile = [
      `/api/observations/${id}/frames/..%2F..%2Fclips%2F00.mp4/image.jpg`,
      `/api/observations/${id}/frames/0/..%2F..%2Fclips%2F00.mp4`,
      `/api/observations/${id}/frames/0/%2Fetc%2Fpasswd`,
      `/api/observations/${id}/frames/%2e%2e/image.jpg`,
      `/api/observations/${id}/frames/0/..%5C..%5Cclips%5C00.mp4`,
      `/api/observations/${id}/frames/0/../../clips/00.mp4`,
      `/api/observations/${id}/frames/../../../../../../etc/passwd`,
      `/api/observations/..%2F..%2Fetc/frames/0/image.jpg`,
      `/api/observations/${id}/frames//etc/passwd`,
    ];
    for (const p of hostile) {
      const r = await rawGet(s, p, KEY);
      t.ok(r.status === 404 || r.status === 422, `${p} → ${r.status}`);
      t.notMatch(r.body, /root:|ftyp/, 'never a file outside the frames');
    }
  });
});

t.test('a photo is one frame', async (t) => {
  const r = await upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], {
    mode: 'photo',
    mm_per_pixel: String(still.truth.mmPerPixel),
    conf: '0.3',
  });
  t.equal(r.status, 202, r.status === 202 ? 'accepted' : r.text);
  t.match(r.body, {
    mode: 'photo',
    options: { conf: 0.3, mm_per_pixel: still.truth.mmPerPixel },
    clips: [{ kind: 'image', format: 'jpeg', duration_s: 0 }],
  });
  const done = (await poll(s, r.body.job_id, KEY)).at(-1);
  t.equal(done.status, 'done', done.error ?? '');
  t.equal(done.result.frames.length, 1);
  t.equal(done.result.frames[0].quality.motion_px_per_s, null);
  t.ok(done.result.fruit.length > 0, 'fruit found in the photo');
  t.ok(
    done.result.fruit.every((f: any) => typeof f.diameter_mm === 'number' && f.diameter_mm > 10 && f.diameter_mm < 150),
    'diameters in mm from mm_per_pixel',
  );
});

t.test('defaults follow what was uploaded: conf by kind, adaptive sampling unless sample_seconds is given', async (t) => {
  const photo = await upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }]);
  t.equal(photo.status, 202, photo.text);
  t.same(
    photo.body.options,
    { conf: 0.35, sample_seconds: 0.5, fast_sample_seconds: 0.25, max_frames: 1200, mm_per_pixel: null },
    'a photo: conf 0.35',
  );
  const fixed = await upload(s, '/api/observations', KEY, [{ field: 'file', file: CLIP }], { conf: '0.4', sample_seconds: '0.5' });
  t.same(
    fixed.body.options,
    { conf: 0.4, sample_seconds: 0.5, fast_sample_seconds: null, max_frames: 1200, mm_per_pixel: null },
    'given values are kept; a given sample_seconds is exact',
  );

  // A walker at 1 m/s: the job scores every 0.25 s once the pace is measured, and says so in its frames.
  const fast = await renderWalk({ out: path.join(dir, 'fast'), seconds: 3, fps: 10, width: 480, height: 270, speed: 1.0, seed: 2 });
  const r = await upload(s, '/api/observations', KEY, [{ field: 'file', file: fast.files[0]! }]);
  t.equal(r.status, 202, r.text);
  t.same(
    r.body.options,
    { conf: 0.5, sample_seconds: 0.5, fast_sample_seconds: 0.25, max_frames: 1200, mm_per_pixel: null },
    'a video: conf 0.5, adaptive sampling',
  );
  const done = (await poll(s, r.body.job_id, KEY)).at(-1);
  t.equal(done.status, 'done', done.error ?? '');
  t.same(done.result.frames.map((f: any) => f.time_s).slice(0, 5), [0, 0.5, 0.75, 1, 1.25]);
  // Motion is per second of the clip, whatever the interval: the 0.5 s and the 0.25 s steps agree.
  const motion = done.result.frames.slice(1).map((f: any) => f.quality.motion_px_per_s as number);
  t.ok(
    motion.every((m: number) => Math.abs(m - motion[0]!) < 0.25 * motion[0]!),
    `motion per second ${motion.map((m: number) => Math.round(m)).join(', ')}`,
  );
  for (const j of [photo, fixed]) await poll(s, j.body.job_id, KEY);
});

t.test(
  'a clip longer than max_frames × sample_seconds: read_s says how much is scored, and the walk warns that the counts cover only that',
  async (t) => {
    // The 4 s clip read for 4 samples at 0.5 s: its first 2 s.
    const cut = await upload(s, '/api/observations', KEY, [{ field: 'file', file: CLIP }], { sample_seconds: '0.5', max_frames: '4' });
    t.equal(cut.status, 202, cut.text);
    t.match(cut.body.clips, [{ duration_s: 4, read_s: 2 }], 'read_s is known at upload');
    const whole = await upload(s, '/api/observations', KEY, [{ field: 'file', file: CLIP }], { sample_seconds: '0.5', max_frames: '8' });
    t.match(whole.body.clips, [{ duration_s: 4, read_s: 4 }], 'eight samples at 0.5 s read the whole clip');
    const photo = await upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], { max_frames: '1' });
    t.match(photo.body.clips, [{ duration_s: 0, read_s: 0 }]);

    const cutDone = (await poll(s, cut.body.job_id, KEY)).at(-1);
    t.equal(cutDone.status, 'done', cutDone.error ?? '');
    t.same(
      cutDone.result.frames.map((f: any) => f.time_s),
      [0, 0.5, 1, 1.5],
      'four frames, from the first 2 s',
    );
    const warning = cutDone.result.quality.warnings.find((w: any) => w.code === 'clip_cut_short');
    t.ok(warning, 'the walk says it was cut short');
    t.match(warning?.message, /not all of the walk was scored: the first 2 s of 4 s \(max_frames 4 at sample_seconds 0.5\)/);
    t.same(warning?.frames, [3], 'at the last frame scored');
    for (const job of [whole, photo]) {
      const done = (await poll(s, job.body.job_id, KEY)).at(-1);
      t.equal(done.status, 'done', done.error ?? '');
      t.notOk(
        done.result.quality.warnings.some((w: any) => w.code === 'clip_cut_short'),
        `${done.clips[0].kind}: read whole, no warning`,
      );
    }
  },
);

t.test('a clip that passes the checks but does not decode ends as a failed walk with the reason', async (t) => {
  const r = await upload(s, '/api/observations', KEY, [{ field: 'file', file: CORRUPT }]);
  t.equal(r.status, 202, 'it looks like an mp4 and ffprobe reads its container');
  const failed = (await poll(s, r.body.job_id, KEY)).at(-1);
  t.equal(failed.status, 'failed');
  t.match(failed.error, /decod|frame/i);
  t.notMatch(failed.error, s.dataDir, "the reason does not show the box's folders");
  t.equal(failed.result, null);
  t.equal(failed.counts, null);
});

t.test(
  'a clip broken off part way is scored for the stretch that decodes, and the walk says it is damaged and how far it was read',
  async (t) => {
    const r = await upload(s, '/api/observations', KEY, [{ field: 'file', file: BROKEN_OFF }], { sample_seconds: '0.5' });
    t.equal(r.status, 202, r.text);
    t.match(r.body.clips, [{ duration_s: 4, read_s: 4 }], 'it probes as the whole clip');
    const done = (await poll(s, r.body.job_id, KEY)).at(-1);
    t.equal(done.status, 'done', done.error ?? '');
    const frames = done.result.frames.length;
    t.ok(frames >= 1 && frames < 8, `only the start decodes: ${frames} of 8 frames`);
    const warning = done.result.quality.warnings.find((w: any) => w.code === 'clip_damaged');
    t.ok(warning, 'the walk says the clip is damaged');
    t.match(
      warning?.message,
      new RegExp(
        `^the upload is damaged: clip 1: only its first ${frames * 0.5} s of 4 s could be decoded, so the counts miss the rest of it \\(ffmpeg: .+\\)`,
      ),
    );
    t.notMatch(warning?.message, s.dataDir, "ffmpeg's words without the box's folders");
    t.same(warning?.frames, [frames - 1], 'at the last frame scored');

    // A photo cut short: ffmpeg fills the missing rows and exits 0.
    const cutPhoto = path.join(dir, 'cut-photo.jpg');
    writeFileSync(cutPhoto, readFileSync(PHOTO).subarray(0, Math.floor(readFileSync(PHOTO).length * 0.6)));
    const photo = (await poll(s, (await upload(s, '/api/observations', KEY, [{ field: 'file', file: cutPhoto }])).body.job_id, KEY)).at(-1);
    t.equal(photo.status, 'done', photo.error ?? '');
    t.match(
      photo.result.quality.warnings.find((w: any) => w.code === 'clip_damaged'),
      { message: /^the upload is damaged: the photo: part of it may be grey or garbled \(ffmpeg: .+\)/, frames: [0] },
      'a photo cut short says so',
    );

    const clean = await upload(s, '/api/observations', KEY, [{ field: 'file', file: CLIP }], { sample_seconds: '0.5' });
    const whole = (await poll(s, clean.body.job_id, KEY)).at(-1);
    t.equal(whole.result.frames.length, 8);
    t.notOk(
      whole.result.quality.warnings.some((w: any) => w.code === 'clip_damaged'),
      'the intact clip carries no such warning',
    );
    const intactPhoto = (await poll(s, (await upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }])).body.job_id, KEY)).at(
      -1,
    );
    t.notOk(
      intactPhoto.result.quality.warnings.some((w: any) => w.code === 'clip_damaged'),
      'nor the intact photo',
    );
  },
);

t.test(
  'rescore: a walk cut short is scored again whole from its kept clips; 409 while scoring, 422 for options that cannot apply, 404 for another organization',
  async (t) => {
    const cut = await upload(s, '/api/observations', KEY, [{ field: 'file', file: CLIP }], { sample_seconds: '0.5', max_frames: '4' });
    const id = cut.body.job_id;
    const early = await s.request('POST', `/api/observations/${id}/rescore`, { key: KEY, body: { max_frames: 8 } });
    t.equal(early.status, 409, 'queued or scoring: 409');
    t.equal(early.body.job_id, id);
    t.equal(early.body.status, 409, "the problem's status is the HTTP status");
    t.match(early.body.walk_status, /^(queued|running)$/, "the walk's state has its own name");
    const first = (await poll(s, id, KEY)).at(-1);
    t.equal(first.result.frames.length, 4);
    t.ok(first.result.quality.warnings.some((w: any) => w.code === 'clip_cut_short'));
    t.ok(existsSync(path.join(s.dataDir, 'walks', id, 'frames')), 'frames of the first scoring on disk');

    const refused = async (why: string, body: unknown, status: number, key = KEY) => {
      const r = await s.request('POST', `/api/observations/${id}/rescore`, { key, body });
      t.equal(r.status, status, `${why}: ${status}`);
      const now = (await s.request('GET', `/api/observations/${id}`, { key: KEY })).body;
      t.match(now, { status: 'done', counts: first.counts, options: first.options }, `${why}: the walk is as it was`);
    };
    await refused('max_frames 0', { max_frames: 0 }, 422);
    await refused('an unknown option', { frames: 8 }, 422);
    await refused('mode photo for a video clip', { mode: 'photo' }, 422);
    await refused('mode model without a model', { mode: 'model' }, 422);
    await refused("another organization's key", { max_frames: 8 }, 404, (await createOrg(s, 'Others')).adminKey);

    const again = await s.request('POST', `/api/observations/${id}/rescore`, { key: KEY, body: { max_frames: 8 } });
    t.equal(again.status, 202, again.text);
    t.match(again.body, { job_id: id, status: /^(queued|running)$/, result: null, counts: null, attempts: 0 });
    t.equal(again.headers.get('location'), `/api/observations/${id}`, 'Location: the same walk');
    t.same(
      again.body.options,
      { ...first.options, max_frames: 8 },
      "the options given replace the walk's, the others stay (sample_seconds 0.5 exact)",
    );
    t.match(again.body.clips, [{ read_s: 4 }], 'the whole clip is read now');
    const second = (await poll(s, id, KEY)).at(-1);
    t.equal(second.status, 'done', second.error ?? '');
    t.same(
      second.result.frames.map((f: any) => f.time_s),
      [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5],
      'eight frames over the whole clip',
    );
    t.notOk(
      second.result.quality.warnings.some((w: any) => w.code === 'clip_cut_short'),
      'no longer cut short',
    );
    t.ok(
      existsSync(path.join(s.dataDir, 'walks', id, 'frames', readdirSync(path.join(s.dataDir, 'walks', id, 'frames'))[0] ?? 'none')),
      'frames of the new scoring',
    );
    const updates = await dbRows<{ after: string }>(
      s,
      "select after from change_log where entity = 'walks' and entity_id = ? and op = 'update'",
      id,
    );
    const requeued = updates.map((u) => JSON.parse(u.after)).filter((a) => a.status === 'queued');
    t.equal(requeued.length, 1, 'the rescore is in the change log');
    t.equal(JSON.parse(requeued[0]?.options ?? '{}').max_frames, 8, 'with its new options');
  },
);

t.test(
  "PATCH a walk's week: moved with its counts kept, in the change log; 422 for a bad week or a walk in no cycle, 404 for another organization",
  async (t) => {
    const r = await upload(s, `${tree.cyclePath}/videos`, KEY, [{ field: 'file', file: PHOTO }], { week: '2026-W10' });
    t.equal(r.status, 201, r.text);
    const id = r.body.job_id;
    t.equal(r.headers.get('location'), `/api/observations/${id}`, 'Location says where to poll');
    const done = (await poll(s, id, KEY)).at(-1);
    const moved = await s.request('PATCH', `/api/observations/${id}`, { key: KEY, body: { week: '2026-03-11' } });
    t.equal(moved.status, 200, moved.text);
    t.equal(moved.body.week, '2026-W11', 'a date is read as its ISO week');
    t.same(moved.body.counts, done.counts, 'the counts stand');
    t.equal(moved.body.result.fruit.length, done.result.fruit.length, 'and the result');
    const inWeek = async (week: string) =>
      (await s.request('GET', `${tree.cyclePath}/walks?week=${week}`, { key: KEY })).body.items.map((w: any) => w.job_id);
    t.ok((await inWeek('2026-W11')).includes(id), 'listed in its new week');
    t.notOk((await inWeek('2026-W10')).includes(id), 'and not in the old one');
    const log = await dbRows(
      s,
      "select op, before, after from change_log where entity = 'walks' and entity_id = ? and op = 'update' and after like '%2026-W11%'",
      id,
    );
    t.equal(log.length, 1, 'the move is in the change log');

    const unchanged = async (why: string, body: unknown, status: number, key = KEY) => {
      const bad = await s.request('PATCH', `/api/observations/${id}`, { key, body });
      t.equal(bad.status, status, `${why}: ${status}`);
      t.match(bad.headers.get('content-type'), /^application\/problem\+json/);
      t.equal((await s.request('GET', `/api/observations/${id}`, { key: KEY })).body.week, '2026-W11', `${why}: the week is unchanged`);
      return bad.body;
    };
    t.match(await unchanged('a week that is none', { week: '2026-W54' }, 422), { errors: [{ name: 'week' }] });
    await unchanged('no week', {}, 422);
    await unchanged('another field', { week: '2026-W12', counts: { red: 5 } }, 422);
    await unchanged("another organization's key", { week: '2026-W12' }, 404, (await createOrg(s, 'Strangers')).adminKey);

    const quick = await upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }]);
    await poll(s, quick.body.job_id, KEY);
    const noCycle = await s.request('PATCH', `/api/observations/${quick.body.job_id}`, { key: KEY, body: { week: '2026-W12' } });
    t.equal(noCycle.status, 422, 'a quick score has no week to move');
    t.match(noCycle.body.errors, [{ name: 'week', message: /no crop cycle/ }]);
    t.equal((await s.request('GET', `/api/observations/${quick.body.job_id}`, { key: KEY })).body.week, null, 'and stays without one');
  },
);

t.test('GET a walk: an ETag that changes with the answer, 304 for If-None-Match while it stands', async (t) => {
  const r = await upload(s, `${tree.cyclePath}/videos`, KEY, [{ field: 'file', file: PHOTO }], { week: '2026-W20' });
  const id = r.body.job_id;
  await poll(s, id, KEY);
  const first = await s.request('GET', `/api/observations/${id}`, { key: KEY });
  const etag = first.headers.get('etag');
  t.match(etag, /^"[A-Za-z0-9_-]{27}"$/, 'a strong ETag');
  t.equal((await s.request('GET', `/api/observations/${id}`, { key: KEY })).headers.get('etag'), etag, 'the same answer, the same tag');
  const unchanged = await s.request('GET', `/api/observations/${id}`, { key: KEY, headers: { 'if-none-match': etag! } });
  t.equal(unchanged.status, 304, 'not modified');
  t.equal(unchanged.text, '', 'no body');
  t.equal((await s.request('GET', `/api/observations/${id}`, { key: KEY, headers: { 'if-none-match': '"something else"' } })).status, 200);
  await s.request('PATCH', `/api/observations/${id}`, { key: KEY, body: { week: '2026-W21' } });
  const moved = await s.request('GET', `/api/observations/${id}`, { key: KEY, headers: { 'if-none-match': etag! } });
  t.equal(moved.status, 200, 'after a change the old tag gets the whole answer');
  t.not(moved.headers.get('etag'), etag);
  t.equal(moved.body.week, '2026-W21');
  const other = await createOrg(s, 'Etag Neighbours');
  t.equal(
    (await s.request('GET', `/api/observations/${id}`, { key: other.adminKey, headers: { 'if-none-match': etag! } })).status,
    404,
    'another organization: 404, not 304',
  );
});

t.test('refused uploads answer a clear 4xx and store nothing', async (t) => {
  const before = await walkCount(s);
  const refusals: [string, Promise<any>, number, RegExp | null][] = [
    ['a text file named .mp4', upload(s, '/api/observations', KEY, [{ field: 'file', file: TEXT }]), 415, /not a photo .* or video/],
    ['an mp4 without its index', upload(s, '/api/observations', KEY, [{ field: 'file', file: CUT }]), 415, /moov atom not found/],
    ['no file', upload(s, '/api/observations', KEY, [], { conf: '0.5' }), 422, null],
    ['conf above 1', upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], { conf: '1.5' }), 422, null],
    [
      'sample_seconds below 0.05',
      upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], { sample_seconds: '0.01' }),
      422,
      null,
    ],
    ['max_frames above 2000', upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], { max_frames: '2001' }), 422, null],
    ['mm_per_pixel 0', upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], { mm_per_pixel: '0' }), 422, null],
    ['an unknown mode', upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], { mode: 'fast' }), 422, null],
    ['an unknown field', upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], { colour: 'red' }), 422, null],
    [
      'mode model without a model',
      upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], { mode: 'model' }),
      422,
      /no model detector is configured/,
    ],
    [
      'mode photo with a video',
      upload(s, '/api/observations', KEY, [{ field: 'file', file: CLIP }], { mode: 'photo' }),
      422,
      /takes photos only/,
    ],
    [
      'mode video with a photo',
      upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], { mode: 'video' }),
      422,
      /takes video clips only/,
    ],
    [
      'two files in file',
      upload(s, '/api/observations', KEY, [
        { field: 'file', file: PHOTO },
        { field: 'file', file: PHOTO },
      ]),
      422,
      /^file: more than 1 file in this field$/,
    ],
    [
      "a batch's files field on a single upload",
      upload(s, '/api/observations', KEY, [{ field: 'files', file: PHOTO }]),
      422,
      /^files: is not a file field of this operation, which takes "file" \(one file\)$/,
    ],
    ['JSON instead of multipart', s.request('POST', '/api/observations', { key: KEY, body: { file: 'x' } }), 415, null],
    [
      'an Idempotency-Key over 200 characters',
      upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }], {}, { 'idempotency-key': 'k'.repeat(201) }),
      422,
      null,
    ],
    ['no key', upload(s, '/api/observations', '', [{ field: 'file', file: PHOTO }]), 401, null],
  ];
  for (const [what, pending, status, detail] of refusals) {
    const r = await pending;
    t.equal(r.status, status, `${what}: ${status}`);
    t.equal(r.headers.get('content-type'), 'application/problem+json', `${what}: problem+json`);
    t.type(r.body.code, 'string');
    if (status === 422) t.ok(Array.isArray(r.body.errors) && r.body.errors.length > 0, `${what}: errors per field`);
    if (detail) t.match(r.body.detail, detail, `${what}: says why`);
    t.notMatch(r.body.detail ?? '', s.dataDir, `${what}: the detail does not show the box's folders`);
    t.notMatch(r.body.detail ?? '', /0x[0-9a-f]{6,}/i, `${what}: nor ffmpeg's memory addresses`);
  }
  t.equal(await walkCount(s), before, 'no walk was stored');
  t.same(leftovers(s), [], 'no upload left behind');
});

t.test('an upload over the cap is refused with 413 while it streams', async (t) => {
  const small = await startServer(t, { videoUploadLimit: 50_000 });
  const { adminKey } = await createOrg(small);
  const size = readFileSync(CLIP).length;
  t.ok(size > 50_000, `the clip (${size} B) is over the cap`);
  const r = await upload(small, '/api/observations', adminKey, [{ field: 'file', file: CLIP }]);
  t.equal(r.status, 413);
  t.match(r.body, { code: 'payload_too_large', limit_bytes: 50_000 });
  t.equal(await walkCount(small), 0);
  t.same(leftovers(small), []);
  t.notOk(existsSync(path.join(small.dataDir, 'walks')) && readdirSync(path.join(small.dataDir, 'walks')).length > 0, 'no walk folder');
  const ok = await upload(small, '/api/observations', adminKey, [{ field: 'file', file: PHOTO }]);
  t.equal(ok.status, 202, 'a photo under the cap is accepted');
});

t.test('without ffmpeg: uploads are a 503 that says why, health is degraded (not down), nothing stored', async (t) => {
  const { resolveFfmpeg } = await import('../../src/vision/media/ffmpeg-path.js');
  const saved = process.env.FFMPEG_PATH;
  process.env.FFMPEG_PATH = '/nonexistent/ffmpeg';
  await resolveFfmpeg({ refresh: true });
  t.teardown(async () => {
    if (saved === undefined) delete process.env.FFMPEG_PATH;
    else process.env.FFMPEG_PATH = saved;
    await resolveFfmpeg({ refresh: true });
  });
  const before = await walkCount(s);
  const r = await upload(s, '/api/observations', KEY, [{ field: 'file', file: PHOTO }]);
  t.equal(r.status, 503);
  t.match(r.body, { code: 'scoring_unavailable', detail: /ffmpeg is not available/ });
  const health = await s.request('GET', '/api/health');
  t.equal(health.status, 200, 'the rest of the box still works');
  t.equal(health.body.status, 'degraded');
  t.match(health.body.checks.scoring, { ok: false, ffmpeg: { available: false, reason: /\/nonexistent\/ffmpeg/ } });
  t.equal(await walkCount(s), before);
  t.same(leftovers(s), []);
});
