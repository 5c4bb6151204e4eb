import type { RgbImage } from './types.js';
import { luma709, luminance } from './image/colour.js';
import { boxMean } from './image/filters.js';

/**
 * Frame and walk quality: is the footage good enough for the counts to be
 * trusted, and if not, what should the person filming do differently.
 * Pure functions on RGB frames; no Koa, no ffmpeg.
 */

export interface FrameQuality {
  /** Variance of the Laplacian of luma on a 320-px-wide copy, mapped to [0, 1] (see SHARPNESS_REFERENCE). */
  sharpness: number;
  /** The raw Laplacian variance (luma units²) the sharpness was mapped from. */
  laplacianVariance: number;
  /** Mean luma in [0, 1]. */
  brightness: number;
  /** Fraction of pixels with luma below 16/255. */
  darkFraction: number;
  /** Fraction of pixels with any channel at 250 or above. */
  brightFraction: number;
  /** Camera motion against the previous sample, in full-frame pixels per second; null for the first frame. */
  motionPxPerSecond: number | null;
  /** Shift found, in full-frame pixels [dx, dy]; null for the first frame. */
  shift: [number, number] | null;
  /** Share of the frame in flat colour (see `sceneContent`). */
  flatFraction: number;
  /** Share of the frame in its 16 commonest colours (see `sceneContent`). */
  paletteCoverage: number;
}

/** The thresholds behind the warnings, in one place so docs and tests can quote them. */
export const QUALITY_THRESHOLDS = {
  /** Mean luma below this is "too dark". */
  tooDarkBrightness: 0.18,
  /** …or more than this fraction of near-black pixels. */
  tooDarkFraction: 0.5,
  /** More than this fraction of clipped pixels is "overexposed". */
  overexposedFraction: 0.2,
  /** …or mean luma above this. */
  overexposedBrightness: 0.85,
  /** Normalised sharpness below this is "out of focus". */
  outOfFocusSharpness: 0.35,
  /**
   * Apparent motion above this fraction of the frame width per second is
   * "walked too fast": at 0.5 s sampling a plant then crosses more than a
   * third of the frame between samples, and motion blur sets in at typical
   * greenhouse shutter speeds.
   */
  tooFastWidthsPerSecond: 0.6,
  /**
   * More than this share of the frame in flat colour, and more than `noPlantPalette` of it in its
   * 16 commonest colours, is "no plant": a test pattern, a screen, a wall. Measured (sampled every
   * second pixel, 1280 px frames): ffmpeg's colour bars 0.93–0.98 flat, 0.92–1.0 in 16 colours;
   * the labelled tomato photos and orchard photos at most 0.20 flat and 0.52 in 16 colours; the
   * rendered walks (flat-shaded leaves) at most 0.60 flat and 0.44 in 16 colours.
   */
  noPlantFlatFraction: 0.8,
  noPlantPalette: 0.85,
  /** A walk warning is raised when at least this fraction of frames is concerned. */
  walkFraction: 0.2,
} as const;

/**
 * Laplacian variance at which sharpness reads 0.5 (on the ~320-px-wide
 * analysis copy). Measured on the labelled tomato photos decoded at 1280 px:
 * as taken 193–1497 (median 955), box-blurred over 13 px 25–114 (median 79),
 * over 21 px 9–34. So sharp photos read at least 0.6, and the out-of-focus
 * threshold (0.35, a variance below 65) catches blur of about 13 px and more.
 */
export const SHARPNESS_REFERENCE = 120;

const ANALYSIS_WIDTH = 320;

interface Analysis {
  width: number;
  height: number;
  /** Luma of the analysis copy. */
  luma: Float32Array;
  /** Full-frame pixels per analysis pixel. */
  scale: number;
}

/** A small luma plane by area-averaging, enough for sharpness and motion at a tiny cost. */
function analyse(image: RgbImage): Analysis {
  const full = luminance(image);
  const factor = Math.max(1, Math.floor(image.width / ANALYSIS_WIDTH));
  if (factor === 1) return { width: image.width, height: image.height, luma: full, scale: 1 };
  const w = Math.floor(image.width / factor);
  const h = Math.floor(image.height / factor);
  const out = new Float32Array(w * h);
  const inv = 1 / (factor * factor);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let dy = 0; dy < factor; dy++) {
        const row = (y * factor + dy) * image.width + x * factor;
        for (let dx = 0; dx < factor; dx++) s += full[row + dx]!;
      }
      out[y * w + x] = s * inv;
    }
  }
  return { width: w, height: h, luma: out, scale: factor };
}

