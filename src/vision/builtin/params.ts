import { FRUIT_SCORE_WEIGHTS, SMALL_FRUIT_SCORE_WEIGHTS, type FruitScoreWeights } from './fruit-score.js';

/**
 * Every number the built-in detector decides with, in one object so the
 * accuracy bench can report what it ran with and a caller can override one.
 * Sizes are in pixels of the working frame (long side `workingLongSide`).
 */
export interface BuiltinParams {
  /** Frames are analysed at this long side; boxes are scaled back to the input frame. */
  workingLongSide: number;
  /**
   * White balance: the most green cast the grey world may remove (the geometric mean of its red
   * and blue gains). A frame of leaves is green on average without any green light.
   */
  wbMaxGreenCorrection: number;
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
  /** …and smooth: local L* standard deviation (of what the shading gradient leaves, with detrendTexture) below this. */
  greenMaxTexture: number;
  /**
   * With litRefFactor set, a green circle's lit evidence (how far its skin is lit above its
   * surroundings, in L*) is full at litRefFactor × the frame's green circles' 0.75 quantile of it,
   * between 8 and 15; otherwise (0, and in close-up frames) at 15. Soft light lights every fruit
   * of a frame less.
   */
  litRefFactor: number;
  /** Texture is the local L* spread left after removing the local shading gradient (a plane), not the plain spread. */
  detrendTexture: boolean;
  /** Green skin grows from the pieces found above into same-hue skin up to this × the piece's equivalent radius (0: off)… */
  greenGrow: number;
  /** …of L* down to this and chroma from this (still within the green hue range and greenMaxChroma)… */
  greenWeakMinL: number;
  greenWeakMinChroma: number;
  /** …and into highlights: at least this L*, chroma below greenMinChroma + 10. */
  highlightMinL: number;
  /** Ripe skin grows likewise (× equivalent radius, 0: off) into warm skin: hue below ripeWeakMaxHue, chroma from ripeWeakMinChroma. */
  ripeGrow: number;
  ripeWeakMaxHue: number;
  ripeWeakMinChroma: number;
  /** A fruit's hue and chroma are read on the skin found before growth, where it covers at least 30 % of the disc. */
  colourFromSeeds: boolean;
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
  /** Size evidence relative to the frame's larger candidates (0: off): see sizeFullRadiusFor. */
  sizeRefFactor: number;
  sizeRefMinCount: number;
  sizeRefQuantile: number;
  /** Score offsets by evidence kind: ripe skin is the surer sign of a fruit than green skin among leaves. */
  ripeBias: number;
  greenBias: number;
  /**
   * Seeds (strict skin blobs) at least this radius (as an equal-area disc, working pixels) each own
   * the grown skin geodesically nearest them, and the union mask is cut where two seeds' skin meets
   * (see splitBySeeds); 0: off.
   */
  splitMinSeedRadius: number;
  /** The frame edge is not a fruit's outline: a blob cut by it is sized by its uncut part (walk frames). */
  openEdges: boolean;
  /** Find shapes on ripe ∪ green skin together (a turning fruit is one blob), reading ripeness per circle. */
  unionMasks: boolean;
  /**
   * Raw score that is reported as `calibratedAt` (a piecewise-linear, monotone map): the raw
   * threshold where detected and labelled counts balanced on the tuning photos is made to
   * coincide with the API's default conf.
   */
  balancedRawScore: number;
  calibratedAt: number;
  /**
   * How a close-up frame (one the small-fruit analysis does not take) scores its circles: 'weighted',
   * the hand-weighted evidence on inscribed circles; 'fitted', the logistic score fitted on the
   * tuning photos (fruit-score.ts) on inscribed and Hough circles together. The small-fruit gate
   * reads the hand-weighted score either way.
   */
  closeUpScore: 'weighted' | 'fitted';
  /**
   * How a small-fruit frame scores its circles: 'weighted', the hand-weighted evidence (the
   * default), or 'fitted', the logistic model with the `smallFruit` settings' own fruitScoreWeights,
   * read through smallFruitScoreKnots. 'fitted' counts the rendered walks closer (102 of 102 within
   * 5 %) but real fruit at walk sizes worse (the 48-px photo wall −37 % against −27 %), so it is not
   * the default (docs/builtin-detector.md, "The fitted score of small-fruit frames").
   */
  smallFruitScore: 'weighted' | 'fitted';
  /**
   * The fitted small-fruit score's map from the model's probability to the reported score:
   * piecewise linear through (0, 0), these [raw, score] knots and (1, 1). Raw 0.82, where the
   * tuning walks (seeds 1–10) balance, reads 0.5, the video conf; raw 0.25 reads 0.284, so the
   * tracker's low-score round (a third of conf) takes detections from raw 0.147, as measured
   * (docs/builtin-detector.md, "The fitted score of small-fruit frames").
   */
  smallFruitScoreKnots: ReadonlyArray<readonly [number, number]>;
  /** The fitted score's weights (fruit-score.ts, scripts/fit-fruit-score.ts)… */
  fruitScoreWeights: FruitScoreWeights;
  /** …and its value where detected and labelled counts balanced on the tuning photos, reported as calibratedAt. */
  fittedBalancedScore: number;
  /** Size a fruit by the skin its circle claims, not only its inscribed circle. */
  useClaimedSize: boolean;
  /** Box half-size = radius × this (the inscribed circle misses the outer rim). */
  boxScale: number;
  /**
   * A frame whose largest confident fruit hypothesis (see smallFruitMinScore) is smaller than this
   * many working pixels in radius, or that has none, is analysed again with `smallFruit` applied
   * (0: never). On the labelled photos the largest is 22.3 px or more; on rendered walk frames
   * mostly up to 21.1 px, but 21.5–25.4 px where touching fruit merged (8 of 480 frames measured).
   */
  smallFruitRadius: number;
  /**
   * The gate's bound when most of the recent frames of the same size were small-fruit frames
   * (ScaleMemory): a cluster of touching small fruit merged in the close-up analysis gives circles
   * of up to 25.4 px (rendered walks). It does not reach close-up photos: they are not preceded by
   * small-fruit frames.
   */
  smallFruitSceneRadius: number;
  /**
   * After frames of small fruit (ScaleMemory), a frame whose largest confident hypothesis reaches
   * smallFruitSceneRadius is still analysed as small fruit unless its close-up analysis found fruit
   * that a clump of touching small fruit does not make: at least this many confident hypotheses of
   * smallFruitRadius or more, or one of sceneCloseUpSingleRadius or more. A clump merged in the
   * close-up analysis is one large circle among small ones (rendered walks: one of 27.9–29.9 px,
   * or two of 23–25 px in one blob); a view close to the plants shows several fruit of close-up
   * size. Such a frame is remembered as a small-fruit frame, so a run of clumps does not make the
   * memory let go (docs/builtin-detector.md).
   */
  sceneCloseUpMinFruit: number;
  /** See sceneCloseUpMinFruit: one fruit this large (twice smallFruitRadius) is no clump of small fruit. */
  sceneCloseUpSingleRadius: number;
  /** Score (of the first, close-up analysis) from which a hypothesis counts for the frame's fruit size. */
  smallFruitMinScore: number;
  smallFruit: Partial<BuiltinParams>;
  /**
   * Fruit below the small-fruit analysis's reach: in a small-fruit frame where at least this share
   * of the confident hypotheses (score ≥ smallFruitMinScore, at least sizeRefMinCount of them) are
   * at its smallest sizes (radius up to minRadius + 2), the fruit are as small as the analysis
   * resolves or smaller, and what it finds are clumps of them. When the frame was decoded larger
   * than the working size (at least 1.5 times), it is analysed again at up to twice the working size
   * (0: never). Real fruit 24 px across at 1280 are 6 px in radius at 640, under minRadius
   * (docs/builtin-detector.md, "Fruit too small for the working size").
   */
  tinyFruitShare: number;
  /**
   * The finer analysis is kept only when it finds at least this many times the confident
   * hypotheses: tiny fruit resolve into many; the leaves and stems of a close view whose large
   * fruit the gate missed do not.
   */
  tinyFruitGain: number;
  /**
   * One circle on one fruit (seam.ts): of two fruit detections overlapping at least seamMinIou
   * (IoU) with no dip in luma of seamMaxDepth (0–255) between their centres, the lower-scored is
   * dropped. seamMinIou 0, the default, turns it off. Measured at 0.15 and 10: under studio light
   * and on the walls of real fruit it takes out a quarter of the second tracks and a sixth of the
   * tracks where no fruit is for one or two fruit, but those walls already count low and count
   * lower with it, and under the greenhouse renders' soft light it loses fruit by the dozen
   * (docs/builtin-detector.md, "One circle on one fruit").
   */
  seamMinIou: number;
  seamMaxDepth: number;
}

