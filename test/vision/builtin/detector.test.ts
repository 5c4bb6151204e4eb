import t from 'tap';
import {
  createBuiltinDetector,
  DEFAULT_RIPENESS_THRESHOLDS,
  detectFruit,
  PLANTS_UNSUPPORTED_REASON,
  ripenessFromHue,
  STEMS_UNSUPPORTED_REASON,
} from '../../../src/vision/builtin/index.js';
import { ScaleMemory } from '../../../src/vision/builtin/scale-memory.js';
import { splitBySeeds } from '../../../src/vision/builtin/segment.js';
import { labelComponents } from '../../../src/vision/image/index.js';
import type { Detection, RgbImage } from '../../../src/vision/types.js';
import { stageToRipeness, USDA_STAGES, type UsdaStage } from '../../../scripts/render/truth.js';

/** A leafy background: dark green with deterministic mottling and vein-like streaks. */
function leaves(width: number, height: number): RgbImage {
  let s = 12345;
  const rand = () => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const vein = (x + 2 * y) % 23 < 2 ? 25 : 0;
      const n = rand() * 30;
      const p = (y * width + x) * 3;
      // Leaves over grey-brown substrate, so grey-world balance is mild, as in a real row with paths and pots.
      const leaf = ((x >> 5) + (y >> 5)) % 3 === 0;
      data[p] = (leaf ? 30 : 70) + n * 0.5 + vein;
      data[p + 1] = (leaf ? 70 : 66) + n + vein;
      data[p + 2] = (leaf ? 35 : 58) + n * 0.4;
    }
  return { width, height, data };
}

/** A shaded sphere lit from the upper left, with a small specular highlight. */
function fruit(img: RgbImage, cx: number, cy: number, r: number, rgb: [number, number, number]): void {
  for (let y = Math.floor(cy - r); y <= cy + r; y++)
    for (let x = Math.floor(cx - r); x <= cx + r; x++) {
      const dx = (x - cx) / r;
      const dy = (y - cy) / r;
      const d2 = dx * dx + dy * dy;
      if (d2 > 1 || x < 0 || y < 0 || x >= img.width || y >= img.height) continue;
      const nz = Math.sqrt(1 - d2);
      const shade = 0.45 + 0.55 * Math.max(0, -0.4 * dx - 0.4 * dy + 0.8 * nz);
      const spec = (dx + 0.35) ** 2 + (dy + 0.35) ** 2 < 0.02 ? 1 : 0;
      const p = (y * img.width + x) * 3;
      for (let c = 0; c < 3; c++) img.data[p + c] = spec ? 245 : Math.min(255, rgb[c]! * shade);
    }
}

function bar(img: RgbImage, x0: number, y0: number, w: number, h: number, rgb: [number, number, number]): void {
  for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) img.data.set(rgb, (y * img.width + x) * 3);
}

const RED: [number, number, number] = [215, 35, 25];
const GREEN: [number, number, number] = [150, 200, 95];
const ORANGE: [number, number, number] = [235, 150, 40];

function scene(): RgbImage {
  const img = leaves(400, 300);
  fruit(img, 60, 60, 24, RED);
  fruit(img, 170, 60, 24, GREEN);
  fruit(img, 290, 60, 22, ORANGE);
  // Two touching fruit, one blob in the mask.
  fruit(img, 60, 200, 22, RED);
  fruit(img, 104, 200, 22, RED);
  // A red plant label: long and thin, not a fruit.
  bar(img, 170, 190, 180, 12, RED);
  return img;
}

const inside = (d: Detection, x: number, y: number) => d.box[0] <= x && x <= d.box[2] && d.box[1] <= y && y <= d.box[3];

