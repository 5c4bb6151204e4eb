// Fits the built-in detector's close-up fruit score (src/scoring/builtin/fruit-score.ts) on the
// tuning half of the labelled photos: the photos at even positions of the sorted list, as the
// accuracy bench splits them; the odd ones stay unseen for the bench's check half.
//   node --import tsx scripts/fit-fruit-score.ts [--photos ../shared/data/tomato-photos] [--l2 0.01]
// Prints the weights and the balanced score to paste into fruit-score.ts and params.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from './cli.js';
import { fitLogistic, sigmoid } from './fit/logistic.js';
import { circleEvidence, DEFAULT_PARAMS, detectFruit, type BuiltinParams } from '../src/scoring/builtin/index.js';
import { FRUIT_FEATURES, fruitFeatures, type FruitScoreWeights } from '../src/scoring/builtin/fruit-score.js';
import { decodeImage } from '../src/scoring/media/index.js';
import { iou } from '../src/scoring/track/box.js';
import type { Box, RgbImage } from '../src/scoring/types.js';

const USAGE = 'usage: fit-fruit-score.ts [--photos DIR] [--l2 0.01]';
const values = parseCli(
  {
    options: {
      photos: { type: 'string', default: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../shared/data/tomato-photos') },
      l2: { type: 'string', default: '0.01' },
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
const names = readdirSync(dir).filter((f) => f.endsWith('.jpg')).sort();
const tune = names.filter((_, k) => k % 2 === 0);
const fitting: BuiltinParams = { ...DEFAULT_PARAMS, closeUpScore: 'fitted' };
const X: number[][] = [];
const y: number[] = [];
const photos: Array<{ image: RgbImage; labelled: number }> = [];
for (const name of tune) {
  const labels = (JSON.parse(readFileSync(path.join(dir, name.replace(/\.jpg$/, '.json')), 'utf8')) as { fruit: Array<{ box: Box }> }).fruit.map((f) => f.box);
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
console.log(`${tune.length} tuning photos, ${X.length} circles, ${positives} on a labelled fruit (fitted mean ${(predicted / X.length).toFixed(3)} vs ${(positives / X.length).toFixed(3)})`);
console.log(`${labelled} labelled fruit; ${found(balanced)} found at the balanced score ${balanced}`);
console.log('\nexport const FRUIT_SCORE_WEIGHTS: FruitScoreWeights = {');
for (const name of FRUIT_FEATURES) console.log(`  ${name}: ${weights[name]},`);
console.log('};');
console.log(`\nfittedBalancedScore: ${balanced},`);
