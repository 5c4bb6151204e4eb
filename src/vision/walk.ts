// The per-walk scoring pipeline, free of HTTP, storage and queueing: decode each clip
// in walking order, detect, track fruit / stems / plants across frames and clips,
// and count each tracked object once. The job runner supplies the decoder, saves
// frames and overlays in `onFrame`, and adds image quality from the frames it sees.
import type { Box, Detection, DetectionKind, Detector, DetectorInfo, RgbImage, RipenessCounts } from './types.js';
import { AdaptiveSampler, type SamplingOptions } from './sampling.js';
import { showsNoPlant } from './quality.js';
import {
  counter,
  mergeDuplicateTracks,
  summariseFruit,
  summariseObject,
  Tracker,
  type CountedFruit,
  type CountedObject,
  type MergeOptions,
  type TrackerOptions,
  type TrackState,
} from './track/index.js';

export interface WalkOptions {
  /** Detection threshold: detections from here up start and confirm tracks. */
  conf: number;
  /** Seconds between sampled frames of a clip. */
  sampleSeconds: number;
  /**
   * Adaptive sampling: the clip is decoded at this interval (shorter than sampleSeconds) and
   * a frame is scored every sampleSeconds, or every decoded frame while the camera moves
   * fast (`AdaptiveSampler`). Absent: every sampleSeconds, whatever the pace.
   */
  fastSampleSeconds?: number;
  /** The pace at which adaptive sampling turns fast (`SamplingOptions`). */
  sampling?: Partial<Pick<SamplingOptions, 'fastShare' | 'slowFactor'>>;
  /**
   * Frames sampled at most from each clip, at sampleSeconds: the clip is read for at most
   * maxFrames × sampleSeconds; adaptive sampling may score up to sampleSeconds /
   * fastSampleSeconds times as many frames in that stretch.
   */
  maxFrames: number;
  /** Millimetres per pixel of the original clip (not of the decoded working frames). */
  mmPerPixel?: number;
  /** Passed to the decoder: frames are scaled so their long side is at most this. */
  maxLongSide?: number;
  /**
   * What happens between consecutive clips of a batch. 'carry' (default): the clips are
   * consecutive stretches of one row, so tracks continue into the next clip and a fruit
   * filmed at the end of one clip and the start of the next is counted once. 'reset':
   * every clip is tracked on its own.
   */
  clipBoundary?: 'carry' | 'reset';
  /** Tracker settings; `highScore` defaults to `conf`. */
  tracker?: Partial<TrackerOptions>;
  /**
   * Merging of counted fruit tracks that are one fruit seen twice (`mergeDuplicateTracks`,
   * docs/tracking.md), per segment once it is tracked; false turns it off.
   */
  merge?: Partial<MergeOptions> | false;
}

export interface WalkFrameInput {
  index: number;
  timeSeconds: number;
  image: RgbImage;
}

export type WalkDecoder = (
  file: string,
  options: { sampleSeconds: number; maxFrames: number; maxLongSide?: number; signal?: AbortSignal },
) => AsyncIterable<WalkFrameInput>;

export interface TrackView {
  kind: DetectionKind;
  /** Public id once counted, else null. */
  track_id: number | null;
  state: TrackState;
  box: Box;
}

export interface WalkFrameInfo {
  clip: number;
  /** Walk-wide frame number, 0-based, in walking order. */
  frameIndex: number;
  /** Frame number inside the clip, as the decoder gave it. */
  clipFrame: number;
  timeSeconds: number;
  image: RgbImage;
  /** Detections kept: at or above `conf`, plus low-score ones that extended a track. */
  detections: (Detection & { track_key: number | null })[];
  tracks: TrackView[];
}

export interface WalkProgress {
  clip: number;
  clipsDone: number;
  framesDone: number;
  /** 0..1 of the walk when clip durations are known (a `probe` was given), else null. */
  fraction: number | null;
  /** 0..1 of clip `clip` when its duration is known, else null; 1 once the clip is done. */
  clipFraction: number | null;
}

export interface ScoreWalkInput {
  /** File paths in walking order. */
  clips: string[];
  detector: Detector;
  options: WalkOptions;
  decode: WalkDecoder;
  /** Original size and length of a clip: scales mm_per_pixel to working frames and drives progress. */
  probe?: (file: string) => Promise<{ width: number; height: number; durationSeconds: number }>;
  onFrame?: (info: WalkFrameInfo) => Promise<void> | void;
  onProgress?: (p: WalkProgress) => Promise<void> | void;
  signal?: AbortSignal;
}

export interface WalkFrame {
  frame: number;
  clip: number;
  clip_frame: number;
  time_seconds: number;
  width: number;
  height: number;
  detections: { fruit: number; stems: number; plants: number };
}

