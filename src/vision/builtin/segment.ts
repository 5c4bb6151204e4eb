import { labelComponents } from '../image/components.js';
import { close, dilate, majority, open } from '../image/filters.js';
import type { FramePlanes } from './features.js';
import type { BuiltinParams } from './params.js';

/**
 * Skin masks. Ripe skin (red to orange) stands out by hue and chroma alone.
 * Green fruit shares its hue with the leaves around it, so its mask also
 * asks for what a leaf lacks: lighter than the neighbourhood (a lit, bulging
 * surface) and smooth (no veins or hairs); shape decides the rest.
 */
export function ripeMask(p: FramePlanes, q: BuiltinParams): Uint8Array {
  const n = p.width * p.height;
  const m = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const h = p.hue[i]!;
    if (p.chroma[i]! >= q.ripeMinChroma && p.lab.L[i]! >= q.ripeMinL && (h < q.ripeMaxHue || h >= q.ripeHueFromNegative)) m[i] = 1;
  }
  return cleanMask(m, p.width, p.height, q);
}

/** `exclude`: the ripe mask; a highlight on red skin can read green-ish after white balance and is not green fruit. */
export function greenMask(p: FramePlanes, q: BuiltinParams, exclude?: Uint8Array): Uint8Array {
  const n = p.width * p.height;
  const m = new Uint8Array(n);
  const near = exclude ? dilate(exclude, p.width, p.height, 2) : undefined;
  for (let i = 0; i < n; i++) {
    if (near && near[i]) continue;
    const h = p.hue[i]!;
    const c = p.chroma[i]!;
    if (
      h >= q.greenMinHue &&
      h <= q.greenMaxHue &&
      c >= q.greenMinChroma &&
      c <= q.greenMaxChroma &&
      p.lab.L[i]! >= q.greenMinL &&
      p.relativeL[i]! >= q.greenMinRelativeL &&
      p.texture[i]! <= q.greenMaxTexture
    )
      m[i] = 1;
  }
  return cleanMask(m, p.width, p.height, q);
}

/**
 * Green skin grown from the pieces `greenMask` found. Those pieces are only the lit, smooth
 * part of a green fruit: its shaded side is darker than the neighbourhood, and the highlight
 * and the calyx cut the rest into a crescent. Each piece grows into the same-coloured skin
 * around it (lightness down to greenWeakMinL, chroma from greenWeakMinChroma, no smoothness
 * asked) and into highlights, but only `greenGrow` × its own equivalent radius, so a leaf of
 * the same hue beside a fruit is not swallowed. Skin next to `ripe` is left to the ripe mask.
 */
export function growGreen(p: FramePlanes, q: BuiltinParams, seeds: Uint8Array, ripe?: Uint8Array): Uint8Array {
  if (!(q.greenGrow > 0)) return seeds;
  const n = p.width * p.height;
  const near = ripe ? dilate(ripe, p.width, p.height, 2) : undefined;
  const weak = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (near && near[i]) continue;
    const h = p.hue[i]!;
    const c = p.chroma[i]!;
    const L = p.lab.L[i]!;
    if (h >= q.greenMinHue && h <= q.greenMaxHue && c >= q.greenWeakMinChroma && c <= q.greenMaxChroma && L >= q.greenWeakMinL) weak[i] = 1;
    else if (isHighlight(L, c, q)) weak[i] = 1;
  }
  return cleanMask(growInto(seeds, weak, p.width, p.height, q.greenGrow), p.width, p.height, q);
}

/**
 * Ripe skin grown the same way into the warm skin around it: orange to yellow (hue below
 * ripeWeakMaxHue) at a lower chroma, where a highlight or the colour of a turning fruit takes
 * a pixel out of the ripe range and would cut the fruit in two.
 */
export function growRipe(p: FramePlanes, q: BuiltinParams, seeds: Uint8Array): Uint8Array {
  if (!(q.ripeGrow > 0)) return seeds;
  const n = p.width * p.height;
  const weak = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const h = p.hue[i]!;
    const c = p.chroma[i]!;
    const L = p.lab.L[i]!;
    if (c >= q.ripeWeakMinChroma && L >= q.ripeMinL && (h < q.ripeWeakMaxHue || h >= q.ripeHueFromNegative)) weak[i] = 1;
    else if (isHighlight(L, c, q)) weak[i] = 1;
  }
  return cleanMask(growInto(seeds, weak, p.width, p.height, q.ripeGrow), p.width, p.height, q);
}

/** A specular highlight: very light and nearly colourless. */
function isHighlight(L: number, chroma: number, q: BuiltinParams): boolean {
  return L >= q.highlightMinL && chroma < q.greenMinChroma + 10;
}

/**
 * Geodesic growth: every seed blob spreads (4-connected) through `allowed` pixels up to
 * `factor` × its equivalent radius (√(area/π)). Seeds are kept.
 */
