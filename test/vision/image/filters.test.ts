import t from 'tap';
import {
  applyGains,
  chroma,
  close,
  dilate,
  distanceTransform,
  erode,
  drawText,
  greyWorld,
  hueAngle,
  imageToLab,
  labelComponents,
  localStdDev,
  majority,
  boxMean,
  localDetrendedStdDev,
  resizeArea,
  srgbToLab,
  strokeRect,
  textWidth,
  open,
} from '../../../src/vision/image/index.js';
import type { RgbImage } from '../../../src/vision/types.js';
import { createRng } from '../../../scripts/render/rng.js';

function solid(width: number, height: number, rgb: [number, number, number]): RgbImage {
  const data = new Uint8Array(width * height * 3);
  for (let p = 0; p < data.length; p += 3) data.set(rgb, p);
  return { width, height, data };
}

const close1 = (t: { ok(c: boolean, m: string): unknown }, actual: number, expected: number, tol: number, msg: string) =>
  t.ok(Math.abs(actual - expected) <= tol, `${msg}: ${actual.toFixed(3)} ≈ ${expected}`);

t.test('sRGB to CIELAB matches reference values (D65)', async (t) => {
  // References: Bruce Lindbloom's calculator / CSS Color 4 sample values.
  const cases: Array<[[number, number, number], [number, number, number]]> = [
    [
      [255, 0, 0],
      [53.24, 80.09, 67.2],
    ],
    [
      [0, 255, 0],
      [87.73, -86.18, 83.18],
    ],
    [
      [0, 0, 255],
      [32.3, 79.19, -107.86],
    ],
    [
      [255, 255, 255],
      [100, 0, 0],
    ],
    [
      [0, 0, 0],
      [0, 0, 0],
    ],
    [
      [128, 128, 128],
      [53.59, 0, 0],
    ],
  ];
  for (const [rgb, [L, a, b]] of cases) {
    const lab = srgbToLab(...rgb);
    close1(t, lab.L, L, 0.05, `L* of ${rgb}`);
    close1(t, lab.a, a, 0.1, `a* of ${rgb}`);
    close1(t, lab.b, b, 0.1, `b* of ${rgb}`);
  }
  const red = srgbToLab(255, 0, 0);
  close1(t, hueAngle(red.a, red.b), 39.99, 0.05, 'hue of sRGB red');
  close1(t, chroma(red.a, red.b), 104.55, 0.1, 'chroma of sRGB red');
  const green = srgbToLab(0, 255, 0);
  close1(t, hueAngle(green.a, green.b), 136.02, 0.05, 'hue of sRGB green');
  const blue = srgbToLab(0, 0, 255);
  close1(t, hueAngle(blue.a, blue.b), 306.29, 0.05, 'hue of sRGB blue, in 0–360');
});

t.test('imageToLab agrees with the single-colour conversion', async (t) => {
  const img = solid(4, 3, [200, 90, 30]);
  const planes = imageToLab(img);
  const one = srgbToLab(200, 90, 30);
  close1(t, planes.L[5]!, one.L, 0.01, 'L');
  close1(t, planes.a[5]!, one.a, 0.01, 'a');
  close1(t, planes.b[5]!, one.b, 0.01, 'b');
});

