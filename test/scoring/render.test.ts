// The synthetic-walk renderer: real ffmpeg encodes, and the truth must match the pixels.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { renderStill, renderWalk } from '../../scripts/render/walk.js';
import type { WalkTruth } from '../../scripts/render/truth.js';
import { readAllFrames } from '../../scripts/render/ffmpeg.js';
import type { RgbImage } from '../../src/scoring/types.js';
import { resolveFfmpeg } from '../../src/scoring/media/index.js';

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
      s[0] += img.data[p]!; s[1] += img.data[p + 1]!; s[2] += img.data[p + 2]!; n++;
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
  for (const cls of ['green', 'turning', 'red'] as const) t.ok(truth.fruit.some((f) => f.ripeness === cls), `some ${cls} fruit`);
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
  t.same(three.files.map((f) => f.slice(dir.length + 1)), ['three-1.mp4', 'three-2.mp4', 'three-3.mp4']);
  t.same(three.truth.clips.map((c) => [c.startSeconds, c.frames]), [[0, 10], [1, 10], [2, 10]]);
  t.same(three.truth.fruit.map((f) => f.id), one.truth.fruit.map((f) => f.id), 'the same fruit are seen');
  // Appearance k of the one-clip walk is frame (k mod 10) of clip floor(k/10).
  const f0 = one.truth.fruit[0]!;
  const g0 = three.truth.fruit[0]!;
  t.same(g0.appearances.map((a) => a.clip * 10 + a.frame), f0.appearances.map((a) => a.frame));
  t.same(g0.appearances.map((a) => a.box), f0.appearances.map((a) => a.box));
});

t.test('seeds are reproducible and distinct; dark walks are dark', async (t) => {
  const dir = t.testdir();
  const a = await renderWalk({ out: dir, name: 'a', seconds: 0.5, fps: 10, width: 320, height: 180, seed: 7 });
  const b = await renderWalk({ out: dir, name: 'b', seconds: 0.5, fps: 10, width: 320, height: 180, seed: 7 });
  const c = await renderWalk({ out: dir, name: 'c', seconds: 0.5, fps: 10, width: 320, height: 180, seed: 8 });
  t.same(a.truth.fruit, b.truth.fruit);
  t.notSame(a.truth.fruit.map((f) => f.x), c.truth.fruit.map((f) => f.x));
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
