import type { Box, Detection, DetectOptions, Detector, DetectorInfo, RgbImage } from '../types.js';
import { hueAngle } from '../image/colour.js';
import { fitLongSide, resizeArea } from '../image/resize.js';
import { findCircles, type Circle } from './circles.js';
import { fittedFruitScore, type CircleEvidence } from './fruit-score.js';
import { houghCircles } from './hough.js';
import { planesFor, type FramePlanes } from './features.js';
import { DEFAULT_PARAMS, type BuiltinParams } from './params.js';
import { DEFAULT_RIPENESS_THRESHOLDS, ripenessFromHue, type RipenessThresholds } from './ripeness.js';
import { greenMask, growGreen, growRipe, ripeMask, splitBySeeds } from './segment.js';
import { ScaleMemory, smallFruitGate } from './scale-memory.js';
import { dropSeamlessTwins } from './seam.js';
import { DEFAULT_STEM_PARAMS, findStems, type StemParams } from './stems.js';
import { DetectAhead, type FrameRunner } from './detect-ahead.js';
import { DetectThreads } from './detect-threads.js';

export interface BuiltinDetectorOptions {
  params?: Partial<BuiltinParams>;
  ripeness?: Partial<RipenessThresholds>;
  /**
   * Count main stems (and plants, one per stem) with the ridge-path stem finder. Off by
   * default: it is exact on rendered rows but fires on foliage in real close-up photos
   * (docs/builtin-detector.md has the figures).
   */
  stems?: boolean;
  stemParams?: Partial<StemParams>;
  /**
   * Threads that analyse frames announced ahead of their turn (Detector.announce), beside the
   * caller's own; 0 (the default) detects every frame on the caller's thread. The answers are
   * the same either way (detect-ahead.ts).
   */
  threads?: number;
}

export const BUILTIN_DETECTOR_NAME = 'builtin-colour';

export const STEMS_UNSUPPORTED_REASON =
  'the built-in detector does not count stems by default: its stem finder (thin, long, vertical ridges) counts ' +
  'rendered rows well but mistakes trusses, petioles and leaf veins for stems in real photos; use a model detector for stems';
export const PLANTS_UNSUPPORTED_REASON =
  'plants are counted as stems (one stem per plant in a single-stem crop), and stems are not counted by default';

/** One fruit hypothesis with what it was judged on (exported for the bench and for tuning). */
export interface Candidate {
  circle: Circle;
  source: 'ripe' | 'green';
  score: number;
  hue: number;
  measured: DiscMeasure;
}

/**
 * The detector that needs no model file: fruit from colour and shape on the
 * box's CPU. See docs/builtin-detector.md for the method and its measured
 * accuracy.
 */
export function createBuiltinDetector(options: BuiltinDetectorOptions = {}): Detector {
  const params: BuiltinParams = { ...DEFAULT_PARAMS, ...options.params };
  const thresholds: RipenessThresholds = { ...DEFAULT_RIPENESS_THRESHOLDS, ...options.ripeness };
  const stemParams: StemParams = { ...DEFAULT_STEM_PARAMS, ...options.stemParams };
  const withStems = options.stems === true;
  const info: DetectorInfo = {
    name: BUILTIN_DETECTOR_NAME,
    kind: 'builtin',
    stems: withStems ? { supported: true } : { supported: false, reason: STEMS_UNSUPPORTED_REASON },
    plants: withStems
      ? { supported: true, reason: 'one plant per stem (single-stem crop)' }
      : { supported: false, reason: PLANTS_UNSUPPORTED_REASON },
  };
  const memory = new ScaleMemory();
  const stemsWith = withStems ? stemParams : null;
  const threads = options.threads ?? 0;
  if (!(threads > 0)) {
    return {
      info,
      async detect(image: RgbImage, detectOptions: DetectOptions): Promise<Detection[]> {
        return detectAll(image, detectOptions.conf, params, thresholds, stemsWith, memory);
      },
    };
  }
  const pool = new DetectThreads(threads, { params, thresholds, stemParams: stemsWith });
  // A frame detected in its turn without having been announced (a walk's first, a photo) is
  // analysed here: starting the threads for it would cost more than it saves.
  const inline: FrameRunner = (image, conf, smallLikely) => {
    const result = Promise.resolve().then(() => detectFrame(image, conf, smallLikely, params, thresholds, stemsWith));
    return { result, cancel: () => undefined };
  };
  const ahead = new DetectAhead(memory, (image, conf, smallLikely) => pool.run(image, conf, smallLikely), inline);
  return {
    info,
    readAhead: threads,
    detect: (image, detectOptions) => ahead.detect(image, detectOptions.conf),
    announce: (image, detectOptions) => ahead.announce(image, detectOptions.conf),
    discard: (image) => ahead.discard(image),
    async close() {
      ahead.clear();
      await pool.close();
    },
    get aheadStats() {
      return { ...ahead.stats };
    },
  };
}