function laplacianVariance(a: Analysis): number {
  const { width: w, height: h, luma } = a;
  let sum = 0;
  let sum2 = 0;
  let n = 0;
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      const v = luma[i - 1]! + luma[i + 1]! + luma[i - w]! + luma[i + w]! - 4 * luma[i]!;
      sum += v;
      sum2 += v * v;
      n++;
    }
  }
  if (n === 0) return 0;
  const mean = sum / n;
  return sum2 / n - mean * mean;
}

/**
 * Shift of `current` against `previous` by block matching of their
 * gradient-free, mean-removed luma on a coarse grid of candidate offsets and
 * then refined: sum of absolute differences over the overlap, normalised by
 * its size. Returns analysis-pixel offsets [dx, dy] such that
 * current(x, y) ≈ previous(x + dx, y + dy).
 */
function estimateShift(prev: Analysis, cur: Analysis, maxShiftFraction = 0.45): [number, number] {
  const w = cur.width;
  const h = cur.height;
  // Smooth a little so the match follows structure, not noise.
  const a = boxMean(prev.luma, w, h, 1);
  const b = boxMean(cur.luma, w, h, 1);
  const maxDx = Math.floor(w * maxShiftFraction);
  const maxDy = Math.floor(h * maxShiftFraction);
  const cost = (dx: number, dy: number, step: number): number => {
    let s = 0;
    let n = 0;
    const x0 = Math.max(0, -dx);
    const x1 = Math.min(w, w - dx);
    const y0 = Math.max(0, -dy);
    const y1 = Math.min(h, h - dy);
    for (let y = y0; y < y1; y += step) {
      const rowB = y * w;
      const rowA = (y + dy) * w + dx;
      for (let x = x0; x < x1; x += step) {
        s += Math.abs(b[rowB + x]! - a[rowA + x]!);
        n++;
      }
    }
    // Demand a decent overlap so a huge shift does not win on a sliver.
    return n < (w * h) / (step * step) / 5 ? Infinity : s / n;
  };
  let best: [number, number] = [0, 0];
  let bestCost = Infinity;
  const coarse = 4;
  for (let dy = -maxDy; dy <= maxDy; dy += coarse) {
    for (let dx = -maxDx; dx <= maxDx; dx += coarse) {
      const c = cost(dx, dy, 3);
      if (c < bestCost) {
        bestCost = c;
        best = [dx, dy];
      }
    }
  }
  let [cx, cy] = best;
  bestCost = Infinity;
  for (let dy = cy - coarse; dy <= cy + coarse; dy++) {
    for (let dx = cx - coarse; dx <= cx + coarse; dx++) {
      if (Math.abs(dx) > maxDx || Math.abs(dy) > maxDy) continue;
      const c = cost(dx, dy, 1);
      if (c < bestCost) {
        bestCost = c;
        best = [dx, dy];
      }
    }
  }
  [cx, cy] = best;
  return [cx, cy];
}

/** Half the resolution of an analysis plane (2×2 means): motion needs no more, and the search is 16× cheaper. */
function halve(a: Analysis): Analysis {
  const w = a.width >> 1;
  const h = a.height >> 1;
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const r0 = 2 * y * a.width;
    const r1 = r0 + a.width;
    for (let x = 0; x < w; x++) {
      out[y * w + x] = (a.luma[r0 + 2 * x]! + a.luma[r0 + 2 * x + 1]! + a.luma[r1 + 2 * x]! + a.luma[r1 + 2 * x + 1]!) / 4;
    }
  }
  return { width: w, height: h, luma: out, scale: a.scale * 2 };
}

const coarseCache = new WeakMap<RgbImage, Analysis>();
function motionPlane(image: RgbImage): Analysis {
  let c = coarseCache.get(image);
  if (!c) {
    const a = analysed(image);
    c = a.width >= 240 ? halve(a) : a;
    coarseCache.set(image, c);
  }
  return c;
}

/** Keeps the previous frame's analysis so a walk does not analyse each frame twice. */
const cache = new WeakMap<RgbImage, Analysis>();
function analysed(image: RgbImage): Analysis {
  let a = cache.get(image);
  if (!a) {
    a = analyse(image);
    cache.set(image, a);
  }
  return a;
}

export interface SceneContent {
  /**
   * Of the pixels neither near-black (luma < 16) nor clipped (a channel ≥ 250), the share whose four
   * neighbours hold the same colour (within 1 per channel): a camera's noise leaves almost none.
   */
  flatFraction: number;
  /** Share of all pixels in the 16 commonest colours (5 bits a channel). */
  paletteCoverage: number;
  /** Too dark or washed out to tell: darkness flattens a frame too, and is reported as such. */
  exposureLost: boolean;
}