t.test('grey-world removes a colour cast and ignores clipped and dark pixels', async (t) => {
  // A grey scene under a magenta light: red and blue raised against green.
  const img = solid(40, 40, [150, 110, 140]);
  // Clipped highlights and black shadows that must not vote.
  for (let p = 0; p < 40 * 3 * 5; p += 3) img.data.set([255, 255, 255], p);
  for (let p = 40 * 3 * 35; p < img.data.length; p += 3) img.data.set([2, 0, 3], p);
  const wb = greyWorld(img, { stride: 1 });
  t.equal(wb.used, 40 * 30, 'only the mid-tone pixels vote');
  const fixed = applyGains(img, wb.gains);
  const p = (20 * 40 + 20) * 3;
  const [r, g, b] = [fixed.data[p]!, fixed.data[p + 1]!, fixed.data[p + 2]!];
  t.ok(Math.abs(r - g) <= 1 && Math.abs(b - g) <= 1, `the cast is gone: ${r},${g},${b}`);
  const lab = imageToLab(img, wb.gains);
  t.ok(Math.abs(lab.a[800]!) < 1 && Math.abs(lab.b[800]!) < 1, 'neutral in Lab after gains');
  const mono = greyWorld(solid(10, 10, [200, 20, 20]), { stride: 1 });
  t.ok(mono.gains[0] >= 1 / 2.5 - 1e-9 && mono.gains[2] <= 2.5 + 1e-9, 'gains are bounded for a one-colour frame');
  // A frame of leaves is green on average without a green light: the magenta added is limited.
  const leaves = solid(10, 10, [60, 110, 60]);
  const free = greyWorld(leaves, { stride: 1 });
  const limited = greyWorld(leaves, { stride: 1, maxGreenCorrection: 1.1 });
  t.ok(free.gains[0] > 1.5, `unlimited, the leaves are taken for a green cast: ${free.gains[0].toFixed(2)}`);
  t.ok(Math.sqrt(limited.gains[0] * limited.gains[2]) <= 1.1 + 1e-9, 'limited: at most 1.1 of magenta');
  t.ok(Math.abs(limited.gains[0] / limited.gains[2] - free.gains[0] / free.gains[2]) < 1e-9, 'the red/blue balance is kept');
  const magentaLight = greyWorld(img, { stride: 1, maxGreenCorrection: 1.1 });
  t.same(magentaLight.gains, wb.gains, 'a magenta cast (green gains below 1) is removed as before');
});

t.test('area resize averages and keeps flat colours exact', async (t) => {
  const img = solid(10, 6, [10, 20, 30]);
  const small = resizeArea(img, 5, 3);
  t.same([...small.data.subarray(0, 3)], [10, 20, 30]);
  // A 2×1 black/white checker averages to mid-grey.
  const checker: RgbImage = { width: 2, height: 1, data: new Uint8Array([0, 0, 0, 255, 255, 255]) };
  const one = resizeArea(checker, 1, 1);
  t.same([...one.data], [128, 128, 128]);
  // A non-integer factor: 3 → 2 gives weights 2/3 and 1/3.
  const ramp: RgbImage = { width: 3, height: 1, data: new Uint8Array([0, 0, 0, 90, 90, 90, 180, 180, 180]) };
  const two = resizeArea(ramp, 2, 1);
  t.same([...two.data], [30, 30, 30, 150, 150, 150]);
  t.throws(() => resizeArea(img, 0, 3), RangeError);
});

t.test('connected components and distance transform', async (t) => {
  const w = 20;
  const h = 10;
  const mask = new Uint8Array(w * h);
  // Two squares and a diagonal pair that 8-connectivity joins.
  for (let y = 1; y < 5; y++) for (let x = 1; x < 5; x++) mask[y * w + x] = 1;
  for (let y = 2; y < 9; y++) for (let x = 10; x < 17; x++) mask[y * w + x] = 1;
  mask[8 * w + 1] = 1;
  mask[9 * w + 2] = 1;
  const { components, labels } = labelComponents(mask, w, h);
  t.equal(components.length, 3);
  const areas = components.map((c) => c.area).sort((a, b) => a - b);
  t.same(areas, [2, 16, 49]);
  const big = components.find((c) => c.area === 49)!;
  t.match(big, { minX: 10, maxX: 16, minY: 2, maxY: 8, cx: 13, cy: 5 });
  t.equal(labels[5 * w + 13], big.label);
  t.equal(labelComponents(mask, w, h, 3).components.length, 2, 'small ones dropped by minArea');
  const dt = distanceTransform(mask, w, h);
  t.equal(dt[5 * w + 13], 4, 'centre of a 7×7 square is 4 px from the background');
  t.equal(dt[2 * w + 10], 1, 'a border pixel is 1 px away');
  t.equal(dt[0], 0);
  // A U-shaped path: Euclidean, not city-block.
  const m2 = new Uint8Array(25).fill(1);
  m2[0] = 0;
  const dt2 = distanceTransform(m2, 5, 5);
  t.ok(Math.abs(dt2[2 * 5 + 2]! - Math.min(Math.hypot(2, 2), 3)) < 1e-6, 'image edge counts as background');
  // Open edges: a disc of radius 8 cut in half by the left edge keeps its radius at its centre.
  const half = new Uint8Array(30 * 30);
  for (let y = 0; y < 30; y++) for (let x = 0; x < 30; x++) if (Math.hypot(x, y - 15) <= 8.5) half[y * 30 + x] = 1;
  t.ok(distanceTransform(half, 30, 30)[15 * 30]! <= 1, 'closed edges: the cut disc is 1 px deep at the edge');
  t.ok(distanceTransform(half, 30, 30, true)[15 * 30]! >= 8, 'open edges: as deep as the uncut disc');
});

