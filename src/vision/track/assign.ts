// Track–detection association by IoU.
import type { Box } from '../types.js';
import { iou } from './box.js';

export interface Assignment {
  /** Pairs [track index, detection index]. */
  pairs: [number, number][];
  unmatchedTracks: number[];
  unmatchedDetections: number[];
}

/**
 * Greedy matching by descending IoU: with boxes already brought together by the
 * motion model the IoU matrix is sparse and nearly diagonal, where greedy and the
 * Hungarian optimum agree; ties between touching fruit go to the larger overlap.
 */
export function matchByIou(tracks: Box[], detections: Box[], minIou: number): Assignment {
  const cand: [number, number, number][] = [];
  for (let i = 0; i < tracks.length; i++)
    for (let j = 0; j < detections.length; j++) {
      const v = iou(tracks[i]!, detections[j]!);
      if (v >= minIou) cand.push([v, i, j]);
    }
  cand.sort((a, b) => b[0] - a[0] || a[1] - b[1] || a[2] - b[2]);
  const usedT = new Uint8Array(tracks.length);
  const usedD = new Uint8Array(detections.length);
  const pairs: [number, number][] = [];
  for (const [, i, j] of cand) {
    if (usedT[i] || usedD[j]) continue;
    usedT[i] = 1;
    usedD[j] = 1;
    pairs.push([i, j]);
  }
  const unmatchedTracks: number[] = [];
  const unmatchedDetections: number[] = [];
  for (let i = 0; i < tracks.length; i++) if (!usedT[i]) unmatchedTracks.push(i);
  for (let j = 0; j < detections.length; j++) if (!usedD[j]) unmatchedDetections.push(j);
  return { pairs, unmatchedTracks, unmatchedDetections };
}
