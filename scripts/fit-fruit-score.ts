// Fits the built-in detector's close-up fruit score (src/vision/builtin/fruit-score.ts) on the
// tuning half of the labelled photos: the photos at even positions of the sorted list, as the
// accuracy bench splits them; the odd ones stay unseen for the bench's check half.
//   node --import tsx scripts/fit-fruit-score.ts [--photos ../shared/data/tomato-photos] [--l2 0.01] [--small]
// Prints the weights and the balanced score to paste into fruit-score.ts and params.ts.
// With --small it fits the score of small-fruit frames instead (SMALL_FRUIT_SCORE_WEIGHTS): on the
// tuning photos scaled so that their median labelled fruit is 16, 24 and 32 working px across and
// analysed as small fruit, and on frames of the rendered walks of seeds 1–3 (rendered into
// bench/out when missing). Its knots are chosen on walks, not here (docs/builtin-detector.md).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseCli } from './cli.js';
import { fitLogistic, sigmoid } from './fit/logistic.js';
import { circleEvidence, DEFAULT_PARAMS, detectFruit, type BuiltinParams } from '../src/vision/builtin/index.js';
import { FRUIT_FEATURES, fruitFeatures, type FruitScoreWeights } from '../src/vision/builtin/fruit-score.js';
import { decodeFrames, decodeImage } from '../src/vision/media/index.js';
import { resizeArea } from '../src/vision/image/resize.js';
import { iou } from '../src/vision/track/box.js';
import type { Box, RgbImage } from '../src/vision/types.js';
import { cachedWalk, OUT as RENDERS } from '../bench/scoring-walk.js';
import { sharedPath } from '../test/helpers/shared-data.js';