/** What every finder reads, computed once per frame at the working size. */
export interface FrameAnalysis {
  work: RgbImage;
  /** Input pixels per working pixel. */
  sx: number;
  sy: number;
  planes: FramePlanes;
  /** Skin masks grown to whole fruit (shape is read on these)… */
  ripe: Uint8Array;
  green: Uint8Array;
  /** …and the strict skin they grew from (colour is read on this): ripe, and ripe ∪ green. */
  ripeSeeds: Uint8Array;
  seeds: Uint8Array;
  /** The parameters the frame was analysed with: `params`, or with `smallFruit` applied. */
  params: BuiltinParams;
  /** Whether the frame's fruit are small (see smallFruitRadius) and the small-fruit settings applied. */
  smallFruit: boolean;
  /** With smallFruit: the first analysis, with the close-up settings (the stem finder reads this one). */
  closeUp?: FrameAnalysis;
  /** Fruit hypotheses before overlap suppression, made once. */
  candidates?: Candidate[];
  /** A close-up frame scored by the fitted score (closeUpScore 'fitted'). */
  fitted?: boolean;
  /** A small-fruit frame analysed again at a finer working size (tinyFruitShare). */
  tinyFruit?: boolean;
  /**
   * Whether the walk's memory (`smallLikely`) decided the frame: the gate would have gone the
   * other way with the other memory. Detection ahead on other threads (detect-threads.ts) guesses
   * the memory, and its answer stands for the sequential one only when the guess was right or
   * the memory did not decide.
   */
  memoryDecided: boolean;
}

/**
 * Analyses a frame at the scale of its fruit. The settings were first tuned on close-up photos,
 * where a fruit is 20–70 working pixels in radius; in a walk filmed along the row it is 10–18,
 * and then its shading gradient, highlight and calyx take up most of its skin: a smoothness test
 * calls it rough, the lit skin is a crescent, and touching fruit merge. When the frame's largest
 * confident fruit hypothesis (score ≥ smallFruitMinScore) is smaller than `smallFruitRadius`, or
 * there is none, the frame is analysed again with the `smallFruit` settings
 * (docs/builtin-detector.md). The largest, not a quantile: a close-up photo also has many small
 * hypotheses (fruit cut up by hairs and stems, specks of light), but always some large fruit.
 * After frames of small fruit (`smallLikely`) the close-up analysis is kept only when it is
 * credible (`smallFruitGate`): a clump of touching small fruit does not take the frame. A frame
 * kept as a close-up takes its fruit from inscribed and Hough circles under the fitted score
 * (`closeUpScore`, fruit-score.ts).
 */
