import type { RgbImage } from '../types.js';
import { hueAngle, imageToLab, type LabPlanes } from '../image/colour.js';
import { boxMean, localDetrendedStdDev, localStdDev } from '../image/filters.js';
import { greyWorld } from '../image/white-balance.js';

/** Per-pixel planes the segmenter reads, computed once per frame at the working size. */
export interface FramePlanes {
  width: number;
  height: number;
  lab: LabPlanes;
  /** Chroma C*ab. */
  chroma: Float32Array;
  /** Hue angle, degrees 0–360. */
  hue: Float32Array;
  /** Texture: local standard deviation of L* over 5×5, after removing the local plane when detrended. */
  texture: Float32Array;
  /** L* minus its mean over a wide window: fruit is lit and bulges, leaves around it are shaded. */
  relativeL: Float32Array;
  /** The settings they were computed with (see planesFor). */
  detrended: boolean;
  wideRadius: number;
  maxGreenCorrection: number;
  gains: [number, number, number];
}

export function computePlanes(image: RgbImage, wideRadius: number, maxGreenCorrection = Infinity, detrendTexture = false): FramePlanes {
  const { gains } = greyWorld(image, { maxGreenCorrection });
  const lab = imageToLab(image, gains);
  const n = image.width * image.height;
  const chroma = new Float32Array(n);
  const hue = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const a = lab.a[i]!;
    const b = lab.b[i]!;
    chroma[i] = Math.sqrt(a * a + b * b);
    hue[i] = hueAngle(a, b);
  }
  const texture = (detrendTexture ? localDetrendedStdDev : localStdDev)(lab.L, image.width, image.height, 2);
  const wide = boxMean(lab.L, image.width, image.height, wideRadius);
  const relativeL = new Float32Array(n);
  for (let i = 0; i < n; i++) relativeL[i] = lab.L[i]! - wide[i]!;
  return {
    width: image.width,
    height: image.height,
    lab,
    chroma,
    hue,
    texture,
    relativeL,
    detrended: detrendTexture,
    wideRadius,
    maxGreenCorrection,
    gains,
  };
}

/** The planes of `image` for these settings, reusing `prior` (the same frame's, other settings) where they agree. */
export function planesFor(
  image: RgbImage,
  wideRadius: number,
  maxGreenCorrection: number,
  detrendTexture: boolean,
  prior?: FramePlanes,
): FramePlanes {
  if (
    !prior ||
    prior.width !== image.width ||
    prior.height !== image.height ||
    prior.wideRadius !== wideRadius ||
    prior.maxGreenCorrection !== maxGreenCorrection
  )
    return computePlanes(image, wideRadius, maxGreenCorrection, detrendTexture);
  if (prior.detrended === detrendTexture) return prior;
  // The plain texture is where the detrended one starts.
  const texture = detrendTexture
    ? localDetrendedStdDev(prior.lab.L, image.width, image.height, 2, prior.texture)
    : localStdDev(prior.lab.L, image.width, image.height, 2);
  return { ...prior, texture, detrended: detrendTexture };
}
