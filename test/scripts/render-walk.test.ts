// The synthetic-walk renderer: real ffmpeg encodes, and the truth must match the pixels.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { renderStill, renderWalk } from '../../scripts/render/walk.js';
import type { WalkTruth } from '../../scripts/render/truth.js';
import { readAllFrames } from '../../scripts/render/ffmpeg.js';
import type { RgbImage } from '../../src/vision/types.js';
import { resolveFfmpeg } from '../../src/vision/media/index.js';

const ffmpeg = await resolveFfmpeg();
if (!ffmpeg.available) {
  t.plan(0, `ffmpeg is not available here, rendered-walk tests skipped: ${ffmpeg.reason}`);
  process.exit(0);
}

function meanRgb(img: RgbImage, cx: number, cy: number, r: number): [number, number, number] {
  const s = [0, 0, 0];
  let n = 0;
  for (let y = Math.round(cy - r); y <= Math.round(cy + r); y++)
    for (let x = Math.round(cx - r); x <= Math.round(cx + r); x++) {
      const p = (y * img.width + x) * 3;
      s[0] += img.data[p]!;
      s[1] += img.data[p + 1]!;
      s[2] += img.data[p + 2]!;
      n++;
    }
  return [s[0]! / n, s[1]! / n, s[2]! / n];
}

t.test('a walk is a real mp4 whose truth boxes sit on fruit of the right colour', async (t) => {
  const dir = t.testdir();
  const r = await renderWalk({ out: dir, seconds: 2, fps: 15, width: 640, height: 360, speed: 0.3, seed: 3 });
  t.equal(r.files.length, 1);
  const truth = JSON.parse(await readFile(r.truthFile, 'utf8')) as WalkTruth;
  t.same(truth, JSON.parse(JSON.stringify(r.truth)), 'truth file is what renderWalk returned');
  t.equal(truth.clips[0]!.frames, 30);
  t.ok(truth.fruit.length > 20, `${truth.fruit.length} fruit in view`);
  for (const cls of ['green', 'turning', 'red'] as const)
    t.ok(
      truth.fruit.some((f) => f.ripeness === cls),
      `some ${cls} fruit`,
    );
  t.ok(truth.stems.length >= 3 && truth.plants.length >= 3);
  t.ok(Math.abs(truth.mmPerPixel - 1200 / 640) < 1e-9);

  const frames: Uint8Array[] = [];
  for await (const f of readAllFrames(r.files[0]!, 640, 360)) frames.push(f);
  t.equal(frames.length, 30, 'every rendered frame is in the mp4');

  // Well-visible fruit in frame 15 must show their class colour where the truth puts them.
  const img: RgbImage = { width: 640, height: 360, data: frames[15]! };
  let checked = 0;
  for (const f of truth.fruit) {
    const a = f.appearances.find((x) => x.frame === 15);
    // Turning fruit, and breakers (yellowish green), sit between the two colours.
    if (!a || a.visible < 0.95 || f.ripeness === 'turning' || f.stage === 'breaker') continue;
    const [x1, y1, x2, y2] = a.box;
    const [R, G] = meanRgb(img, (x1 + x2) / 2 + 2, (y1 + y2) / 2 + 2, 2);
    if (f.ripeness === 'red') t.ok(R > G + 60, `red fruit ${f.id} looks red (${R.toFixed(0)},${G.toFixed(0)})`);
    else t.ok(G > R, `green fruit ${f.id} looks green (${R.toFixed(0)},${G.toFixed(0)})`);
    checked++;
  }
  t.ok(checked >= 5, `checked ${checked} fruit against pixels`);
});

t.test('clips are consecutive stretches of one row with one truth', async (t) => {
  const dir = t.testdir();
  const one = await renderWalk({ out: dir, name: 'one', seconds: 3, fps: 10, width: 320, height: 180, seed: 5 });
  const three = await renderWalk({ out: dir, name: 'three', seconds: 3, fps: 10, width: 320, height: 180, seed: 5, clips: 3 });
  t.same(
    three.files.map((f) => f.slice(dir.length + 1)),
    ['three-1.mp4', 'three-2.mp4', 'three-3.mp4'],
  );
  t.same(
    three.truth.clips.map((c) => [c.startSeconds, c.frames]),
    [
      [0, 10],
      [1, 10],
      [2, 10],
    ],
  );
  t.same(
    three.truth.fruit.map((f) => f.id),
    one.truth.fruit.map((f) => f.id),
    'the same fruit are seen',
  );
  // Appearance k of the one-clip walk is frame (k mod 10) of clip floor(k/10).
  const f0 = one.truth.fruit[0]!;
  const g0 = three.truth.fruit[0]!;
  t.same(
    g0.appearances.map((a) => a.clip * 10 + a.frame),
    f0.appearances.map((a) => a.frame),
  );
  t.same(
    g0.appearances.map((a) => a.box),
    f0.appearances.map((a) => a.box),
  );
});

