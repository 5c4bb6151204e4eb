// Global motion: when the camera walks along the row every box in the frame moves by
// about the same amount, often by more than a fruit's width between sampled frames,
// so IoU against a per-track prediction alone would find no overlap. The shift that
// lines up the most predicted tracks with detections is found by letting every
// plausible track–detection pair vote for its displacement, then checking the best
// few candidates (and no shift at all) by how many boxes they actually match.
import type { Box } from '../types.js';
import { matchByIou } from './assign.js';
import { centre, median, shift } from './box.js';

export interface ShiftEstimate {
  dx: number;
  dy: number;
  /** Track–detection pairs matched under this shift. */
  support: number;
}

export interface ShiftOptions {
  minIou: number;
  /** Largest displacement considered, pixels. */
  maxShift: number;
  /** How many voted candidates are verified by matching. */
  candidates?: number;
}

const minSide = (b: Box) => Math.min(b[2] - b[0], b[3] - b[1]);

export function estimateShift(predicted: Box[], detections: Box[], o: ShiftOptions): ShiftEstimate {
  if (predicted.length === 0 || detections.length === 0) return { dx: 0, dy: 0, support: 0 };
  const sizes = detections.map(minSide);
  const bin = Math.max(3, 0.4 * median(sizes));
  const votes = new Map<string, { n: number; dx: number[]; dy: number[]; ix: number; iy: number }>();
  const pc = predicted.map(centre);
  const dc = detections.map(centre);
  for (let i = 0; i < predicted.length; i++) {
    const si = minSide(predicted[i]!);
    for (let j = 0; j < detections.length; j++) {
      const ratio = sizes[j]! / si;
      if (ratio < 0.6 || ratio > 1.67) continue;
      const dx = dc[j]![0] - pc[i]![0];
      const dy = dc[j]![1] - pc[i]![1];
      if (Math.hypot(dx, dy) > o.maxShift) continue;
      const ix = Math.floor(dx / bin),
        iy = Math.floor(dy / bin);
      const key = `${ix},${iy}`;
      let cell = votes.get(key);
      if (!cell) votes.set(key, (cell = { n: 0, dx: [], dy: [], ix, iy }));
      cell.n++;
      cell.dx.push(dx);
      cell.dy.push(dy);
    }
  }
  // Peaks of the 3×3-smoothed vote map.
  const scored = [...votes.values()].map((c) => {
    let n = 0;
    const dx: number[] = [],
      dy: number[] = [];
    for (let a = -1; a <= 1; a++)
      for (let b = -1; b <= 1; b++) {
        const nb = votes.get(`${c.ix + a},${c.iy + b}`);
        if (nb) {
          n += nb.n;
          dx.push(...nb.dx);
          dy.push(...nb.dy);
        }
      }
    return { n, dx: median(dx), dy: median(dy) };
  });
  scored.sort((a, b) => b.n - a.n);
  const cands: [number, number][] = [[0, 0]];
  for (const s of scored.slice(0, o.candidates ?? 4)) cands.push([s.dx, s.dy]);

  let best: ShiftEstimate = { dx: 0, dy: 0, support: -1 };
  let bestIou = -1;
  for (const [dx, dy] of cands) {
    const moved = predicted.map((b) => shift(b, dx, dy));
    const m = matchByIou(moved, detections, o.minIou);
    let sum = 0;
    const mdx: number[] = [],
      mdy: number[] = [];
    for (const [i, j] of m.pairs) {
      const a = moved[i]!,
        d = detections[j]!;
      sum += overlap(a, d);
      mdx.push(dc[j]![0] - pc[i]![0]);
      mdy.push(dc[j]![1] - pc[i]![1]);
    }
    const support = m.pairs.length;
    // One chance pairing is no evidence that the whole view moved.
    if ((dx !== 0 || dy !== 0) && support < Math.min(2, predicted.length)) continue;
    if (support > best.support || (support === best.support && sum > bestIou)) {
      // refine to the median displacement of the boxes this shift matched
      best = support > 0 ? { dx: median(mdx), dy: median(mdy), support } : { dx: 0, dy: 0, support: 0 };
      bestIou = sum;
    }
  }
  return best;
}

function overlap(a: Box, b: Box): number {
  const ix = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const iy = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  return ix > 0 && iy > 0 ? ix * iy : 0;
}