/**
 * Settings for frames of small fruit (a row filmed from the path, 10–18 px radius at the working
 * size), chosen on rendered walks (seeds 1–3) and never applied to the labelled photos (none of
 * them passes the smallFruitRadius gate). Each was kept because leaving it out measurably raised
 * the walk count error (docs/builtin-detector.md has the table): texture without the shading
 * gradient; green and ripe skin grown across the shaded side, the highlight and the calyx; colour
 * read on the skin before growth; grown skin cut between its seeds; touching fruit split more
 * readily; Hough circles beside the inscribed ones (fruit half hidden by a leaf or a nearer fruit);
 * the frame edge not taken for an outline; size evidence relative to the frame's fruit. The lit
 * evidence relative to the frame's green circles (litRefFactor) came later, from walks rendered
 * under soft light, where the fixed bound lost green fruit; it leaves the studio walks and the walls
 * of real fruit as they were (docs/builtin-detector.md, "The lit bound read against the frame").
 */
export const SMALL_FRUIT_PARAMS: Partial<BuiltinParams> = {
  detrendTexture: true,
  greenMaxTexture: 6,
  litRefFactor: 0.7,
  greenGrow: 1,
  ripeGrow: 0.5,
  colourFromSeeds: true,
  overlapFactor: 0.5,
  splitMinSeedRadius: 4,
  sizeRefFactor: 0.65,
  circleMethod: 'both',
  maxRadius: 30,
  openEdges: true,
  fruitScoreWeights: SMALL_FRUIT_SCORE_WEIGHTS,
};