export interface ObjectCount {
  /** Number counted along the walk, or null when the detector cannot see this kind. */
  count: number | null;
  reason?: string;
  items: CountedObject[];
}

export interface WalkResult {
  detector: DetectorInfo;
  frames: WalkFrame[];
  fruit: CountedFruit[];
  stems: ObjectCount;
  plants: ObjectCount;
  counts: RipenessCounts;
  clips: WalkClip[];
}

export interface WalkClip {
  index: number;
  frames: number;
  done: boolean;
  /** The clip's length and the seconds of it read from its start (`readStretchSeconds`); null without a probe. */
  duration_seconds: number | null;
  read_seconds: number | null;
}

const KINDS: DetectionKind[] = ['fruit', 'stem', 'plant'];

/** Scores one walk (one clip, a photo, or a batch of clips in walking order). */
export async function scoreWalk(input: ScoreWalkInput): Promise<WalkResult> {
  const { detector, options, signal } = input;
  const conf = options.conf;
  const lowScore = lowScoreFor(conf);
  const trackerOptions: Partial<TrackerOptions> = { highScore: conf, lowScore, ...options.tracker };
  const supported: Record<DetectionKind, boolean> = {
    fruit: true,
    stem: detector.info.stems.supported,
    plant: detector.info.plants.supported,
  };
  const ids: Record<DetectionKind, () => number> = { fruit: counter(), stem: counter(), plant: counter() };
  const counted: Record<DetectionKind, { track: ReturnType<Tracker['finish']>[number]; mm?: number }[]> = {
    fruit: [],
    stem: [],
    plant: [],
  };

  // A segment is a run of frames tracked together: consecutive video clips (with
  // 'carry'), or a single photo, which is never linked to the clips around it.
  let trackers: Record<DetectionKind, Tracker> | null = null;
  let segmentMm: number | undefined;
  let segmentSize = '';
  const openSegment = () => {
    trackers = {
      fruit: new Tracker(trackerOptions, ids.fruit),
      stem: new Tracker(trackerOptions, ids.stem),
      plant: new Tracker(trackerOptions, ids.plant),
    };
  };
  /** Public ids merged away when a segment closed, to the id of the fruit they became part of. */
  const mergedInto = new Map<number, number>();
  const closeSegment = () => {
    if (!trackers) return;
    for (const k of KINDS) {
      let tracks = trackers[k].finish();
      // A second view of one fruit that became a track of its own is one fruit.
      if (k === 'fruit' && options.merge !== false) {
        const merged = mergeDuplicateTracks(tracks, options.merge ?? {});
        tracks = merged.tracks;
        for (const m of merged.merges) mergedInto.set(m.absorbed, m.into);
      }
      for (const track of tracks) counted[k].push({ track, mm: segmentMm });
    }
    trackers = null;
  };

  const frames: WalkFrame[] = [];
  const probes = input.probe ? await Promise.all(input.clips.map((f) => input.probe!(f))) : null;
  // Progress goes by time into the clip (the stretch read), since adaptive sampling makes the frame count unknown ahead.
  const stretch = probes?.map((p) => readStretchSeconds(options, p.durationSeconds));
  const clips: WalkClip[] = input.clips.map((_, index) => ({
    index,
    frames: 0,
    done: false,
    duration_seconds: probes ? probes[index]!.durationSeconds : null,
    read_seconds: stretch ? stretch[index]! : null,
  }));
  const clipTime = clips.map(() => 0);
  const progress = async (clip: number) => {
    if (!input.onProgress) return;
    const clipsDone = clips.filter((c) => c.done).length;
    let fraction: number | null = null;
    let clipFraction: number | null = null;
    if (stretch) {
      const span = stretch[clip]!;
      // A frame at t stands for the sampling interval after it, so the clip's last frame brings it near 1.
      clipFraction = clips[clip]!.done ? 1 : span > 0 ? Math.min(1, (clipTime[clip]! + options.sampleSeconds) / span) : 0;
      fraction = Math.min(1, (clipsDone + (clips[clip]!.done ? 0 : clipFraction)) / clips.length);
    }
    await input.onProgress({ clip, clipsDone, framesDone: frames.length, fraction, clipFraction });
  };

  /**
   * Tracks one frame; answers the camera motion measured on its fruit since the frame before (null
   * when unknown). With `hold`, the frame is handed on (onFrame) only when the caller calls `emit`:
   * a photo's tracks get their ids when its segment closes, and its overlay must show them.
   */
  const processFrame = async (
    clip: number,
    f: WalkFrameInput,
    found: Detection[],
    hold = false,
  ): Promise<{ camera: [number, number] | null; emit: () => Promise<void> }> => {
    // A test pattern's red bar is no fruit: a frame with no plant in it gives no detections.
    const dets = showsNoPlant(f.image) ? [] : found;
    const geo = { frame: frames.length, width: f.image.width, height: f.image.height };
    const kept: WalkFrameInfo['detections'] = [];
    const views: TrackView[] = [];
    const viewed: { id: number | null }[] = [];
    const perKind = { fruit: 0, stems: 0, plants: 0 };
    // Fruit are many, small and distinct: the camera motion measured on them moves the stem and plant tracks.
    let camera: [number, number] | null = null;
    for (const kind of KINDS) {
      if (!supported[kind]) continue;
      const mine = dets.filter((d) => d.kind === kind);
      const step = trackers![kind].update(mine, geo, kind === 'fruit' ? null : camera);
      if (kind === 'fruit') camera = step.camera;
      mine.forEach((d, i) => {
        const key = step.assigned[i]!;
        if (d.score >= conf || key >= 0) kept.push({ ...d, track_key: key >= 0 ? key : null });
      });
      for (const t of step.tracks) {
        views.push({ kind, track_id: t.id, state: t.state, box: t.box });
        viewed.push(t);
      }
      const n = mine.filter((d) => d.score >= conf).length;
      if (kind === 'fruit') perKind.fruit = n;
      else if (kind === 'stem') perKind.stems = n;
      else perKind.plants = n;
    }
    frames.push({
      frame: geo.frame,
      clip,
      clip_frame: f.index,
      time_seconds: f.timeSeconds,
      width: geo.width,
      height: geo.height,
      detections: perKind,
    });
    clips[clip]!.frames++;
    clipTime[clip] = f.timeSeconds;
    const emit = async () => {
      // The ids the tracks have now (a held photo's were given when its segment closed).
      views.forEach((v, i) => {
        const id = viewed[i]!.id;
        v.track_id = id === null ? null : (mergedInto.get(id) ?? id);
      });
      if (input.onFrame) {
        await input.onFrame({
          clip,
          frameIndex: geo.frame,
          clipFrame: f.index,
          timeSeconds: f.timeSeconds,
          image: f.image,
          detections: kept,
          tracks: views,
        });
      }
      await progress(clip);
    };
    if (!hold) await emit();
    return { camera, emit };
  };

  const detect = async (image: RgbImage) => {
    throwIfAborted(signal);
    return detector.detect(image, { conf: lowScore });
  };

  // Frames detected ahead of their turn on the detector's threads: as many as it has, so none waits idle for the walk.
  const readAhead = detector.announce ? (detector.readAhead ?? 0) : 0;
  const sampler = options.fastSampleSeconds
    ? new AdaptiveSampler({ regularSeconds: options.sampleSeconds, fastSeconds: options.fastSampleSeconds, ...options.sampling })
    : null;
  const plan = decodePlan(options);

  for (let c = 0; c < input.clips.length; c++) {
    throwIfAborted(signal);
    const file = input.clips[c]!;
    const source = input.decode(file, { ...plan, maxLongSide: options.maxLongSide, signal });
    sampler?.startClip();
    const it = new ClipReader(source[Symbol.asyncIterator](), sampler, detector, lowScore);
    try {
      const first = await it.next();
      if (first.done) {
        clips[c]!.done = true;
        continue;
      }
      const firstDets = await detect(first.value.image);
      const second = await it.next();
      const mm = mmPerWorkingPixel(options.mmPerPixel, probes?.[c]?.width, first.value.image.width);
      if (second.done) {
        // A photo (or a clip shorter than one sample): tracked alone, every detection counts.
        closeSegment();
        openSegment();
        segmentMm = mm;
        const held = await processFrame(c, first.value, firstDets, true);
        closeSegment();
        await held.emit();
      } else {
        const size = `${first.value.image.width}x${first.value.image.height}`;
        // Tracks live in pixel coordinates: a clip of another size or scale starts afresh.
        if (!trackers || options.clipBoundary === 'reset' || mm !== segmentMm || size !== segmentSize) {
          closeSegment();
          openSegment();
        }
        segmentMm = mm;
        segmentSize = size;
        await processFrame(c, first.value, firstDets);
        let before = first.value;
        for (let n: IteratorResult<WalkFrameInput> = second; !n.done; n = await it.next()) {
          await it.readAhead(n.value, readAhead);
          const { camera: motion } = await processFrame(c, n.value, await detect(n.value.image));
          sampler?.observe(motion, n.value.timeSeconds - before.timeSeconds, n.value.image.width, n.value.image.height);
          before = n.value;
        }
      }
      clips[c]!.done = true;
      await progress(c);
    } finally {
      await it.close();
    }
  }
  closeSegment();

  const fruit = counted.fruit.map(({ track, mm }) => summariseFruit(track, mm)).sort((a, b) => a.track_id - b.track_id);
  const counts: RipenessCounts = { green: 0, turning: 0, red: 0, total: 0 };
  for (const f of fruit) {
    counts[f.ripeness]++;
    counts.total++;
  }
  const objects = (kind: 'stem' | 'plant'): ObjectCount => {
    const info = kind === 'stem' ? detector.info.stems : detector.info.plants;
    if (!info.supported)
      return { count: null, reason: info.reason ?? `the detector ${detector.info.name} does not detect ${kind}s`, items: [] };
    const items = counted[kind].map(({ track }) => summariseObject(track)).sort((a, b) => a.track_id - b.track_id);
    return { count: items.length, items };
  };
  return { detector: detector.info, frames, fruit, stems: objects('stem'), plants: objects('plant'), counts, clips };
}