export function analyseFrame(image: RgbImage, params: BuiltinParams = DEFAULT_PARAMS, smallLikely = false): FrameAnalysis {
  const first = analyseWith(image, params);
  if (params.smallFruitRadius > 0) {
    const radii = confidentCandidates(first).map((c) => effectiveRadius(c.circle, params));
    // After frames of small fruit (smallLikely: the walk's recent frames) the close-up analysis must be credible.
    const small = smallFruitGate(radii, smallLikely, params);
    first.memoryDecided = small !== smallFruitGate(radii, !smallLikely, params);
    if (small) {
      const smallParams = { ...params, ...params.smallFruit };
      const frame: FrameAnalysis = {
        ...analyseWith(image, smallParams, first),
        smallFruit: true,
        closeUp: first,
        fitted: smallParams.smallFruitScore === 'fitted',
        memoryDecided: first.memoryDecided,
      };
      return finerForTinyFruit(image, frame) ?? frame;
    }
  }
  if (params.closeUpScore !== 'fitted') return first;
  // The gate above read the hand-weighted inscribed circles, so what it decides does not move with
  // the fit; the frame's fruit come from the inscribed and Hough circles under the fitted score.
  const circleMethod = params.circleMethod === 'inscribed' ? 'both' : params.circleMethod;
  return { ...first, params: { ...params, circleMethod }, candidates: undefined, fitted: true };
}

/**
 * A small-fruit frame whose fruit are at or under the analysis's smallest circles, analysed again at
 * up to twice the working size (`tinyFruitShare`, `tinyFruitGain`); null when the rule does not
 * apply or the finer analysis does not resolve the frame into more fruit. Only frames decoded larger
 * than the working size can gain: rendered walks at 640 px never take it.
 */
function finerForTinyFruit(image: RgbImage, coarse: FrameAnalysis): FrameAnalysis | null {
  const q = coarse.params;
  const fineSide = Math.min(q.workingLongSide * 2, Math.max(image.width, image.height));
  if (!(q.tinyFruitShare > 0) || fineSide < q.workingLongSide * 1.5) return null;
  const confident = confidentCandidates(coarse);
  if (confident.length < q.sizeRefMinCount) return null;
  const atFloor = confident.filter((c) => effectiveRadius(c.circle, q) <= q.minRadius + 2).length;
  if (atFloor < q.tinyFruitShare * confident.length) return null;
  const fine: FrameAnalysis = {
    ...analyseWith(image, { ...q, workingLongSide: fineSide }),
    smallFruit: true,
    closeUp: coarse.closeUp,
    tinyFruit: true,
    fitted: coarse.fitted,
    memoryDecided: coarse.memoryDecided,
  };
  return confidentCandidates(fine).length >= q.tinyFruitGain * confident.length ? fine : null;
}

/** The frame's hypotheses that count for its fruit size (score ≥ smallFruitMinScore). */
function confidentCandidates(frame: FrameAnalysis): Candidate[] {
  return rawCandidates(frame).filter((c) => c.score >= frame.params.smallFruitMinScore);
}

/** The frame's fruit radius: the sizeRefQuantile of its candidates' radii; Infinity (unknown) with fewer than sizeRefMinCount. */
export function fruitScale(cands: readonly Candidate[], q: BuiltinParams): number {
  const radii = cands
    .map((c) => effectiveRadius(c.circle, q))
    .filter((r) => r >= q.minRadius)
    .sort((a, b) => a - b);
  if (radii.length < q.sizeRefMinCount) return Infinity;
  return radii[Math.min(radii.length - 1, Math.floor(radii.length * q.sizeRefQuantile))]!;
}

const RIPE_KEYS = ['ripeMinChroma', 'ripeMaxHue', 'ripeHueFromNegative', 'ripeMinL', 'closeRadius', 'maxHoleArea'] as const;