t.test('finds each fruit once, with its ripeness, and splits touching fruit', async (t) => {
  const detector = createBuiltinDetector();
  const dets = await detector.detect(scene(), { conf: 0.2 });
  const at = (x: number, y: number) => dets.filter((d) => inside(d, x, y));
  for (const [x, y, ripeness] of [
    [60, 60, 'red'],
    [170, 60, 'green'],
    [290, 60, 'turning'],
    [60, 200, 'red'],
    [104, 200, 'red'],
  ] as const) {
    const hits = at(x, y);
    t.equal(hits.length, 1, `one detection over the fruit at ${x},${y}`);
    t.equal(hits[0]?.ripeness, ripeness, `fruit at ${x},${y} is ${ripeness} (hue ${hits[0]?.hue})`);
    const d = hits[0]!;
    const cx = (d.box[0] + d.box[2]) / 2;
    const cy = (d.box[1] + d.box[3]) / 2;
    t.ok(Math.hypot(cx - x, cy - y) < 8, `box centred on the fruit (${cx.toFixed(0)},${cy.toFixed(0)})`);
    const side = d.box[2] - d.box[0];
    t.ok(side > 30 && side < 75, `box size fits a ~46 px fruit: ${side.toFixed(0)}`);
  }
  t.equal(dets.filter((d) => d.box[0] > 150 && d.box[1] > 160).length, 0, 'the thin red bar is not a fruit');
  t.equal(dets.length, 5, 'nothing on the leaves');
  for (const d of dets) {
    t.equal(d.kind, 'fruit');
    t.ok(d.score >= 0.2 && d.score <= 1);
  }
});

t.test('conf is a threshold on score', async (t) => {
  const img = scene();
  const all = detectFruit(img, 0);
  const strict = detectFruit(img, 0.7);
  t.ok(all.length >= strict.length);
  t.ok(strict.every((d) => d.score >= 0.7));
  t.same(
    detectFruit(img, 1.0).filter((d) => d.score < 1),
    [],
  );
  t.throws(() => detectFruit(img, 1.5), RangeError);
});

t.test('degenerate frames give no fruit and do not throw', async (t) => {
  const detector = createBuiltinDetector();
  t.same(await detector.detect({ width: 1, height: 1, data: new Uint8Array(3) }, { conf: 0 }), []);
  t.same(await detector.detect({ width: 200, height: 100, data: new Uint8Array(200 * 100 * 3) }, { conf: 0 }), [], 'black frame');
  t.same(await detector.detect({ width: 200, height: 100, data: new Uint8Array(200 * 100 * 3).fill(255) }, { conf: 0 }), [], 'white frame');
  t.same(await detector.detect(leaves(320, 240), { conf: 0.35 }), [], 'only leaves');
});

t.test('a large frame is analysed at the working size and boxes come back in its pixels', async (t) => {
  // The same scene at 3× size: detections scale with it.
  const small = scene();
  const big: RgbImage = { width: 1200, height: 900, data: new Uint8Array(1200 * 900 * 3) };
  for (let y = 0; y < 900; y++)
    for (let x = 0; x < 1200; x++)
      big.data.set(
        small.data.subarray(((y / 3) | 0) * 400 * 3 + ((x / 3) | 0) * 3, ((y / 3) | 0) * 400 * 3 + ((x / 3) | 0) * 3 + 3),
        (y * 1200 + x) * 3,
      );
  const dets = detectFruit(big, 0.2);
  for (const [x, y, ripeness] of [
    [180, 180, 'red'],
    [510, 180, 'green'],
    [870, 180, 'turning'],
    [180, 600, 'red'],
    [312, 600, 'red'],
  ] as const) {
    const hits = dets.filter((d) => inside(d, x, y));
    t.equal(hits.length, 1, `one detection at ${x},${y}`);
    t.equal(hits[0]?.ripeness, ripeness);
    const side = hits[0] ? hits[0].box[2] - hits[0].box[0] : 0;
    t.ok(side > 100 && side < 220, `box in full-frame pixels: ${side.toFixed(0)}`);
  }
  t.ok(dets.every((d) => d.box[2] <= 1200 && d.box[3] <= 900));
  // Known limit (docs/builtin-detector.md): at this size the red bar is 19 px wide in the working
  // frame, wide enough to be read as a chain of fruit; its pieces score lower than real fruit.
  const onBar = dets.filter((d) => d.box[1] > 480 && (d.box[0] + d.box[2]) / 2 > 500);
  const fruitScores = dets.filter((d) => !onBar.includes(d)).map((d) => d.score);
  t.ok(
    onBar.every((d) => d.score < Math.min(...fruitScores)),
    'bar pieces score below every fruit',
  );
});

