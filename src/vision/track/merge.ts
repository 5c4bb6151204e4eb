// After a walk (or one segment of it) is tracked: confirmed tracks that are one fruit
// seen twice are merged. The built-in detector now and then puts a second circle on a
// fruit for a frame or two; that circle becomes a track of its own once it is seen in
// two frames. Such a duplicate is short-lived against the walk's typical fruit, and it
// either lies inside the box of a fruit seen for a whole stay in every frame it is seen,
// or it continues another track where that breaks off (one ends where the other begins,
// moving with the camera). A pure function: the tracks given are not changed.
import type { Box } from '../types.js';
import { centre, median } from './box.js';
import type { Track, TrackObservation } from './tracker.js';

export interface MergeOptions {
  /**
   * Only a track seen in at most this fraction of the segment's median track lifetime
   * (observations) may be merged into another. At 0.3 m/s with a sample every 0.5 s a
   * fruit is seen about 8 times (tracks of up to 3 may merge). At 0.6 m/s it is seen about
   * 4 times at 0.5 s (1.6: nothing merges, a counted track has at least 2); adaptive
   * sampling scores such a walk every 0.25 s, so it is seen about 8 times again.
   */
  shortFraction: number;
  /** Share of the smaller box that must lie inside the other, in a frame both are seen in. */
  containment: number;
  /** Sequential duplicates: most frames from the end of one track to the start of the other. */
  maxGap: number;
  /** Sequential duplicates: largest distance from the end (moved with the camera) to the start, in box sizes. */
  maxJump: number;
}

export const DEFAULT_MERGE_OPTIONS: MergeOptions = {
  shortFraction: 0.4,
  containment: 0.6,
  maxGap: 2,
  maxJump: 0.6,
};

export interface MergeResult {
  /**
   * The tracks counted after merging, ordered by id. A merged track keeps the id of the
   * longer track; its observations are both tracks' (the kept track's first in a frame
   * both saw), so the ripeness vote is over both.
   */
  tracks: Track[];
  /** Which id went into which. */
  merges: { into: number; absorbed: number; reason: 'inside' | 'continues' }[];
}

const area = (b: Box) => Math.max(0, b[2] - b[0]) * Math.max(0, b[3] - b[1]);

/** Share of the smaller box inside the other. */
export function containment(a: Box, b: Box): number {
  const ix = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const iy = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (ix <= 0 || iy <= 0) return 0;
  const small = Math.min(area(a), area(b));
  return small > 0 ? (ix * iy) / small : 0;
}

/**
 * Camera motion per frame (pixels from frame f − 1 to f), measured on the tracks themselves:
 * the median displacement of the tracks seen in both frames. A frame without any such
 * track takes the last motion measured (the walker keeps walking).
 */
export function cameraMotionOf(tracks: readonly Track[]): Map<number, [number, number]> {
  const at = tracks.map((t) => new Map(t.observations.map((o) => [o.frame, o.box])));
  const frames = new Set<number>();
  for (const t of tracks) for (const o of t.observations) frames.add(o.frame);
  if (frames.size === 0) return new Map();
  const first = Math.min(...frames),
    last = Math.max(...frames);
  const out = new Map<number, [number, number]>();
  let previous: [number, number] = [0, 0];
  for (let f = first + 1; f <= last; f++) {
    const dx: number[] = [],
      dy: number[] = [];
    for (const m of at) {
      const a = m.get(f - 1),
        b = m.get(f);
      if (!a || !b) continue;
      const [ax, ay] = centre(a),
        [bx, by] = centre(b);
      dx.push(bx - ax);
      dy.push(by - ay);
    }
    if (dx.length > 0) previous = [median(dx), median(dy)];
    out.set(f, previous);
  }
  return out;
}