/** One analysis of the frame with `params`; `prior`, the same frame's analysis with other settings, lends what they share. */
function analyseWith(image: RgbImage, params: BuiltinParams, prior?: FrameAnalysis): FrameAnalysis {
  const size = fitLongSide(image.width, image.height, params.workingLongSide);
  const work =
    prior && prior.work.width === size.width && prior.work.height === size.height
      ? prior.work
      : size.scale === 1
        ? image
        : resizeArea(image, size.width, size.height);
  const planes = planesFor(work, params.wideRadius, params.wbMaxGreenCorrection, params.detrendTexture, prior?.planes);
  // Ripe skin reads only hue, chroma and lightness: the prior analysis's is the same when those settings are.
  const sameRipe = prior && prior.planes.lab === planes.lab && RIPE_KEYS.every((k) => prior.params[k] === params[k]);
  const ripeSeeds = sameRipe ? prior.ripeSeeds : ripeMask(planes, params);
  const greenSeeds = greenMask(planes, params, ripeSeeds);
  const green = growGreen(planes, params, greenSeeds, ripeSeeds);
  const ripe = growRipe(planes, params, ripeSeeds);
  const seeds = new Uint8Array(ripeSeeds.length);
  for (let i = 0; i < seeds.length; i++) seeds[i] = ripeSeeds[i]! | greenSeeds[i]!;
  return {
    work,
    sx: image.width / work.width,
    sy: image.height / work.height,
    planes,
    ripe,
    green,
    ripeSeeds,
    seeds,
    params,
    smallFruit: false,
    memoryDecided: false,
  };
}

/** Fruit, and with stem parameters also stems and plants (one per stem), above `conf`. */
export function detectAll(
  image: RgbImage,
  conf: number,
  params: BuiltinParams = DEFAULT_PARAMS,
  thresholds: RipenessThresholds = DEFAULT_RIPENESS_THRESHOLDS,
  stemParams: StemParams | null = null,
  memory?: ScaleMemory,
): Detection[] {
  const found = detectFrame(image, conf, memory?.smallLikely(image.width, image.height) ?? false, params, thresholds, stemParams);
  memory?.record(image.width, image.height, found.smallFruit);
  return found.detections;
}

/** One frame's detections under a given walk memory, and what the memory is to record of it. */
export interface FrameDetections {
  detections: Detection[];
  /** Whether the frame was analysed as small fruit (ScaleMemory records it). */
  smallFruit: boolean;
  /** Whether `smallLikely` decided that (FrameAnalysis.memoryDecided). */
  memoryDecided: boolean;
}

/** detectAll without the memory: the walk's memory is given as `smallLikely`, and the answer says what to record. Pure, so it runs on any thread. */
export function detectFrame(
  image: RgbImage,
  conf: number,
  smallLikely: boolean,
  params: BuiltinParams = DEFAULT_PARAMS,
  thresholds: RipenessThresholds = DEFAULT_RIPENESS_THRESHOLDS,
  stemParams: StemParams | null = null,
): FrameDetections {
  if (!(conf >= 0 && conf <= 1)) throw new RangeError('conf must be within [0, 1]');
  const frame = analyseFrame(image, params, smallLikely);
  const fruit = fruitFromAnalysis(frame, image, conf, thresholds);
  const detections = stemParams ? [...fruit, ...stemsFromAnalysis(frame, image, conf, stemParams)] : fruit;
  return { detections, smallFruit: frame.smallFruit, memoryDecided: frame.memoryDecided };
}

/** Stems and, for a single-stem crop, one plant per stem, with boxes in the input frame's pixels. */
export function detectStems(
  image: RgbImage,
  conf: number,
  params: BuiltinParams = DEFAULT_PARAMS,
  stemParams: StemParams = DEFAULT_STEM_PARAMS,
): Detection[] {
  return stemsFromAnalysis(analyseFrame(image, params), image, conf, stemParams);
}

