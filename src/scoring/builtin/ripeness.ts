import type { Ripeness } from '../types.js';

/**
 * Ripeness from the CIELAB hue angle of the fruit's skin after white
 * balance. The USDA colour stages for fresh tomatoes (green, breakers,
 * turning, pink, light red, red) are defined by the share of the surface
 * that has turned; the mean hue of the visible skin moves steadily from
 * yellow-green (~110°) to red (~35°) through those stages, so thresholds on
 * it place a fruit in our three classes:
 *
 *   USDA green, breakers        → green    (hue ≥ greenFrom)
 *   USDA turning, pink          → turning  (turningFrom ≤ hue < greenFrom)
 *   USDA light red, red         → red      (hue < turningFrom)
 *
 * docs/builtin-detector.md explains the mapping and how the numbers were set.
 */
export interface RipenessThresholds {
  /** Hue (degrees) at or above which fruit is green. */
  greenFrom: number;
  /** Hue at or above which (and below greenFrom) fruit is turning. */
  turningFrom: number;
}

export const DEFAULT_RIPENESS_THRESHOLDS: RipenessThresholds = { greenFrom: 88, turningFrom: 62 };

/** Hue angles are 0–360; red skin sits just above 0 and magenta casts just below 360. */
export function ripenessFromHue(hue: number, t: RipenessThresholds = DEFAULT_RIPENESS_THRESHOLDS): Ripeness {
  // Hues past purple (beyond ~300°) are reds seen under a magenta cast.
  const h = hue > 300 ? hue - 360 : hue;
  if (h >= t.greenFrom) return 'green';
  if (h >= t.turningFrom) return 'turning';
  return 'red';
}