t.test('seeds are reproducible and distinct; dark walks are dark', async (t) => {
  const dir = t.testdir();
  const a = await renderWalk({ out: dir, name: 'a', seconds: 0.5, fps: 10, width: 320, height: 180, seed: 7 });
  const b = await renderWalk({ out: dir, name: 'b', seconds: 0.5, fps: 10, width: 320, height: 180, seed: 7 });
  const c = await renderWalk({ out: dir, name: 'c', seconds: 0.5, fps: 10, width: 320, height: 180, seed: 8 });
  t.same(a.truth.fruit, b.truth.fruit);
  t.notSame(
    a.truth.fruit.map((f) => f.x),
    c.truth.fruit.map((f) => f.x),
  );
  const d = await renderWalk({ out: dir, name: 'd', seconds: 0.5, fps: 10, width: 320, height: 180, seed: 7, dark: true, blur: 1 });
  const mean = async (file: string) => {
    for await (const f of readAllFrames(file, 320, 180)) return f.reduce((s, v) => s + v, 0) / f.length;
    return NaN;
  };
  const bright = await mean(a.files[0]!);
  const dark = await mean(d.files[0]!);
  t.ok(dark < bright * 0.5, `dark mean ${dark.toFixed(0)} vs ${bright.toFixed(0)}`);
});

t.test('still photos are JPEGs with their fruit', async (t) => {
  const { jpeg, truth } = await renderStill({ seed: 2, width: 640, height: 480 });
  t.same([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff], 'JPEG magic');
  t.ok(truth.fruit.length > 10);
  t.ok(truth.fruit.every((f) => f.box[0] >= 0 && f.box[2] <= 640 && f.box[1] >= 0 && f.box[3] <= 480));
});

/** Luma of a box's centre (within 0.3 of its half-side) less that of its ring (0.45–0.75): how steeply a fruit is lit. */
function shadingStep(img: RgbImage, box: readonly number[]): { step: number; mean: number } {
  const cx = (box[0]! + box[2]!) / 2,
    cy = (box[1]! + box[3]!) / 2,
    r = Math.min(box[2]! - box[0]!, box[3]! - box[1]!) / 2;
  let centre = 0,
    nc = 0,
    ring = 0,
    nr = 0,
    all = 0,
    na = 0;
  for (let y = Math.floor(cy - r); y <= cy + r; y++)
    for (let x = Math.floor(cx - r); x <= cx + r; x++) {
      if (x < 0 || y < 0 || x >= img.width || y >= img.height) continue;
      const p = (y * img.width + x) * 3;
      const luma = 0.2126 * img.data[p]! + 0.7152 * img.data[p + 1]! + 0.0722 * img.data[p + 2]!;
      const q = Math.hypot(x - cx, y - cy) / r;
      if (q <= 1) {
        all += luma;
        na++;
      }
      if (q <= 0.3) {
        centre += luma;
        nc++;
      } else if (q >= 0.45 && q <= 0.75) {
        ring += luma;
        nr++;
      }
    }
  return { step: centre / nc - ring / nr, mean: all / na };
}

t.test('greenhouse lighting shades each fruit its own way, softly, in the same scene and colours', async (t) => {
  const dir = t.testdir();
  const options = { seconds: 1, fps: 15, width: 640, height: 360, speed: 0.3, seed: 3 };
  const studio = await renderWalk({ ...options, out: dir, name: 'studio' });
  const greenhouse = await renderWalk({ ...options, out: dir, name: 'greenhouse', lighting: 'greenhouse' });
  t.same(greenhouse.truth.fruit, studio.truth.fruit, 'the same fruit, where they were');
  const frame = async (file: string) => {
    let k = 0;
    for await (const f of readAllFrames(file, 640, 360)) if (k++ === 7) return { width: 640, height: 360, data: f } as RgbImage;
    throw new Error('frame 7 missing');
  };
  const [a, b] = [await frame(studio.files[0]!), await frame(greenhouse.files[0]!)];
  const steps = { studio: [] as number[], greenhouse: [] as number[] };
  let meanA = 0,
    meanB = 0,
    redOk = 0,
    reds = 0;
  for (const f of studio.truth.fruit) {
    const app = f.appearances.find((x) => x.frame === 7);
    if (!app || app.visible < 0.95) continue;
    const sa = shadingStep(a, app.box),
      sb = shadingStep(b, app.box);
    steps.studio.push(sa.step);
    steps.greenhouse.push(sb.step);
    meanA += sa.mean;
    meanB += sb.mean;
    if (f.ripeness === 'red') {
      reds++;
      const [R, G] = meanRgb(b, (app.box[0] + app.box[2]) / 2, (app.box[1] + app.box[3]) / 2, 2);
      if (R > G + 60) redOk++;
    }
  }
  const median = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;
  t.ok(steps.studio.length >= 10, `${steps.studio.length} fruit wholly in view`);
  // Studio light: every fruit bright in the middle and dark at the rim. The labelled photos' fruit:
  // a median step of 2–9 luma levels, a third to nearly half of them darker in the middle.
  t.ok(median(steps.studio) > 25, `studio median step ${median(steps.studio).toFixed(1)}`);
  t.ok(Math.min(...steps.studio) > 0, 'studio: no fruit darker in the middle');
  t.ok(median(steps.greenhouse) < 15, `greenhouse median step ${median(steps.greenhouse).toFixed(1)}`);
  t.ok(steps.greenhouse.filter((s) => s < 0).length >= 0.1 * steps.greenhouse.length, 'greenhouse: some fruit darker in the middle');
  // The skin colours were calibrated under the studio light: the fruit stay as bright on average.
  t.ok(Math.abs(meanB / meanA - 1) < 0.1, `mean fruit luma ratio ${(meanB / meanA).toFixed(3)}`);
  t.ok(reds > 0 && redOk === reds, `red fruit look red (${redOk} of ${reds})`);
});