function stemsFromAnalysis(analysis: FrameAnalysis, image: RgbImage, conf: number, stemParams: StemParams): Detection[] {
  // The stem finder was tuned on the close-up analysis; the small-fruit one (grown skin, detrended
  // texture) reads differently and costs it stems, so it reads the close-up planes and masks.
  const frame = analysis.closeUp ?? analysis;
  const { planes, ripe, green, sx, sy } = frame;
  const fruitSkin = new Uint8Array(ripe.length);
  for (let i = 0; i < fruitSkin.length; i++) fruitSkin[i] = ripe[i]! | green[i]!;
  const out: Detection[] = [];
  for (const s of findStems(planes, fruitSkin, stemParams)) {
    if (s.support < conf) continue;
    const box: Box = [
      clamp(s.box[0] * sx, 0, image.width),
      clamp(s.box[1] * sy, 0, image.height),
      clamp(s.box[2] * sx, 0, image.width),
      clamp(s.box[3] * sy, 0, image.height),
    ];
    const score = round3(s.support);
    out.push({ kind: 'stem', box, score }, { kind: 'plant', box: [...box] as Box, score });
  }
  return out;
}

/** Synchronous core, exported for the bench and tests. */
export function detectFruit(
  image: RgbImage,
  conf: number,
  params: BuiltinParams = DEFAULT_PARAMS,
  thresholds: RipenessThresholds = DEFAULT_RIPENESS_THRESHOLDS,
): Detection[] {
  if (!(conf >= 0 && conf <= 1)) throw new RangeError('conf must be within [0, 1]');
  return fruitFromAnalysis(analyseFrame(image, params), image, conf, thresholds);
}

function fruitFromAnalysis(frame: FrameAnalysis, image: RgbImage, conf: number, thresholds: RipenessThresholds): Detection[] {
  const params = frame.params;
  const { kept, sx, sy } = candidatesFromAnalysis(frame, conf);
  const out: Detection[] = [];
  for (const c of kept) {
    if (c.score < conf) continue;
    out.push(toDetection(c, sx, sy, image, params, thresholds));
  }
  out.sort((a, b) => b.score - a.score);
  return dropSeamlessTwins(out, image, { minIou: params.seamMinIou, maxDepth: params.seamMaxDepth });
}

export function toDetection(
  c: Candidate,
  sx: number,
  sy: number,
  image: RgbImage,
  params: BuiltinParams,
  thresholds: RipenessThresholds,
): Detection {
  // The fruit's extent is the union of its claimed skin and its circle grown by boxScale (skin hidden by a leaf still counts).
  const { circle: k } = c;
  const r = k.r * params.boxScale + 0.5;
  const box: Box = [
    clamp(Math.min(k.minX, k.cx - r + 0.5) * sx, 0, image.width),
    clamp(Math.min(k.minY, k.cy - r + 0.5) * sy, 0, image.height),
    clamp((Math.max(k.maxX, k.cx + r - 0.5) + 1) * sx, 0, image.width),
    clamp((Math.max(k.maxY, k.cy + r - 0.5) + 1) * sy, 0, image.height),
  ];
  return { kind: 'fruit', box, score: round3(c.score), ripeness: ripenessFromHue(c.hue, thresholds), hue: Math.round(c.hue * 10) / 10 };
}

/**
 * Every circle of a frame before overlap suppression, with what the fitted score reads of it and
 * its box in the input's pixels: what scripts/fit-fruit-score.ts fits the score on.
 */
export function circleEvidence(image: RgbImage, params: BuiltinParams = DEFAULT_PARAMS): Array<{ evidence: CircleEvidence; box: Box }> {
  const frame = analyseFrame(image, params);
  const cands = rawCandidates(frame);
  const full = sizeFullRadiusFor(cands, frame.params);
  return cands.map((c) => ({
    evidence: evidenceOf(c, frame.params, full),
    box: toDetection(c, frame.sx, frame.sy, image, frame.params, DEFAULT_RIPENESS_THRESHOLDS).box,
  }));
}

/** All fruit hypotheses of a frame after overlap suppression, before the conf threshold; sx, sy map working pixels to the input's. */
export function fruitCandidates(
  image: RgbImage,
  params: BuiltinParams = DEFAULT_PARAMS,
  minScore = 0,
): { kept: Candidate[]; sx: number; sy: number; params: BuiltinParams } {
  const frame = analyseFrame(image, params);
  return { ...candidatesFromAnalysis(frame, minScore), params: frame.params };
}

