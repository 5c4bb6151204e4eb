import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRng } from '../../../scripts/render/rng.js';
import { detectFruit } from '../../../src/vision/builtin/detector.js';
import {
  FRUIT_FEATURES,
  FRUIT_SCORE_WEIGHTS,
  fittedFruitScore,
  fruitFeatures,
  type CircleEvidence,
} from '../../../src/vision/builtin/fruit-score.js';
import { DEFAULT_PARAMS } from '../../../src/vision/builtin/params.js';
import { decodeImage, resolveFfmpeg } from '../../../src/vision/media/index.js';
import type { RgbImage } from '../../../src/vision/types.js';

const evidence = (over: Partial<CircleEvidence> = {}): CircleEvidence => ({
  method: 'inscribed',
  explained: 0.8,
  rim: 0.2,
  effectiveRadius: 30,
  sizeFullRadius: 14,
  minRadius: 7,
  source: 'ripe',
  chroma: 60,
  texture: 3,
  relativeL: 10,
  ...over,
});

t.test('the fitted score reads each circle kind in its own columns', async (t) => {
  const q = DEFAULT_PARAMS;
  t.same(Object.keys(FRUIT_SCORE_WEIGHTS).sort(), [...FRUIT_FEATURES].sort(), 'a weight for every feature and no other');
  const x = fruitFeatures(evidence(), q);
  t.equal(x.length, FRUIT_FEATURES.length);
  const col = (name: (typeof FRUIT_FEATURES)[number], v: number[]) => v[FRUIT_FEATURES.indexOf(name)];
  t.equal(col('inscribedExplained', x), 0.8);
  t.equal(col('houghFill', x), 0);
  t.equal(col('hough', x), 0);
  const h = fruitFeatures(evidence({ method: 'hough', explained: 0.7, rim: 0.6 }), q);
  t.equal(col('inscribedExplained', h), 0);
  t.equal(col('houghFill', h), 0.7);
  t.equal(col('houghSupport', h), 0.6);
  t.equal(col('hough', h), 1);
  t.equal(col('size', x), 1, 'size evidence saturates at sizeFullRadius');
  t.equal(col('size', fruitFeatures(evidence({ effectiveRadius: 7 }), q)), 0, 'and is nothing at minRadius');
  t.equal(col('greenSmooth', x), 0, 'green evidence is off for ripe skin');
  t.ok(col('greenSmooth', fruitFeatures(evidence({ source: 'green' }), q))! > 0);
  const s = fittedFruitScore(evidence(), q, FRUIT_SCORE_WEIGHTS);
  t.ok(s > 0 && s < 1);
  // What the fit learned from the photos: a fragment is less likely a fruit than a whole one.
  t.ok(fittedFruitScore(evidence({ effectiveRadius: 9 }), q, FRUIT_SCORE_WEIGHTS) < s, 'a small circle scores below a large one');
});

/** A shaded red fruit on dark leaves, cut into quarters by two stalks crossing in front of it. */
function crossedFruit(): RgbImage {
  const width = 640,
    height = 480,
    cx = 320,
    cy = 240,
    r = 60,
    stalk = 6;
  const data = new Uint8Array(width * height * 3);
  const rng = createRng(3);
  for (let p = 0; p < data.length; p += 3) data.set([40 + rng() * 20, 75 + rng() * 25, 40 + rng() * 15], p);
  for (let y = cy - r; y <= cy + r; y++)
    for (let x = cx - r; x <= cx + r; x++) {
      const dx = (x - cx) / r,
        dy = (y - cy) / r,
        d2 = dx * dx + dy * dy;
      if (d2 > 1) continue;
      const shade = 0.45 + 0.55 * Math.max(0, -0.4 * dx - 0.4 * dy + 0.8 * Math.sqrt(1 - d2));
      data.set([215 * shade, 35 * shade, 25 * shade], (y * width + x) * 3);
    }
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      if (Math.abs(x - cx) < stalk / 2 || Math.abs(y - cy) < stalk / 2)
        if (Math.hypot(x - cx, y - cy) < r * 1.3) data.set([35, 80, 35], (y * width + x) * 3);
    }
  return { width, height, data };
}

t.test(
  'a close-up fruit cut into quarters is one fruit under the fitted score (the default), four under the hand-weighted one',
  async (t) => {
    const img = crossedFruit();
    const whole = (b: readonly number[]) => b[2]! - b[0]! > 100 && b[3]! - b[1]! > 100;
    // The defaults: close-up frames are scored by the fitted score.
    const fitted = detectFruit(img, 0.35);
    t.equal(fitted.length, 1, `fitted: ${fitted.map((d) => d.box.map(Math.round).join(','))}`);
    t.ok(fitted[0] && whole(fitted[0].box), 'its box covers the whole fruit');
    t.equal(fitted[0]?.ripeness, 'red');
    const weighted = detectFruit(img, 0.35, { ...DEFAULT_PARAMS, closeUpScore: 'weighted' });
    t.equal(weighted.length, 4, `weighted: a quarter each (${weighted.map((d) => d.box.map(Math.round).join(',')).join(' | ')})`);
    t.notOk(weighted.some((d) => whole(d.box)));
  },
);

t.test('the shipped close-up example (rendered, not used for the fit) is counted whole under the fitted score', async (t) => {
  const ffmpeg = await resolveFfmpeg();
  if (!ffmpeg.available) {
    t.plan(0, `ffmpeg is not available to decode the example: ${ffmpeg.reason}`);
    return;
  }
  const examples = new URL('../../../examples/', import.meta.url);
  const index = JSON.parse(readFileSync(new URL('index.json', examples), 'utf8')) as {
    examples: Array<{ key: string; file: string; truth: { total: number } }>;
  };
  const example = index.examples.find((e) => e.key === 'row-close')!;
  const img = await decodeImage(fileURLToPath(new URL(example.file, examples)));
  const fitted = detectFruit(img, 0.35).length;
  const weighted = detectFruit(img, 0.35, { ...DEFAULT_PARAMS, closeUpScore: 'weighted' }).length;
  t.ok(Math.abs(fitted - example.truth.total) <= 0.2 * example.truth.total, `fitted: ${fitted} of ${example.truth.total}`);
  t.ok(weighted < 0.5 * example.truth.total, `hand-weighted: ${weighted} of ${example.truth.total}`);
});