t.test('the distance transform is exact against a brute-force search, closed and open edges', async (t) => {
  // Closed edges: a ring of background round the frame. Open edges: the ring copies the edge pixel
  // next to it (corners the corner), so a blob cut by the edge runs on by that one pixel's worth.
  const brute = (m: Uint8Array, w: number, h: number, openEdges: boolean) => {
    const at = (x: number, y: number) => {
      if (x >= 0 && y >= 0 && x < w && y < h) return m[y * w + x]!;
      return openEdges ? m[Math.min(h - 1, Math.max(0, y)) * w + Math.min(w - 1, Math.max(0, x))]! : 0;
    };
    const out = new Float32Array(m.length);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        if (!m[y * w + x]) continue;
        let best = Infinity;
        for (let v = -1; v <= h; v++) for (let u = -1; u <= w; u++) if (!at(u, v)) best = Math.min(best, (u - x) ** 2 + (v - y) ** 2);
        out[y * w + x] = Math.sqrt(best);
      }
    return out;
  };
  const rnd = createRng(4242);
  let checked = 0;
  for (const [w, h] of [
    [1, 1],
    [1, 6],
    [6, 1],
    [4, 4],
    [13, 9],
    [30, 21],
  ] as const)
    for (const density of [0.3, 0.7, 0.95])
      for (const openEdges of [false, true]) {
        const m = new Uint8Array(w * h).map(() => (rnd() < density ? 1 : 0));
        m[Math.floor(rnd() * m.length)] = 0; // one background pixel at least, so every distance is finite
        t.same(
          distanceTransform(m, w, h, openEdges),
          brute(m, w, h, openEdges),
          `${w}×${h} density ${density}${openEdges ? ' open edges' : ''}`,
        );
        checked++;
      }
  t.equal(checked, 36);
});

