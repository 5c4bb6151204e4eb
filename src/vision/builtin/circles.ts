import { distanceTransform, labelComponents } from '../image/components.js';
import type { BuiltinParams } from './params.js';

export interface Circle {
  /** Found as the largest inscribed circle of a blob, or by Hough voting on outlines. */
  method: 'inscribed' | 'hough';
  cx: number;
  cy: number;
  r: number;
  /** Share of the blob's area that its circles explain (same for all circles of one blob). */
  explained: number;
  /** Share of the ring between r and 1.25·r that is skin: an isolated round fruit has little there. */
  rim: number;
  /** Label of the blob it came from. */
  blob: number;
  /** Blob pixels this circle claims; sqrt(claimed / π) is its size when the inscribed circle is cut short by a notch. */
  claimed: number;
  /** Bounds of the blob pixels this circle claims (nearest circle by distance / radius), inclusive. */
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/**
 * Splits skin blobs into round fruit. The distance transform's ridge peaks
 * are centres of the largest circles that fit; taking them from the largest
 * down and refusing any that sits inside one already taken separates
 * touching fruit (two touching discs give two peaks) while one disc gives
 * one. Blobs that circles explain poorly (a leaf, a stem) are dropped.
 */
export function findCircles(mask: Uint8Array, w: number, h: number, q: BuiltinParams): Circle[] {
  const minArea = Math.floor(Math.PI * q.minRadius * q.minRadius * 0.8);
  const { labels, components } = labelComponents(mask, w, h, minArea);
  if (components.length === 0) return [];
  const dt = distanceTransform(mask, w, h, q.openEdges);
  // Candidate centres: local maxima of the distance transform (3×3), at least minRadius deep.
  const candidates: number[] = [];
  // With open edges a fruit cut by the frame edge peaks on the edge itself, so the edge rows and
  // columns are searched too (neighbours beyond the frame do not count).
  const e = q.openEdges ? 0 : 1;
  for (let y = e; y < h - e; y++) {
    for (let x = e; x < w - e; x++) {
      const i = y * w + x;
      const d = dt[i]!;
      if (d < q.minRadius || !labels[i]) continue;
      let peak = true;
      for (let dy = -1; dy <= 1 && peak; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx,
            yy = y + dy;
          if ((dx || dy) && xx >= 0 && yy >= 0 && xx < w && yy < h && dt[yy * w + xx]! > d) {
            peak = false;
            break;
          }
        }
      if (peak) candidates.push(i);
    }
  }
  candidates.sort((a, b) => dt[b]! - dt[a]!);
  const perBlob = new Map<number, Array<{ cx: number; cy: number; r: number }>>();
  for (const i of candidates) {
    const label = labels[i]!;
    const x = i % w;
    const y = (i - x) / w;
    const r = dt[i]!;
    const taken = perBlob.get(label) ?? [];
    // Candidates come largest first, so taken[0] is the blob's largest circle.
    if (taken.length && r < q.minRelativeRadius * taken[0]!.r) continue;
    let ok = true;
    for (const c of taken) {
      const dist = Math.hypot(c.cx - x, c.cy - y);
      if (dist < Math.max(c.r, r) + q.overlapFactor * Math.min(c.r, r)) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    taken.push({ cx: x, cy: y, r });
    perBlob.set(label, taken);
  }
  const out: Circle[] = [];
  for (const comp of components) {
    const circles = perBlob.get(comp.label);
    if (!circles) continue;
    // Each blob pixel goes to the circle it is relatively nearest to (distance / radius); that
    // gives every fruit its own extent, and the share within 1.2 r says how round the blob is.
    const bounds = circles.map(() => ({ minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity, n: 0 }));
    let covered = 0;
    for (let y = comp.minY; y <= comp.maxY; y++) {
      for (let x = comp.minX; x <= comp.maxX; x++) {
        const i = y * w + x;
        if (labels[i] !== comp.label) continue;
        let best = 0;
        let bestRel = Infinity;
        for (let k = 0; k < circles.length; k++) {
          const c = circles[k]!;
          const rel = Math.hypot(x - c.cx, y - c.cy) / c.r;
          if (rel < bestRel) {
            bestRel = rel;
            best = k;
          }
        }
        if (bestRel <= 1.2) covered++;
        // Far-flung pixels (a leaf tip attached to the fruit) do not stretch its box.
        if (bestRel > 1.6) continue;
        const b = bounds[best]!;
        b.n++;
        if (x < b.minX) b.minX = x;
        if (x > b.maxX) b.maxX = x;
        if (y < b.minY) b.minY = y;
        if (y > b.maxY) b.maxY = y;
      }
    }
    const explained = covered / comp.area;
    if (explained < q.minExplained) continue;
    circles.forEach((c, k) => {
      const b = bounds[k]!;
      out.push({
        ...c,
        method: 'inscribed',
        explained,
        rim: rimShare(mask, w, h, c),
        blob: comp.label,
        claimed: b.n,
        minX: b.minX,
        minY: b.minY,
        maxX: b.maxX,
        maxY: b.maxY,
      });
    });
  }
  return out;
}

function rimShare(mask: Uint8Array, w: number, h: number, c: { cx: number; cy: number; r: number }): number {
  const outer = c.r * 1.25 + 1;
  const inner2 = (c.r + 1) * (c.r + 1);
  const outer2 = outer * outer;
  let on = 0;
  let all = 0;
  const x0 = Math.max(0, Math.floor(c.cx - outer));
  const x1 = Math.min(w - 1, Math.ceil(c.cx + outer));
  const y0 = Math.max(0, Math.floor(c.cy - outer));
  const y1 = Math.min(h - 1, Math.ceil(c.cy + outer));
  for (let y = y0; y <= y1; y += 1) {
    for (let x = x0; x <= x1; x += 1) {
      const d2 = (x - c.cx) ** 2 + (y - c.cy) ** 2;
      if (d2 < inner2 || d2 > outer2) continue;
      all++;
      if (mask[y * w + x]) on++;
    }
  }
  return all ? on / all : 0;
}