function candidatesFromAnalysis(frame: FrameAnalysis, minScore: number): { kept: Candidate[]; sx: number; sy: number } {
  return { kept: suppressOverlaps(rawCandidates(frame), minScore), sx: frame.sx, sy: frame.sy };
}

function rawCandidates(frame: FrameAnalysis): Candidate[] {
  if (frame.candidates) return frame.candidates;
  const { work, planes, ripe, green, seeds, params } = frame;
  const candidates: Candidate[] = [];
  const sources: Array<{ source: 'ripe' | 'green'; mask: Uint8Array }> = [];
  if (params.unionMasks) {
    const union = new Uint8Array(ripe.length);
    for (let i = 0; i < union.length; i++) union[i] = ripe[i]! | green[i]!;
    const minSeed = params.splitMinSeedRadius > 0 ? Math.PI * params.splitMinSeedRadius ** 2 : 0;
    sources.push({ source: 'ripe', mask: minSeed > 0 ? splitBySeeds(union, seeds, work.width, work.height, minSeed) : union });
  } else {
    sources.push({ source: 'ripe', mask: ripe }, { source: 'green', mask: green });
  }
  for (const { source: declared, mask } of sources) {
    for (const circle of circlesOf(mask, work.width, work.height, params)) {
      const measured = measureDisc(planes, mask, circle, params.colourFromSeeds ? seeds : undefined);
      // On the union mask the circle's own colour says which evidence applies.
      const source = params.unionMasks ? (ripenessFromHue(measured.hue) === 'green' ? 'green' : 'ripe') : declared;
      candidates.push({ circle, source, hue: measured.hue, measured, score: 0 });
    }
  }
  const full = sizeFullRadiusFor(candidates, params);
  const litFull = litFullFor(candidates, params);
  for (const c of candidates) {
    if (!frame.fitted)
      c.score = calibrate(scoreOf(c.circle, c.measured, c.source, params, full, litFull), params.balancedRawScore, params.calibratedAt);
    else {
      const p = fittedFruitScore(evidenceOf(c, params, full), params, params.fruitScoreWeights);
      c.score = frame.smallFruit
        ? throughKnots(p, params.smallFruitScoreKnots)
        : calibrate(p, params.fittedBalancedScore, params.calibratedAt);
    }
  }
  frame.candidates = candidates;
  return candidates;
}

/** Circles from the chosen method(s), as one shape: Hough circles carry support/fill, inscribed ones explained/rim. */
function circlesOf(mask: Uint8Array, w: number, h: number, q: BuiltinParams): Circle[] {
  const out: Circle[] = [];
  if (q.circleMethod !== 'hough') out.push(...findCircles(mask, w, h, q));
  if (q.circleMethod !== 'inscribed') {
    for (const c of houghCircles(mask, w, h, q)) {
      out.push({
        method: 'hough',
        cx: c.cx,
        cy: c.cy,
        r: c.r,
        explained: c.fill,
        rim: c.support,
        blob: 0,
        claimed: Math.round(Math.PI * c.r * c.r * c.fill),
        minX: c.cx - c.r,
        minY: c.cy - c.r,
        maxX: c.cx + c.r - 1,
        maxY: c.cy + c.r - 1,
      });
    }
  }
  return out;
}

export interface DiscMeasure {
  hue: number;
  chroma: number;
  texture: number;
  relativeL: number;
}