export function growInto(seeds: Uint8Array, allowed: Uint8Array, w: number, h: number, factor: number): Uint8Array {
  const { labels, components } = labelComponents(seeds, w, h);
  const limit = new Float32Array(components.length + 1);
  for (const c of components) limit[c.label] = factor * Math.sqrt(c.area / Math.PI);
  const owner = spreadLabels(labels, allowed, w, h, limit);
  const out = seeds.slice();
  for (let i = 0; i < out.length; i++) if (owner[i]) out[i] = 1;
  return out;
}

/**
 * Breadth-first geodesic territories: every labelled pixel spreads its label (4-connected)
 * through `allowed` pixels no label holds yet, label o at most limit[o] steps (unbounded
 * without `limit`). The owning label per pixel, 0 for none.
 */
function spreadLabels(labels: ArrayLike<number>, allowed: Uint8Array, w: number, h: number, limit?: Float32Array): Int32Array {
  const n = w * h;
  const owner = new Int32Array(n);
  // A pixel is queued once at most (it is owned from then on), so each queue holds at most n.
  let queue = new Int32Array(n);
  let next = new Int32Array(n);
  let queued = 0;
  for (let i = 0; i < n; i++)
    if (labels[i]) {
      owner[i] = labels[i]!;
      queue[queued++] = i;
    }
  for (let d = 1; queued; d++) {
    let added = 0;
    for (let q = 0; q < queued; q++) {
      const i = queue[q]!;
      const o = owner[i]!;
      if (limit && d > limit[o]!) continue;
      const x = i % w;
      // Left, right, up, down: the order a pixel reached by two labels in one step is settled by.
      let j = i - 1;
      if (x > 0 && !owner[j] && allowed[j]) {
        owner[j] = o;
        next[added++] = j;
      }
      j = i + 1;
      if (x < w - 1 && !owner[j] && allowed[j]) {
        owner[j] = o;
        next[added++] = j;
      }
      j = i - w;
      if (i >= w && !owner[j] && allowed[j]) {
        owner[j] = o;
        next[added++] = j;
      }
      j = i + w;
      if (j < n && !owner[j] && allowed[j]) {
        owner[j] = o;
        next[added++] = j;
      }
    }
    [queue, next] = [next, queue];
    queued = added;
  }
  return owner;
}

function cleanMask(mask: Uint8Array, w: number, h: number, q: BuiltinParams): Uint8Array {
  // Smooth the ragged edge, drop specks and hairline bridges, close small gaps, then fill highlights.
  let m = majority(mask, w, h, 1, 0.5);
  m = open(m, w, h, 1);
  m = close(m, w, h, q.closeRadius);
  return fillHoles(m, w, h, q.maxHoleArea);
}

/** Fills background regions enclosed by the mask (not touching the frame edge) up to maxArea pixels. */
export function fillHoles(mask: Uint8Array, w: number, h: number, maxArea: number): Uint8Array {
  const inv = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) inv[i] = mask[i] ? 0 : 1;
  const { labels, components } = labelComponents(inv, w, h);
  const fill = new Uint8Array(components.length + 1);
  for (const c of components) {
    const touchesEdge = c.minX === 0 || c.minY === 0 || c.maxX === w - 1 || c.maxY === h - 1;
    if (!touchesEdge && c.area <= maxArea) fill[c.label] = 1;
  }
  const out = mask.slice();
  for (let i = 0; i < out.length; i++) if (!out[i] && fill[labels[i]!]) out[i] = 1;
  return out;
}

/**
 * Cuts a skin mask between the territories of its seeds. In a cluster of small fruit the skin
 * grown round each fruit's lit, strict skin (its seed) runs into the next fruit's, and the union
 * is one blob whose inscribed circles span two fruit or none. Every mask pixel goes to the seed it
 * is geodesically nearest (4-connected, inside the mask); where two seeds' territories meet, both
 * sides of the seam are cleared, so each seed's fruit becomes a blob of its own. Seeds smaller
 * than `minSeedArea` (specks, a lit sepal) own nothing and cut nothing.
 */
export function splitBySeeds(mask: Uint8Array, seeds: Uint8Array, w: number, h: number, minSeedArea: number): Uint8Array {
  const inside = new Uint8Array(mask.length);
  for (let i = 0; i < inside.length; i++) inside[i] = mask[i]! & seeds[i]!;
  const { labels, components } = labelComponents(inside, w, h, minSeedArea);
  if (components.length < 2) return mask;
  const owner = spreadLabels(labels, mask, w, h);
  const out = mask.slice();
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const o = owner[i]!;
      if (!o) continue;
      if (x < w - 1 && owner[i + 1] && owner[i + 1] !== o) out[i] = out[i + 1] = 0;
      if (y < h - 1 && owner[i + w] && owner[i + w] !== o) out[i] = out[i + w] = 0;
    }
  return out;
}
