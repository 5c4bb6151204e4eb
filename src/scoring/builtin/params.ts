/**
 * Every number the built-in detector decides with, in one object so the
 * accuracy bench can report what it ran with and a caller can override one.
 * Sizes are in pixels of the working frame (long side `workingLongSide`).
 */
export interface BuiltinParams {
  /** Frames are analysed at this long side; boxes are scaled back to the input frame. */
  workingLongSide: number;
  /** Ripe (red/orange/turning) skin: chroma at least this… */
  ripeMinChroma: number;
  /** …and hue below this (degrees, wrapping past 360 down to ripeHueFromNegative). */
  ripeMaxHue: number;
  ripeHueFromNegative: number;
  ripeMinL: number;
  /** Green skin: hue within [greenMinHue, greenMaxHue]… */
  greenMinHue: number;
  greenMaxHue: number;
  /** …chroma within [greenMinChroma, greenMaxChroma]… */
  greenMinChroma: number;
  greenMaxChroma: number;
  /** …lighter than this L*… */
  greenMinL: number;
  /** …and lighter than its surroundings by this much (L* units)… */
  greenMinRelativeL: number;
  /** …and smooth: local L* standard deviation below this. */
  greenMaxTexture: number;
  /** Window radius of the "surroundings" for relative lightness. */
  wideRadius: number;
  /** Holes (highlights, a calyx) up to this area are filled before shape analysis. */
  maxHoleArea: number;
  /** Smallest fruit radius considered. */
  minRadius: number;
  /** Two circles are separate fruit when their centres are at least max(r)+overlapFactor·min(r) apart. */
  overlapFactor: number;
  /** A blob whose circles explain less than this share of its area is foliage, not fruit. */
  minExplained: number;
  /** Box half-size = radius × this (the inscribed circle misses the outer rim). */
  boxScale: number;
}

export const DEFAULT_PARAMS: BuiltinParams = {
  workingLongSide: 640,
  ripeMinChroma: 28,
  ripeMaxHue: 80,
  ripeHueFromNegative: 335,
  ripeMinL: 18,
  greenMinHue: 88,
  greenMaxHue: 150,
  greenMinChroma: 8,
  greenMaxChroma: 60,
  greenMinL: 45,
  greenMinRelativeL: 4,
  greenMaxTexture: 4.5,
  wideRadius: 24,
  maxHoleArea: 500,
  minRadius: 6,
  overlapFactor: 0.5,
  minExplained: 0.35,
  boxScale: 1.15,
};
