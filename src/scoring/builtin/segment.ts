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
