import t from 'tap';
import { analyseFrame, detectAll } from '../../../src/vision/builtin/detector.js';
import { DEFAULT_PARAMS } from '../../../src/vision/builtin/index.js';
import { ScaleMemory, smallFruitGate } from '../../../src/vision/builtin/scale-memory.js';
import type { RgbImage } from '../../../src/vision/types.js';

// The walk-scale memory must hold through a run of frames where touching small fruit merged into
// one large circle in the close-up analysis (seed 17 of the rendered walks: 7 such frames in a row,
// one circle of 27.9–29.9 px among small ones), and still let go when the walker films close.
const W = 640;
const H = 360;
const P = DEFAULT_PARAMS;

/** One walk frame through the gate and the memory, as detectAll does; answers whether it was small. */
function step(m: ScaleMemory, radii: number[]): boolean {
  const small = smallFruitGate(radii, m.smallLikely(W, H), P);
  m.record(W, H, small);
  return small;
}
const SMALL_FRAME = [14.2, 13.7, 12.9, 11.8, 10.4];
const CLUMP_FRAMES = [[29.8], [29.2], [29.1], [27.9, 14.1, 13.2, 12.0], [29.8, 13.5], [27.9, 14.0], [29.7, 13.9, 12.2]];
const CLOSE_UP = [38.1, 23.1, 22.9, 20.6, 14.3]; // a close view: several fruit of close-up size

t.test('a walk of small fruit stays small through a run of clumps', async (t) => {
  const m = new ScaleMemory();
  for (let k = 0; k < 6; k++) t.ok(step(m, SMALL_FRAME), 'small-fruit frame');
  CLUMP_FRAMES.forEach((radii, k) => {
    t.ok(step(m, radii), `clump frame ${k + 1} (largest ${radii[0]} px) analysed as small fruit`);
    t.ok(m.smallLikely(W, H), `memory still holds after clump frame ${k + 1}`);
  });
  t.ok(step(m, [25.0, 23.4, 14]), 'two 23–25 px circles of one clump (under the scene bound): small');
  t.ok(m.smallLikely(W, H));
});

t.test('the memory lets go for a real close-up sequence', async (t) => {
  const m = new ScaleMemory();
  for (let k = 0; k < 10; k++) step(m, SMALL_FRAME);
  t.ok(m.smallLikely(W, H));
  for (let k = 0; k < 3; k++) t.notOk(step(m, CLOSE_UP), `close-up frame ${k + 1} gets the close-up analysis`);
  t.notOk(m.smallLikely(W, H), 'three close-up frames of the last six: the memory lets go');
  t.notOk(step(m, [27.7, 21.3, 19.1]), 'then the plain gate: one fruit of 27.7 px is a close-up');

  const one = new ScaleMemory();
  for (let k = 0; k < 10; k++) step(one, SMALL_FRAME);
  t.notOk(step(one, [87.8, 12]), 'one fruit filling the frame (twice the small-fruit bound or more) is a close-up at once');
});

t.test("without a memory (photos, a walk's first frames) the gate is the plain bound", async (t) => {
  t.notOk(smallFruitGate([22.4, 20.7], false, P), 'largest 22.4 px: close-up');
  t.notOk(smallFruitGate([29.8], false, P), 'a single large circle: close-up');
  t.ok(smallFruitGate([21.0, 14], false, P), 'under 21.5 px: small fruit');
  t.ok(smallFruitGate([], false, P), 'nothing confident: small fruit');
});

// The same through the detector, on drawn frames: red discs with a shading on a leafy green.
function scene(discs: Array<[number, number, number]>): RgbImage {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let c = [60 + ((x * 7 + y * 13) % 17), 110 + ((x * 5 + y * 3) % 23), 50];
      for (const [cx, cy, r] of discs) {
        const d = Math.hypot(x - cx, y - cy);
        if (d <= r) {
          const s = 1 - 0.35 * (d / r) ** 2;
          c = [Math.round(200 * s), Math.round(35 * s), Math.round(30 * s)];
        }
      }
      data.set(c, (y * W + x) * 3);
    }
  return { width: W, height: H, data };
}
const smalls: Array<[number, number, number]> = [];
for (let k = 0; k < 12; k++) smalls.push([40 + (k % 6) * 100, 60 + Math.floor(k / 6) * 220, 12]);
const smallFrame = scene(smalls);
const clumpFrame = scene([...smalls, [300, 180, 29]]); // one 29 px blob among 12 px fruit
const closeFrame = scene([
  [150, 180, 45],
  [320, 180, 40],
  [480, 170, 42],
]);

t.test('through the detector: clumps do not end the walk scale, close-ups do', async (t) => {
  t.notOk(analyseFrame(clumpFrame, P, false).smallFruit, 'alone (no memory) the clump frame is taken for a close-up');
  t.ok(analyseFrame(clumpFrame, P, true).smallFruit, 'after small-fruit frames it is analysed as small fruit');
  t.notOk(analyseFrame(closeFrame, P, true).smallFruit, 'a close view stays a close-up after small-fruit frames');

  const m = new ScaleMemory();
  for (let k = 0; k < 4; k++) detectAll(smallFrame, 0.5, P, undefined, null, m);
  t.ok(m.smallLikely(W, H), 'small fruit remembered');
  for (let k = 0; k < 6; k++) detectAll(clumpFrame, 0.5, P, undefined, null, m);
  t.ok(m.smallLikely(W, H), 'six clump frames in a row: the memory holds');
  for (let k = 0; k < 3; k++) detectAll(closeFrame, 0.5, P, undefined, null, m);
  t.notOk(m.smallLikely(W, H), 'three close-up frames: it lets go');
});
