import { boxMean } from '../image/filters.js';

export interface HoughCircle {
  cx: number;
  cy: number;
  r: number;
  /** Share of the circumference where the skin mask has an edge facing the centre. */
  support: number;
  /** Share of the disc that is skin. */
  fill: number;
}

export interface HoughParams {
  minRadius: number;
  maxRadius: number;
  /** Least circumference share for a circle to be kept. */
  minSupport: number;
  /** Least disc share for a circle to be kept. */
  minFill: number;
}

/** Edge pixels (whole-pixel positions) with their inward unit normals. */
export interface HoughEdges {
  x: number[];
  y: number[];
  gx: number[];
  gy: number[];
}

/**
 * Adds to hist[round(d)] each candidate edge within rMin - 1 … rMax + 1 of the centre (cx, cy) (whole
 * pixels) whose normal faces it (cos ≥ 0.9); hist[rMax + 1] takes the band's far edge.
 */
export function facingDistances(
  cx: number,
  cy: number,
  edges: HoughEdges,
  candidates: readonly number[],
  rMin: number,
  rMax: number,
  hist: Float32Array,
): void {
  // Whole pixels: an edge whose squared distance is past the band's is outside it by far more than
  // Math.hypot's rounding, so it is passed over without the (slow) call, the same edges kept.
  const outerSquared = (rMax + 1) * (rMax + 1);
  const innerSquared = rMin > 1 ? (rMin - 1) * (rMin - 1) : 0;
  for (const k of candidates) {
    const dx = cx - edges.x[k]!;
    const dy = cy - edges.y[k]!;
    const squared = dx * dx + dy * dy;
    if (squared > outerSquared || squared < innerSquared) continue;
    const d = Math.hypot(dx, dy);
    if (d < rMin - 1 || d > rMax + 1) continue;
    const cos = (dx * edges.gx[k]! + dy * edges.gy[k]!) / d;
    if (cos < 0.9) continue;
    hist[Math.min(rMax + 1, Math.round(d))]! += 1;
  }
}

/**
 * Circles in a skin mask by the two-stage Hough transform: every edge pixel
 * of the mask votes for centres along its inward normal, peaks of the vote
 * map are centres, and each centre's radius is the distance most of its
 * voters agree on. Unlike the largest inscribed circle this finds a fruit
 * whose skin is cut into crescents by the calyx, a stem or a leaf in front,
 * as long as enough of its outline is visible; touching fruit vote for their
 * own centres.
 */
