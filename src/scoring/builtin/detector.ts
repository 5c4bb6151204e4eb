import type { Box, Detection, DetectOptions, Detector, DetectorInfo, RgbImage } from '../types.js';
import { hueAngle } from '../image/colour.js';
import { fitLongSide, resizeArea } from '../image/resize.js';
import { findCircles, type Circle } from './circles.js';
import { houghCircles } from './hough.js';
import { computePlanes, type FramePlanes } from './features.js';
import { DEFAULT_PARAMS, type BuiltinParams } from './params.js';
import { DEFAULT_RIPENESS_THRESHOLDS, ripenessFromHue, type RipenessThresholds } from './ripeness.js';
import { greenMask, ripeMask } from './segment.js';
import { DEFAULT_STEM_PARAMS, findStems, type StemParams } from './stems.js';

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
  return {
    info,
    async detect(image: RgbImage, detectOptions: DetectOptions): Promise<Detection[]> {
      return detectAll(image, detectOptions.conf, params, thresholds, withStems ? stemParams : null);
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
  ripe: Uint8Array;
  green: Uint8Array;
}

export function analyseFrame(image: RgbImage, params: BuiltinParams = DEFAULT_PARAMS): FrameAnalysis {
  const size = fitLongSide(image.width, image.height, params.workingLongSide);
  const work = size.scale === 1 ? image : resizeArea(image, size.width, size.height);
  const planes = computePlanes(work, params.wideRadius);
  const ripe = ripeMask(planes, params);
  const green = greenMask(planes, params, ripe);
  return { work, sx: image.width / work.width, sy: image.height / work.height, planes, ripe, green };
}

/** Fruit, and with stem parameters also stems and plants (one per stem), above `conf`. */
export function detectAll(
  image: RgbImage,
  conf: number,
  params: BuiltinParams = DEFAULT_PARAMS,
  thresholds: RipenessThresholds = DEFAULT_RIPENESS_THRESHOLDS,
  stemParams: StemParams | null = null,
): Detection[] {
  if (!(conf >= 0 && conf <= 1)) throw new RangeError('conf must be within [0, 1]');
  const frame = analyseFrame(image, params);
  const fruit = fruitFromAnalysis(frame, image, conf, params, thresholds);
  if (!stemParams) return fruit;
  return [...fruit, ...stemsFromAnalysis(frame, image, conf, stemParams)];
}

/** Stems and, for a single-stem crop, one plant per stem, with boxes in the input frame's pixels. */
export function detectStems(image: RgbImage, conf: number, params: BuiltinParams = DEFAULT_PARAMS, stemParams: StemParams = DEFAULT_STEM_PARAMS): Detection[] {
  return stemsFromAnalysis(analyseFrame(image, params), image, conf, stemParams);
}

function stemsFromAnalysis(frame: FrameAnalysis, image: RgbImage, conf: number, stemParams: StemParams): Detection[] {
  const { planes, ripe, green, sx, sy } = frame;
  const fruitSkin = new Uint8Array(ripe.length);
  for (let i = 0; i < fruitSkin.length; i++) fruitSkin[i] = ripe[i]! | green[i]!;
  const out: Detection[] = [];
  for (const s of findStems(planes, fruitSkin, stemParams)) {
    if (s.support < conf) continue;
    const box: Box = [clamp(s.box[0] * sx, 0, image.width), clamp(s.box[1] * sy, 0, image.height), clamp(s.box[2] * sx, 0, image.width), clamp(s.box[3] * sy, 0, image.height)];
    const score = round3(s.support);
    out.push({ kind: 'stem', box, score }, { kind: 'plant', box: [...box] as Box, score });
  }
  return out;
}

/** Synchronous core, exported for the bench and tests. */
export function detectFruit(image: RgbImage, conf: number, params: BuiltinParams = DEFAULT_PARAMS, thresholds: RipenessThresholds = DEFAULT_RIPENESS_THRESHOLDS): Detection[] {
  if (!(conf >= 0 && conf <= 1)) throw new RangeError('conf must be within [0, 1]');
  return fruitFromAnalysis(analyseFrame(image, params), image, conf, params, thresholds);
}

function fruitFromAnalysis(frame: FrameAnalysis, image: RgbImage, conf: number, params: BuiltinParams, thresholds: RipenessThresholds): Detection[] {
  const { kept, sx, sy } = candidatesFromAnalysis(frame, params, conf);
  const out: Detection[] = [];
  for (const c of kept) {
    if (c.score < conf) continue;
    out.push(toDetection(c, sx, sy, image, params, thresholds));
  }
  out.sort((a, b) => b.score - a.score);
  return out;
}

export function toDetection(c: Candidate, sx: number, sy: number, image: RgbImage, params: BuiltinParams, thresholds: RipenessThresholds): Detection {
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

/** All fruit hypotheses of a frame after overlap suppression, before the conf threshold; sx, sy map working pixels to the input's. */
export function fruitCandidates(image: RgbImage, params: BuiltinParams = DEFAULT_PARAMS, minScore = 0): { kept: Candidate[]; sx: number; sy: number } {
  return candidatesFromAnalysis(analyseFrame(image, params), params, minScore);
}

function candidatesFromAnalysis(frame: FrameAnalysis, params: BuiltinParams, minScore: number): { kept: Candidate[]; sx: number; sy: number } {
  const { work, sx, sy, planes, ripe, green } = frame;
  const candidates: Candidate[] = [];
  const sources: Array<{ source: 'ripe' | 'green'; mask: Uint8Array }> = [];
  if (params.unionMasks) {
    const union = new Uint8Array(ripe.length);
    for (let i = 0; i < union.length; i++) union[i] = ripe[i]! | green[i]!;
    sources.push({ source: 'ripe', mask: union });
  } else {
    sources.push({ source: 'ripe', mask: ripe }, { source: 'green', mask: green });
  }
  for (const { source: declared, mask } of sources) {
    for (const circle of circlesOf(mask, work.width, work.height, params)) {
      const measured = measureDisc(planes, mask, circle);
      // On the union mask the circle's own colour says which evidence applies.
      const source = params.unionMasks ? (ripenessFromHue(measured.hue) === 'green' ? 'green' : 'ripe') : declared;
      candidates.push({ circle, source, hue: measured.hue, measured, score: scoreOf(circle, measured, source, params) });
    }
  }
  return { kept: suppressOverlaps(candidates, minScore), sx, sy };
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
function measureDisc(p: FramePlanes, mask: Uint8Array, c: Circle): DiscMeasure {
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
  return { hue: hueAngle(sa / n, sb / n), chroma: sc / n, texture: st / n, relativeL: sl / n };
}

/**
 * Confidence that a circle is a fruit, from what separates fruit from the
 * rest in the labelled photos: a blob the circles explain well, little skin
 * around the circle (round, not a sausage of leaf), strong colour for ripe
 * fruit, smooth and lit skin for green fruit, and size.
 */
function scoreOf(c: Circle, m: DiscMeasure, source: 'ripe' | 'green', q: BuiltinParams): number {
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
  const size = clamp01((effectiveRadius(c, q) - q.minRadius) / Math.max(1, q.sizeFullRadius - q.minRadius));
  let colour: number;
  if (source === 'ripe') colour = clamp01((m.chroma - q.ripeMinChroma) / 30);
  else colour = 0.5 * clamp01(1 - m.texture / q.greenMaxTexture) + 0.5 * clamp01(m.relativeL / 15);
  const base = source === 'ripe' ? q.ripeBias : q.greenBias;
  return calibrate(clamp01(base + 0.15 * shape + 0.1 * round + 0.45 * size + 0.3 * colour), q);
}

/**
 * The inscribed circle of a fruit with a notch (calyx, highlight at the edge) is too small; the
 * skin it claims says how big the fruit is. Bounded so a circle cannot claim a leaf's worth.
 */
export function effectiveRadius(c: Circle, q: BuiltinParams): number {
  if (!q.useClaimedSize) return c.r;
  return Math.min(Math.max(c.r, Math.sqrt(c.claimed / Math.PI)), c.r * 1.6);
}

function calibrate(raw: number, q: BuiltinParams): number {
  const b = q.balancedRawScore;
  const t = q.calibratedAt;
  return raw <= b ? (raw * t) / b : t + ((raw - b) * (1 - t)) / (1 - b);
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
