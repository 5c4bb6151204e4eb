// Multi-object tracker for one kind of object (fruit, stems or plants) along a walk:
// SORT's constant-velocity Kalman boxes, IoU association in two rounds as in
// ByteTrack (confident detections first, then low-score ones may only extend
// existing tracks), and a global camera shift applied before matching.
import type { Box, Ripeness } from '../types.js';
import { matchByIou } from './assign.js';
import { BoxKalman, DEFAULT_KALMAN_NOISE, type KalmanNoise } from './kalman.js';
import { estimateShift } from './motion.js';

export interface TrackerOptions {
  /** Observations needed before a track counts as an object (confirmed). */
  minHits: number;
  /** Frames a confirmed track may go unseen (lost) before it is removed. */
  maxAge: number;
  /** Frames a tentative track may go unseen before it is dropped (sparse sampling misses a fruit now and then). */
  tentativeMaxAge: number;
  /** IoU needed to associate a detection with a predicted track. */
  matchIou: number;
  /** Detections at or above this score start tracks and are associated first. */
  highScore: number;
  /** Detections from this score up to highScore may only extend existing tracks. */
  lowScore: number;
  /** Estimate and apply a global camera shift before matching. */
  motionCompensation: boolean;
  /** Largest camera shift searched, as a fraction of the frame's long side. */
  maxShiftFraction: number;
  kalman: KalmanNoise;
}

export const DEFAULT_TRACKER_OPTIONS: TrackerOptions = {
  minHits: 2,
  maxAge: 3,
  tentativeMaxAge: 1,
  matchIou: 0.25,
  highScore: 0.5,
  lowScore: 0.1,
  motionCompensation: true,
  maxShiftFraction: 0.6,
  kalman: DEFAULT_KALMAN_NOISE,
};

export type TrackState = 'tentative' | 'confirmed' | 'lost' | 'removed';

export interface TrackDetection {
  box: Box;
  score: number;
  ripeness?: Ripeness;
}

export interface TrackObservation extends TrackDetection {
  frame: number;
  /** The box touches the frame border, so its size is cut off. */
  atEdge: boolean;
}

export interface Track {
  /** Internal key, unique per tracker, given to every track including ones never confirmed. */
  readonly key: number;
  /** Public id, given when the track is confirmed (counted); null before. */
  id: number | null;
  state: TrackState;
  /** Current estimate (after this frame's update or prediction). */
  box: Box;
  hits: number;
  misses: number;
  observations: TrackObservation[];
}

export interface FrameGeometry {
  /** Walk-wide frame index. */
  frame: number;
  width: number;
  height: number;
}

export interface TrackerStep {
  /** Tracks alive after this frame (tentative, confirmed and lost). */
  tracks: readonly Track[];
  /** Track key per input detection index, or -1 when the detection was not used. */
  assigned: number[];
  /** Tracks confirmed (counted) by this frame. */
  confirmed: Track[];
  /** Camera shift applied to predictions this frame, pixels. */
  shift: [number, number];
  /**
   * Camera motion since the previous frame measured on this frame's matches (median
   * displacement of tracks seen in both frames), or null with fewer than two such tracks.
   */
  camera: [number, number] | null;
}

interface Live {
  track: Track;
  kf: BoxKalman;
}

export class Tracker {
  readonly options: TrackerOptions;
  private live: Live[] = [];
  private readonly done: Track[] = [];
  private nextKey = 1;
  private cameraVelocity: [number, number] = [0, 0];
  private framesSeen = 0;

  /** `nextId` hands out public ids, so several trackers of one walk can share one numbering. */
  constructor(
    options: Partial<TrackerOptions> = {},
    private readonly nextId: () => number = counter(),
  ) {
    this.options = { ...DEFAULT_TRACKER_OPTIONS, ...options };
  }

  get frames(): number {
    return this.framesSeen;
  }

