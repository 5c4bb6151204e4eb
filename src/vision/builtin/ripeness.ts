import type { Ripeness } from '../types.js';

/**
 * Ripeness from the CIELAB hue angle of the fruit's skin after white
 * balance. The USDA colour stages for fresh tomatoes (green, breakers,
 * turning, pink, light red, red) are defined by the share of the surface
 * that has turned; the mean hue of the visible skin falls steadily through
 * them, from about 115° (green) to about 40° (red). The product's three
 * classes group the stages by the share turned (scripts/render/truth.ts), and
 * the bounds sit within a degree of a colorimetry study's boundaries between them
 * (breakers 101–114°, turning 85–101°, pink 64–85°, light red 36–64°):
 *
 *   USDA green, breakers         → green    (hue ≥ greenFrom, 100°)
 *   USDA turning, pink           → turning  (turningFrom ≤ hue < greenFrom)
 *   USDA light red, red          → red      (hue < turningFrom, 65°)
 *
 * docs/builtin-detector.md explains the mapping and how the numbers were set.
 */
export interface RipenessThresholds {
  /** Hue (degrees) at or above which fruit is green. */
  greenFrom: number;
  /** Hue at or above which (and below greenFrom) fruit is turning. */
  turningFrom: number;
}

export const DEFAULT_RIPENESS_THRESHOLDS: RipenessThresholds = { greenFrom: 100, turningFrom: 65 };

/** Hue angles are 0–360; red skin sits just above 0 and magenta casts just below 360. */
export function ripenessFromHue(hue: number, t: RipenessThresholds = DEFAULT_RIPENESS_THRESHOLDS): Ripeness {
  // Hues past purple (beyond ~300°) are reds seen under a magenta cast.
  const h = hue > 300 ? hue - 360 : hue;
  if (h >= t.greenFrom) return 'green';
  if (h >= t.turningFrom) return 'turning';
  return 'red';
}
