import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderStill } from '../../../scripts/render/walk.js';
import { analyseFrame, detectFruit } from '../../../src/vision/builtin/detector.js';
import { DEFAULT_PARAMS } from '../../../src/vision/builtin/params.js';
import { iou } from '../../../src/vision/track/box.js';
import { decodeImage, resolveFfmpeg } from '../../../src/vision/media/index.js';
import type { Box, Detection, RgbImage } from '../../../src/vision/types.js';

// Fruit too small for the working size (params.tinyFruitShare): a row filmed from far enough that
// round tomatoes are about 25 px across in a 1280-px frame, 6 px in radius at the 640-px working
// size, under the analysis's smallest circle. Rendered rows with the truth of every fruit.
const ffmpeg = await resolveFfmpeg();
if (!ffmpeg.available) {
  t.plan(0, `ffmpeg unavailable, tiny-fruit tests skipped: ${ffmpeg.reason}`);
  process.exit(0);
}
const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-tiny-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

async function row(width: number, height: number, viewWidth: number): Promise<{ image: RgbImage; fruit: Box[] }> {
  const { jpeg, truth } = await renderStill({ seed: 5, width, height, viewWidth });
  const file = path.join(dir, `row-${width}-${viewWidth}.jpg`);
  writeFileSync(file, jpeg);
  return { image: await decodeImage(file, { maxLongSide: width }), fruit: truth.fruit.filter((f) => f.visible >= 0.5).map((f) => f.box) };
}

/** Truth fruit (at least half in view) that some detection covers at IoU ≥ 0.3. */
const found = (fruit: readonly Box[], dets: readonly Detection[]) => fruit.filter((b) => dets.some((d) => iou(b, d.box) >= 0.3)).length;
const OFF = { ...DEFAULT_PARAMS, tinyFruitShare: 0 };

t.test("fruit under the working size's reach are looked for again at twice the size, and found", async (t) => {
  const { image, fruit } = await row(1280, 720, 2.9);
  t.ok(fruit.length > 100, `a far view holds many fruit (${fruit.length})`);
  t.equal(analyseFrame(image, DEFAULT_PARAMS).tinyFruit, true, 'the frame takes the finer analysis');
  const coarse = found(fruit, detectFruit(image, 0.5, OFF));
  const fine = found(fruit, detectFruit(image, 0.5, DEFAULT_PARAMS));
  t.ok(coarse < 0.3 * fruit.length, `at 640 px the analysis finds few of them (${coarse} of ${fruit.length})`);
  t.ok(fine > 0.8 * fruit.length, `at 1280 px most (${fine} of ${fruit.length})`);
});

t.test('a frame with no finer pixels, or fruit the analysis resolves, is analysed as before', async (t) => {
  const small = await row(640, 360, 2.9);
  t.equal(analyseFrame(small.image, DEFAULT_PARAMS).tinyFruit, undefined, 'a 640-px frame has nothing finer to give');
  t.same(detectFruit(small.image, 0.5, DEFAULT_PARAMS), detectFruit(small.image, 0.5, OFF));
  const near = await row(1280, 720, 1.2);
  t.equal(analyseFrame(near.image, DEFAULT_PARAMS).smallFruit, true, 'fruit 60 px across at 1280 are small fruit…');
  t.equal(analyseFrame(near.image, DEFAULT_PARAMS).tinyFruit, undefined, '…that the working size resolves');
  t.same(detectFruit(near.image, 0.5, DEFAULT_PARAMS), detectFruit(near.image, 0.5, OFF));
});

t.test('the finer analysis is kept only when it resolves the frame into more fruit', async (t) => {
  const { image } = await row(1280, 720, 2.9);
  const demanding = { ...DEFAULT_PARAMS, tinyFruitGain: 1000 };
  t.equal(analyseFrame(image, demanding).tinyFruit, undefined);
  t.same(
    detectFruit(image, 0.5, demanding),
    detectFruit(image, 0.5, OFF),
    'short of the gain, the frame keeps its first small-fruit analysis',
  );
});