/** Colour and surface of the inner disc (0.8 r), skin pixels only so a leaf across the fruit does not tint it. */
function measureDisc(p: FramePlanes, mask: Uint8Array, c: Circle, colourMask?: Uint8Array): DiscMeasure {
  const w = p.width;
  const rr = c.r * 0.8;
  let sa = 0;
  let sb = 0;
  let sc = 0;
  let st = 0;
  let sl = 0;
  let n = 0;
  const x0 = Math.max(0, Math.floor(c.cx - rr));
  const x1 = Math.min(w - 1, Math.ceil(c.cx + rr));
  const y0 = Math.max(0, Math.floor(c.cy - rr));
  const y1 = Math.min(p.height - 1, Math.ceil(c.cy + rr));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      if ((x - c.cx) ** 2 + (y - c.cy) ** 2 > rr * rr) continue;
      const i = y * w + x;
      if (!mask[i]) continue;
      sa += p.lab.a[i]!;
      sb += p.lab.b[i]!;
      sc += p.chroma[i]!;
      st += p.texture[i]!;
      sl += p.relativeL[i]!;
      n++;
    }
  }
  if (n === 0) return { hue: 0, chroma: 0, texture: 99, relativeL: 0 };
  if (colourMask) {
    // Colour from the strict skin only, where there is enough of it: growth added shaded and
    // highlighted skin, and the odd stalk, for the shape's sake.
    let ca = 0;
    let cb = 0;
    let cc = 0;
    let m = 0;
    for (let y = y0; y <= y1; y++)
      for (let x = x0; x <= x1; x++) {
        if ((x - c.cx) ** 2 + (y - c.cy) ** 2 > rr * rr) continue;
        const i = y * w + x;
        if (!mask[i] || !colourMask[i]) continue;
        ca += p.lab.a[i]!;
        cb += p.lab.b[i]!;
        cc += p.chroma[i]!;
        m++;
      }
    if (m >= 0.3 * n) {
      sa = (ca / m) * n;
      sb = (cb / m) * n;
      sc = (cc / m) * n;
    }
  }
  return { hue: hueAngle(sa / n, sb / n), chroma: sc / n, texture: st / n, relativeL: sl / n };
}

/**
 * Radius at which the size evidence is full. Fruit seen in one frame are at about one distance
 * from the camera, so they are about one size: with sizeRefFactor set, a frame whose larger
 * candidates (the sizeRefQuantile of their radii) are small — a row filmed from further away —
 * lowers it to that share of their radius, never below minRadius + 2. Otherwise the small fruit
 * of a walk all score low on size and fall under conf.
 */
export function sizeFullRadiusFor(cands: readonly Candidate[], q: BuiltinParams): number {
  if (!(q.sizeRefFactor > 0)) return q.sizeFullRadius;
  const ref = fruitScale(cands, q);
  if (!Number.isFinite(ref)) return q.sizeFullRadius;
  return Math.max(q.minRadius + 2, Math.min(q.sizeFullRadius, ref * q.sizeRefFactor));
}

const LIT_FULL = 15;
const LIT_FULL_MIN = 8;

/**
 * L* above its surroundings at which a green circle's lit evidence is full. Soft light (a
 * greenhouse's diffuse sky) lights every fruit of a frame less than a spotlight does, so a fixed
 * bound scores real fruit under conf; with litRefFactor set, it follows the frame's own green
 * circles, as sizeFullRadiusFor follows their size. The floor keeps flat clutter from full lit
 * evidence in a frame that holds no lit fruit at all.
 */
export function litFullFor(cands: readonly Candidate[], q: BuiltinParams): number {
  if (!(q.litRefFactor > 0)) return LIT_FULL;
  const lit = cands
    .filter((c) => c.source === 'green')
    .map((c) => c.measured.relativeL)
    .sort((a, b) => a - b);
  if (lit.length < q.sizeRefMinCount) return LIT_FULL;
  const ref = lit[Math.floor((lit.length - 1) * 0.75)]!;
  return Math.max(LIT_FULL_MIN, Math.min(LIT_FULL, ref * q.litRefFactor));
}

/**
 * The hand-weighted confidence that a circle is a fruit, before calibration, from what separates
 * fruit from the rest in the labelled photos: a blob the circles explain well, little skin
 * around the circle (round, not a sausage of leaf), strong colour for ripe
 * fruit, smooth and lit skin for green fruit, and size.
 */
