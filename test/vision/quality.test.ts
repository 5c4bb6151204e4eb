import t from 'tap';
import {
  clipCutShortWarning,
  clipDamagedWarning,
  frameQuality,
  sceneContent,
  showsNoPlant,
  walkQuality,
  QUALITY_THRESHOLDS,
  type FrameQuality,
} from '../../src/vision/quality.js';
import type { RgbImage } from '../../src/vision/types.js';
import { renderStill } from '../../scripts/render/walk.js';
import { decodeImage, resolveFfmpeg } from '../../src/vision/media/index.js';
import { sharedData } from '../helpers/shared-data.js';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A deterministic scene with structure at several scales, wider than the frame so it can be panned. */
function scene(width: number, height: number, seed = 7): RgbImage {
  let s = seed;
  const rand = () => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const data = new Uint8Array(width * height * 3);
  for (let p = 0; p < data.length; p += 3) {
    const v = 90 + rand() * 40;
    data[p] = v;
    data[p + 1] = v + 10;
    data[p + 2] = v - 10;
  }
  // Leaves and fruit: filled discs with hard edges.
  for (let k = 0; k < 120; k++) {
    const cx = rand() * width;
    const cy = rand() * height;
    const r = 5 + rand() * 30;
    const col = [rand() * 255, rand() * 255, rand() * 255];
    for (let y = Math.max(0, Math.floor(cy - r)); y < Math.min(height, cy + r); y++)
      for (let x = Math.max(0, Math.floor(cx - r)); x < Math.min(width, cx + r); x++)
        if ((x - cx) ** 2 + (y - cy) ** 2 < r * r) data.set(col, (y * width + x) * 3);
  }
  return { width, height, data };
}

function crop(img: RgbImage, x0: number, y0: number, w: number, h: number): RgbImage {
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) data.set(img.data.subarray(((y + y0) * img.width + x0) * 3, ((y + y0) * img.width + x0 + w) * 3), y * w * 3);
  return { width: w, height: h, data };
}

function blur(img: RgbImage, r: number): RgbImage {
  const { width: w, height: h } = img;
  const out = new Uint8Array(img.data.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let c = 0; c < 3; c++) {
        let s = 0;
        let n = 0;
        for (let dy = -r; dy <= r; dy++)
          for (let dx = -r; dx <= r; dx++) {
            const xx = Math.min(w - 1, Math.max(0, x + dx));
            const yy = Math.min(h - 1, Math.max(0, y + dy));
            s += img.data[(yy * w + xx) * 3 + c]!;
            n++;
          }
        out[(y * w + x) * 3 + c] = s / n;
      }
  return { width: w, height: h, data: out };
}

function scaleBrightness(img: RgbImage, f: number, add = 0): RgbImage {
  return { width: img.width, height: img.height, data: img.data.map((v) => Math.max(0, Math.min(255, v * f + add))) };
}

const W = 640;
const H = 360;
const world = scene(1400, 500);
const base = crop(world, 100, 60, W, H);

t.test('a blurred frame is less sharp and warns "out of focus"', async (t) => {
  const sharp = frameQuality(base);
  const soft = frameQuality(blur(base, 4));
  t.ok(sharp.sharpness > soft.sharpness * 2, `sharp ${sharp.sharpness.toFixed(3)} vs blurred ${soft.sharpness.toFixed(3)}`);
  t.ok(sharp.sharpness >= 0 && sharp.sharpness <= 1);
  const walk = walkQuality([{ quality: soft, width: W }]);
  t.same(
    walk.warnings.map((w) => w.code),
    ['out_of_focus'],
  );
  t.match(walk.warnings[0]!.message, /out of focus/);
  t.same(walkQuality([{ quality: sharp, width: W }]).warnings, [], 'the sharp frame raises nothing');
});

t.test('a dark frame warns "too dark", a washed-out one "overexposed"', async (t) => {
  const dark = frameQuality(scaleBrightness(base, 0.12));
  t.ok(dark.brightness < QUALITY_THRESHOLDS.tooDarkBrightness, `brightness ${dark.brightness.toFixed(3)}`);
  const bright = frameQuality(scaleBrightness(base, 1.5, 120));
  t.ok(bright.brightFraction > QUALITY_THRESHOLDS.overexposedFraction, `clipped ${bright.brightFraction.toFixed(3)}`);
  const walk = walkQuality([
    { quality: dark, width: W },
    { quality: dark, width: W },
    { quality: frameQuality(base), width: W },
    { quality: bright, width: W },
  ]);
  const byCode = Object.fromEntries(walk.warnings.map((w) => [w.code, w.frames]));
  t.same(byCode.too_dark, [0, 1]);
  t.same(byCode.overexposed, [3]);
  t.notOk('out_of_focus' in byCode, 'a dark frame is not also called out of focus');
  t.ok(walk.frameScores[2]! > walk.frameScores[0]! && walk.frameScores[2]! > walk.frameScores[3]!, 'the good frame scores best');
  t.ok(walk.score > 0 && walk.score < 1);
});

