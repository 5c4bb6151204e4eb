import { DEFAULT_MAX_FRAMES, DEFAULT_SAMPLE_SECONDS } from '../../vision/media/decode.js';
import type { WalkOptions } from '../../vision/walk.js';

/**
 * What a scoring request may choose. The defaults match the pipeline's own
 * (sample every half second, at most 1,200 frames: ten minutes of clip); the
 * bounds keep one job within minutes on the box's CPU.
 */
export const SCORING_MODES = ['auto', 'builtin', 'model', 'photo', 'video'] as const;
export type ScoringMode = (typeof SCORING_MODES)[number];

export interface ScoringOptions {
  /** Detection threshold, 0..1. */
  conf: number;
  /**
   * Whether the request named `conf`. When it did not, the threshold is the detector's own: a model's
   * manifest says the thresholds it was trained to be read at, the built-in detector has DEFAULT_CONF.
   */
  conf_given: boolean;
  /** Seconds between sampled frames of a video. */
  sample_seconds: number;
  /** Adaptive sampling: seconds between sampled frames while the walker is fast; null: every sample_seconds. */
  fast_sample_seconds: number | null;
  /** Most frames sampled from each clip at sample_seconds. */
  max_frames: number;
  /** Millimetres per pixel at the fruit's distance; null leaves diameters unmeasured. */
  mm_per_pixel: number | null;
}

/**
 * The default `conf` by what was uploaded. A photo is one chance to see each fruit, so
 * every detection counts from 0.35 (where the built-in detector's counts balance on the
 * labelled photos). In a video every fruit is seen several times and a detection from
 * `conf` up starts a track: from 0.5 up (where counts after tracking balance on rendered
 * walks) a stray second circle on a fruit rarely becomes a fruit of its own, while a
 * fruit scoring lower in one frame is still found in the next, and the tracker keeps
 * following it down to a third of `conf`. ByteTrack separates the two thresholds the same way.
 */
export const DEFAULT_CONF = { photo: 0.35, video: 0.5 } as const;

/** Adaptive sampling's fast interval when sample_seconds is not given. */
export const DEFAULT_FAST_SAMPLE_SECONDS = 0.25;

/** Stored options are merged over these: walks queued before a field existed read as scored then. */
export const DEFAULT_OPTIONS: ScoringOptions = {
  conf: DEFAULT_CONF.photo,
  // Walks stored before the field keep the threshold they were queued with.
  conf_given: true,
  sample_seconds: DEFAULT_SAMPLE_SECONDS,
  fast_sample_seconds: null,
  max_frames: DEFAULT_MAX_FRAMES,
  mm_per_pixel: null,
};

export const LIMITS = {
  conf: { min: 0, max: 1 },
  sample_seconds: { min: 0.05, max: 10 },
  max_frames: { min: 1, max: 2000 },
  /** Clips in one batch (docs/api-conventions.md, "Limits"). */
  batchClips: 12,
  idempotencyKey: 200,
} as const;

/** What the modes that name a kind of upload take: a photo (image) or a video clip. */
export const KIND_OF_MODE: Partial<Record<ScoringMode, 'image' | 'video'>> = { photo: 'image', video: 'video' };

export const MODE_TEXT: Record<ScoringMode, string> = {
  auto: 'the model detector when there is one (DETECTOR=auto found a usable model in MODELS_DIR at start, or DETECTOR names a manifest) and it loads, else the built-in colour detector',
  builtin: 'the built-in colour detector, whatever is configured',
  model:
    'the model detector; 422 when there is none (DETECTOR=builtin, or auto found no usable model) or its manifest is missing, and the walk fails if the model then cannot load',
  photo: 'like auto, and every upload must be a photo (422 for a video); a check, never needed',
  video: 'like auto, and every upload must be a video clip (422 for a photo)',
};

/**
 * Options from validated form fields (strings already coerced by the route's schema) and
 * what was uploaded: `conf` defaults by kind (any video clip: the video default), and
 * without sample_seconds the sampling is adaptive.
 */
export function optionsFrom(
  fields: { conf?: number; sample_seconds?: number; max_frames?: number; mm_per_pixel?: number },
  uploads: { video: boolean },
  detectorConf: DetectorConf | null = null,
): ScoringOptions {
  return {
    conf: fields.conf ?? defaultConf(uploads.video, detectorConf),
    conf_given: fields.conf !== undefined,
    sample_seconds: fields.sample_seconds ?? DEFAULT_OPTIONS.sample_seconds,
    fast_sample_seconds: fields.sample_seconds === undefined ? DEFAULT_FAST_SAMPLE_SECONDS : null,
    max_frames: fields.max_frames ?? DEFAULT_OPTIONS.max_frames,
    mm_per_pixel: fields.mm_per_pixel ?? null,
  };
}

/** The thresholds a model's manifest gives (ModelManifest.conf). */
export interface DetectorConf {
  photo: number;
  video: number;
}

/** The threshold for a walk that names none: the detector's own for what was uploaded (any video clip: video). */
export function defaultConf(video: boolean, detectorConf: DetectorConf | null): number {
  const own = detectorConf ?? DEFAULT_CONF;
  return video ? own.video : own.photo;
}

/** A job's options as the walk pipeline takes them. */
export function walkOptionsFrom(o: ScoringOptions): WalkOptions {
  return {
    conf: o.conf,
    sampleSeconds: o.sample_seconds,
    ...(o.fast_sample_seconds !== null ? { fastSampleSeconds: o.fast_sample_seconds } : {}),
    maxFrames: o.max_frames,
    ...(o.mm_per_pixel !== null ? { mmPerPixel: o.mm_per_pixel } : {}),
  };
}