/** How strongly `short` looks like a second view of `long` (higher is surer), or null when it does not. */
function duplicateOf(
  short: Track,
  long: Track,
  longAt: Map<number, Box>,
  camera: Map<number, [number, number]>,
  o: MergeOptions,
  shortMax: number,
): { reason: 'inside' | 'continues'; strength: number } | null {
  const obs = short.observations;
  const shared = obs.filter((x) => longAt.has(x.frame));
  if (shared.length > 0) {
    // Seen together: every sighting of the short track lies mostly inside the box of a fruit
    // seen for a whole stay (not short itself). Two short tracks one mostly behind the other
    // are two fruit cut by the walk's start or end, or both half hidden, far more often.
    if (long.observations.length <= shortMax) return null;
    if (shared.length < obs.length) return null;
    let sum = 0;
    for (const x of shared) {
      const c = containment(x.box, longAt.get(x.frame)!);
      if (c < o.containment) return null;
      sum += c;
    }
    return { reason: 'inside', strength: 1 + sum / shared.length };
  }
  // Never seen together: one ends where the other begins.
  const sFirst = obs[0]!.frame,
    sLast = obs[obs.length - 1]!.frame;
  const lFirst = long.observations[0]!.frame,
    lLast = long.observations[long.observations.length - 1]!.frame;
  let end: TrackObservation, start: TrackObservation;
  if (sLast < lFirst) [end, start] = [obs[obs.length - 1]!, long.observations[0]!];
  else if (lLast < sFirst) [end, start] = [long.observations[long.observations.length - 1]!, obs[0]!];
  else return null; // interleaved without a common frame: not one fruit seen twice
  if (start.frame - end.frame > o.maxGap) return null;
  let [x, y] = centre(end.box);
  for (let f = end.frame + 1; f <= start.frame; f++) {
    const m = camera.get(f) ?? [0, 0];
    x += m[0];
    y += m[1];
  }
  const [sx, sy] = centre(start.box);
  const size = Math.sqrt((area(end.box) + area(start.box)) / 2);
  if (!(size > 0)) return null;
  const jump = Math.hypot(sx - x, sy - y) / size;
  if (jump > o.maxJump) return null;
  return { reason: 'continues', strength: 1 - jump / (o.maxJump + 1) };
}

/**
 * Merges confirmed tracks of one segment (tracked together, one pixel space) that are one
 * fruit. Short tracks are tried first, each against every track at least as long; the
 * best match (inside before continuing) takes it.
 */
export function mergeDuplicateTracks(tracks: readonly Track[], options: Partial<MergeOptions> = {}): MergeResult {
  const o = { ...DEFAULT_MERGE_OPTIONS, ...options };
  const counted = tracks.filter((t) => t.id !== null && t.observations.length > 0);
  if (counted.length < 2) return { tracks: [...counted].sort((a, b) => a.id! - b.id!), merges: [] };
  const typical = median(counted.map((t) => t.observations.length));
  const shortMax = o.shortFraction * typical;
  const camera = cameraMotionOf(counted);
  const at = counted.map((t) => new Map(t.observations.map((x) => [x.frame, x.box])));
  const order = counted
    .map((_, i) => i)
    .sort((a, b) => counted[a]!.observations.length - counted[b]!.observations.length || counted[b]!.id! - counted[a]!.id!);

  const parent = counted.map((_, i) => i);
  const merges: MergeResult['merges'] = [];
  for (const i of order) {
    const s = counted[i]!;
    if (s.observations.length > shortMax) break;
    let best: { j: number; reason: 'inside' | 'continues'; strength: number } | null = null;
    for (let j = 0; j < counted.length; j++) {
      const l = counted[j]!;
      // Into a longer track (or an equal one counted earlier), never into one already merged away.
      if (j === i || parent[j] !== j) continue;
      if (l.observations.length < s.observations.length || (l.observations.length === s.observations.length && l.id! > s.id!)) continue;
      const d = duplicateOf(s, l, at[j]!, camera, o, shortMax);
      if (d && (!best || d.strength > best.strength)) best = { j, ...d };
    }
    if (best) {
      parent[i] = best.j;
      merges.push({ into: counted[best.j]!.id!, absorbed: s.id!, reason: best.reason });
    }
  }
  const root = (i: number): number => (parent[i] === i ? i : root(parent[i]!));
  const groups = new Map<number, number[]>();
  for (let i = 0; i < counted.length; i++) {
    const r = root(i);
    if (!groups.has(r)) groups.set(r, []);
    if (i !== r) groups.get(r)!.push(i);
  }
  for (const m of merges) {
    const into = counted.findIndex((t) => t.id === m.into);
    m.into = counted[root(into)]!.id!;
  }
  const out: Track[] = [];
  for (const [r, members] of groups) {
    const keep = counted[r]!;
    if (members.length === 0) {
      out.push(keep);
      continue;
    }
    // The kept track's observation comes first in a frame both saw (its box is the fruit's).
    const rank = new Map<TrackObservation, number>();
    const all: TrackObservation[] = [];
    for (const [k, t] of [keep, ...members.map((i) => counted[i]!)].entries()) {
      for (const x of t.observations) {
        rank.set(x, k);
        all.push(x);
      }
    }
    all.sort((a, b) => a.frame - b.frame || rank.get(a)! - rank.get(b)!);
    out.push({ ...keep, hits: all.length, observations: all });
  }
  out.sort((a, b) => a.id! - b.id!);
  return { tracks: out, merges };
}