t.test('motion is measured as a shift per second and a large one warns "walked too fast"', async (t) => {
  const a = crop(world, 100, 60, W, H);
  const slow = crop(world, 124, 60, W, H); // 24 px in 0.5 s
  const fast = crop(world, 360, 68, W, H); // 260 px right, 8 down in 0.5 s
  const q0 = frameQuality(a);
  t.equal(q0.motionPxPerSecond, null, 'no motion for the first frame');
  const q1 = frameQuality(slow, a, 0.5);
  t.same(q1.shift, [24, 0], 'shift found exactly (the motion grid is 4 px at this size)');
  t.equal(q1.motionPxPerSecond, 48);
  const q2 = frameQuality(fast, slow, 0.5);
  t.same(q2.shift, [236, 8]);
  t.ok(q2.motionPxPerSecond! > QUALITY_THRESHOLDS.tooFastWidthsPerSecond * W, `${q2.motionPxPerSecond} px/s`);
  const walk = walkQuality([q0, q1, q2].map((quality) => ({ quality, width: W })));
  t.same(
    walk.warnings.map((w) => [w.code, w.frames]),
    [['walked_too_fast', [2]]],
  );
  t.match(walk.warnings[0]!.message, /walked too fast/);
});

t.test('a single bad frame in a long walk is not a warning', async (t) => {
  const good: FrameQuality = frameQuality(base);
  const dark = frameQuality(scaleBrightness(base, 0.1));
  const frames = Array.from({ length: 10 }, (_, i) => ({ quality: i === 4 ? dark : good, width: W }));
  t.same(walkQuality(frames).warnings, []);
  t.equal(walkQuality([]).score, 0, 'no frames, no score');
});

t.test('colours read unconverted are a warning for any share of the walk, and leave the frame scores alone', async (t) => {
  const good: FrameQuality = frameQuality(base);
  // A batch of two clips where the second, an HDR clip, could not be converted: 2 of 10 frames.
  const frames = Array.from({ length: 10 }, (_, i) => ({ quality: good, width: W, colourUnconverted: i >= 8 }));
  const walk = walkQuality(frames);
  t.same(
    walk.warnings.map((w) => [w.code, w.frames]),
    [['colours_unconverted', [8, 9]]],
    'below the 20 % share that other warnings need',
  );
  t.match(walk.warnings[0]!.message, /^colours uncertain: 2 of 10 frames .*HDR.*zscale/);
  t.same(
    walk.frameScores,
    walkQuality(frames.map((f) => ({ ...f, colourUnconverted: false }))).frameScores,
    'the footage itself is no worse',
  );
  t.same(walkQuality(frames.map((f) => ({ ...f, colourUnconverted: false }))).warnings, []);
});

t.test('clip_cut_short: raised when a clip runs at least one sample past the stretch read, naming each clip cut', async (t) => {
  const settings = { maxFrames: 240, sampleSeconds: 0.5 };
  t.equal(clipCutShortWarning([{ number: 1, durationSeconds: 60, readSeconds: 60, lastFrame: 119 }], settings), null, 'read whole');
  t.equal(
    clipCutShortWarning([{ number: 1, durationSeconds: 120.4, readSeconds: 120, lastFrame: 239 }], settings),
    null,
    'less than one sample past: nothing left to score',
  );
  t.equal(clipCutShortWarning([{ number: 1, durationSeconds: 0, readSeconds: 0, lastFrame: 0 }], settings), null, 'a photo');
  const one = clipCutShortWarning([{ number: 1, durationSeconds: 320, readSeconds: 120, lastFrame: 239 }], settings);
  t.match(one, { code: 'clip_cut_short', frames: [239] });
  t.match(
    one?.message,
    /^not all of the walk was scored: the first 120 s of 320 s \(max_frames 240 at sample_seconds 0\.5\).*a larger max_frames \(POST \/api\/observations\/\{id\}\/rescore, up to 2000\)/,
  );
  const batch = clipCutShortWarning(
    [
      { number: 1, durationSeconds: 90, readSeconds: 90, lastFrame: 179 },
      { number: 2, durationSeconds: 200, readSeconds: 120, lastFrame: 419 },
      { number: 3, durationSeconds: 130, readSeconds: 120, lastFrame: null },
    ],
    settings,
  );
  t.match(batch?.message, /clip 2: the first 120 s of 200 s; clip 3: the first 120 s of 130 s/, 'a batch names its clips');
  t.same(batch?.frames, [419], 'frames: where each cut clip stopped, when it had one');
});

