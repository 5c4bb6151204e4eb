import t from 'tap';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sharedData } from '../helpers/shared-data.js';
import { readAllFrames } from '../../scripts/render/ffmpeg.js';
import { labelledPhotos, renderPhotoPan, seenBox, wallLayout } from '../../scripts/photo-pan/pan.js';
import { decodeFrames, probeMedia, requireFfmpeg, resolveFfmpeg } from '../../src/vision/media/index.js';
import { optionsFrom, walkOptionsFrom } from '../../src/walks/jobs/options.js';
import { scoreWalk, type WalkDecoder } from '../../src/vision/walk.js';
import { createOracle, NO_NOISE } from '../helpers/walk-oracle.js';
import { DEFAULT_PARAMS } from '../../src/vision/builtin/index.js';
import { greyWorld } from '../../src/vision/image/white-balance.js';
import { median } from '../../src/vision/track/box.js';

t.test('the wall: rows filled in turn, each photo beside the last of its row', async (t) => {
  const s = { width: 100, height: 75 };
  t.same(wallLayout([s, s, s, s, s], 2), [
    { x: 0, y: 0 },
    { x: 0, y: 75 },
    { x: 100, y: 0 },
    { x: 100, y: 75 },
    { x: 200, y: 0 },
  ]);
  t.same(wallLayout([s, s], 1), [
    { x: 0, y: 0 },
    { x: 100, y: 0 },
  ]);
});

t.test('a wall box seen by the camera: moved by its position, cut at the frame, with the share inside', async (t) => {
  t.same(seenBox([100, 10, 140, 50], 50, 200, 100), { box: [50, 10, 90, 50], visible: 1 });
  t.same(seenBox([100, 10, 140, 50], 120, 200, 100), { box: [0, 10, 20, 50], visible: 0.5 });
  t.same(seenBox([100, 80, 140, 120], 0, 200, 100), { box: [100, 80, 140, 100], visible: 0.5 });
  t.equal(seenBox([100, 10, 140, 50], 140, 200, 100), null, 'passed by');
  t.equal(seenBox([100, 10, 140, 50], -300, 200, 100), null, 'not reached yet');
});

