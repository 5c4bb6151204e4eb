import type { ScoringModel } from './detectors.js';
import type { Box, Ripeness, RipenessCounts } from '../../vision/types.js';

/**
 * What a finished walk stores (walks.result, JSON) and the worker sends back.
 * URLs are not stored: the presenter builds them from the job id, so a moved
 * DATA_DIR or base URL never leaves stale links in the database.
 */
export interface FrameQuality {
  /** Focus, 0..1 (variance of the Laplacian of luma, mapped so 0.5 is the reference sharpness). */
  sharpness: number;
  /** Exposure as mean luma, 0..1. */
  brightness: number;
  /** Fraction of near-black pixels, 0..1. */
  dark_fraction: number;
  /** Fraction of clipped (blown-out) pixels, 0..1. */
  bright_fraction: number;
  /** Camera motion since the previous sampled frame of the same clip, working-frame pixels per second; null for a clip's first frame and for photos. */
  motion_px_per_s: number | null;
  /** 0..1: how usable the frame is for counting (exposure × focus × motion). */
  score: number;
}

export interface QualityWarning {
  code: string;
  message: string;
  /** Walk-wide frame indexes concerned. */
  frames: number[];
}

export interface StoredFrame {
  /** Index over the whole walk (all clips), 0-based. */
  index: number;
  /** Position of the clip in walking order, 0-based. */
  clip: number;
  /** Seconds into its clip. */
  time_s: number;
  detections: number;
  width: number;
  height: number;
  quality: FrameQuality;
}

export interface StoredFruit {
  /** Small integer, unique in the walk; corrections name a fruit by it. */
  track_id: number;
  ripeness: Ripeness;
  /** Score-weighted votes of the frames that saw it, per ripeness. */
  votes: { green: number; turning: number; red: number };
  /** Best view of the fruit: box [x1, y1, x2, y2] in pixels of frame `frame`. */
  box: Box;
  /** Walk-wide index of the frame with the best view. */
  frame: number;
  first_frame: number;
  last_frame: number;
  /** Frames in which it was detected. */
  frames_seen: number;
  /** Best detector confidence, 0..1. */
  score: number;
  /** Fruit diameter, mm; null without mm_per_pixel. */
  diameter_mm: number | null;
}

export interface CountWithReason {
  count: number | null;
  reason: string | null;
}

export interface StoredResult {
  detector: {
    name: string;
    kind: string;
    fallback_reason: string | null;
    /** The model that scored the walk (file, SHA-256, thresholds); null for the built-in detector. Absent on walks scored before it was kept. */
    model?: ScoringModel | null;
    /** The detection threshold the walk was scored at. Absent on walks scored before it was kept. */
    conf?: number;
  };
  frames: StoredFrame[];
  fruit: StoredFruit[];
  stems: CountWithReason;
  plants: CountWithReason;
  quality: { score: number; warnings: QualityWarning[] };
  counts: RipenessCounts;
  clips: { position: number; frames: number }[];
}

export function emptyCounts(): RipenessCounts {
  return { green: 0, turning: 0, red: 0, total: 0 };
}
