// One circle on one fruit: the luma dip between two overlapping detections' centres.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderStill } from '../../../scripts/render/walk.js';
import { detectFruit } from '../../../src/vision/builtin/detector.js';
import { DEFAULT_PARAMS } from '../../../src/vision/builtin/params.js';
import { dropSeamlessTwins, seamDepth } from '../../../src/vision/builtin/seam.js';
import { decodeImage, resolveFfmpeg } from '../../../src/vision/media/index.js';
import { iou } from '../../../src/vision/track/box.js';
import type { Box, Detection, RgbImage } from '../../../src/vision/types.js';

const W = 200;
const H = 120;

/** Fruit drawn back to front as lit spheres (brightest at the centre, falling to `rim` at the edge) on a leaf-grey ground. */
function scene(fruit: { cx: number; cy: number; r: number; rim: number }[]): RgbImage {
  const data = new Uint8Array(W * H * 3).fill(60);
  for (const f of fruit) {
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const d = Math.hypot(x - f.cx, y - f.cy) / f.r;
        if (d > 1) continue;
        const v = Math.round(220 - (220 - f.rim) * d * d);
        const p = (y * W + x) * 3;
        data[p] = v;
        data[p + 1] = Math.round(v * 0.3);
        data[p + 2] = Math.round(v * 0.2);
      }
  }
  return { width: W, height: H, data };
}
const box = (cx: number, cy: number, r: number): Box => [cx - r, cy - r, cx + r, cy + r];
const fruit = (b: Box, score: number): Detection => ({ kind: 'fruit', box: b, score, ripeness: 'red' });
const RULE = { minIou: 0.15, maxDepth: 10 };

t.test('two boxes on one fruit have no seam between them; two fruit, one half behind the other, have one', async (t) => {
  const one = scene([{ cx: 100, cy: 60, r: 30, rim: 120 }]);
  const a = box(100, 60, 30);
  const b = box(112, 60, 22); // a smaller circle on the same fruit
  t.ok(seamDepth(one, a, b) < 5, `one fruit: ${seamDepth(one, a, b).toFixed(1)}`);
  const two = scene([
    { cx: 125, cy: 60, r: 30, rim: 120 },
    { cx: 85, cy: 60, r: 30, rim: 120 },
  ]);
  const front = box(85, 60, 30);
  const back = box(125, 60, 30);
  t.ok(seamDepth(two, front, back) > 20, `two fruit: ${seamDepth(two, front, back).toFixed(1)}`);
  t.equal(seamDepth(two, front, back), seamDepth(two, back, front), 'the dip does not depend on which box comes first');
});

t.test('softly lit fruit still show the dip where they meet', async (t) => {
  // Real fruit are lit far more evenly than rendered ones (centre to ring a median 10-12 levels):
  // the dip is the nearer fruit's rim and the crease, not the shading.
  const two = scene([
    { cx: 125, cy: 60, r: 30, rim: 200 },
    { cx: 85, cy: 60, r: 30, rim: 200 },
  ]);
  for (let y = 0; y < H; y++) {
    // the crease between them, two pixels of shadow along the front fruit's rim
    for (const x of [114, 115]) {
      const p = (y * W + x) * 3;
      if (Math.abs(y - 60) < 26) two.data[p] = two.data[p + 1] = two.data[p + 2] = 70;
    }
  }
  t.ok(seamDepth(two, box(85, 60, 30), box(125, 60, 30)) >= 10);
  const one = scene([{ cx: 100, cy: 60, r: 30, rim: 200 }]);
  t.ok(seamDepth(one, box(100, 60, 30), box(88, 60, 22)) < 10);
});