export function houghCircles(mask: Uint8Array, w: number, h: number, q: HoughParams): HoughCircle[] {
  const n = w * h;
  const f = new Float32Array(n);
  for (let i = 0; i < n; i++) f[i] = mask[i] ? 1 : 0;
  const s = boxMean(f, w, h, 1);
  // Edge pixels with their inward unit normal.
  const ex: number[] = [];
  const ey: number[] = [];
  const gxs: number[] = [];
  const gys: number[] = [];
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      const v = s[i]!;
      if (v <= 0.15 || v >= 0.85) continue;
      const gx = s[i + 1]! - s[i - 1]!;
      const gy = s[i + w]! - s[i - w]!;
      const g = Math.hypot(gx, gy);
      if (g < 0.2) continue;
      ex.push(x);
      ey.push(y);
      gxs.push(gx / g);
      gys.push(gy / g);
    }
  }
  const acc = new Float32Array(n);
  const rMin = q.minRadius;
  const rMax = q.maxRadius;
  // A vote is worth 1/r: a circle's edge count grows with r, its share of the outline should not.
  const worth = new Float64Array(rMax + 1);
  for (let r = rMin; r <= rMax; r++) worth[r] = 1 / r;
  for (let k = 0; k < ex.length; k++) {
    const x = ex[k]!;
    const y = ey[k]!;
    const gx = gxs[k]!;
    const gy = gys[k]!;
    for (let r = rMin; r <= rMax; r++) {
      const cx = Math.round(x + gx * r);
      const cy = Math.round(y + gy * r);
      if (cx < 0 || cy < 0 || cx >= w || cy >= h) break;
      acc[cy * w + cx]! += worth[r]!;
    }
  }
  const sm = boxMean(acc, w, h, 2);
  // Peaks: local maxima over a window of minRadius, above a vote floor of a ~25% outline at any radius.
  const floor = (2 * Math.PI * q.minSupport * 0.5) / 25;
  const win = Math.max(2, Math.floor(rMin * 0.8));
  const peaks: Array<{ x: number; y: number; v: number }> = [];
  for (let y = 0; y < h; y += 1) {
    for (let x = 0; x < w; x += 1) {
      const v = sm[y * w + x]!;
      if (v < floor) continue;
      let isMax = true;
      for (let dy = -win; dy <= win && isMax; dy += 2) {
        const yy = y + dy;
        if (yy < 0 || yy >= h) continue;
        for (let dx = -win; dx <= win; dx += 2) {
          const xx = x + dx;
          if (xx < 0 || xx >= w || (dx === 0 && dy === 0)) continue;
          if (sm[yy * w + xx]! > v) {
            isMax = false;
            break;
          }
        }
      }
      if (isMax) peaks.push({ x, y, v });
    }
  }
  peaks.sort((a, b) => b.v - a.v);
  const circles: HoughCircle[] = [];
  const hist = new Float32Array(rMax + 2);
  // Edge pixels bucketed in cells of rMax + 2, so a centre only looks at the edges within its reach.
  const cell = rMax + 2;
  const gw = Math.ceil(w / cell);
  const gh = Math.ceil(h / cell);
  const buckets: number[][] = Array.from({ length: gw * gh }, () => []);
  for (let k = 0; k < ex.length; k++) buckets[Math.floor(ey[k]! / cell) * gw + Math.floor(ex[k]! / cell)]!.push(k);
  const edges: HoughEdges = { x: ex, y: ey, gx: gxs, gy: gys };
  for (const p of peaks.slice(0, 400)) {
    // Radius: the distance most edge pixels facing this centre agree on.
    hist.fill(0);
    const near: number[] = [];
    const bx0 = Math.max(0, Math.floor((p.x - rMax - 1) / cell));
    const bx1 = Math.min(gw - 1, Math.floor((p.x + rMax + 1) / cell));
    const by0 = Math.max(0, Math.floor((p.y - rMax - 1) / cell));
    const by1 = Math.min(gh - 1, Math.floor((p.y + rMax + 1) / cell));
    for (let by = by0; by <= by1; by++) for (let bx = bx0; bx <= bx1; bx++) near.push(...buckets[by * gw + bx]!);
    facingDistances(p.x, p.y, edges, near, rMin, rMax, hist);
    let bestR = 0;
    let bestSupport = 0;
    for (let r = rMin; r <= rMax; r++) {
      // Edge pixels within ±1.5 px of r, as a share of the circumference.
      const votes = hist[r - 1]! * 0.5 + hist[r]! + hist[r + 1]! * 0.5;
      const support = votes / (2 * Math.PI * r);
      if (support > bestSupport) {
        bestSupport = support;
        bestR = r;
      }
    }
    if (bestR === 0 || bestSupport < q.minSupport) continue;
    const fill = discFill(mask, w, h, p.x, p.y, bestR);
    if (fill < q.minFill) continue;
    circles.push({ cx: p.x, cy: p.y, r: bestR, support: Math.min(1, bestSupport), fill });
  }
  return circles;
}

function discFill(mask: Uint8Array, w: number, h: number, cx: number, cy: number, r: number): number {
  let on = 0;
  let all = 0;
  const r2 = r * r;
  for (let y = Math.max(0, cy - r); y <= Math.min(h - 1, cy + r); y++) {
    for (let x = Math.max(0, cx - r); x <= Math.min(w - 1, cx + r); x++) {
      if ((x - cx) ** 2 + (y - cy) ** 2 > r2) continue;
      all++;
      if (mask[y * w + x]) on++;
    }
  }
  return all ? on / all : 0;
}