t.test('labelling by runs agrees with a pixel flood fill: components, numbering, statistics, minArea', async (t) => {
  // 8-connected flood fill in raster order: components numbered by their first pixel.
  const brute = (m: Uint8Array, w: number, h: number, minArea: number) => {
    const seen = new Int32Array(m.length);
    const found: { pixels: number[] }[] = [];
    for (let start = 0; start < m.length; start++) {
      if (!m[start] || seen[start]) continue;
      const pixels: number[] = [];
      const stack = [start];
      seen[start] = 1;
      while (stack.length) {
        const i = stack.pop()!;
        pixels.push(i);
        const x = i % w,
          y = (i - x) / w;
        for (let dy = -1; dy <= 1; dy++)
          for (let dx = -1; dx <= 1; dx++) {
            const u = x + dx,
              v = y + dy;
            if (u < 0 || v < 0 || u >= w || v >= h) continue;
            const j = v * w + u;
            if (m[j] && !seen[j]) {
              seen[j] = 1;
              stack.push(j);
            }
          }
      }
      found.push({ pixels });
    }
    const labels = new Int32Array(m.length);
    const components = found
      .filter((f) => f.pixels.length >= minArea)
      .map((f, k) => {
        const xs = f.pixels.map((i) => i % w),
          ys = f.pixels.map((i) => Math.floor(i / w));
        for (const i of f.pixels) labels[i] = k + 1;
        const sum = (a: number[]) => a.reduce((p, q) => p + q, 0);
        return {
          label: k + 1,
          area: f.pixels.length,
          minX: Math.min(...xs),
          minY: Math.min(...ys),
          maxX: Math.max(...xs),
          maxY: Math.max(...ys),
          cx: sum(xs) / xs.length,
          cy: sum(ys) / ys.length,
        };
      });
    return { labels, components };
  };
  const rnd = createRng(99);
  let checked = 0;
  for (const [w, h] of [
    [1, 1],
    [1, 9],
    [9, 1],
    [6, 5],
    [31, 23],
    [80, 40],
  ] as const)
    for (const density of [0.05, 0.35, 0.6, 0.95])
      for (const minArea of [1, 4]) {
        const m = new Uint8Array(w * h).map(() => (rnd() < density ? 1 : 0));
        const got = labelComponents(m, w, h, minArea);
        const want = brute(m, w, h, minArea);
        t.same(got.components, want.components, `${w}×${h} density ${density} minArea ${minArea}: components`);
        t.same(got.labels, want.labels, `${w}×${h} density ${density} minArea ${minArea}: labels`);
        checked++;
      }
  t.equal(checked, 48);
  // Spirals and combs: runs joined only through a row several rows away, and diagonal steps.
  const comb = new Uint8Array(12 * 6);
  for (let x = 0; x < 12; x += 2) for (let y = 0; y < 5; y++) comb[y * 12 + x] = 1;
  for (let x = 0; x < 12; x++) comb[5 * 12 + x] = 1;
  t.equal(labelComponents(comb, 12, 6).components.length, 1, 'the teeth of a comb are one component through its back');
  const stairs = new Uint8Array(6 * 6);
  for (let i = 0; i < 6; i++) stairs[i * 6 + i] = 1;
  t.same(
    labelComponents(stairs, 6, 6).components.map((c) => c.area),
    [6],
    'a diagonal is one 8-connected component',
  );
});

t.test('local standard deviation and morphology', async (t) => {
  const w = 30;
  const h = 30;
  const flat = new Float32Array(w * h).fill(100);
  t.ok(
    localStdDev(flat, w, h, 2).every((v) => v < 1e-3),
    'flat plane has no texture',
  );
  const noisy = new Float32Array(w * h).map((_, i) => (i % 2 ? 120 : 80));
  const sd = localStdDev(noisy, w, h, 2)[15 * w + 15]!;
  t.ok(sd > 15 && sd < 25, `alternating ±20 has sd ≈ 20: ${sd}`);
  const mask = new Uint8Array(w * h);
  for (let y = 5; y < 25; y++) for (let x = 5; x < 25; x++) mask[y * w + x] = 1;
  mask[15 * w + 15] = 0; // a hole
  mask[1 * w + 1] = 1; // a speck
  const closed = close(mask, w, h, 1);
  t.equal(closed[15 * w + 15], 1, 'closing fills the hole');
  const opened = open(mask, w, h, 1);
  t.equal(opened[1 * w + 1], 0, 'opening removes the speck');
  t.equal(opened[10 * w + 10], 1, 'and keeps the body');
  // The shading gradient of a small fruit is not texture once the local plane is removed.
  const ramp = new Float32Array(w * h).map((_, i) => 3 * (i % w) + 2 * Math.floor(i / w));
  t.ok(localStdDev(ramp, w, h, 2)[15 * w + 15]! > 4, 'a plain standard deviation calls a ramp rough');
  t.ok(localDetrendedStdDev(ramp, w, h, 2)[15 * w + 15]! < 1e-2, 'the detrended one does not');
  t.ok(Math.abs(localDetrendedStdDev(noisy, w, h, 2)[15 * w + 15]! - sd) < 2, 'and still sees fine texture');
  // Given the plain deviation already computed, the same answer, and the plain one left as it was.
  const plain = localStdDev(noisy, w, h, 2);
  const before = plain.slice();
  t.same(localDetrendedStdDev(noisy, w, h, 2, plain), localDetrendedStdDev(noisy, w, h, 2), 'from the plain deviation at hand');
  t.same(plain, before, 'the plain deviation is not written');
});

