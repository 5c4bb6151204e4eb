import type { RgbImage } from '../types.js';

/**
 * sRGB (8-bit, D65) to CIE 1976 L*a*b* with the D65 white, and the LCh hue
 * angle. The 8-bit decode to linear light is a 256-entry table so a whole
 * frame converts without per-pixel Math.pow.
 */

const SRGB_TO_LINEAR = new Float32Array(256);
for (let i = 0; i < 256; i++) {
  const c = i / 255;
  SRGB_TO_LINEAR[i] = c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
}

/** D65 reference white (2° observer), Y normalised to 1. */
const XN = 0.95047;
const YN = 1.0;
const ZN = 1.08883;
const EPSILON = 216 / 24389;
const KAPPA = 24389 / 27;

export function srgbToLinear(v: number): number {
  return SRGB_TO_LINEAR[Math.max(0, Math.min(255, Math.round(v)))]!;
}

function f(t: number): number {
  return t > EPSILON ? Math.cbrt(t) : (KAPPA * t + 16) / 116;
}

export interface Lab {
  L: number;
  a: number;
  b: number;
}

/** One sRGB colour (0–255 channels) to L*a*b*. */
export function srgbToLab(r: number, g: number, b: number): Lab {
  const lr = srgbToLinear(r);
  const lg = srgbToLinear(g);
  const lb = srgbToLinear(b);
  return linearToLab(lr, lg, lb);
}

function linearToLab(lr: number, lg: number, lb: number): Lab {
  const x = (0.4124564 * lr + 0.3575761 * lg + 0.1804375 * lb) / XN;
  const y = (0.2126729 * lr + 0.7151522 * lg + 0.072175 * lb) / YN;
  const z = (0.0193339 * lr + 0.119192 * lg + 0.9503041 * lb) / ZN;
  const fx = f(x);
  const fy = f(y);
  const fz = f(z);
  return { L: 116 * fy - 16, a: 500 * (fx - fy), b: 200 * (fy - fz) };
}

/** LCh hue angle in degrees, 0–360, measured from +a* towards +b*. */
export function hueAngle(a: number, b: number): number {
  const h = (Math.atan2(b, a) * 180) / Math.PI;
  return h < 0 ? h + 360 : h;
}

export function chroma(a: number, b: number): number {
  return Math.hypot(a, b);
}

/** Planes of a whole image in L*a*b*, one Float32Array each, row-major like the image. */
export interface LabPlanes {
  width: number;
  height: number;
  L: Float32Array;
  a: Float32Array;
  b: Float32Array;
}

/**
 * Converts a frame, optionally after per-channel gains (white balance) applied
 * in linear light, which is where a change of illuminant acts.
 */
export function imageToLab(image: RgbImage, gains: readonly [number, number, number] = [1, 1, 1]): LabPlanes {
  const n = image.width * image.height;
  const L = new Float32Array(n);
  const A = new Float32Array(n);
  const B = new Float32Array(n);
  const d = image.data;
  const [gr, gg, gb] = gains;
  // Cube root via a fine table over [0, 1.2] would be faster still; Math.cbrt is ~10 ns and clear.
  for (let i = 0, p = 0; i < n; i++, p += 3) {
    const lr = Math.min(1, SRGB_TO_LINEAR[d[p]!]! * gr);
    const lg = Math.min(1, SRGB_TO_LINEAR[d[p + 1]!]! * gg);
    const lb = Math.min(1, SRGB_TO_LINEAR[d[p + 2]!]! * gb);
    const x = (0.4124564 * lr + 0.3575761 * lg + 0.1804375 * lb) / XN;
    const y = 0.2126729 * lr + 0.7151522 * lg + 0.072175 * lb;
    const z = (0.0193339 * lr + 0.119192 * lg + 0.9503041 * lb) / ZN;
    const fx = x > EPSILON ? Math.cbrt(x) : (KAPPA * x + 16) / 116;
    const fy = y > EPSILON ? Math.cbrt(y) : (KAPPA * y + 16) / 116;
    const fz = z > EPSILON ? Math.cbrt(z) : (KAPPA * z + 16) / 116;
    L[i] = 116 * fy - 16;
    A[i] = 500 * (fx - fy);
    B[i] = 200 * (fy - fz);
  }
  return { width: image.width, height: image.height, L, a: A, b: B };
}

/** Rec. 709 luma of one gamma-encoded 8-bit sRGB pixel (0–255). */
export function luma709(r: number, g: number, b: number): number {
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Rec. 709 luma of an 8-bit sRGB frame (gamma-encoded, 0–255), the usual plane for sharpness and motion. */
export function luminance(image: RgbImage): Float32Array {
  const n = image.width * image.height;
  const out = new Float32Array(n);
  const d = image.data;
  for (let i = 0, p = 0; i < n; i++, p += 3) out[i] = luma709(d[p]!, d[p + 1]!, d[p + 2]!);
  return out;
}