export const DEFAULT_PARAMS: BuiltinParams = {
  workingLongSide: 640,
  wbMaxGreenCorrection: 1.1,
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
  litRefFactor: 0,
  detrendTexture: false,
  greenGrow: 0,
  greenWeakMinL: 38,
  greenWeakMinChroma: 14,
  highlightMinL: 75,
  ripeGrow: 0,
  ripeWeakMaxHue: 100,
  ripeWeakMinChroma: 20,
  colourFromSeeds: false,
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
  sizeRefFactor: 0,
  sizeRefMinCount: 6,
  sizeRefQuantile: 0.9,
  ripeBias: 0.1,
  greenBias: 0,
  unionMasks: true,
  splitMinSeedRadius: 0,
  openEdges: false,
  balancedRawScore: 0.7,
  calibratedAt: 0.35,
  closeUpScore: 'fitted',
  smallFruitScore: 'weighted',
  smallFruitScoreKnots: [
    [0.25, 0.28409],
    [0.82, 0.5],
  ],
  fruitScoreWeights: FRUIT_SCORE_WEIGHTS,
  fittedBalancedScore: 0.18,
  useClaimedSize: true,
  boxScale: 1.25,
  smallFruitRadius: 21.5,
  smallFruitSceneRadius: 27,
  sceneCloseUpMinFruit: 2,
  sceneCloseUpSingleRadius: 43,
  smallFruitMinScore: 0.5,
  smallFruit: SMALL_FRUIT_PARAMS,
  tinyFruitShare: 0.5,
  tinyFruitGain: 2,
  seamMinIou: 0,
  seamMaxDepth: 10,
};
