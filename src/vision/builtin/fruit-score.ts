/**
 * The fitted fruit score of close-up frames: a logistic model over what the detector measures of
 * a circle, its weights fitted on the tuning half of the labelled photos
 * (`scripts/fit-fruit-score.ts`; docs/builtin-detector.md, "The fitted score (close-up frames)").
 * The hand-weighted score (detector.ts, scoreOf) judged the inscribed circles alone; the fitted one
 * judges those and the Hough circles together, which is what lets a close-up frame keep the Hough
 * circles of fruit cut into crescents without the false circles they bring among leaves.
 */

/** What the score reads of one circle; sizes in working pixels. */
export interface CircleEvidence {
  method: 'inscribed' | 'hough';
  /** Inscribed: share of the blob its circles explain. Hough: share of the disc that is skin. */
  explained: number;
  /** Inscribed: skin share of the ring just outside. Hough: share of the outline that voted. */
  rim: number;
  effectiveRadius: number;
  sizeFullRadius: number;
  minRadius: number;
  source: 'ripe' | 'green';
  chroma: number;
  texture: number;
  relativeL: number;
}

/** The knobs the features read (BuiltinParams has them). */
export interface FruitFeatureParams {
  ripeMinChroma: number;
  greenMaxTexture: number;
}

export const FRUIT_FEATURES = [
  'bias',
  'inscribedExplained',
  'inscribedRim',
  'houghFill',
  'houghSupport',
  'hough',
  'size',
  'logSize',
  'ripe',
  'ripeChroma',
  'greenSmooth',
  'greenLit',
  'chroma',
  'texture',
  'relativeL',
] as const;
export type FruitFeature = (typeof FRUIT_FEATURES)[number];
export type FruitScoreWeights = Record<FruitFeature, number>;

const clamp01 = (x: number) => Math.max(0, Math.min(1, x));

/**
 * The features, in FRUIT_FEATURES order. The clamped terms are the hand-weighted score's evidence;
 * the raw chroma, texture and lightness and the log size let the fit find what the clamps cut off.
 */
export function fruitFeatures(e: CircleEvidence, q: FruitFeatureParams): number[] {
  const inscribed = e.method === 'inscribed' ? 1 : 0;
  const ripe = e.source === 'ripe' ? 1 : 0;
  return [
    1,
    inscribed * e.explained,
    inscribed * e.rim,
    (1 - inscribed) * e.explained,
    (1 - inscribed) * e.rim,
    1 - inscribed,
    clamp01((e.effectiveRadius - e.minRadius) / Math.max(1, e.sizeFullRadius - e.minRadius)),
    Math.log(Math.max(1e-3, e.effectiveRadius) / e.sizeFullRadius),
    ripe,
    ripe * clamp01((e.chroma - q.ripeMinChroma) / 30),
    (1 - ripe) * clamp01(1 - e.texture / q.greenMaxTexture),
    (1 - ripe) * clamp01(e.relativeL / 15),
    e.chroma / 50,
    e.texture / 5,
    e.relativeL / 15,
  ];
}

/** The probability the fit gives that the circle is a labelled fruit (box IoU ≥ 0.3), in [0, 1]. */
export function fittedFruitScore(e: CircleEvidence, q: FruitFeatureParams, w: FruitScoreWeights): number {
  const x = fruitFeatures(e, q);
  let z = 0;
  FRUIT_FEATURES.forEach((name, k) => {
    z += w[name] * x[k]!;
  });
  return 1 / (1 + Math.exp(-z));
}

/**
 * Fitted by `node --import tsx scripts/fit-fruit-score.ts` (L2 0.01) on the circles of the 18
 * tuning photos; the check photos were not used.
 */
export const FRUIT_SCORE_WEIGHTS: FruitScoreWeights = {
  bias: -8.156,
  inscribedExplained: -2.038,
  inscribedRim: -2.251,
  houghFill: 0.922,
  houghSupport: 3.202,
  hough: -3.947,
  size: 1.589,
  logSize: 4.807,
  ripe: 5.783,
  ripeChroma: 0.031,
  greenSmooth: 3.433,
  greenLit: 4.19,
  chroma: 1.047,
  texture: 2.232,
  relativeL: 0.194,
};

/**
 * The same model fitted for small-fruit frames (`scripts/fit-fruit-score.ts --small`, L2 0.01): on
 * the circles of the 18 tuning photos scaled so that their median fruit is 16, 24 and 32 working px
 * across, analysed as small fruit, and of rendered walk frames of seeds 1–3 (both speeds, a frame
 * every 2 s); the check photos and the other seeds were not used.
 */
export const SMALL_FRUIT_SCORE_WEIGHTS: FruitScoreWeights = {
  bias: -8.719,
  inscribedExplained: 3.931,
  inscribedRim: -3.737,
  houghFill: 5.9,
  houghSupport: 5.822,
  hough: -6.89,
  size: 1.014,
  logSize: 4.59,
  ripe: 5.924,
  ripeChroma: 0.935,
  greenSmooth: 5.072,
  greenLit: 2.395,
  chroma: -0.4,
  texture: 4.039,
  relativeL: 0.811,
};
