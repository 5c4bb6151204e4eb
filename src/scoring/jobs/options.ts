/**
 * What a scoring request may choose. The defaults match the pipeline's own
 * (sample every half second, at most 240 frames); the bounds keep one job
 * within minutes on the box's CPU.
 */
export const SCORING_MODES = ['auto', 'builtin', 'model', 'photo', 'video'] as const;
export type ScoringMode = (typeof SCORING_MODES)[number];

export interface ScoringOptions {
  /** Detection threshold, 0..1. */
  conf: number;
  /** Seconds between sampled frames of a video. */
  sample_seconds: number;
  /** Most frames scored in the whole walk. */
  max_frames: number;
  /** Millimetres per pixel at the fruit's distance; null leaves diameters unmeasured. */
  mm_per_pixel: number | null;
}

export const DEFAULT_OPTIONS: ScoringOptions = { conf: 0.35, sample_seconds: 0.5, max_frames: 240, mm_per_pixel: null };

export const LIMITS = {
  conf: { min: 0, max: 1 },
  sample_seconds: { min: 0.05, max: 10 },
  max_frames: { min: 1, max: 2000 },
  /** Clips in one batch (interface.md, Limits). */
  batchClips: 12,
  idempotencyKey: 200,
} as const;

export const MODE_TEXT: Record<ScoringMode, string> = {
  auto: 'the model detector when one is configured (DETECTOR names a manifest in models/) and loads, else the built-in colour detector',
  builtin: 'the built-in colour detector, whatever is configured',
  model: 'the configured model detector; 422 when none is configured or its manifest is missing',
  photo: 'like auto, and every upload must be a photo (422 for a video)',
  video: 'like auto, and every upload must be a video clip (422 for a photo)',
};

/** Options from validated form fields (strings already coerced by the route's schema). */
export function optionsFrom(fields: { conf?: number; sample_seconds?: number; max_frames?: number; mm_per_pixel?: number }): ScoringOptions {
  return {
    conf: fields.conf ?? DEFAULT_OPTIONS.conf,
    sample_seconds: fields.sample_seconds ?? DEFAULT_OPTIONS.sample_seconds,
    max_frames: fields.max_frames ?? DEFAULT_OPTIONS.max_frames,
    mm_per_pixel: fields.mm_per_pixel ?? null,
  };
}
