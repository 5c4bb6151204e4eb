import type { Box, Detection, DetectOptions, Detector, DetectorInfo, RgbImage } from '../types.js';
import { hueAngle } from '../image/colour.js';
import { fitLongSide, resizeArea } from '../image/resize.js';
import { findCircles, type Circle } from './circles.js';
import { computePlanes, type FramePlanes } from './features.js';
import { DEFAULT_PARAMS, type BuiltinParams } from './params.js';
import { DEFAULT_RIPENESS_THRESHOLDS, ripenessFromHue, type RipenessThresholds } from './ripeness.js';
import { greenMask, ripeMask } from './segment.js';

export interface BuiltinDetectorOptions {
  params?: Partial<BuiltinParams>;
  ripeness?: Partial<RipenessThresholds>;
}

export const BUILTIN_DETECTOR_NAME = 'builtin-colour';

export const STEMS_UNSUPPORTED_REASON =
  'the colour-and-shape detector does not count stems: thin green-brown structures cannot be told apart from leaf ' +
  'petioles, trusses and wires by colour and shape alone reliably enough; use a model detector for stems';
export const PLANTS_UNSUPPORTED_REASON =
  'plants are counted from stems (one stem per plant in a single-stem crop), which this detector does not count';

interface Candidate {
  circle: Circle;
  source: 'ripe' | 'green';
  score: number;
  hue: number;
}

/**
 * The detector that needs no model file: fruit from colour and shape on the
 * box's CPU. See docs/builtin-detector.md for the method and its measured
 * accuracy.
 */
export function createBuiltinDetector(options: BuiltinDetectorOptions = {}): Detector {
  const params: BuiltinParams = { ...DEFAULT_PARAMS, ...options.params };
  const thresholds: RipenessThresholds = { ...DEFAULT_RIPENESS_THRESHOLDS, ...options.ripeness };
  const info: DetectorInfo = {
    name: BUILTIN_DETECTOR_NAME,
    kind: 'builtin',
    stems: { supported: false, reason: STEMS_UNSUPPORTED_REASON },
    plants: { supported: false, reason: PLANTS_UNSUPPORTED_REASON },
  };
  return {
    info,
    async detect(image: RgbImage, detectOptions: DetectOptions): Promise<Detection[]> {
      return detectFruit(image, detectOptions.conf, params, thresholds);
    },
  };
}

/** Synchronous core, exported for the bench and tests. */
export function detectFruit(image: RgbImage, conf: number, params: BuiltinParams = DEFAULT_PARAMS, thresholds: RipenessThresholds = DEFAULT_RIPENESS_THRESHOLDS): Detection[] {
  if (!(conf >= 0 && conf <= 1)) throw new RangeError('conf must be within [0, 1]');
  const size = fitLongSide(image.width, image.height, params.workingLongSide);
  const work = size.scale === 1 ? image : resizeArea(image, size.width, size.height);
  const sx = image.width / work.width;
  const sy = image.height / work.height;
  const planes = computePlanes(work, params.wideRadius);
  const candidates: Candidate[] = [];
  for (const source of ['ripe', 'green'] as const) {
    const mask = source === 'ripe' ? ripeMask(planes, params) : greenMask(planes, params);
    for (const circle of findCircles(mask, work.width, work.height, params)) {
      const measured = measureDisc(planes, mask, circle);
      candidates.push({ circle, source, hue: measured.hue, score: scoreOf(circle, measured, source, params) });
    }
  }
  const kept = suppressOverlaps(candidates);
  const out: Detection[] = [];
  for (const c of kept) {
    if (c.score < conf) continue;
    const r = c.circle.r * params.boxScale + 0.5;
    const box: Box = [
      clamp((c.circle.cx - r + 0.5) * sx, 0, image.width),
      clamp((c.circle.cy - r + 0.5) * sy, 0, image.height),
      clamp((c.circle.cx + r + 0.5) * sx, 0, image.width),
      clamp((c.circle.cy + r + 0.5) * sy, 0, image.height),
    ];
    out.push({ kind: 'fruit', box, score: round3(c.score), ripeness: ripenessFromHue(c.hue, thresholds), hue: Math.round(c.hue * 10) / 10 });
  }
  out.sort((a, b) => b.score - a.score);
  return out;
}

interface DiscMeasure {
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
  const shape = clamp01((c.explained - q.minExplained) / (0.9 - q.minExplained));
  const round = clamp01(1 - (c.rim - 0.15) / 0.5);
  const size = clamp01((c.r - q.minRadius) / (3 * q.minRadius));
  let colour: number;
  if (source === 'ripe') colour = clamp01((m.chroma - q.ripeMinChroma) / 30);
  else colour = 0.5 * clamp01(1 - m.texture / q.greenMaxTexture) + 0.5 * clamp01(m.relativeL / 15);
  const base = source === 'ripe' ? 0.15 : 0;
  return clamp01(base + 0.3 * shape + 0.25 * round + 0.15 * size + 0.3 * colour);
}

/** Where a ripe and a green circle claim the same fruit (a turning one), keep the better. */
function suppressOverlaps(cands: Candidate[]): Candidate[] {
  cands.sort((a, b) => b.score - a.score);
  const kept: Candidate[] = [];
  for (const c of cands) {
    const clash = kept.some((k) => {
      const d = Math.hypot(k.circle.cx - c.circle.cx, k.circle.cy - c.circle.cy);
      return d < Math.max(k.circle.r, c.circle.r);
    });
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
