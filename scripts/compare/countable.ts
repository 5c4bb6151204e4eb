// What a perfect counter could count on a rendered walk, given the frames it looked at: the
// measure the walk benchmark uses, so a person can check a walk the box scored against its render.
import type { Ripeness } from '../../src/vision/types.js';
import type { WalkTruth } from '../render/truth.js';

export interface RenderedFrame {
  clip: number;
  /** Frame index inside the clip, at the clip's fps. */
  frame: number;
}

export interface CountableOptions {
  /** Share of a fruit that must be in view for a frame to count as a sighting. */
  minVisible: number;
  /** Sightings a fruit needs: the tracker confirms a fruit on its second sighting. */
  minSightings: number;
}

export const DEFAULT_COUNTABLE: CountableOptions = { minVisible: 0.35, minSightings: 2 };

export type ClassCounts = Record<Ripeness | 'total', number>;

/**
 * Fruit seen well (at least `minVisible` in view) in at least `minSightings` of the given
 * frames, by class. A fruit seen well only once, or always mostly hidden, is not countable
 * by any tracker that confirms on a second sighting. With fewer frames than `minSightings`
 * (a photo) one sighting is enough.
 */
export function countableFruit(
  truth: WalkTruth,
  frames: readonly RenderedFrame[],
  options: CountableOptions = DEFAULT_COUNTABLE,
): ClassCounts {
  const seen = new Set(frames.map((f) => `${f.clip}:${f.frame}`));
  const need = Math.min(options.minSightings, Math.max(1, seen.size));
  const counts: ClassCounts = { green: 0, turning: 0, red: 0, total: 0 };
  for (const fruit of truth.fruit) {
    let sightings = 0;
    for (const a of fruit.appearances) if (a.visible >= options.minVisible && seen.has(`${a.clip}:${a.frame}`)) sightings++;
    if (sightings >= need) {
      counts[fruit.ripeness]++;
      counts.total++;
    }
  }
  return counts;
}

/** The frames a walk sampled every `sampleSeconds` from the start of each clip would look at. */
export function sampledEvery(truth: WalkTruth, sampleSeconds: number): RenderedFrame[] {
  if (!(sampleSeconds > 0)) throw new RangeError('sampleSeconds must be above 0');
  const out: RenderedFrame[] = [];
  for (const clip of truth.clips)
    for (let k = 0; ; k++) {
      const frame = Math.round(k * sampleSeconds * truth.fps);
      if (frame >= clip.frames) break;
      out.push({ clip: clip.index, frame });
    }
  return out;
}

/** A scored frame as the API answers it in `result.frames`. */
export interface ScoredFrame {
  clip: number;
  time_s: number;
}

/** The rendered frames a walk's scored frames are: the nearest frame to each frame's time in its clip. */
export function renderedFramesOf(truth: WalkTruth, scored: readonly ScoredFrame[]): RenderedFrame[] {
  return scored.map((f) => {
    const clip = truth.clips[f.clip];
    if (!clip) throw new RangeError(`scored frame of clip ${f.clip}, but the render has ${truth.clips.length} clip(s)`);
    return { clip: f.clip, frame: Math.min(clip.frames - 1, Math.max(0, Math.round(f.time_s * truth.fps))) };
  });
}

export interface ComparisonRow {
  class: Ripeness | 'total';
  counted: number;
  countable: number;
  /** (counted − countable) / countable, or null when nothing was countable. */
  error: number | null;
}

/** The box's counts against what was countable in the frames it scored, class by class. */
export function compareCounts(counted: ClassCounts, countable: ClassCounts): ComparisonRow[] {
  return (['green', 'turning', 'red', 'total'] as const).map((c) => ({
    class: c,
    counted: counted[c],
    countable: countable[c],
    error: countable[c] > 0 ? (counted[c] - countable[c]) / countable[c] : null,
  }));
}