const photos = sharedData('tomato-photos');
const PHOTO_DIR = photos.path;
const ffmpeg = await resolveFfmpeg();
if (photos.skip) {
  t.test('a walk past the labelled photos', { skip: photos.skip }, async () => {});
} else if (!ffmpeg.available) {
  t.test('a walk past the labelled photos', { skip: `ffmpeg is not available (${ffmpeg.reason})` }, async () => {});
} else {
  t.test('a walk past real photos: a real video whose truth lies on the fruit, each fruit countable once', async (t) => {
    const out = mkdtempSync(path.join(tmpdir(), 'cropwalk-pan-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    const only = ['0011.jpg', '0022.jpg', '0027.jpg'];
    const pan = await renderPhotoPan({ photos: PHOTO_DIR, only, out, name: 'pan', fruitPx: 48 });
    const truth = pan.truth;
    const info = await probeMedia(pan.files[0]!);
    t.equal(info.kind, 'video', 'a video clip');
    t.same([info.width, info.height], [truth.width, truth.height], 'the video is the size the truth says');
    t.equal(truth.width, 1280, 'a walk frame wide');
    t.equal(truth.height % 2, 0, 'even height for 4:2:0');
    t.equal(new Set(truth.sources.map((s) => s.photo)).size, 3, 'the three photos on the wall');
    t.equal(truth.fruit.length, 21 + 12 + 22, 'every label of the three photos is a truth fruit');
    // The scale puts the median labelled fruit of the photos used at the size asked for.
    const mid = median(
      labelledPhotos(PHOTO_DIR)
        .filter((p) => only.includes(p.photo))
        .flatMap((p) => p.labels.fruit.map((f) => Math.max(f.box[2] - f.box[0], f.box[3] - f.box[1]))),
    );
    t.ok(Math.abs(mid * truth.scale - 48) < 1e-9, `median labelled fruit ${mid.toFixed(1)} px × ${truth.scale.toFixed(3)} = 48 px`);
    t.ok(
      truth.fruit.every((f) => f.appearances.some((a) => a.visible === 1)),
      'every fruit is seen whole at some point',
    );
    // The camera moves a quarter of the frame a second: 1280 / 4 / 15 px between frames.
    const step = 1280 / 4 / truth.fps;
    t.ok(
      truth.fruit.every((f) => f.appearances[0]!.box[2] > 1280 - step - 1e-6 && f.appearances.at(-1)!.box[0] < step + 1e-6),
      'each enters at the right edge and leaves at the left',
    );

    // The labels lie on their fruit in the video: a red-labelled fruit is redder inside its box
    // than in the ring around it (a box off by a few fruit sizes, or scaled wrongly, is not).
    const middle = Math.floor(truth.clips[0]!.frames / 2);
    let k = 0;
    let rgb: Uint8Array | undefined;
    for await (const f of readAllFrames(pan.files[0]!, truth.width, truth.height)) if (k++ === middle) rgb = f;
    t.ok(rgb, 'the middle frame decodes');
    const redness = (x1: number, y1: number, x2: number, y2: number, hole?: number[]) => {
      let s = 0,
        n = 0;
      for (let y = Math.max(0, Math.round(y1)); y < Math.min(truth.height, Math.round(y2)); y++)
        for (let x = Math.max(0, Math.round(x1)); x < Math.min(truth.width, Math.round(x2)); x++) {
          if (hole && x >= hole[0]! && x < hole[2]! && y >= hole[1]! && y < hole[3]!) continue;
          const p = (y * truth.width + x) * 3;
          s += rgb![p]! - rgb![p + 1]!;
          n++;
        }
      return n ? s / n : 0;
    };
    const red = truth.fruit.flatMap((f) =>
      f.ripeness === 'red' ? f.appearances.filter((a) => a.frame === middle && a.visible === 1) : [],
    );
    t.ok(red.length >= 8, `${red.length} red fruit whole in the middle frame`);
    const redder = (shift: number) =>
      red.filter(({ box: [a, y1, b, y2] }) => {
        const w = b - a,
          h = y2 - y1,
          x1 = a + shift * w,
          x2 = b + shift * w;
        return (
          redness(x1 + w / 4, y1 + h / 4, x2 - w / 4, y2 - h / 4) >
          redness(x1 - w / 2, y1 - h / 2, x2 + w / 2, y2 + h / 2, [x1, y1, x2, y2])
        );
      }).length;
    t.ok(redder(0) >= 0.75 * red.length, `${redder(0)} of ${red.length} red fruit redder inside their box than around it`);
    // The same boxes a box and a half to either side: the check above is one a misplaced truth fails.
    for (const shift of [-1.5, 1.5]) t.ok(redder(shift) <= 0.5 * red.length, `moved ${shift} boxes: ${redder(shift)} of ${red.length}`);

    // Seen by a perfect detector, the tracker counts each labelled fruit once.
    const oracle = createOracle(truth, pan.files, decodeFrames as WalkDecoder, NO_NOISE);
    const r = await scoreWalk({
      clips: pan.files,
      detector: oracle.detector,
      decode: oracle.decode,
      options: walkOptionsFrom(optionsFrom({}, { video: true })),
    });
    const expected = oracle.expected('fruit', 2, false, r.frames);
    t.equal(expected.total, truth.fruit.length, 'every fruit is seen well in two scored frames');
    t.equal(r.counts.total, expected.total, 'and counted once');
    t.equal(r.counts.red + r.counts.turning, truth.fruit.filter((f) => f.ripeness === 'red').length, 'the red ones as red');
  });

  t.test('each photo balanced on its own: a magenta-lit photo goes on the wall as under white light', async (t) => {
    const out = mkdtempSync(path.join(tmpdir(), 'cropwalk-pan-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    const gains: Record<string, [number, number, number]> = {};
    for (const balanceEach of [false, true]) {
      const pan = await renderPhotoPan({
        photos: PHOTO_DIR,
        only: ['0307.jpg'],
        out,
        name: `pan-${balanceEach}`,
        fruitPx: 48,
        targetHeight: 360,
        balanceEach,
      });
      const frames = pan.truth.clips[0]!.frames;
      let k = 0;
      let rgb: Uint8Array | undefined;
      // The photo is 479 px wide and sits in the middle of the frame halfway through the pan.
      for await (const f of readAllFrames(pan.files[0]!, pan.truth.width, pan.truth.height)) if (k++ === Math.floor(frames / 2)) rgb = f;
      const w = 400,
        h = 300,
        x0 = Math.round((pan.truth.width - w) / 2),
        y0 = Math.round((pan.truth.height - h) / 2);
      const crop = new Uint8Array(w * h * 3);
      for (let y = 0; y < h; y++)
        crop.set(rgb!.subarray(((y0 + y) * pan.truth.width + x0) * 3, ((y0 + y) * pan.truth.width + x0 + w) * 3), y * w * 3);
      gains[String(balanceEach)] = greyWorld(
        { width: w, height: h, data: crop },
        { maxGreenCorrection: DEFAULT_PARAMS.wbMaxGreenCorrection },
      ).gains;
    }
    t.ok(
      gains.false![0] < 0.6 && gains.false![2] < 0.6,
      `as photographed, magenta: red and blue gains ${gains.false!.map((g) => g.toFixed(2))}`,
    );
    t.ok(
      gains.true!.every((g) => Math.abs(g - 1) < 0.15),
      `balanced: gains ${gains.true!.map((g) => g.toFixed(2))} near 1`,
    );
  });

  t.test('photos that cannot be laid into rows, or not there, are refused by name', async (t) => {
    const out = mkdtempSync(path.join(tmpdir(), 'cropwalk-pan-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    const dir = path.join(out, 'photos');
    mkdirSync(dir);
    copyFileSync(path.join(PHOTO_DIR, '0011.jpg'), path.join(dir, '0001.jpg'));
    copyFileSync(path.join(PHOTO_DIR, '0011.json'), path.join(dir, '0001.json'));
    // The same photo cropped lower, with its labels.
    execFileSync((await requireFfmpeg()).ffmpeg, [
      '-v',
      'error',
      '-i',
      path.join(PHOTO_DIR, '0011.jpg'),
      '-vf',
      'crop=1600:1000:0:0',
      path.join(dir, '0002.jpg'),
    ]);
    const labels = JSON.parse(readFileSync(path.join(PHOTO_DIR, '0011.json'), 'utf8')) as { height: number; fruit: { box: number[] }[] };
    writeFileSync(
      path.join(dir, '0002.json'),
      JSON.stringify({ ...labels, height: 1000, fruit: labels.fruit.filter((f) => f.box[3]! <= 1000) }),
    );
    await t.rejects(
      renderPhotoPan({ photos: dir, out, name: 'x', fruitPx: 48, targetHeight: 360 }),
      /photos of one height are laid into rows: 0002\.jpg/,
    );
    await t.rejects(renderPhotoPan({ photos: dir, only: ['0003.jpg'], out, name: 'x', fruitPx: 48 }), /no labelled photo 0003\.jpg/);
    t.notOk(existsSync(path.join(out, 'x.mp4')), 'no clip written');
  });
}
