import type { Box } from '../types.js';
import type { FramePlanes } from './features.js';

export interface StemParams {
  /** Half-widths (working pixels) at which a stem is looked for: thin, medium, thick. */
  scales: readonly number[];
  /** Least lightness step (L*) between a stem and both of its sides. */
  minContrast: number;
  /** Rows per band when following a stem down the frame. */
  bandHeight: number;
  /** A band supports a stem at a column when this share of its rows has a ridge there. */
  bandSupport: number;
  /** Most sideways drift of a stem between bands, in working pixels. */
  maxDrift: number;
  /** A stem must be seen over this share of the frame height. */
  minLengthShare: number;
  /** Two stems closer than this (working pixels) are one. */
  minSeparation: number;
}

export const DEFAULT_STEM_PARAMS: StemParams = {
  scales: [2, 4, 7],
  minContrast: 5,
  bandHeight: 16,
  bandSupport: 0.4,
  maxDrift: 4,
  minLengthShare: 0.75,
  minSeparation: 14,
};

export interface StemFound {
  /** Working-frame box. */
  box: Box;
  /** Share of the frame height along which the stem was seen. */
  support: number;
}

/**
 * Main stems of a high-wire crop: thin, long, roughly vertical green-brown
 * ridges. A ridge is a column lighter (or darker) than both sides at one of
 * a few widths, which a leaf (wide) or a leaf edge (one-sided) is not; a
 * stem is a path of ridge support from band to band down the frame that
 * drifts sideways only a little, found by dynamic programming.
 */
export function findStems(p: FramePlanes, exclude: Uint8Array, q: StemParams = DEFAULT_STEM_PARAMS): StemFound[] {
  const w = p.width;
  const h = p.height;
  const L = p.lab.L;
  const ridge = new Uint8Array(w * h);
  // Contrast shrinks with the light: in a dim frame a stem stands out by fewer L* units.
  let sumL = 0;
  for (let i = 0; i < L.length; i += 7) sumL += L[i]!;
  const meanL = sumL / Math.ceil(L.length / 7);
  const contrast = q.minContrast * Math.min(1, Math.max(0.35, meanL / 50));
  const prefix = new Float64Array(w + 1);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    prefix[0] = 0;
    for (let x = 0; x < w; x++) prefix[x + 1] = prefix[x]! + L[row + x]!;
    const mean = (a: number, b: number) => (prefix[b]! - prefix[a]!) / (b - a);
    for (let x = 0; x < w; x++) {
      const i = row + x;
      if (exclude[i]) continue;
      const hue = p.hue[i]!;
      // Green to yellow-brown; grey-brown stems (low chroma) pass too.
      if (p.chroma[i]! >= 6 && (hue < 45 || hue > 175)) continue;
      for (const s of q.scales) {
        if (x - 2 * s < 0 || x + 2 * s + 1 > w) continue;
        const centre = mean(x - (s >> 1), x + (s >> 1) + 1);
        const left = mean(x - 2 * s, x - s);
        const right = mean(x + s + 1, x + 2 * s + 1);
        const bright = centre - Math.max(left, right);
        const dark = Math.min(left, right) - centre;
        if (bright >= contrast || dark >= contrast) {
          ridge[i] = 1;
          break;
        }
      }
    }
  }
  const bands = Math.floor(h / q.bandHeight);
  if (bands < 3) return [];
  // support[b][x]: share of rows of band b with a ridge within ±1 px of x.
  const support = new Float32Array(bands * w);
  for (let b = 0; b < bands; b++) {
    for (let y = b * q.bandHeight; y < (b + 1) * q.bandHeight; y++) {
      const row = y * w;
      for (let x = 1; x < w - 1; x++) {
        if (ridge[row + x - 1] || ridge[row + x] || ridge[row + x + 1]) support[b * w + x]! += 1 / q.bandHeight;
      }
    }
  }
  // Best path score ending at (b, x), counting supported bands; `from` keeps the path.
  const score = new Float32Array(bands * w);
  const from = new Int16Array(bands * w);
  for (let x = 0; x < w; x++) score[x] = support[x]! >= q.bandSupport ? 1 : 0;
  for (let b = 1; b < bands; b++) {
    for (let x = 0; x < w; x++) {
      let best = -1;
      let arg = 0;
      for (let dx = -q.maxDrift; dx <= q.maxDrift; dx++) {
        const xx = x + dx;
        if (xx < 0 || xx >= w) continue;
        // Prefer straight paths on ties.
        const v = score[(b - 1) * w + xx]! - Math.abs(dx) * 1e-3;
        if (v > best) {
          best = v;
          arg = xx;
        }
      }
      score[b * w + x] = best + (support[b * w + x]! >= q.bandSupport ? 1 : 0);
      from[b * w + x] = arg;
    }
  }
  const last = (bands - 1) * w;
  const ends: number[] = [];
  for (let x = 0; x < w; x++) if (score[last + x]! >= q.minLengthShare * bands) ends.push(x);
  ends.sort((a, b) => score[last + b]! - score[last + a]!);
  const stems: StemFound[] = [];
  const taken: number[][] = [];
  for (const end of ends) {
    const path = new Array<number>(bands);
    let x = end;
    for (let b = bands - 1; b >= 0; b--) {
      path[b] = x;
      x = from[b * w + x]!;
    }
    // One stem, one path: refuse a path that runs along one already taken.
    const clash = taken.some((t) => {
      let near = 0;
      for (let b = 0; b < bands; b++) if (Math.abs(t[b]! - path[b]!) < q.minSeparation) near++;
      return near > bands * 0.3;
    });
    if (clash) continue;
    taken.push(path);
    let minX = w;
    let maxX = 0;
    let firstBand = -1;
    let lastBand = -1;
    let seen = 0;
    for (let b = 0; b < bands; b++) {
      const px = path[b]!;
      if (support[b * w + px]! >= q.bandSupport) {
        seen++;
        if (firstBand < 0) firstBand = b;
        lastBand = b;
        minX = Math.min(minX, px);
        maxX = Math.max(maxX, px);
      }
    }
    stems.push({
      box: [Math.max(0, minX - 3), firstBand * q.bandHeight, Math.min(w, maxX + 4), Math.min(h, (lastBand + 1) * q.bandHeight)],
      support: seen / bands,
    });
  }
  return stems;
}