  /**
   * Advances one frame. `camera`, when given, is the camera's motion since the previous
   * frame measured elsewhere (on the fruit): every track is then moved by it instead of
   * by its own velocity, and no shift is searched. Stems and plants follow the fruit this
   * way, since their tall, overlapping boxes are poor evidence of motion by themselves.
   */
  update(detections: TrackDetection[], geo: FrameGeometry, camera?: [number, number] | null): TrackerStep {
    const o = this.options;
    this.framesSeen++;
    // Fruit hang still: everything in view moves with the camera, so every track is
    // predicted with the one camera motion rather than a velocity of its own.
    const motion = camera ?? this.cameraVelocity;
    for (const l of this.live) l.kf.setVelocity(motion[0], motion[1]);
    const predicted = this.live.map((l) => l.kf.predict());

    const high: number[] = [];
    const low: number[] = [];
    detections.forEach((d, i) => {
      if (d.score >= o.highScore) high.push(i);
      else if (d.score >= o.lowScore) low.push(i);
    });

    let shift: [number, number] = [0, 0];
    if (o.motionCompensation && !camera && this.live.length > 0 && high.length > 0) {
      const est = estimateShift(
        predicted,
        high.map((i) => detections[i]!.box),
        {
          minIou: o.matchIou,
          maxShift: o.maxShiftFraction * Math.max(geo.width, geo.height),
        },
      );
      if (est.support > 0 && (est.dx !== 0 || est.dy !== 0)) {
        shift = [est.dx, est.dy];
        for (const l of this.live) l.kf.translate(est.dx, est.dy);
        for (let i = 0; i < predicted.length; i++) predicted[i] = this.live[i]!.kf.box();
      }
    }

    const assigned = new Array<number>(detections.length).fill(-1);
    const matched = new Set<number>();
    const first = matchByIou(
      predicted,
      high.map((i) => detections[i]!.box),
      o.matchIou,
    );
    for (const [ti, k] of first.pairs) this.hit(ti, detections[high[k]!]!, geo, assigned, high[k]!, matched);
    const rest = first.unmatchedTracks;
    const second = matchByIou(
      rest.map((ti) => predicted[ti]!),
      low.map((i) => detections[i]!.box),
      o.matchIou,
    );
    for (const [r, k] of second.pairs) this.hit(rest[r]!, detections[low[k]!]!, geo, assigned, low[k]!, matched);

    const confirmed: Track[] = [];
    for (let ti = 0; ti < this.live.length; ti++) {
      const { track } = this.live[ti]!;
      if (matched.has(ti)) {
        if (track.state === 'tentative' && track.hits >= o.minHits) this.confirm(track, confirmed);
        else if (track.state === 'lost') track.state = 'confirmed';
        continue;
      }
      track.misses++;
      track.box = predicted[ti]!;
      // A counted fruit that left the view is kept (lost) for maxAge frames, moving with the
      // camera: a walker who steps back sees it again and it must not be counted twice.
      const gone = outside(track.box, geo, 0.5);
      if (track.state === 'tentative') {
        if (gone || track.misses > o.tentativeMaxAge) track.state = 'removed';
      } else if (track.misses > o.maxAge) track.state = 'removed';
      else track.state = 'lost';
    }

    // Camera motion: median displacement per frame of the tracks seen again in this frame.
    const mx: number[] = [],
      my: number[] = [];
    for (const ti of matched) {
      const obs = this.live[ti]!.track.observations;
      const now = obs[obs.length - 1]!,
        before = obs[obs.length - 2];
      if (!before) continue;
      const gap = now.frame - before.frame;
      mx.push((now.box[0] + now.box[2] - before.box[0] - before.box[2]) / 2 / gap);
      my.push((now.box[1] + now.box[3] - before.box[1] - before.box[3]) / 2 / gap);
    }
    const measured: [number, number] | null = mx.length >= 2 ? [med(mx), med(my)] : null;
    if (camera) this.cameraVelocity = camera;
    else if (measured) this.cameraVelocity = measured;
    else this.cameraVelocity = [motion[0] + shift[0], motion[1] + shift[1]];

    for (const k of first.unmatchedDetections) {
      const i = high[k]!;
      const d = detections[i]!;
      const track: Track = {
        key: this.nextKey++,
        id: null,
        state: 'tentative',
        box: d.box,
        hits: 1,
        misses: 0,
        observations: [observe(d, geo)],
      };
      this.live.push({ track, kf: new BoxKalman(d.box, this.cameraVelocity[0], this.cameraVelocity[1], o.kalman) });
      assigned[i] = track.key;
      if (o.minHits <= 1) this.confirm(track, confirmed);
    }

    const keep: Live[] = [];
    for (const l of this.live) {
      if (l.track.state === 'removed') {
        if (l.track.id !== null) this.done.push(l.track);
      } else keep.push(l);
    }
    this.live = keep;
    return { tracks: this.live.map((l) => l.track), assigned, confirmed, shift, camera: measured };
  }

  /**
   * Ends the walk and returns every counted track, ordered by id. When the walk had
   * fewer frames than minHits (a photo), every tentative track is confirmed: one
   * frame is all the evidence there will ever be.
   */
  finish(): Track[] {
    const confirmed: Track[] = [];
    for (const l of this.live) {
      if (l.track.state === 'tentative' && this.framesSeen < this.options.minHits) this.confirm(l.track, confirmed);
      if (l.track.id !== null) this.done.push(l.track);
      l.track.state = 'removed';
    }
    this.live = [];
    return [...this.done].sort((a, b) => a.id! - b.id!);
  }

  private hit(ti: number, d: TrackDetection, geo: FrameGeometry, assigned: number[], di: number, matched: Set<number>): void {
    const l = this.live[ti]!;
    l.kf.update(d.box);
    l.track.box = l.kf.box();
    l.track.hits++;
    l.track.misses = 0;
    l.track.observations.push(observe(d, geo));
    assigned[di] = l.track.key;
    matched.add(ti);
  }

  private confirm(track: Track, into: Track[]): void {
    track.state = 'confirmed';
    track.id = this.nextId();
    into.push(track);
  }
}

export function counter(start = 1): () => number {
  let n = start;
  return () => n++;
}

function observe(d: TrackDetection, geo: FrameGeometry): TrackObservation {
  const e = 1.5;
  const atEdge = d.box[0] <= e || d.box[1] <= e || d.box[2] >= geo.width - e || d.box[3] >= geo.height - e;
  return { frame: geo.frame, box: d.box, score: d.score, ...(d.ripeness ? { ripeness: d.ripeness } : {}), atEdge };
}

/** Whether at least `fraction` of the box lies outside the frame. */
function outside(b: Box, geo: FrameGeometry, fraction: number): boolean {
  const area = (b[2] - b[0]) * (b[3] - b[1]);
  if (area <= 0) return true;
  const ix = Math.max(0, Math.min(b[2], geo.width) - Math.max(b[0], 0));
  const iy = Math.max(0, Math.min(b[3], geo.height) - Math.max(b[1], 0));
  return ix * iy < (1 - fraction) * area;
}

function med(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