/** The least score the walk asks the detector for: the tracker's low-score round reads down to a third of conf. */
export function lowScoreFor(conf: number): number {
  return Math.min(conf, Math.max(0.05, conf / 3));
}

/**
 * How the decoder reads a clip for these options: at the fast interval with adaptive
 * sampling, over the same stretch either way (maxFrames samples at sampleSeconds).
 */
export function decodePlan(options: Pick<WalkOptions, 'sampleSeconds' | 'fastSampleSeconds' | 'maxFrames'>): {
  sampleSeconds: number;
  maxFrames: number;
} {
  const every = options.fastSampleSeconds ?? options.sampleSeconds;
  return { sampleSeconds: every, maxFrames: Math.ceil((options.maxFrames * options.sampleSeconds) / every - 1e-9) };
}

/** Seconds of a clip that are read: all of it, or up to maxFrames samples at sampleSeconds. */
export function readStretchSeconds(options: Pick<WalkOptions, 'sampleSeconds' | 'maxFrames'>, durationSeconds: number): number {
  return Math.min(durationSeconds, options.maxFrames * options.sampleSeconds);
}

/**
 * The decoded frames of a clip that are scored, in order; the others are dropped undetected.
 * With a detector that reads ahead, `readAhead` decodes on and announces the frames that the
 * sampler would take next if the pace held, so that they are detected while the walk tracks
 * the frames before them; a frame announced and then not taken (the pace changed) is discarded.
 */
