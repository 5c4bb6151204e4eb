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
  /** Closing radius that bridges skin cut by thin stems, hairs and sepals in front of a fruit. */
  closeRadius: number;
  /** Holes (highlights, a calyx) up to this area are filled before shape analysis. */
  maxHoleArea: number;
  /** Smallest fruit radius considered. */
  minRadius: number;
  /** Two circles are separate fruit when their centres are at least max(r)+overlapFactor·min(r) apart. */
  overlapFactor: number;
  /** A blob whose circles explain less than this share of its area is foliage, not fruit. */
  minExplained: number;
  /** Within one blob, a circle smaller than this share of the blob's largest is a ragged edge, not a fruit. */
  minRelativeRadius: number;
  /** How fruit circles are found: Hough voting on the mask outline, largest inscribed circles, or both. */
  circleMethod: 'hough' | 'inscribed' | 'both';
  /** Largest fruit radius looked for by the Hough transform. */
  maxRadius: number;
  /** Hough circles need this share of their outline visible… */
  minSupport: number;
  /** …and this share of their disc to be skin. */
  minFill: number;
  /** Radius (working pixels) at which the size evidence is full; it grows linearly from minRadius. */
  sizeFullRadius: number;
  /** Score offsets by evidence kind: ripe skin is the surer sign of a fruit than green skin among leaves. */
  ripeBias: number;
  greenBias: number;
  /** Find shapes on ripe ∪ green skin together (a turning fruit is one blob), reading ripeness per circle. */
  unionMasks: boolean;
  /**
   * Raw score that is reported as `calibratedAt` (a piecewise-linear, monotone map): the raw
   * threshold where detected and labelled counts balanced on the tuning photos is made to
   * coincide with the API's default conf.
   */
  balancedRawScore: number;
  calibratedAt: number;
  /** Size a fruit by the skin its circle claims, not only its inscribed circle. */
  useClaimedSize: boolean;
  /** Box half-size = radius × this (the inscribed circle misses the outer rim). */
  boxScale: number;
}

export const DEFAULT_PARAMS: BuiltinParams = {
  workingLongSide: 640,
  ripeMinChroma: 28,
  ripeMaxHue: 80,
  ripeHueFromNegative: 335,
  ripeMinL: 18,
  greenMinHue: 80,
  greenMaxHue: 150,
  greenMinChroma: 8,
  greenMaxChroma: 60,
  greenMinL: 45,
  greenMinRelativeL: 0,
  greenMaxTexture: 8,
  wideRadius: 24,
  closeRadius: 2,
  maxHoleArea: 3000,
  minRadius: 7,
  overlapFactor: 0.9,
  minExplained: 0.35,
  minRelativeRadius: 0.6,
  circleMethod: 'inscribed',
  maxRadius: 90,
  minSupport: 0.3,
  minFill: 0.4,
  sizeFullRadius: 14,
  ripeBias: 0.1,
  greenBias: 0,
  unionMasks: true,
  balancedRawScore: 0.7,
  calibratedAt: 0.35,
  useClaimedSize: true,
  boxScale: 1.25,
};
