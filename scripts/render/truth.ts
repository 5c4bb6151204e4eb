// Ground truth written next to a rendered walk: what a perfect scorer would report.
import type { Box, Ripeness } from '../../src/vision/types.js';

/** USDA colour stages of tomato fruit, in ripening order. */
export type UsdaStage = 'green' | 'breaker' | 'turning' | 'pink' | 'light_red' | 'red';
export const USDA_STAGES: readonly UsdaStage[] = ['green', 'breaker', 'turning', 'pink', 'light_red', 'red'];

/**
 * The product counts three classes, the USDA stages grouped by the share of the surface that has
 * turned: "green" up to a tenth (mature green and breakers, whose break in colour is at the
 * blossom end, out of sight of a camera beside the row), "turning" a tenth to three fifths
 * (turning and pink), "red" more (light red and red). The built-in detector's hue bounds are the
 * colorimetry boundaries of the same stages (src/vision/builtin/ripeness.ts).
 */
export function stageToRipeness(stage: UsdaStage): Ripeness {
  switch (stage) {
    case 'green':
    case 'breaker':
      return 'green';
    case 'turning':
    case 'pink':
      return 'turning';
    default:
      return 'red';
  }
}

/** One appearance of an object in one frame of one clip. */
export interface TruthAppearance {
  clip: number;
  /** Frame index inside that clip (0-based, at the clip's fps). */
  frame: number;
  /** Object's full extent clipped to the frame, in the clip's pixels. */
  box: Box;
  /** Fraction of the object's area that can be seen: inside the frame and not hidden by leaves or other fruit. */
  visible: number;
}

export interface TruthFruit {
  id: number;
  ripeness: Ripeness;
  stage: UsdaStage;
  plant: number;
  /** Centre in world metres: x along the row, y down from the top of the camera's view. */
  x: number;
  y: number;
  diameterMm: number;
  appearances: TruthAppearance[];
}

export interface TruthStem {
  id: number;
  plant: number;
  x: number;
  appearances: TruthAppearance[];
}

export interface TruthPlant {
  id: number;
  x: number;
  stems: number[];
  appearances: TruthAppearance[];
}

export interface TruthClip {
  index: number;
  file: string;
  /** Walk time at the clip's first frame. */
  startSeconds: number;
  seconds: number;
  frames: number;
}

export interface WalkTruth {
  version: 1;
  seed: number;
  width: number;
  height: number;
  fps: number;
  /** Camera speed along the row, metres per second. */
  speed: number;
  /** Millimetres per pixel of the rendered clip (the scene is flat at one distance). */
  mmPerPixel: number;
  clips: TruthClip[];
  fruit: TruthFruit[];
  stems: TruthStem[];
  plants: TruthPlant[];
}
