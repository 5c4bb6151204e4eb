import type { RgbImage } from '../types.js';
import { luma709, srgbToLinear } from './colour.js';

export interface WhiteBalanceOptions {
  /** Pixels with any channel at or above this (0–255) are clipped and say nothing about the light. Default 250. */
  clipAbove?: number;
  /** Pixels darker than this luma (0–255) are mostly noise. Default 25. */
  darkBelow?: number;
  /** Gains are limited to [1/maxGain, maxGain] so a frame of one colour is not wrecked. Default 2.5. */
  maxGain?: number;
  /** Look at every n-th pixel; a frame has far more than the statistics need. Default 3. */
  stride?: number;
  /**
   * Most green the frame's mean may be taken to owe to the light: the geometric mean of the red
   * and blue gains (the magenta added) is limited to this, the gains keeping their ratio (the
   * blue–amber correction). Grow lights cast magenta, lamps and daylight amber or blue, but
   * hardly any light is green: a green mean is a frame of leaves. Default: unlimited.
   */
  maxGreenCorrection?: number;
}

export interface WhiteBalance {
  /** Multipliers for linear R, G, B, normalised so green is 1. */
  gains: [number, number, number];
  /** Pixels that voted. */
  used: number;
}

/**
 * Grey-world white balance in linear light, robust to what breaks it in a
 * greenhouse: clipped highlights and near-black shadows are left out, and
 * the gains are bounded. Under magenta LED grow light the grey-world mean is
 * pulled strongly, which is exactly the cast to remove before reading a hue.
 */
export function greyWorld(image: RgbImage, options: WhiteBalanceOptions = {}): WhiteBalance {
  const clip = options.clipAbove ?? 250;
  const dark = options.darkBelow ?? 25;
  const maxGain = options.maxGain ?? 2.5;
  const stride = Math.max(1, Math.floor(options.stride ?? 3));
  const d = image.data;
  const n = image.width * image.height;
  let sr = 0;
  let sg = 0;
  let sb = 0;
  let used = 0;
  for (let i = 0; i < n; i += stride) {
    const p = i * 3;
    const r = d[p]!;
    const g = d[p + 1]!;
    const b = d[p + 2]!;
    if (r >= clip || g >= clip || b >= clip) continue;
    if (luma709(r, g, b) < dark) continue;
    sr += srgbToLinear(r);
    sg += srgbToLinear(g);
    sb += srgbToLinear(b);
    used++;
  }
  if (used < 16 || sr <= 0 || sg <= 0 || sb <= 0) return { gains: [1, 1, 1], used };
  const bound = (x: number) => Math.min(maxGain, Math.max(1 / maxGain, x));
  const gr = sg / sr;
  const gb = sg / sb;
  const magenta = Math.sqrt(gr * gb);
  const maxGreen = options.maxGreenCorrection ?? Infinity;
  const k = magenta > maxGreen ? maxGreen / magenta : 1;
  return { gains: [bound(gr * k), 1, bound(gb * k)], used };
}

/** A copy of the frame with linear-light gains applied, back in 8-bit sRGB. */
export function applyGains(image: RgbImage, gains: readonly [number, number, number]): RgbImage {
  const lut = [0, 1, 2].map((c) => {
    const t = new Uint8Array(256);
    for (let v = 0; v < 256; v++) {
      const lin = Math.min(1, srgbToLinear(v) * gains[c]!);
      const s = lin <= 0.0031308 ? lin * 12.92 : 1.055 * Math.pow(lin, 1 / 2.4) - 0.055;
      t[v] = Math.round(s * 255);
    }
    return t;
  }) as [Uint8Array, Uint8Array, Uint8Array];
  const out = new Uint8Array(image.width * image.height * 3);
  const d = image.data;
  for (let p = 0; p < out.length; p += 3) {
    out[p] = lut[0][d[p]!]!;
    out[p + 1] = lut[1][d[p + 1]!]!;
    out[p + 2] = lut[2][d[p + 2]!]!;
  }
  return { width: image.width, height: image.height, data: out };
}
