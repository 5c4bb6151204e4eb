import { setPriority } from 'node:os';
import { decodeFrames, type DecodedFrame, type DecodeSummary } from '../../vision/media/decode.js';
import { MediaError } from '../../vision/media/errors.js';
import { drawOverlay, type OverlayBox } from '../../vision/overlay.js';
import {
  clipCutShortWarning,
  clipDamagedWarning,
  frameQuality,
  walkQuality,
  type FrameQuality as MeasuredQuality,
  type QualityWarning,
} from '../../vision/quality.js';
import { iou } from '../../vision/track/index.js';
import type { RgbImage } from '../../vision/types.js';
import { decodePlan, scoreWalk, type WalkFrameInfo, type WalkResult } from '../../vision/walk.js';
import { openDetector, type OpenedDetector } from './detectors.js';
import { writeFrameBoxes, type FrameBoxes } from './frame-boxes.js';
import type { ClipProgressMessage, RunnerMessage, WorkerJob, WorkerMessage } from './messages.js';
import type { FrameQuality, StoredResult } from './result.js';
import { JpegSequenceWriter } from './frame-writer.js';
import { defaultConf, walkOptionsFrom } from './options.js';

/** Nice value of the scoring process and its ffmpeg processes (0 normal, 19 lowest). */
const SCORING_NICE = 10;

/**
 * A scoring worker process: scores one walk with the pure pipeline, writes
 * each frame's image and overlay under the walk's frames folder, and reports
 * progress and the result to the runner over IPC. It never touches the
 * database. A process, not a thread: onnxruntime-node's native binding loads
 * once per process and refuses a second worker thread ("Module did not
 * self-register"), so a thread per walk would fail every model walk after the
 * first.
 */
const job = (globalThis as { __cropwalkJob?: WorkerJob }).__cropwalkJob!;
// The whole process and the ffmpeg processes it starts run at a lower priority: scoring yields the CPU to the API.
try {
  setPriority(SCORING_NICE);
} catch {
  // Not permitted (some containers): scoring runs at normal priority.
}
let lastSend: Promise<void> = Promise.resolve();
const post = (m: WorkerMessage) => {
  lastSend = new Promise<void>((resolve) => process.send!(m, () => resolve()));
};
const controller = new AbortController();
process.on('message', (m: RunnerMessage) => {
  if (m.type === 'stop') controller.abort(new MediaError('aborted', 'scoring was stopped'));
});
// Listening for "stop" must not keep the process alive once the walk is scored: the runner takes the exit as the end of the job.
process.channel?.unref();

const clipByPath = new Map(job.clips.map((c) => [c.path, c]));
const clipState: ClipProgressMessage[] = job.clips.map((c) => ({ position: c.position, progress: 0, frames: 0, status: 'queued' }));
let walkOptions = walkOptionsFrom(job.options);
let currentClip: number | null = null;
const images = new JpegSequenceWriter(job.framesDir, 'image.jpg');
const overlays = new JpegSequenceWriter(job.framesDir, 'overlay.jpg');
let framesDone = 0;
/** Every frame's fruit boxes with the counted fruit each belongs to: what a training export labels frames with. */
const frameBoxes: FrameBoxes[] = [];

/**
 * The box that started this worker is gone (killed with kill -9, say: it could not tell us to
 * stop): what we score has nowhere to go, and a restarted box will score the walk again into the
 * same frames folder. So end at once, with every ffmpeg we started: the runner makes this process
 * the leader of its own group, which they join, and the group is killed as one. The IPC channel
 * closing says the parent is gone; the parent process id changing says it too, should the
 * channel's end be missed.
 */
let ending = false;
const parentAtStart = process.ppid;
function parentGone(): void {
  if (ending) return;
  ending = true;
  controller.abort(new MediaError('aborted', 'the box that started this worker is gone'));
  images.kill();
  overlays.kill();
  try {
    process.kill(-process.pid, 'SIGKILL');
  } catch {
    // Not a group leader (started some other way): its ffmpeg were killed above.
  }
  process.exit(1);
}
process.on('disconnect', parentGone);
setInterval(() => {
  if (process.ppid !== parentAtStart) parentGone();
}, 500).unref();

const qualities: { quality: MeasuredQuality; width: number; colourUnconverted: boolean }[] = [];
/** Clips (by index) whose HDR colours this ffmpeg could not convert; the walk's quality says so. */
const unconvertedClips = new Set<number>();
/** Clips (by index) that ffmpeg decoded with errors, with its words and how many frames it gave. */
const damagedClips = new Map<number, { frames: number; errors: string }>();
let previous: { clip: number; image: RgbImage; timeSeconds: number } | null = null;