t.test('of two detections on one fruit the lower-scored goes; two fruit, other kinds and distant boxes stay', async (t) => {
  const img = scene([
    { cx: 60, cy: 60, r: 30, rim: 120 },
    { cx: 150, cy: 60, r: 25, rim: 120 },
    { cx: 185, cy: 60, r: 25, rim: 120 },
  ]);
  const whole = fruit(box(60, 60, 30), 0.9);
  const second = fruit(box(70, 60, 22), 0.6);
  const left = fruit(box(150, 60, 25), 0.7);
  const right = fruit(box(185, 60, 25), 0.8);
  const stem: Detection = { kind: 'stem', box: box(66, 60, 24), score: 0.5 };
  t.ok(seamDepth(img, left.box, right.box) >= 10, 'the pair of fruit has a seam');
  const out = dropSeamlessTwins([second, whole, stem, left, right], img, RULE);
  t.same(out, [whole, stem, left, right], 'the second box of the first fruit is dropped, the order kept');
  t.same(dropSeamlessTwins([second, whole], img, { minIou: 0.15, maxDepth: 0 }), [second, whole], 'no dip is under 0');
  t.same(dropSeamlessTwins([second, whole], img, { minIou: 0, maxDepth: 10 }), [second, whole], 'minIou 0 turns the rule off');
  t.same(
    dropSeamlessTwins([second, whole], img, { minIou: 0.8, maxDepth: 10 }),
    [second, whole],
    'pairs overlapping less than minIou are not read',
  );
});

t.test('a dropped detection drops nothing else, and boxes at the frame edge are read inside it', async (t) => {
  const img = scene([{ cx: 10, cy: 60, r: 30, rim: 120 }]);
  const a = fruit(box(10, 60, 30), 0.9);
  const b = fruit(box(2, 60, 26), 0.8); // partly outside the frame
  const c = fruit(box(-4, 60, 22), 0.7);
  t.ok(Number.isFinite(seamDepth(img, a.box, c.box)));
  t.same(dropSeamlessTwins([a, b, c], img, RULE), [a], 'both weaker boxes on the fruit go');
});

t.test('in the detector: off by default; when on, it drops only a weaker twin with no seam, and keeps the fruit found', async (t) => {
  const ffmpeg = await resolveFfmpeg();
  if (!ffmpeg.available) {
    t.plan(0, `ffmpeg unavailable, the detector's frames cannot be rendered: ${ffmpeg.reason}`);
    return;
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-seam-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const on = { ...DEFAULT_PARAMS, seamMinIou: 0.15, seamMaxDepth: 10 };
  let dropped = 0;
  for (const [seed, at] of [
    [1, 1.5],
    [4, 0.5],
    [6, 1.5],
  ] as const) {
    const { jpeg, truth } = await renderStill({ seed, width: 640, height: 360, at });
    const file = path.join(dir, `${seed}-${at}.jpg`);
    writeFileSync(file, jpeg);
    const image = await decodeImage(file, { maxLongSide: 640 });
    const without = detectFruit(image, 0.5, { ...DEFAULT_PARAMS, seamMinIou: 0 });
    t.same(detectFruit(image, 0.5), without, `seed ${seed}: the default leaves every detection`);
    const withRule = detectFruit(image, 0.5, on);
    const key = (d: Detection) => `${d.score}:${d.box.join(',')}`;
    const kept = new Set(withRule.map(key));
    const gone = without.filter((d) => !kept.has(key(d)));
    t.equal(withRule.length + gone.length, without.length, `seed ${seed}: the rule only removes`);
    for (const d of gone) {
      const twin = withRule.find((k) => k.score >= d.score && iou(k.box, d.box) >= 0.15 && seamDepth(image, k.box, d.box) < 10);
      t.ok(twin, `seed ${seed}: a dropped box (score ${d.score}) has a stronger twin with no seam`);
    }
    const seen = truth.fruit.filter((f) => f.visible >= 0.5).map((f) => f.box);
    const found = (dets: Detection[]) => seen.filter((b) => dets.some((d) => iou(b, d.box) >= 0.3)).length;
    t.equal(found(withRule), found(without), `seed ${seed}: every fruit found without the rule is found with it`);
    dropped += gone.length;
  }
  t.ok(dropped >= 2, `boxes dropped on these rendered frames: ${dropped}`);
});
