/**
 * Fruit mass is typed now and then; each value applies from its week until a
 * later one replaces it. A forecast for a past week must use the mass known
 * for that week, not today's, so lookups go through the history.
 */
export interface FruitMassValues {
  green_g: number;
  turning_g: number;
  red_g: number;
}

export interface FruitMassEntry extends FruitMassValues {
  /** ISO week label the values apply from. */
  week: string;
}

/**
 * The values in force for `week` (a label): the latest entry whose week is on
 * or before it, or null when the history starts later. Week labels of four-digit
 * years sort chronologically as text, so no date arithmetic is needed.
 */
export function fruitMassForWeek<T extends FruitMassEntry>(history: readonly T[], week: string): T | null {
  let best: T | null = null;
  for (const entry of history) {
    if (entry.week <= week && (best === null || entry.week > best.week)) best = entry;
  }
  return best;
}