function overallProgress(): number {
  const done = clipState.reduce((s, c) => s + (c.status === 'done' ? 1 : c.progress), 0);
  // Held below 1 until the result is stored: 1 means "done", not "last frame decoded".
  return Math.min(0.99, done / clipState.length);
}

function reportProgress(): void {
  post({ type: 'progress', progress: overallProgress(), frames: framesDone, clips: clipState.map((c) => ({ ...c })) });
}

async function onFrame(info: WalkFrameInfo): Promise<void> {
  const clip = job.clips[info.clip]!;
  const isPhoto = clip.kind === 'image';
  const prev = !isPhoto && previous && previous.clip === info.clip ? previous : null;
  // Adaptive sampling makes the interval vary: motion is per second of the clip.
  const quality = frameQuality(info.image, prev?.image ?? null, prev ? info.timeSeconds - prev.timeSeconds : undefined);
  qualities[info.frameIndex] = { quality, width: info.image.width, colourUnconverted: unconvertedClips.has(info.clip) };
  previous = { clip: info.clip, image: info.image, timeSeconds: info.timeSeconds };

  const boxes: OverlayBox[] = info.detections.map((d) => {
    // The frame's tracks carry the public ids; a detection's track is the one its box updated (highest overlap).
    let best: { id: number | null; overlap: number } = { id: null, overlap: 0.3 };
    for (const t of info.tracks) {
      if (t.kind !== d.kind || t.track_id === null) continue;
      const o = iou(t.box, d.box);
      if (o > best.overlap) best = { id: t.track_id, overlap: o };
    }
    return { box: d.box, kind: d.kind, ripeness: d.ripeness, trackId: best.id ?? undefined };
  });
  frameBoxes.push({
    frame: info.frameIndex,
    width: info.image.width,
    height: info.image.height,
    fruit: boxes
      .map((b, i) => ({ b, d: info.detections[i]! }))
      .filter(({ b }) => b.kind === 'fruit')
      .map(({ b, d }) => ({
        box: d.box,
        ripeness: d.ripeness ?? 'red',
        score: d.score,
        track_id: typeof b.trackId === 'number' ? b.trackId : null,
      })),
  });
  await Promise.all([images.write(info.frameIndex, info.image), overlays.write(info.frameIndex, drawOverlay(info.image, boxes))]);
  framesDone++;
  const state = clipState[info.clip]!;
  state.status = 'running';
  state.frames++;
}

const round = (x: number, k = 1000) => Math.round(x * k) / k;

function toStored(result: WalkResult, opened: OpenedDetector): StoredResult {
  const walk = walkQuality(qualities);
  const lastFrameOf = (clip: number) => result.frames.findLast((f) => f.clip === clip)?.frame ?? null;
  const cut = clipCutShortWarning(
    result.clips.map((c) => ({
      number: job.clips[c.index]!.position + 1,
      durationSeconds: c.duration_seconds ?? 0,
      readSeconds: c.read_seconds ?? 0,
      lastFrame: lastFrameOf(c.index),
    })),
    { maxFrames: walkOptions.maxFrames, sampleSeconds: walkOptions.sampleSeconds },
  );
  const decodedEvery = decodePlan(walkOptions).sampleSeconds;
  const damaged = clipDamagedWarning(
    [...damagedClips].map(([index, d]) => ({
      number: job.clips[index]!.position + 1,
      photo: job.clips[index]!.kind === 'image',
      readSeconds: result.clips.find((c) => c.index === index)?.read_seconds ?? 0,
      decodedSeconds: d.frames * decodedEvery,
      errors: withClipNames(d.errors),
      lastFrame: lastFrameOf(index),
    })),
    { sampleSeconds: decodedEvery },
  );
  const warnings: QualityWarning[] = [...walk.warnings, ...(cut ? [cut] : []), ...(damaged ? [damaged] : [])];
  const frameQualityOf = (i: number): FrameQuality => {
    const q = qualities[i]!.quality;
    return {
      sharpness: round(q.sharpness),
      brightness: round(q.brightness),
      dark_fraction: round(q.darkFraction),
      bright_fraction: round(q.brightFraction),
      motion_px_per_s: q.motionPxPerSecond === null ? null : round(q.motionPxPerSecond, 10),
      score: round(walk.frameScores[i] ?? 0),
    };
  };
  return {
    detector: {
      name: result.detector.name,
      kind: result.detector.kind,
      fallback_reason: opened.fallbackReason,
      model: opened.model,
      conf: walkOptions.conf,
    },
    frames: result.frames.map((f) => ({
      index: f.frame,
      clip: job.clips[f.clip]!.position,
      time_s: round(f.time_seconds),
      detections: f.detections.fruit + f.detections.stems + f.detections.plants,
      width: f.width,
      height: f.height,
      quality: frameQualityOf(f.frame),
    })),
    fruit: result.fruit.map((f) => ({
      track_id: f.track_id,
      ripeness: f.ripeness,
      votes: f.votes,
      box: f.best_box,
      frame: f.best_frame,
      first_frame: f.first_frame,
      last_frame: f.last_frame,
      frames_seen: f.frames,
      score: f.score,
      diameter_mm: f.diameter_mm,
    })),
    stems: { count: result.stems.count, reason: result.stems.reason ?? null },
    plants: { count: result.plants.count, reason: result.plants.reason ?? null },
    quality: { score: round(walk.score), warnings: warnings.map((w) => ({ code: w.code, message: w.message, frames: w.frames })) },
    counts: result.counts,
    clips: result.clips.map((c) => ({ position: job.clips[c.index]!.position, frames: c.frames })),
  };
}

