import type { Box, Detection, RgbImage } from '../types.js';
import { luma709 } from '../image/colour.js';
import { iou } from '../track/box.js';

/**
 * Two overlapping circles on one frame are two fruit, one half behind the other, or one fruit
 * found twice (a second circle on its unhidden part, or a Hough and an inscribed circle). Their
 * geometry does not tell which: in a truss most fruit sit half behind a neighbour. Their light
 * does. Between two fruit the luma along the line joining the centres dips at the nearer fruit's
 * rim (its shaded edge, and the crease or shadow where they meet); across one fruit it does not.
 * Measured on rendered walks and on the labelled photos (docs/builtin-detector.md, "One circle
 * on one fruit"): labelled pairs of overlapping real fruit dip a median 50 levels of 255. Soft,
 * dim light leaves some pairs of fruit with no dip (the greenhouse renders), so the rule that reads
 * it is off by default.
 */
export interface SeamParams {
  /** Pairs overlapping at least this much (IoU of their boxes) are read; 0 turns the rule off. */
  minIou: number;
  /** A dip shallower than this (Rec. 709 luma, 0–255) between the two centres means one fruit. */
  maxDepth: number;
}

const SAMPLES = 33;

/**
 * How far the luma dips between the centres of boxes a and b: the dimmer of the two ends'
 * brightest points (each within the first or last 35 % of the line) less the darkest point of its
 * middle 70 %, each point the mean of a 3 × 3 window. Light that only rises or falls across the
 * line still reads as a dip of its rise over the 15–35 % stretch. Confined to the stretch between
 * the two peaks, the dip told two fruit from one worse (docs/builtin-detector.md).
 */
export function seamDepth(image: RgbImage, a: Box, b: Box): number {
  const ax = (a[0] + a[2]) / 2,
    ay = (a[1] + a[3]) / 2;
  const dx = (b[0] + b[2]) / 2 - ax,
    dy = (b[1] + b[3]) / 2 - ay;
  const profile = new Float64Array(SAMPLES);
  for (let i = 0; i < SAMPLES; i++) {
    const t = i / (SAMPLES - 1);
    profile[i] = windowLuma(image, Math.round(ax + t * dx), Math.round(ay + t * dy));
  }
  const end = Math.round(0.35 * (SAMPLES - 1));
  let peakA = -Infinity,
    peakB = -Infinity,
    low = Infinity;
  for (let i = 0; i <= end; i++) peakA = Math.max(peakA, profile[i]!);
  for (let i = SAMPLES - 1 - end; i < SAMPLES; i++) peakB = Math.max(peakB, profile[i]!);
  const from = Math.round(0.15 * (SAMPLES - 1));
  for (let i = from; i < SAMPLES - from; i++) low = Math.min(low, profile[i]!);
  return Math.min(peakA, peakB) - low;
}

function windowLuma(image: RgbImage, x: number, y: number): number {
  const { width, height, data } = image;
  let sum = 0;
  for (let dy = -1; dy <= 1; dy++) {
    const yy = Math.min(height - 1, Math.max(0, y + dy));
    for (let dx = -1; dx <= 1; dx++) {
      const xx = Math.min(width - 1, Math.max(0, x + dx));
      const p = (yy * width + xx) * 3;
      sum += luma709(data[p]!, data[p + 1]!, data[p + 2]!);
    }
  }
  return sum / 9;
}

/**
 * Keeps one detection of a fruit found twice: going down the scores, a fruit detection that
 * overlaps a kept one by at least minIou with no seam between them is dropped. Detections are
 * in the image's pixels; the order of the answer is the order given.
 */
export function dropSeamlessTwins(detections: readonly Detection[], image: RgbImage, params: SeamParams): Detection[] {
  if (!(params.minIou > 0)) return [...detections];
  const byScore = detections.map((d, i) => ({ d, i })).sort((p, q) => q.d.score - p.d.score || p.i - q.i);
  const kept: Detection[] = [];
  const dropped = new Set<number>();
  for (const { d, i } of byScore) {
    if (
      d.kind === 'fruit' &&
      kept.some((k) => k.kind === 'fruit' && iou(k.box, d.box) >= params.minIou && seamDepth(image, k.box, d.box) < params.maxDepth)
    ) {
      dropped.add(i);
      continue;
    }
    kept.push(d);
  }
  return detections.filter((_, i) => !dropped.has(i));
}