class ClipReader {
  private readonly buffer: WalkFrameInput[] = [];
  private readonly announced = new Set<RgbImage>();
  private ended = false;

  constructor(
    private readonly source: AsyncIterator<WalkFrameInput>,
    private readonly sampler: AdaptiveSampler | null,
    private readonly detector: Detector,
    private readonly conf: number,
  ) {}

  async next(): Promise<IteratorResult<WalkFrameInput, undefined>> {
    for (;;) {
      const f = this.buffer.shift() ?? (await this.pull());
      if (!f) return { done: true, value: undefined };
      const taken = !this.sampler || this.sampler.take(f.timeSeconds);
      if (this.announced.delete(f.image) && !taken) this.detector.discard?.(f.image);
      if (taken) return { done: false, value: f };
    }
  }

  /** Announces `frame`, to be detected now, and the next `depth` frames the sampler would take at this pace. */
  async readAhead(frame: WalkFrameInput, depth: number): Promise<void> {
    if (!this.detector.announce || depth < 1) return;
    // Already taken from the buffer: the detector alone keeps it until detect() asks for it.
    this.detector.announce(frame.image, { conf: this.conf });
    const preview = this.sampler?.preview();
    for (let i = 0, found = 0; found < depth; i++) {
      if (i >= this.buffer.length) {
        const f = await this.pull();
        if (!f) return;
        this.buffer.push(f);
      }
      const f = this.buffer[i]!;
      if (preview && !preview.take(f.timeSeconds)) continue;
      found++;
      this.announce(f);
    }
  }

  async close(): Promise<void> {
    for (const image of this.announced) this.detector.discard?.(image);
    this.announced.clear();
    this.buffer.length = 0;
    await this.source.return?.();
  }

  private announce(f: WalkFrameInput): void {
    if (this.announced.has(f.image)) return;
    this.announced.add(f.image);
    this.detector.announce!(f.image, { conf: this.conf });
  }

  private async pull(): Promise<WalkFrameInput | undefined> {
    if (this.ended) return undefined;
    const n = await this.source.next();
    if (n.done) this.ended = true;
    return n.done ? undefined : n.value;
  }
}

/** mm_per_pixel is for the clip as filmed; frames may have been scaled down to work on. */
export function mmPerWorkingPixel(
  mmPerPixel: number | undefined,
  sourceWidth: number | undefined,
  workingWidth: number,
): number | undefined {
  if (!mmPerPixel) return undefined;
  return sourceWidth ? (mmPerPixel * sourceWidth) / workingWidth : mmPerPixel;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('scoring was cancelled');
}