t.test('ripeness thresholds on the CIELAB hue angle', async (t) => {
  const { greenFrom, turningFrom } = DEFAULT_RIPENESS_THRESHOLDS;
  t.equal(ripenessFromHue(35), 'red', 'sRGB-red-like skin');
  t.equal(ripenessFromHue(turningFrom - 0.1), 'red');
  t.equal(ripenessFromHue(turningFrom), 'turning');
  t.equal(ripenessFromHue(greenFrom - 0.1), 'turning');
  t.equal(ripenessFromHue(greenFrom), 'green');
  t.equal(ripenessFromHue(120), 'green');
  t.equal(ripenessFromHue(355), 'red', 'just below 360° is red under a magenta cast');
});

t.test("the hue bounds and the renderer's truth group the USDA stages the same way", async (t) => {
  // Each stage's hue band at the circumference, from the colorimetry study the bounds follow
  // within a degree (100° and 65° against its 101° and 64°; docs/builtin-detector.md, ripeness
  // section); green has no upper end and red no lower.
  const bands: Record<UsdaStage, [number, number]> = {
    green: [114, 140],
    breaker: [101, 114],
    turning: [85, 101],
    pink: [64, 85],
    light_red: [36, 64],
    red: [10, 36],
  };
  for (const stage of USDA_STAGES) {
    const [lo, hi] = bands[stage];
    for (const hue of [lo + 1.5, (lo + hi) / 2, hi - 1.5]) t.equal(ripenessFromHue(hue), stageToRipeness(stage), `${stage} at ${hue}°`);
  }
  t.same(
    USDA_STAGES.map(stageToRipeness),
    ['green', 'green', 'turning', 'turning', 'red', 'red'],
    'green and breakers, turning and pink, light red and red',
  );
});

t.test('the detector says it does not count stems or plants, and why', async (t) => {
  const { info } = createBuiltinDetector();
  t.match(info, { name: 'builtin-colour', kind: 'builtin', stems: { supported: false }, plants: { supported: false } });
  t.equal(info.stems.reason, STEMS_UNSUPPORTED_REASON);
  t.equal(info.plants.reason, PLANTS_UNSUPPORTED_REASON);
});

t.test('skin grown round touching fruit is cut between their seeds', async (t) => {
  const w = 60;
  const h = 30;
  const mask = new Uint8Array(w * h);
  const seeds = new Uint8Array(w * h);
  // Two discs of radius 10 overlapping by 4 px: one blob. Each has its own lit core (seed).
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      if (Math.hypot(x - 20, y - 15) <= 10 || Math.hypot(x - 36, y - 15) <= 10) mask[y * w + x] = 1;
      if (Math.hypot(x - 18, y - 13) <= 5 || Math.hypot(x - 34, y - 13) <= 5) seeds[y * w + x] = 1;
    }
  t.equal(labelComponents(mask, w, h).components.length, 1, 'one blob before');
  const cut = splitBySeeds(mask, seeds, w, h, Math.PI * 4 * 4);
  const parts = labelComponents(cut, w, h).components.sort((a, b) => a.cx - b.cx);
  t.equal(parts.length, 2, 'two after');
  t.ok(parts[0]!.maxX <= 28 && parts[1]!.minX >= 28, `the seam lies between them: ${parts[0]!.maxX}, ${parts[1]!.minX}`);
  t.same(splitBySeeds(mask, seeds, w, h, Math.PI * 6 * 6), mask, 'seeds below the least size cut nothing');
});

t.test('the scale memory says small fruit only after most recent frames of that size were', async (t) => {
  const m = new ScaleMemory(6);
  t.equal(m.smallLikely(640, 360), false, 'nothing seen yet');
  m.record(640, 360, true);
  m.record(640, 360, true);
  t.equal(m.smallLikely(640, 360), false, 'two frames are too few to tell');
  m.record(640, 360, false);
  t.equal(m.smallLikely(640, 360), true, 'two of three');
  t.equal(m.smallLikely(1600, 1200), false, 'another size (a photo between clips) has its own memory');
  for (let k = 0; k < 4; k++) m.record(640, 360, false);
  t.equal(m.smallLikely(640, 360), false, 'only the last six frames count');
});