const USAGE = 'usage: fit-fruit-score.ts [--photos DIR] [--l2 0.01] [--small]';
const values = parseCli(
  {
    options: {
      photos: { type: 'string', default: sharedPath('tomato-photos') },
      l2: { type: 'string', default: '0.01' },
      small: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  },
  USAGE,
);

const dir = values.photos;
if (!existsSync(dir)) {
  console.error(`labelled photos not found at ${dir}\n${USAGE}`);
  process.exit(2);
}
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.jpg'))
  .sort();
const tune = names.filter((_, k) => k % 2 === 0);
const labelsOf = (name: string): Box[] =>
  (JSON.parse(readFileSync(path.join(dir, name.replace(/\.jpg$/, '.json')), 'utf8')) as { fruit: Array<{ box: Box }> }).fruit.map(
    (f) => f.box,
  );
if (values.small) {
  await fitSmall();
  process.exit(0);
}
const fitting: BuiltinParams = { ...DEFAULT_PARAMS, closeUpScore: 'fitted' };
const X: number[][] = [];
const y: number[] = [];
const photos: Array<{ image: RgbImage; labelled: number }> = [];
for (const name of tune) {
  const labels = labelsOf(name);
  // Full resolution, as the bench scores them: the labels' pixel grid.
  const image = await decodeImage(path.join(dir, name), { maxLongSide: 4096 });
  photos.push({ image, labelled: labels.length });
  for (const { evidence, box } of circleEvidence(image, fitting)) {
    X.push(fruitFeatures(evidence, fitting));
    // A circle is a fruit when its box is a labelled fruit's (the bench's match, IoU ≥ 0.3).
    y.push(labels.some((l) => iou(box, l) >= 0.3) ? 1 : 0);
  }
}
const raw = fitLogistic(X, y, { l2: Number(values.l2) });
const weights = Object.fromEntries(FRUIT_FEATURES.map((name, k) => [name, Math.round(raw[k]! * 1000) / 1000])) as FruitScoreWeights;

// The balanced score: where the detector, with these weights and the score read as it is (no
// calibration), finds as many fruit on the tuning photos as are labelled.
const asIs: BuiltinParams = { ...fitting, fruitScoreWeights: weights, fittedBalancedScore: 0.5, calibratedAt: 0.5 };
const labelled = photos.reduce((s, p) => s + p.labelled, 0);
const found = (conf: number) => photos.reduce((s, p) => s + detectFruit(p.image, conf, asIs).length, 0);
let lo = 0.01;
let hi = 0.99;
for (let k = 0; k < 12; k++) {
  const mid = (lo + hi) / 2;
  if (found(mid) > labelled) lo = mid;
  else hi = mid;
}
const balanced = Math.round(((lo + hi) / 2) * 100) / 100;

const positives = y.filter((v) => v === 1).length;
const predicted = X.reduce((s, x) => s + sigmoid(x.reduce((z, v, k) => z + v * raw[k]!, 0)), 0);
console.log(
  `${tune.length} tuning photos, ${X.length} circles, ${positives} on a labelled fruit (fitted mean ${(predicted / X.length).toFixed(3)} vs ${(positives / X.length).toFixed(3)})`,
);
console.log(`${labelled} labelled fruit; ${found(balanced)} found at the balanced score ${balanced}`);
console.log('\nexport const FRUIT_SCORE_WEIGHTS: FruitScoreWeights = {');
for (const name of FRUIT_FEATURES) console.log(`  ${name}: ${weights[name]},`);
console.log('};');
console.log(`\nfittedBalancedScore: ${balanced},`);

/**
 * The small-fruit frames' score. Every frame is analysed as small fruit (the gate's bound out of
 * reach, the finer analysis of tiny fruit off), so each circle is seen as a walk frame would see it.
 * A circle is a fruit when its box is a labelled fruit's (IoU ≥ 0.3); on renders, a fruit under
 * 0.35 in view (the walk benchmark's countable share) is neither, and its circles are left out.
 */
async function fitSmall(): Promise<void> {
  const forced: BuiltinParams = { ...DEFAULT_PARAMS, smallFruitRadius: 1e9, tinyFruitShare: 0 };
  const X: number[][] = [];
  const y: number[] = [];
  const add = (image: RgbImage, labels: readonly Box[], unsure: readonly Box[]) => {
    for (const { evidence, box } of circleEvidence(image, forced)) {
      if (labels.some((l) => iou(box, l) >= 0.3)) y.push(1);
      else if (unsure.some((l) => iou(box, l) >= 0.3)) continue;
      else y.push(0);
      X.push(fruitFeatures(evidence, forced));
    }
  };
  for (const name of tune) {
    const labels = labelsOf(name);
    const full = await decodeImage(path.join(dir, name), { maxLongSide: 4096 });
    const sizes = labels.map((b) => (b[2] - b[0] + b[3] - b[1]) / 2).sort((a, b) => a - b);
    // Walk sizes: 16, 24 and 32 px across at the 640-px working size (32, 48 and 64 px at 1280).
    for (const across of [16, 24, 32]) {
      const k = across / sizes[sizes.length >> 1]!;
      const w = Math.round(full.width * k);
      const h = Math.round(full.height * k);
      const kx = w / full.width;
      const ky = h / full.height;
      add(
        resizeArea(full, w, h),
        labels.map((b) => [b[0] * kx, b[1] * ky, b[2] * kx, b[3] * ky] as Box),
        [],
      );
    }
  }
  const photoRows = X.length;
  for (const seed of [1, 2, 3])
    for (const speed of [0.3, 0.6]) {
      const walk = await cachedWalk(`acc-${seed}-${speed}`, { out: RENDERS, seconds: 20, fps: 15, width: 640, height: 360, speed, seed });
      let n = 0;
      for await (const frame of decodeFrames(walk.files[0]!, { sampleSeconds: 1 })) {
        if (n++ % 2 !== 0) continue;
        const index = Math.round(frame.timeSeconds * walk.truth.fps);
        const labels: Box[] = [];
        const unsure: Box[] = [];
        for (const fruit of walk.truth.fruit)
          for (const a of fruit.appearances)
            if (a.clip === 0 && a.frame === index) (a.visible >= 0.35 ? labels : unsure).push(a.box as Box);
        add(frame.image, labels, unsure);
      }
    }
  const raw = fitLogistic(X, y, { l2: Number(values.l2) });
  const positives = y.filter((v) => v === 1).length;
  console.log(
    `${X.length} circles (${photoRows} of ${tune.length} tuning photos at three sizes, ${X.length - photoRows} of rendered frames), ${positives} on a fruit`,
  );
  console.log('\nexport const SMALL_FRUIT_SCORE_WEIGHTS: FruitScoreWeights = {');
  for (const [k, name] of FRUIT_FEATURES.entries()) console.log(`  ${name}: ${Math.round(raw[k]! * 1000) / 1000},`);
  console.log('};');
}