const sceneCache = new WeakMap<RgbImage, SceneContent>();

/** How much of a frame is flat, synthetic colour; sampled every second pixel and row. */
export function sceneContent(image: RgbImage): SceneContent {
  const cached = sceneCache.get(image);
  if (cached) return cached;
  const { width: w, height: h, data: d } = image;
  // Pixels missing from the buffer would read as one flat colour and call any frame a test pattern.
  if (d.length < w * h * 3) {
    const unreadable = { flatFraction: 0, paletteCoverage: 0, exposureLost: true };
    sceneCache.set(image, unreadable);
    return unreadable;
  }
  const counts = new Uint32Array(1 << 15);
  let n = 0;
  let lit = 0;
  let flat = 0;
  let lumaSum = 0;
  let dark = 0;
  let clipped = 0;
  const row = w * 3;
  for (let y = 1; y < h - 1; y += 2) {
    for (let x = 1; x < w - 1; x += 2) {
      const p = (y * w + x) * 3;
      const r = d[p]!;
      const g = d[p + 1]!;
      const b = d[p + 2]!;
      n++;
      counts[((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3)]!++;
      const y0 = luma709(r, g, b);
      lumaSum += y0;
      if (y0 < 16) dark++;
      if (r >= 250 || g >= 250 || b >= 250) clipped++;
      if (y0 < 16 || r >= 250 || g >= 250 || b >= 250) continue;
      lit++;
      let same = true;
      for (const o of [p - 3, p + 3, p - row, p + row]) {
        if (Math.abs(d[o]! - r) > 1 || Math.abs(d[o + 1]! - g) > 1 || Math.abs(d[o + 2]! - b) > 1) {
          same = false;
          break;
        }
      }
      if (same) flat++;
    }
  }
  const top = [...counts].sort((a, b) => b - a).slice(0, 16);
  const t = QUALITY_THRESHOLDS;
  const brightness = n === 0 ? 0 : lumaSum / n / 255;
  const content = {
    flatFraction: lit === 0 ? 0 : flat / lit,
    paletteCoverage: n === 0 ? 0 : top.reduce((a, b) => a + b, 0) / n,
    exposureLost:
      n === 0 ||
      brightness < t.tooDarkBrightness ||
      dark / n > t.tooDarkFraction ||
      clipped / n > t.overexposedFraction ||
      brightness > t.overexposedBrightness,
  };
  sceneCache.set(image, content);
  return content;
}

/**
 * A frame with no plant in it: mostly flat colour from a small palette, as a test pattern (ffmpeg's
 * colour bars), a screen or a bare wall shows, where a plant under any light shows texture and
 * thousands of colours. Such a frame is given no detections (walk.ts): the detector's colour
 * rules would read a red bar as fruit.
 */
export function showsNoPlant(image: RgbImage): boolean {
  return noPlant(sceneContent(image));
}

function noPlant(c: Pick<SceneContent, 'flatFraction' | 'paletteCoverage' | 'exposureLost'>): boolean {
  return (
    !c.exposureLost && c.flatFraction > QUALITY_THRESHOLDS.noPlantFlatFraction && c.paletteCoverage > QUALITY_THRESHOLDS.noPlantPalette
  );
}

/**
 * Quality of one frame. `previous` is the frame sampled `intervalSeconds`
 * earlier (omit for the first), used for the motion estimate.
 */
export function frameQuality(image: RgbImage, previous?: RgbImage | null, intervalSeconds = 0.5): FrameQuality {
  const a = analysed(image);
  const scene = sceneContent(image);
  const lapVar = laplacianVariance(a);
  const sharpness = lapVar / (lapVar + SHARPNESS_REFERENCE);
  const d = image.data;
  const n = image.width * image.height;
  let sum = 0;
  let dark = 0;
  let bright = 0;
  for (let i = 0, p = 0; i < n; i++, p += 3) {
    const r = d[p]!;
    const g = d[p + 1]!;
    const b = d[p + 2]!;
    const y = luma709(r, g, b);
    sum += y;
    if (y < 16) dark++;
    if (r >= 250 || g >= 250 || b >= 250) bright++;
  }
  let motion: number | null = null;
  let shift: [number, number] | null = null;
  if (previous && previous.width === image.width && previous.height === image.height) {
    const m = motionPlane(image);
    const [dx, dy] = estimateShift(motionPlane(previous), m);
    shift = [dx * m.scale, dy * m.scale];
    motion = Math.hypot(shift[0], shift[1]) / Math.max(1e-6, intervalSeconds);
  }
  return {
    sharpness,
    laplacianVariance: lapVar,
    brightness: sum / n / 255,
    darkFraction: dark / n,
    brightFraction: bright / n,
    motionPxPerSecond: motion,
    shift,
    flatFraction: scene.flatFraction,
    paletteCoverage: scene.paletteCoverage,
  };
}

export type QualityWarningCode =
  'no_plant' | 'too_dark' | 'overexposed' | 'out_of_focus' | 'walked_too_fast' | 'colours_unconverted' | 'clip_cut_short' | 'clip_damaged';

export interface QualityWarning {
  code: QualityWarningCode;
  /** A sentence for the person who filmed the walk. */
  message: string;
  /** Indices (into the frames given) of the frames concerned. */
  frames: number[];
}

export interface WalkQuality {
  /** 1 = every frame usable; the mean of per-frame scores. */
  score: number;
  warnings: QualityWarning[];
  /** Per-frame score in [0, 1], same order as the input. */
  frameScores: number[];
}

export interface WalkFrameInput {
  quality: FrameQuality;
  /** Width of the frame in pixels (for motion as a fraction of the frame). */
  width: number;
  /** The frame came from an HDR or BT.2020 clip that could not be converted to sRGB (media/colour-conversion.ts). */
  colourUnconverted?: boolean;
}

function frameIssues(q: FrameQuality, width: number, colourUnconverted: boolean): Set<QualityWarningCode> {
  const t = QUALITY_THRESHOLDS;
  const issues = new Set<QualityWarningCode>();
  if (colourUnconverted) issues.add('colours_unconverted');
  if (q.brightness < t.tooDarkBrightness || q.darkFraction > t.tooDarkFraction) issues.add('too_dark');
  if (q.brightFraction > t.overexposedFraction || q.brightness > t.overexposedBrightness) issues.add('overexposed');
  // Nothing to focus on or walk past well: say that once.
  if (noPlant({ ...q, exposureLost: issues.has('too_dark') || issues.has('overexposed') })) {
    issues.add('no_plant');
    return issues;
  }
  // A black or blown-out frame has no detail either; say why once, not twice.
  if (q.sharpness < t.outOfFocusSharpness && !issues.has('too_dark') && !issues.has('overexposed')) issues.add('out_of_focus');
  if (q.motionPxPerSecond !== null && q.motionPxPerSecond > t.tooFastWidthsPerSecond * width) issues.add('walked_too_fast');
  return issues;
}

function frameScore(q: FrameQuality, width: number): number {
  const t = QUALITY_THRESHOLDS;
  const clamp = (x: number) => Math.max(0, Math.min(1, x));
  const exposure = Math.min(
    clamp(q.brightness / t.tooDarkBrightness),
    clamp((1 - q.brightFraction / t.overexposedFraction) * 2),
    clamp(1 - q.darkFraction),
  );
  if (frameIssues(q, width, false).has('no_plant')) return 0;
  const focus = clamp(q.sharpness / 0.5);
  const motion = q.motionPxPerSecond === null ? 1 : clamp(1.5 - q.motionPxPerSecond / (t.tooFastWidthsPerSecond * width));
  return exposure * focus * motion;
}

const MESSAGES: Record<Exclude<QualityWarningCode, 'clip_cut_short' | 'clip_damaged'>, (n: number, total: number) => string> = {
  no_plant: (n, total) =>
    `no plant: ${n} of ${total} frames show flat, synthetic colours (a test pattern, a screen or a bare wall) and no crop, so no fruit was counted in them; film the crop row`,
  too_dark: (n, total) => `too dark: ${n} of ${total} frames are underexposed; switch on the lights or film at a brighter time`,
  overexposed: (n, total) => `overexposed: ${n} of ${total} frames are washed out; avoid filming into lamps or direct sun`,
  out_of_focus: (n, total) => `out of focus: ${n} of ${total} frames are blurred; hold the camera steady and let it focus`,
  walked_too_fast: (n, total) => `walked too fast: the camera moved too far between samples in ${n} of ${total} frames; walk slower`,
  colours_unconverted: (n, total) =>
    `colours uncertain: ${n} of ${total} frames come from an HDR video that this box's ffmpeg cannot convert (it lacks the zscale filter, ` +
    "or the clip is Dolby Vision profile 5, which has no standard picture without Dolby's processing) or from a photo whose colour " +
    'profile it cannot apply, so ripeness may be wrong; turn HDR video off on the phone or install an ffmpeg built with zimg, and save ' +
    'photos in sRGB or Display P3',
};

/** Summary of a walk's frames: a score and the warnings a person can act on. */
export function walkQuality(frames: readonly WalkFrameInput[]): WalkQuality {
  const concerned = new Map<QualityWarningCode, number[]>();
  const frameScores = frames.map((f, i) => {
    for (const code of frameIssues(f.quality, f.width, f.colourUnconverted === true)) {
      const list = concerned.get(code) ?? [];
      list.push(i);
      concerned.set(code, list);
    }
    return frameScore(f.quality, f.width);
  });
  const total = frames.length;
  const warnings: QualityWarning[] = [];
  const order = ['no_plant', 'too_dark', 'overexposed', 'out_of_focus', 'walked_too_fast', 'colours_unconverted'] as const;
  for (const code of order) {
    const list = concerned.get(code);
    if (!list) continue;
    // One bad frame in a long walk is noise; a photo (one frame) is judged on its own. Colours
    // read wrong are not noise: one such clip in a batch is reported.
    if (code !== 'colours_unconverted' && list.length / total < QUALITY_THRESHOLDS.walkFraction && total > 1) continue;
    warnings.push({ code, message: MESSAGES[code](list.length, total), frames: list });
  }
  const score = total === 0 ? 0 : frameScores.reduce((a, b) => a + b, 0) / total;
  return { score, warnings, frameScores };
}

export interface ClipRead {
  /** 1-based, as a person counts the clips of a batch. */
  number: number;
  durationSeconds: number;
  readSeconds: number;
  /** Walk-wide index of the clip's last scored frame, or null when none was. */
  lastFrame: number | null;
}

/**
 * The warning for clips longer than the stretch scoring reads (max_frames × sample_seconds):
 * the counts then cover only the start of the row, which nobody would guess from the numbers.
 * A clip counts as cut when at least one more sample would have been taken.
 */
export function clipCutShortWarning(
  clips: readonly ClipRead[],
  settings: { maxFrames: number; sampleSeconds: number },
): QualityWarning | null {
  const cut = clips.filter((c) => c.durationSeconds - c.readSeconds >= settings.sampleSeconds);
  if (cut.length === 0) return null;
  const s = (x: number) => `${Math.round(x)} s`;
  const what = cut
    .map((c) => `${clips.length > 1 ? `clip ${c.number}: ` : ''}the first ${s(c.readSeconds)} of ${s(c.durationSeconds)}`)
    .join('; ');
  return {
    code: 'clip_cut_short',
    message:
      `not all of the walk was scored: ${what} (max_frames ${settings.maxFrames} at sample_seconds ${settings.sampleSeconds}); ` +
      'the counts cover only that stretch; score it again with a larger max_frames (POST /api/observations/{id}/rescore, up to 2000), or film long rows as several clips in a batch',
    frames: cut.flatMap((c) => (c.lastFrame === null ? [] : [c.lastFrame])),
  };
}

export interface DamagedClip {
  /** 1-based, as a person counts the clips of a batch. */
  number: number;
  photo: boolean;
  /** Seconds of the clip that scoring was to read (clips[].read_s). */
  readSeconds: number;
  /** Seconds the decoded frames reach: frames given × the decoding interval. */
  decodedSeconds: number;
  /** ffmpeg's words. */
  errors: string;
  /** Walk-wide index of the clip's last scored frame, or null when none was. */
  lastFrame: number | null;
}

/**
 * The warning for clips ffmpeg reported damaged but still decoded in part. A clip cut off part
 * way with its index intact decodes its start and ends there without failing, so its counts
 * look like the whole row's; pictures damaged in the middle are skipped or come out garbled.
 * A clip counts as ending early when at least one more sample would have been taken.
 */
export function clipDamagedWarning(clips: readonly DamagedClip[], settings: { sampleSeconds: number }): QualityWarning | null {
  if (clips.length === 0) return null;
  const s = (x: number) => `${x < 10 ? Math.round(x * 10) / 10 : Math.round(x)} s`;
  const what = clips.map((c) => {
    const name = c.photo ? 'the photo' : `clip ${c.number}`;
    const early = !c.photo && c.readSeconds - c.decodedSeconds >= settings.sampleSeconds;
    const how = early
      ? `only its first ${s(c.decodedSeconds)} of ${s(c.readSeconds)} could be decoded, so the counts miss the rest of it`
      : c.photo
        ? 'part of it may be grey or garbled'
        : 'some of its pictures could not be decoded and were skipped or came out garbled';
    return `${name}: ${how} (ffmpeg: ${c.errors})`;
  });
  return {
    code: 'clip_damaged',
    message: `the upload is damaged: ${what.join('; ')}; film it again, or upload an intact copy of the file as a new walk`,
    frames: clips.flatMap((c) => (c.lastFrame === null ? [] : [c.lastFrame])),
  };
}
