// What a counted track reports: one fruit (or stem, or plant) of the walk.
import type { Box, Ripeness } from '../types.js';
import { median } from './box.js';
import type { Track, TrackObservation } from './tracker.js';

export interface RipenessVotes {
  green: number;
  turning: number;
  red: number;
}

export interface CountedObject {
  /** Stable small integer per walk; staff corrections refer to it. */
  track_id: number;
  first_frame: number;
  last_frame: number;
  /** Frames in which the object was detected. */
  frames: number;
  /** Highest-scoring detection along the track and the frame it is in. */
  best_box: Box;
  best_frame: number;
  score: number;
}

export interface CountedFruit extends CountedObject {
  ripeness: Ripeness;
  /** Score-weighted votes per ripeness along the track. */
  votes: RipenessVotes;
  /** Median box min-side along the track in mm; null without a scale. */
  diameter_mm: number | null;
}

const round = (x: number, k = 1000) => Math.round(x * k) / k;

/**
 * The first observation of each frame. A track has one a frame, except a track merged from
 * two views of one fruit (merge.ts), which lists the kept track's first.
 */
function onePerFrame(obs: readonly TrackObservation[]): TrackObservation[] {
  const out: TrackObservation[] = [];
  for (const o of obs) if (out.length === 0 || out[out.length - 1]!.frame !== o.frame) out.push(o);
  return out;
}

export function summariseObject(track: Track): CountedObject {
  if (track.id === null) throw new Error('only a confirmed track is counted');
  const obs = track.observations;
  let best = obs[0]!;
  for (const o of obs) {
    const area = (b: Box) => (b[2] - b[0]) * (b[3] - b[1]);
    if (o.score > best.score || (o.score === best.score && area(o.box) > area(best.box))) best = o;
  }
  return {
    track_id: track.id,
    first_frame: obs[0]!.frame,
    last_frame: obs[obs.length - 1]!.frame,
    frames: onePerFrame(obs).length,
    best_box: best.box.map((v) => round(v, 10)) as Box,
    best_frame: best.frame,
    score: round(best.score),
  };
}

/**
 * Ripeness by score-weighted vote of every observation (both views of a merged track); a tie
 * goes to the riper class (the later it is seen, the riper a fruit is).
 */
export function voteRipeness(track: Track): { ripeness: Ripeness; votes: RipenessVotes } {
  const votes: RipenessVotes = { green: 0, turning: 0, red: 0 };
  for (const o of track.observations) if (o.ripeness) votes[o.ripeness] += o.score;
  let ripeness: Ripeness = 'green';
  for (const r of ['turning', 'red'] as const) if (votes[r] >= votes[ripeness] && votes[r] > 0) ripeness = r;
  return { ripeness, votes: { green: round(votes.green), turning: round(votes.turning), red: round(votes.red) } };
}

/**
 * Diameter as the median of the box's shorter side along the track (the shorter
 * side resists boxes merged with a neighbour), leaving out boxes cut by the frame
 * edge unless every box is. `mmPerPixel` must be for the frames' own pixels.
 */
export function diameterMm(track: Track, mmPerPixel: number | undefined): number | null {
  if (!mmPerPixel || !(mmPerPixel > 0)) return null;
  const obs = onePerFrame(track.observations);
  const whole = obs.filter((o) => !o.atEdge);
  const use = whole.length > 0 ? whole : obs;
  const sides = use.map((o) => Math.min(o.box[2] - o.box[0], o.box[3] - o.box[1]));
  return round(median(sides) * mmPerPixel, 10);
}

export function summariseFruit(track: Track, mmPerPixel?: number): CountedFruit {
  return { ...summariseObject(track), ...voteRipeness(track), diameter_mm: diameterMm(track, mmPerPixel) };
}