t.test('erosion and dilation agree with a brute-force window, edges and windows wider than the mask included', async (t) => {
  // The window is the (2r+1)² square clipped at the mask's edge: erosion keeps a pixel whose clipped
  // window is all set, dilation sets one whose clipped window has any.
  const brute = (m: Uint8Array, w: number, h: number, r: number, all: boolean) => {
    const out = new Uint8Array(m.length);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        let any = false;
        let every = true;
        for (let v = Math.max(0, y - r); v <= Math.min(h - 1, y + r); v++)
          for (let u = Math.max(0, x - r); u <= Math.min(w - 1, x + r); u++) {
            if (m[v * w + u]) any = true;
            else every = false;
          }
        out[y * w + x] = (all ? every : any) ? 1 : 0;
      }
    return out;
  };
  const rnd = createRng(12345);
  let checked = 0;
  // Widths that are a multiple of 4 take the word path up to r 4; the others, and wider windows, the running counts.
  for (const [w, h] of [
    [1, 1],
    [1, 7],
    [9, 1],
    [5, 4],
    [23, 17],
    [64, 31],
    [4, 1],
    [4, 9],
    [8, 2],
    [12, 12],
    [36, 5],
  ] as const)
    for (const r of [0, 1, 2, 3, 4, 5, 7, 40])
      for (const density of [0.1, 0.5, 0.93]) {
        const m = new Uint8Array(w * h).map(() => (rnd() < density ? 1 : 0));
        t.same(erode(m, w, h, r), brute(m, w, h, r, true), `erode ${w}×${h} r ${r} density ${density}`);
        t.same(dilate(m, w, h, r), brute(m, w, h, r, false), `dilate ${w}×${h} r ${r} density ${density}`);
        checked++;
      }
  t.equal(checked, 264);
  // A mask of 255s (not only 1s) is read the same.
  const big = new Uint8Array(25).fill(255);
  big[12] = 0;
  t.same(erode(big, 5, 5, 1), brute(big, 5, 5, 1, true));
  // Any set byte value, on the word path too, and a mask that is a view into a larger buffer, aligned or not.
  for (const offset of [0, 4, 1, 3]) {
    const buffer = new Uint8Array(offset + 16 * 6);
    const m = buffer.subarray(offset);
    m.forEach((_, i) => (m[i] = rnd() < 0.6 ? [1, 2, 16, 128, 255][Math.floor(rnd() * 5)]! : 0));
    for (const r of [0, 1, 2]) {
      t.same(erode(m, 16, 6, r), brute(m, 16, 6, r, true), `erode, bytes of any value, offset ${offset}, r ${r}`);
      t.same(dilate(m, 16, 6, r), brute(m, 16, 6, r, false), `dilate, bytes of any value, offset ${offset}, r ${r}`);
    }
  }
});

t.test('the box mean is the same to the bit as running sums down each column, and near the true mean', async (t) => {
  // The order of additions is what the detector's scores rest on: the reference walks each column
  // top to bottom, adding the row below the window and dropping the row above it.
  const reference = (src: Float32Array, w: number, h: number, r: number) => {
    // One line of `len` values `stride` apart, averaged over the clipped window with a running sum.
    const along = (from: Float32Array, to: Float32Array, start: number, stride: number, len: number) => {
      let sum = 0;
      let count = 0;
      for (let k = 0; k <= Math.min(r, len - 1); k++, count++) sum += from[start + k * stride]!;
      for (let k = 0; k < len; k++) {
        to[start + k * stride] = sum / count;
        if (k + r + 1 < len) {
          sum += from[start + (k + r + 1) * stride]!;
          count++;
        }
        if (k - r >= 0) {
          sum -= from[start + (k - r) * stride]!;
          count--;
        }
      }
    };
    const tmp = new Float32Array(w * h);
    for (let y = 0; y < h; y++) along(src, tmp, y * w, 1, w);
    const out = new Float32Array(w * h);
    for (let x = 0; x < w; x++) along(tmp, out, x, w, h);
    return out;
  };
  const rnd = createRng(99);
  for (const [w, h] of [
    [1, 1],
    [1, 8],
    [8, 1],
    [17, 11],
    [64, 40],
  ] as const)
    for (const r of [0, 1, 2, 5, 30]) {
      const src = new Float32Array(w * h).map(() => rnd() * 255 - 60);
      const got = boxMean(src, w, h, r);
      t.same(got, reference(src, w, h, r), `${w}×${h} r ${r}`);
      // And it is the mean it says: the clipped window's, to float precision.
      const x = Math.floor(w / 2);
      const y = Math.floor(h / 2);
      let sum = 0;
      let count = 0;
      for (let v = Math.max(0, y - r); v <= Math.min(h - 1, y + r); v++)
        for (let u = Math.max(0, x - r); u <= Math.min(w - 1, x + r); u++, count++) sum += src[v * w + u]!;
      t.ok(Math.abs(got[y * w + x]! - sum / count) < 1e-3, `${w}×${h} r ${r}: the window's mean`);
    }
});

