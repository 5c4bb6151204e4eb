// Box geometry shared by matching and motion estimation.
import type { Box } from '../types.js';

export function iou(a: Box, b: Box): number {
  const ix = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const iy = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (ix <= 0 || iy <= 0) return 0;
  const inter = ix * iy;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

export function centre(b: Box): [number, number] {
  return [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
}

export function shift(b: Box, dx: number, dy: number): Box {
  return [b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy];
}

export function fromCentre(cx: number, cy: number, w: number, h: number): Box {
  return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2];
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