function scoreOf(
  c: Circle,
  m: DiscMeasure,
  source: 'ripe' | 'green',
  q: BuiltinParams,
  sizeFullRadius = q.sizeFullRadius,
  litFull = LIT_FULL,
): number {
  const clamp01 = (x: number) => Math.max(0, Math.min(1, x));
  let shape: number;
  let round: number;
  if (c.method === 'inscribed') {
    shape = clamp01((c.explained - q.minExplained) / (0.9 - q.minExplained));
    round = clamp01(1 - (c.rim - 0.15) / 0.5);
  } else {
    // Hough: `explained` holds the disc's skin share, `rim` the outline share that voted.
    shape = clamp01((c.explained - q.minFill) / (0.9 - q.minFill));
    round = clamp01((c.rim - q.minSupport) / 0.4);
  }
  // Size separates fruit from fragments and specks better than anything else measured on the photos.
  const size = clamp01((effectiveRadius(c, q) - q.minRadius) / Math.max(1, sizeFullRadius - q.minRadius));
  let colour: number;
  if (source === 'ripe') colour = clamp01((m.chroma - q.ripeMinChroma) / 30);
  else colour = 0.5 * clamp01(1 - m.texture / q.greenMaxTexture) + 0.5 * clamp01(m.relativeL / litFull);
  const base = source === 'ripe' ? q.ripeBias : q.greenBias;
  return clamp01(base + 0.15 * shape + 0.1 * round + 0.45 * size + 0.3 * colour);
}

function evidenceOf(c: Candidate, q: BuiltinParams, sizeFullRadius: number): CircleEvidence {
  const { circle, measured } = c;
  return {
    method: circle.method,
    explained: circle.explained,
    rim: circle.rim,
    effectiveRadius: effectiveRadius(circle, q),
    sizeFullRadius,
    minRadius: q.minRadius,
    source: c.source,
    chroma: measured.chroma,
    texture: measured.texture,
    relativeL: measured.relativeL,
  };
}

/**
 * The inscribed circle of a fruit with a notch (calyx, highlight at the edge) is too small; the
 * skin it claims says how big the fruit is. Bounded so a circle cannot claim a leaf's worth.
 */
export function effectiveRadius(c: Circle, q: BuiltinParams): number {
  if (!q.useClaimedSize) return c.r;
  return Math.min(Math.max(c.r, Math.sqrt(c.claimed / Math.PI)), c.r * 1.6);
}

/** Piecewise-linear and monotone: `balanced` (where counts balanced on the tuning photos) reads as `at`. */
function calibrate(raw: number, balanced: number, at: number): number {
  return throughKnots(raw, [[balanced, at]]);
}

/** Piecewise linear through (0, 0), the knots (ascending in both) and (1, 1). */
export function throughKnots(raw: number, knots: ReadonlyArray<readonly [number, number]>): number {
  let x0 = 0;
  let y0 = 0;
  for (const [x1, y1] of [...knots, [1, 1] as const]) {
    if (raw <= x1) return x1 > x0 ? y0 + ((raw - x0) * (y1 - y0)) / (x1 - x0) : y1;
    x0 = x1;
    y0 = y1;
  }
  return 1;
}

/**
 * One fruit, one detection. Larger circles go first and absorb candidates
 * centred inside them: the fragments of a fruit cut up by the calyx or a stem
 * in front of it, and a ripe and a green circle claiming the same turning
 * fruit. Candidates below `minScore` do not absorb anything.
 */
function suppressOverlaps(cands: Candidate[], minScore: number): Candidate[] {
  const strong = cands.filter((c) => c.score >= minScore).sort((a, b) => b.circle.r - a.circle.r || b.score - a.score);
  const kept: Candidate[] = [];
  for (const c of strong) {
    const clash = kept.some((k) => Math.hypot(k.circle.cx - c.circle.cx, k.circle.cy - c.circle.cy) < k.circle.r * 0.9);
    if (!clash) kept.push(c);
  }
  return kept;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.round(Math.max(lo, Math.min(hi, v)) * 10) / 10;
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
