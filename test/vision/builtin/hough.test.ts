// The Hough transform's radius stage: which edges vote for a centre's radius, and the transform on a drawn disc.
import t from 'tap';
import { facingDistances, houghCircles, type HoughEdges } from '../../../src/vision/builtin/hough.js';
import { createRng } from '../../../scripts/render/rng.js';

t.test('an edge votes for a centre when it lies in the radius band and faces it, whatever is passed over before Math.hypot', async (t) => {
  // The rule as written: distance by Math.hypot within rMin - 1 … rMax + 1, normal within cos 0.9 of the centre.
  const brute = (cx: number, cy: number, e: HoughEdges, rMin: number, rMax: number) => {
    const hist = new Float32Array(rMax + 2);
    for (let k = 0; k < e.x.length; k++) {
      const dx = cx - e.x[k]!;
      const dy = cy - e.y[k]!;
      const d = Math.hypot(dx, dy);
      if (d < rMin - 1 || d > rMax + 1 || (dx * e.gx[k]! + dy * e.gy[k]!) / d < 0.9) continue;
      hist[Math.min(rMax + 1, Math.round(d))]! += 1;
    }
    return hist;
  };
  const rnd = createRng(2029);
  for (const [rMin, rMax] of [
    [2, 9],
    [7, 30],
    [1, 5],
    [4, 4],
  ] as const) {
    const e: HoughEdges = { x: [], y: [], gx: [], gy: [] };
    const cx = 50;
    const cy = 50;
    const add = (x: number, y: number, facing: boolean) => {
      const a = facing ? Math.atan2(cy - y, cx - x) + (rnd() - 0.5) * 0.9 : rnd() * 2 * Math.PI;
      e.x.push(x);
      e.y.push(y);
      e.gx.push(Math.cos(a));
      e.gy.push(Math.sin(a));
    };
    // Every whole-pixel position around the centre out past the band, most of them facing it.
    for (let y = cy - rMax - 4; y <= cy + rMax + 4; y++)
      for (let x = cx - rMax - 4; x <= cx + rMax + 4; x++) if (x !== cx || y !== cy) add(x, y, rnd() < 0.8);
    const all = e.x.map((_, k) => k);
    const hist = new Float32Array(rMax + 2);
    facingDistances(cx, cy, e, all, rMin, rMax, hist);
    t.same(hist, brute(cx, cy, e, rMin, rMax), `band ${rMin}-${rMax}`);
    // The band's ends are kept: an edge exactly rMin - 1 and exactly rMax + 1 away, facing the centre (3-4-5 included).
    if (rMin < 2) continue;
    const ends: HoughEdges = {
      x: [cx - (rMin - 1), cx + rMax + 1, cx - (3 * (rMax + 1)) / 5],
      y: [cy, cy, cy - (4 * (rMax + 1)) / 5],
      gx: [1, -1, 0.6],
      gy: [0, 0, 0.8],
    };
    const counted = new Float32Array(rMax + 2);
    const keep = Number.isInteger((3 * (rMax + 1)) / 5) ? [0, 1, 2] : [0, 1];
    facingDistances(cx, cy, ends, keep, rMin, rMax, counted);
    t.equal(
      counted.reduce((a, b) => a + b, 0),
      keep.length,
      `band ${rMin}-${rMax}: edges on its ends count`,
    );
  }
});

t.test('a drawn disc is found at its centre and radius', async (t) => {
  const w = 80;
  const h = 60;
  const mask = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if (Math.hypot(x - 40, y - 30) <= 12) mask[y * w + x] = 1;
  const circles = houghCircles(mask, w, h, { minRadius: 6, maxRadius: 20, minSupport: 0.3, minFill: 0.6 });
  t.ok(circles.length >= 1, 'found');
  const best = circles[0]!;
  t.ok(Math.hypot(best.cx - 40, best.cy - 30) <= 1, `centre ${best.cx}, ${best.cy}`);
  t.ok(Math.abs(best.r - 12) <= 1, `radius ${best.r}`);
});