t.test("clip_damaged: names each damaged clip, how far a clip cut off part way was decoded, and ffmpeg's words", async (t) => {
  const settings = { sampleSeconds: 0.25 };
  t.equal(clipDamagedWarning([], settings), null, 'nothing damaged, no warning');
  const clip = { number: 1, photo: false, readSeconds: 60, errors: 'partial file', lastFrame: 20 };
  const cut = clipDamagedWarning([{ ...clip, decodedSeconds: 5.25 }], settings);
  t.match(cut, { code: 'clip_damaged', frames: [20] });
  t.match(
    cut?.message,
    /^the upload is damaged: clip 1: only its first 5\.3 s of 60 s could be decoded, so the counts miss the rest of it \(ffmpeg: partial file\); film it again/,
  );
  const whole = clipDamagedWarning([{ ...clip, decodedSeconds: 59.8 }], settings);
  t.match(
    whole?.message,
    /clip 1: some of its pictures could not be decoded and were skipped or came out garbled \(ffmpeg: partial file\)/,
    'less than a sample short: read to its end, damaged inside',
  );
  t.notMatch(whole?.message, /only its first/);
  const photo = clipDamagedWarning([{ ...clip, photo: true, readSeconds: 0, decodedSeconds: 0.25, lastFrame: 0 }], settings);
  t.match(photo?.message, /the photo: part of it may be grey or garbled/);
  const batch = clipDamagedWarning(
    [
      { ...clip, number: 2, readSeconds: 120, decodedSeconds: 30, lastFrame: 300 },
      { ...clip, number: 3, decodedSeconds: 60, lastFrame: null },
    ],
    settings,
  );
  t.match(
    batch?.message,
    /clip 2: only its first 30 s of 120 s .*; clip 3: some of its pictures/,
    'a batch names its clips, against the stretch each was to be read for',
  );
  t.same(batch?.frames, [300], 'frames: the last frame scored of each, when it had one');
});

/** SMPTE-like colour bars drawn in code: seven flat bars over a strip of three more, as a test pattern is. */
function colourBars(width: number, height: number): RgbImage {
  const top: [number, number, number][] = [
    [192, 192, 192],
    [192, 192, 0],
    [0, 192, 192],
    [0, 192, 0],
    [192, 0, 192],
    [192, 0, 0],
    [0, 0, 192],
  ];
  const bottom: [number, number, number][] = [
    [0, 33, 76],
    [235, 235, 235],
    [50, 0, 106],
  ];
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const c = y < height * 0.75 ? top[Math.floor((x * 7) / width)]! : bottom[Math.floor((x * 3) / width)]!;
      data.set(c, (y * width + x) * 3);
    }
  return { width, height, data };
}

t.test('no plant: flat synthetic colour is flagged, a scene with texture is not', async (t) => {
  const bars = colourBars(W, H);
  t.ok(showsNoPlant(bars), `colour bars: ${JSON.stringify(sceneContent(bars))}`);
  const grey = scaleBrightness(bars, 0, 128);
  t.ok(showsNoPlant(grey), 'a bare grey wall');
  t.notOk(showsNoPlant(scaleBrightness(bars, 0, 5)), 'a black frame is "too dark", not this');
  t.notOk(showsNoPlant(base), `the textured test scene: ${JSON.stringify(sceneContent(base))}`);
  t.notOk(showsNoPlant(scaleBrightness(base, 0.12)), 'the scene filmed too dark: flattened by the dark, reported as too dark');
  t.notOk(
    showsNoPlant({ width: W, height: H, data: new Uint8Array(0) }),
    'a frame whose buffer lacks its pixels cannot be told, and is not called a test pattern',
  );

  const q = frameQuality(bars);
  const walk = walkQuality([{ quality: q, width: W }]);
  t.same(
    walk.warnings.map((w) => w.code),
    ['no_plant'],
    'one warning that says what is wrong, not "out of focus" besides',
  );
  t.match(walk.warnings[0]!.message, /^no plant: 1 of 1 frames show flat, synthetic colours/);
  t.equal(walk.frameScores[0], 0, 'the frame is worth nothing for counting');
});

const ffmpeg = await resolveFfmpeg();
t.test(
  'no plant: a rendered plant row (flat-shaded leaves) is not flagged',
  { skip: !ffmpeg.available && 'ffmpeg is not available' },
  async (t) => {
    const still = await renderStill({ seed: 4, width: 800, height: 600 });
    const file = path.join(t.testdir(), 'still.jpg');
    writeFileSync(file, still.jpeg);
    const rendered = await decodeImage(file);
    t.notOk(showsNoPlant(rendered), JSON.stringify(sceneContent(rendered)));
  },
);

const photos = sharedData('tomato-photos');
t.test(
  'no plant: none of the labelled tomato photos is flagged',
  { skip: photos.skip || (!ffmpeg.available && 'ffmpeg is not available') },
  async (t) => {
    const names = readdirSync(photos.path).filter((f) => f.endsWith('.jpg'));
    t.ok(names.length >= 20, `${names.length} photos`);
    for (const name of names) {
      const image = await decodeImage(path.join(photos.path, name), { maxLongSide: 1280 });
      const c = sceneContent(image);
      t.notOk(showsNoPlant(image), `${name}: ${c.flatFraction.toFixed(2)} flat, ${c.paletteCoverage.toFixed(2)} in 16 colours`);
    }
  },
);