/** Passes a clip's frames on, noting what the walk's quality reports: colours left unconverted, damage ffmpeg reported. */
async function* watchClip(frames: AsyncGenerator<DecodedFrame, DecodeSummary>, clip: number): AsyncGenerator<DecodedFrame> {
  let n: IteratorResult<DecodedFrame, DecodeSummary> | undefined;
  try {
    while (!(n = await frames.next()).done) {
      if (n.value.colour === 'unconverted') unconvertedClips.add(clip);
      yield n.value;
    }
    if (n.value.errors) damagedClips.set(clip, { frames: n.value.frames, errors: n.value.errors });
  } finally {
    // Left early (max_frames, a stop): ffmpeg is ended by the decoder's own finally.
    if (!n?.done) await frames.return(undefined as never);
  }
}

async function main(): Promise<void> {
  const opened = await openDetector(job.detector, { threads: job.detectThreads });
  // Without a conf in the request, the detector that actually opened sets it: a model's manifest, or
  // the built-in detector's defaults when a model fell back.
  if (!job.options.conf_given) {
    const video = job.clips.some((c) => c.kind === 'video');
    walkOptions = { ...walkOptions, conf: defaultConf(video, opened.model?.conf ?? null) };
  }
  post({ type: 'started', detector: opened.detector.info.name });
  try {
    const result = await scoreWalk({
      clips: job.clips.map((c) => c.path),
      detector: opened.detector,
      options: walkOptions,
      decode: (file, o) => {
        const clip = clipByPath.get(file)!;
        currentClip = clip.position;
        clipState[clip.position]!.status = 'running';
        return watchClip(decodeFrames(file, o), job.clips.indexOf(clip));
      },
      probe: async (file) => {
        const c = clipByPath.get(file)!;
        return { width: c.width, height: c.height, durationSeconds: c.durationSeconds };
      },
      onFrame,
      // scoreWalk follows each clip by time into the stretch it reads (adaptive sampling makes the frame count unknown ahead).
      onProgress: (p) => {
        for (let i = 0; i < p.clipsDone && i < clipState.length; i++) {
          clipState[i]!.status = 'done';
          clipState[i]!.progress = 1;
        }
        const state = clipState[p.clip]!;
        if (state.status !== 'done') state.progress = Math.min(0.99, p.clipFraction ?? 0);
        reportProgress();
      },
      signal: controller.signal,
    });
    // Every frame file is on disk before the walk is reported done.
    await Promise.all([images.close(), overlays.close()]);
    await writeFrameBoxes(job.framesDir, frameBoxes);
    post({ type: 'done', result: toStored(result, opened), readAhead: opened.detector.aheadStats ?? null });
  } finally {
    images.kill();
    overlays.kill();
    await opened.detector.close?.();
  }
}

try {
  await main();
} catch (err) {
  if (controller.signal.aborted) post({ type: 'stopped' });
  else post({ type: 'failed', reason: reasonOf(err, currentClip), clip: currentClip });
}
// The last report must reach the runner before the process ends.
await lastSend;
ending = true;
process.disconnect?.();

function reasonOf(err: unknown, clip: number | null): string {
  const where = clip !== null && job.clips.length > 1 ? `clip ${clip + 1} of ${job.clips.length}: ` : '';
  return `${where}${withClipNames(err instanceof Error ? err.message : String(err))}`;
}

/** ffmpeg quotes the file it read: name the clip instead of showing the box's folders to the API. */
function withClipNames(text: string): string {
  for (const c of job.clips)
    text = text
      .split(`file:${c.path}`)
      .join(`clip ${c.position + 1}`)
      .split(c.path)
      .join(`clip ${c.position + 1}`);
  return text;
}