t.test('the 3 × 3 majority filter answers as the box mean it stands for, on every window shape', async (t) => {
  // The definition: a pixel is set where more than half of its clipped window's mean (boxMean) is.
  const byMean = (m: Uint8Array, w: number, h: number) => {
    const mean = boxMean(
      Float32Array.from(m, (v) => (v ? 1 : 0)),
      w,
      h,
      1,
    );
    return Uint8Array.from(mean, (v) => (v > 0.5 ? 1 : 0));
  };
  const rnd = createRng(777);
  let checked = 0;
  for (const [w, h] of [
    [1, 1],
    [1, 2],
    [2, 1],
    [2, 2],
    [1, 9],
    [9, 1],
    [2, 7],
    [3, 3],
    [7, 2],
    [16, 12],
    [37, 23],
  ] as const)
    for (const density of [0.2, 0.5, 0.8])
      for (let k = 0; k < 20; k++) {
        const m = new Uint8Array(w * h).map(() => (rnd() < density ? [1, 255][Math.floor(rnd() * 2)]! : 0));
        const want = byMean(m, w, h);
        const got = majority(m, w, h, 1, 0.5);
        if (got.some((v, i) => v !== want[i])) t.fail(`${w}×${h} density ${density}: ${[...m]} → ${[...got]}, want ${[...want]}`);
        checked++;
      }
  t.equal(checked, 660);
  // Windows of exactly half are not set: a 2 × 2 frame with two pixels set, an edge window of 3 of 6.
  t.same([...majority(Uint8Array.of(1, 1, 0, 0), 2, 2, 1, 0.5)], [0, 0, 0, 0]);
  t.same(
    [...majority(Uint8Array.of(1, 1, 1, 0, 0, 0), 3, 2, 1, 0.5)],
    [1, 1, 1, 0, 0, 0].map(() => 0),
  );
  // Other radii and fractions keep the box mean.
  const m = new Uint8Array(20 * 20).map(() => (rnd() < 0.5 ? 1 : 0));
  t.same(
    majority(m, 20, 20, 2, 0.4),
    Uint8Array.from(boxMean(Float32Array.from(m), 20, 20, 2), (v) => (v > 0.4 ? 1 : 0)),
  );
});

t.test('drawing boxes and text', async (t) => {
  const img = solid(60, 20, [0, 0, 0]);
  strokeRect(img, [2, 2, 12, 12], [255, 0, 0], 1);
  const px = (x: number, y: number) => [...img.data.subarray((y * 60 + x) * 3, (y * 60 + x) * 3 + 3)];
  t.same(px(2, 2), [255, 0, 0]);
  t.same(px(11, 7), [255, 0, 0]);
  t.same(px(7, 7), [0, 0, 0], 'inside stays untouched');
  drawText(img, 20, 5, '17', [255, 255, 255]);
  t.equal(textWidth('17'), 11);
  let lit = 0;
  for (let y = 5; y < 12; y++) for (let x = 20; x < 31; x++) if (px(x, y)[0] === 255) lit++;
  // '1' has 10 lit pixels, '7' has 11.
  t.equal(lit, 21);
  strokeRect(img, [-5, -5, 100, 100], [0, 255, 0], 1);
  t.pass('boxes beyond the frame are clipped, not thrown');
});
