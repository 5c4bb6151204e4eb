// An iPhone photo (HEIC) through the HTTP API and the real worker: scored like the JPEG it was
// made from, upright when it carries a rotation, and hostile HEIF files refused with nothing stored.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { upload, poll, walkCount, leftovers } from '../helpers/walks.js';
import { startServer, createTree } from '../helpers/server.js';
import { withDeclaredSize, withRotation } from '../helpers/heif-edit.js';
import { resolveFfmpeg } from '../../src/vision/media/index.js';

const ffmpeg = await resolveFfmpeg();
if (!ffmpeg.available) {
  // The worker writes every scored frame through ffmpeg, photos included.
  t.plan(0, `ffmpeg is not available here, HEIC walk tests skipped: ${ffmpeg.reason}`);
  process.exit(0);
}

const ROOT = path.resolve(import.meta.dirname, '../..');
const HEIC = path.join(ROOT, 'test/fixtures/heic/row-mixed.heic');
const GRID = path.join(ROOT, 'test/fixtures/heic/row-mixed-grid.heic');
const JPEG = path.join(ROOT, 'examples/row-mixed.jpg');
const dir = t.testdir();
const bytes = readFileSync(HEIC);
const derived = (name: string, data: Buffer) => {
  const file = path.join(dir, name);
  writeFileSync(file, data);
  return file;
};
// As an iPhone stores a portrait photo: a grid of tiles with the rotation on the grid.
const PORTRAIT = derived('portrait.heic', withRotation(readFileSync(GRID), 3));
const BOMB = derived('bomb.heic', withDeclaredSize(bytes, 20000, 20000));
const CUT = derived('cut.heic', bytes.subarray(0, 2000));

const s = await startServer(t);
const tree = await createTree(s);
const KEY = tree.adminKey;

async function scored(file: string, name: string) {
  const r = await upload(s, '/api/observations', KEY, [{ field: 'file', file, name }], { mode: 'photo' });
  if (r.status !== 202) throw new Error(`${name}: ${r.status} ${r.text}`);
  return { accepted: r.body, done: (await poll(s, r.body.job_id, KEY)).at(-1) };
}

t.test('a HEIC photo is scored like the JPEG it was made from', async (t) => {
  const heic = await scored(HEIC, 'IMG_0412.HEIC');
  t.match(heic.accepted.clips, [{ kind: 'image', format: 'heic', width: 800, height: 600, duration_s: 0 }]);
  t.equal(heic.done.status, 'done', heic.done.error ?? '');
  const jpeg = await scored(JPEG, 'row-mixed.jpg');
  t.equal(jpeg.done.status, 'done', jpeg.done.error ?? '');
  t.ok(jpeg.done.counts.total > 10, `the JPEG counts ${jpeg.done.counts.total} fruit`);
  // The HEIC is the JPEG encoded once more (HEVC at quality 90, 4:2:0), so fruit near the
  // detection threshold or a class bound tip over: on this photo (re-rendered with the
  // colorimetry palette) the counts differ by 2 in each class, 34 against 36 in all. So each
  // class and the total within 2 (about 6 %); heif.test.ts compares the pixels themselves.
  for (const k of ['green', 'turning', 'red', 'total'] as const) {
    t.ok(Math.abs(heic.done.counts[k] - jpeg.done.counts[k]) <= 2, `${k}: HEIC ${heic.done.counts[k]}, JPEG ${jpeg.done.counts[k]}`);
  }
  t.match(heic.done.result.frames, [{ width: 800, height: 600 }]);
  const grid = await scored(GRID, 'IMG_0414.HEIC');
  t.equal(grid.done.status, 'done', grid.done.error ?? '');
  t.ok(Math.abs(grid.done.counts.total - jpeg.done.counts.total) <= 2, `stored as tiles: ${grid.done.counts.total} fruit`);
  const image = await fetch(`${s.base}${heic.done.result.frames[0].image_url}`, { headers: { 'x-api-key': KEY } });
  t.equal(image.status, 200);
  t.equal(image.headers.get('content-type'), 'image/jpeg', 'the frame is kept as a JPEG to look at');
});

t.test('a portrait HEIC (rotation property) is scored upright', async (t) => {
  const r = await scored(PORTRAIT, 'IMG_0413.HEIC');
  t.match(r.accepted.clips, [{ format: 'heic', width: 600, height: 800 }]);
  t.equal(r.done.status, 'done', r.done.error ?? '');
  t.match(r.done.result.frames, [{ width: 600, height: 800 }]);
  t.ok(r.done.counts.total > 10, `${r.done.counts.total} fruit`);
});

t.test('hostile HEIF files: 415 with the reason and nothing stored, or a failed walk with it', async (t) => {
  const before = await walkCount(s);
  const bomb = await upload(s, '/api/observations', KEY, [{ field: 'file', file: BOMB, name: 'bomb.heic' }]);
  t.equal(bomb.status, 415);
  t.equal(bomb.headers.get('content-type'), 'application/problem+json');
  t.match(bomb.body.detail, /file starts like heic but cannot be read as one: picture of 20000×20000 is larger than this appliance scores/);
  const noise = derived('noise.heic', Buffer.concat([bytes.subarray(0, 28), Buffer.alloc(3000, 0x5a)]));
  const refused = await upload(s, '/api/observations', KEY, [{ field: 'file', file: noise, name: 'noise.heic' }]);
  t.equal(refused.status, 415);
  t.match(refused.body.detail, /starts like heic but cannot be read as one/);
  t.notMatch(refused.body.detail, dir, "the reason does not show the box's folders");
  t.equal(await walkCount(s), before, 'no walk stored');
  t.same(leftovers(s), [], 'no upload left behind');

  const cut = await upload(s, '/api/observations', KEY, [{ field: 'file', file: CUT, name: 'cut.heic' }]);
  t.equal(cut.status, 202, 'its container reads');
  const failed = (await poll(s, cut.body.job_id, KEY)).at(-1);
  t.equal(failed.status, 'failed');
  t.match(failed.error, /libheif could not decode this HEIF image/);
  t.equal(failed.counts, null);
});
