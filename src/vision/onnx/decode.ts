// Decoding a YOLOv8/v11 detection head: rows cx, cy, w, h (model input pixels) then
// one score per class, no objectness; class-wise non-maximum suppression.
import type { Box } from '../types.js';
import { iou } from '../track/box.js';
import { ModelError } from './manifest.js';

export interface RawDetection {
  box: Box;
  score: number;
  classIndex: number;
}

export interface HeadLayout {
  anchors: number;
  /** True for [1, 4 + nc, N] (Ultralytics' export), false for the transposed [1, N, 4 + nc]. */
  channelsFirst: boolean;
}

export function headLayout(dims: readonly number[], classes: number): HeadLayout {
  const rows = 4 + classes;
  if (dims.length === 3 && dims[0] === 1) {
    if (dims[1] === rows) return { anchors: dims[2]!, channelsFirst: true };
    if (dims[2] === rows) return { anchors: dims[1]!, channelsFirst: false };
  }
  throw new ModelError(
    'model_output_unexpected',
    `the model's output has shape [${dims.join(', ')}], but a YOLOv8/v11 detection head with the manifest's ${classes} classes gives [1, ${rows}, N] or [1, N, ${rows}]`,
  );
}

/** Candidates above `conf`: each anchor's best class only, as Ultralytics does. */
export function decodeHead(data: Float32Array, layout: HeadLayout, classes: number, conf: number): RawDetection[] {
  const n = layout.anchors;
  const at = layout.channelsFirst
    ? (row: number, a: number) => data[row * n + a]!
    : (row: number, a: number) => data[a * (4 + classes) + row]!;
  const out: RawDetection[] = [];
  for (let a = 0; a < n; a++) {
    let best = -1;
    let score = -Infinity;
    for (let c = 0; c < classes; c++) {
      const s = at(4 + c, a);
      if (s > score) {
        score = s;
        best = c;
      }
    }
    if (!(score >= conf)) continue;
    const cx = at(0, a),
      cy = at(1, a),
      w = at(2, a),
      h = at(3, a);
    out.push({ box: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], score, classIndex: best });
  }
  return out;
}

/**
 * Greedy NMS within each suppression group: a box overlapping a better one of its group by more than
 * `iouThreshold` is dropped. `groupOf` maps a class to its group; by default each class is its own group.
 * The detector puts every ripeness class in one group: one fruit is one fruit, whatever its colour, and a
 * fruit between two ripeness classes otherwise keeps a box of each and is counted twice.
 */
export function nmsByClass(
  dets: RawDetection[],
  iouThreshold: number,
  maxDetections = 300,
  groupOf: (classIndex: number) => number | string = (c) => c,
): RawDetection[] {
  const sorted = [...dets].sort((a, b) => b.score - a.score);
  const kept: RawDetection[] = [];
  const groups: (number | string)[] = [];
  for (const d of sorted) {
    const g = groupOf(d.classIndex);
    if (kept.some((k, i) => groups[i] === g && iou(k.box, d.box) > iouThreshold)) continue;
    kept.push(d);
    groups.push(g);
    if (kept.length >= maxDetections) break;
  }
  return kept;
}
