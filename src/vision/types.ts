// Shared vocabulary of the scoring pipeline: every detector, the tracker and the
// job runner speak these types, so a model detector and the built-in one are
// interchangeable behind `Detector`.

export type Ripeness = 'green' | 'turning' | 'red';
export const RIPENESS: readonly Ripeness[] = ['green', 'turning', 'red'];

/** Counts by ripeness, always this shape in every answer (docs/api-conventions.md, "Identifiers and shapes"). */
export interface RipenessCounts {
  green: number;
  turning: number;
  red: number;
  total: number;
}

/** An 8-bit RGB image, rows top to bottom, 3 bytes per pixel, no padding. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Pixel box [x1, y1, x2, y2] in the frame's own pixel grid. */
export type Box = [number, number, number, number];

export type DetectionKind = 'fruit' | 'stem' | 'plant';

export interface Detection {
  kind: DetectionKind;
  box: Box;
  /** Detector confidence in [0, 1]. */
  score: number;
  /** Fruit only. */
  ripeness?: Ripeness;
  /** CIELAB hue angle in degrees after white balance, where the detector measured it. */
  hue?: number;
}

export interface DetectorInfo {
  /** Stable name shown in results and /api/health, e.g. "builtin-colour" or the model manifest's name. */
  name: string;
  /** The detector kind that runs it (src/vision/detectors.ts): "builtin", "onnx". */
  kind: string;
  /** Whether this detector can count stems / plants; when not, `reason` says why. */
  stems: { supported: boolean; reason?: string };
  plants: { supported: boolean; reason?: string };
}

export interface DetectOptions {
  /** Detection threshold in [0, 1]: detections scoring below it are dropped. */
  conf: number;
}

/**
 * Frames announced ahead of their turn, answers used, frames analysed again (what the walk
 * carries from frame to frame was guessed wrong) and frames discarded (not taken after all).
 */
export interface ReadAheadStats {
  ahead: number;
  used: number;
  redone: number;
  discarded: number;
}

export interface Detector {
  readonly info: DetectorInfo;
  /** Frames are detected in walking order: a detector may carry what it learnt of a walk from frame to frame. */
  detect(image: RgbImage, options: DetectOptions): Promise<Detection[]>;
  /**
   * Frames worth announcing ahead of their turn (the detector's threads); absent or 0, the
   * detector works one frame at a time.
   */
  readonly readAhead?: number;
  /**
   * Starts detecting a frame that detect() will probably be asked for next, after the frames
   * announced before it; detect() on that image then answers exactly what it would have
   * without the announcement.
   */
  announce?(image: RgbImage, options: DetectOptions): void;
  /** An announced frame will not be detected after all. */
  discard?(image: RgbImage): void;
  /** How reading ahead has gone so far, for the walk's log line. */
  readonly aheadStats?: ReadAheadStats;
  close?(): Promise<void>;
}
