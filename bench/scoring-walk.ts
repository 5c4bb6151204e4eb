/**
 * Walk scoring: counting accuracy after tracking, and speed against ffmpeg alone.
 *
 * Accuracy: rendered walks (scripts/render-walk.ts) over several seeds and speeds,
 * 640×360, scored with
 *   - the oracle detector (the truth of each frame with 15% misses, jitter, one false
 *     fruit a frame, 15% wrong classes): the count error is the tracker's own;
 *   - the built-in colour detector (src/vision/builtin) when it exists: the whole chain.
 * Truth is the fruit seen well (≥35% visible) in at least two sampled frames; for the
 * oracle also the fruit it actually reported in two or more frames (its misses removed).
 * Goal: within 5%.
 * Batches: the same stretch as one clip and as three clips (tracks carried over the joins,
 * and tracked per clip), noise-free oracle.
 * Speed: a rendered 60 s 1080p30 walk; ffmpeg decoding it at the default sampling (every
 * 0.5 s, working size 1280) is the baseline; scoring is decode + detect + track. Each runs
 * in its own child process so peak RSS (node's own, not ffmpeg's) is its own.
 * Goal: scoring faster than real time on two cores.
 *
 *   node --import tsx bench/scoring-walk.ts [--quick] [--seeds 1,2,3 | 46-55 | all] [--no-merge] [--accuracy-only] [--fixed-sampling] [--pace 0.6] [--lighting greenhouse]
 *
 * --seeds: the walks to render and score, as a list, ranges, or `all` (the 51 seeds of the published
 * figures, 102 walks; seeds 1-3 tuned the built-in detector and the track
 * merge, 6-8 too; 9-17 were held out, 23-25, 26-35, 36-45 and 46-55 rendered later and measured once, see
 * docs/builtin-detector.md). --no-merge: count without
 * merging tracks of one fruit seen twice (WalkOptions.merge false). --accuracy-only: skip the
 * clip-join and speed parts. Options are a video upload's defaults (conf 0.5, adaptive sampling);
 * --fixed-sampling scores every 0.5 s whatever the pace (sample_seconds 0.5 given). --pace 0.6 times
 * a 60 s walk at 0.6 m/s (seed 22) instead of the 0.3 m/s one. --speed-only skips the accuracy and clip-join parts. --phone-hlg times the same walk as an
 * iPhone films by default (HEVC Main 10, BT.2020, HLG), re-encoded once with libx265 and cached:
 * the baseline is then ffmpeg decoding that clip as the walk reads it, its conversion to sRGB
 * included, and the plain decode of it (no conversion) is printed beside it. --model models/x.json
 * times the speed walk scored with that model's manifest as well as with the built-in detector
 * (bench/scoring-model.ts builds YOLOv8-sized ones to time). --lighting greenhouse renders the
 * accuracy walks' fruit each under its own softer light, shaded like the labelled photos' fruit
 * (the published figures are 'studio', the default; docs/tracking.md, "Synthetic walks").
 * Without --model, the model that ships in models/ (when there is one) is measured beside the built-in
 * detector, on the accuracy walks (at its manifest's video threshold) and the speed walk; --builtin-only
 * leaves it out. --sweep 0.3,0.35,… scores only the model (--model, else the shipped one) on the accuracy
 * walks of --seeds (1-3 by default) at each of those video thresholds, to choose one on tuning walks.
 * BUILTIN_PARAMS='{...}' in the environment scores with other built-in detector settings, to measure
 * a setting against the default on the same renders.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderWalk, type RenderedWalk } from '../scripts/render/walk.js';
import type { FruitLighting } from '../scripts/render/raster.js';
import { USDA_STAGES, type WalkTruth } from '../scripts/render/truth.js';
import { decodeFrames, resolveFfmpeg } from '../src/vision/media/index.js';
import { loadModelDetector } from '../src/vision/onnx/index.js';
import type { Detector, ReadAheadStats } from '../src/vision/types.js';
import { DEFAULTS } from '../src/config.js';
import { findAutoModel } from '../src/walks/jobs/detector-choice.js';
import { optionsFrom, walkOptionsFrom } from '../src/walks/jobs/options.js';
import { decodePlan, lowScoreFor, scoreWalk, type WalkDecoder, type WalkOptions } from '../src/vision/walk.js';
import { formatSweep, reusingDetector, sweepRow, type SweepRow, type SweepWalk } from './lib/conf-sweep.js';
import { clipPaths, createOracle, NO_NOISE, TYPICAL_NOISE, type CountBreakdown } from '../test/helpers/walk-oracle.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RENDER_SOURCES = path.join(ROOT, 'scripts', 'render');
// Cached renders are keyed by the renderer's source, so a changed renderer renders afresh.
const RENDER_HASH = createHash('sha256')
  .update(
    readdirSync(RENDER_SOURCES)
      .sort()
      .map((f) => readFileSync(path.join(RENDER_SOURCES, f), 'utf8'))
      .join('\0'),
  )
  .digest('hex')
  .slice(0, 12);
/** Where the rendered walks are cached (scripts/replay-walks.ts reads them too). */
export const OUT = path.join(ROOT, 'bench', 'out', `walks-${RENDER_HASH}`);
const decode = decodeFrames as WalkDecoder;
/**
 * How the accuracy walks' fruit are lit: 'studio' (the published figures) or, with --lighting
 * greenhouse, each fruit its own softer light, as shaded as the labelled photos' fruit
 * (scripts/render/raster.ts). The same scenes, cached apart.
 */
const LIGHTING: FruitLighting = (() => {
  const k = process.argv.indexOf('--lighting');
  if (k < 0) return 'studio';
  const v = process.argv[k + 1];
  if (v === 'studio' || v === 'greenhouse') return v;
  console.error('--lighting must be studio or greenhouse');
  process.exit(2);
})();
const ACCURACY_OUT = LIGHTING === 'studio' ? OUT : `${OUT}-${LIGHTING}`;
// What a video upload gets by default (conf 0.5, adaptive sampling), or with --fixed-sampling what
// sample_seconds 0.5 asks for (every 0.5 s whatever the pace).
const FIXED = process.argv.includes('--fixed-sampling');
const OPTIONS: WalkOptions = {
  ...walkOptionsFrom(optionsFrom(FIXED ? { sample_seconds: 0.5 } : {}, { video: true })),
  ...(process.argv.includes('--no-merge') ? { merge: false as const } : {}),
};
/** A detector's video options: a model reads at the video threshold its manifest names, as the box runs it. */
function optionsFor(det: Detector): WalkOptions {
  // MODEL_VIDEO_CONF=0.4 in the environment: the model at another video threshold, to choose one on tuning walks.
  const trial = process.env.MODEL_VIDEO_CONF ? Number(process.env.MODEL_VIDEO_CONF) : undefined;
  const conf = 'manifest' in det ? (trial ?? (det as { manifest: { conf?: { video: number } } }).manifest.conf?.video) : undefined;
  return conf !== undefined && !process.argv.includes('--conf-as-builtin') ? { ...OPTIONS, conf } : OPTIONS;
}
/** How the walk's decoder reads a clip: the decode-only baseline reads it the same way. */
const DECODE = decodePlan(OPTIONS);
/** Scored frames on the regular grid (every sampleSeconds): the truth of fixed sampling, to compare. */
const onGrid = (frames: readonly { time_seconds: number; clip: number; clip_frame: number }[]) =>
  frames.filter((f) => Math.abs(f.time_seconds / OPTIONS.sampleSeconds - Math.round(f.time_seconds / OPTIONS.sampleSeconds)) < 0.1);

// Experiments: BUILTIN_PARAMS='{"smallFruit": {...}}' scores the walks with other detector settings
// (as createBuiltinDetector takes them; smallFruit replaces the whole set), as in scoring-photo-walk.
const BUILTIN_PARAMS = process.env.BUILTIN_PARAMS ? (JSON.parse(process.env.BUILTIN_PARAMS) as Record<string, unknown>) : undefined;

/** Detection threads, as the service gives a walk (SCORING_THREADS, by default one per core, at most 4). */
const THREADS = process.env.SCORING_THREADS ? Number(process.env.SCORING_THREADS) : DEFAULTS.scoringThreads;

async function builtinDetector(threads = THREADS): Promise<Detector | null> {
  if (!existsSync(path.join(ROOT, 'src/vision/builtin/index.ts'))) return null;
  const mod = (await import('../src/vision/builtin/index.js')) as {
    createBuiltinDetector?: (o?: { params?: Record<string, unknown>; threads?: number }) => Detector;
  };
  return mod.createBuiltinDetector ? mod.createBuiltinDetector({ ...(BUILTIN_PARAMS ? { params: BUILTIN_PARAMS } : {}), threads }) : null;
}

/** Renders once per parameter set; later runs reuse bench/out/walks. */
export async function cachedWalk(name: string, o: Parameters<typeof renderWalk>[0]): Promise<RenderedWalk> {
  const truthFile = path.join(o.out, `${name}.json`);
  if (existsSync(truthFile)) {
    const truth = JSON.parse(await readFile(truthFile, 'utf8')) as WalkTruth;
    const files = clipPaths(truthFile, truth);
    if (files.every(existsSync)) return { files, truthFile, truth };
  }
  return renderWalk({ ...o, name });
}

export interface AccuracyRow {
  seed: number;
  speed: number;
  detector: string;
  counted: number;
  truth: number;
  /** (counted − truth) / truth */
  error: number;
  /** Fruit seen well in two or more frames of the regular grid only (what fixed sampling's truth would be). */
  gridTruth: number;
  /** Oracle only: against fruit it reported in 2+ frames. */
  detected?: number;
  trackerError?: number;
  /** Built-in detector only: what the count error is made of (Oracle.explain). */
  breakdown?: CountBreakdown;
  byClass: { counted: [number, number, number]; truth: [number, number, number] };
}

export interface SpeedResult {
  /** Walking speed of the rendered walk, m/s. */
  pace: number;
  /** What the clip is: the render's H.264, or its phone-style HLG copy. */
  clip: string;
  /** With --phone-hlg: ffmpeg decoding the same frames without the conversion to sRGB. */
  rawDecode?: { ms: number; frames: number };
  videoSeconds: number;
  sampledFrames: number;
  detector: string;
  decode: PhaseTiming;
  score: PhaseTiming;
  /** score time / decode time */
  vsDecode: number;
  /** video seconds / score seconds: above 1 is faster than real time */
  realTime: number;
  /** With model manifests: the same walk scored by each model, in the same run. */
  models?: ModelTiming[];
  /** Detection threads of the built-in detector's scoring (SCORING_THREADS); 0: the scoring process's own thread. */
  threads: number;
  /** How detection ahead went: frames read ahead, used, detected again, discarded. */
  ahead?: ReadAheadStats;
  /** With threads: the same walk scored on one thread, its time over the threaded one's, and whether the results are identical. */
  oneThread?: PhaseTiming & { sameResult: boolean; vsThreads: number };
}
interface PhaseTiming {
  ms: number;
  fps: number;
  maxRssMB: number;
}
export type ModelTiming = PhaseTiming & {
  detector: string;
  provider: string;
  detectionsPerFrame: number;
  vsDecode: number;
  vsBuiltin: number;
  realTime: number;
};

export interface WalkBenchResult {
  accuracy: AccuracyRow[];
  boundary?: { oneClip: number; carry: number; reset: number; truth: number };
  speed?: SpeedResult;
}

async function accuracy(quick: boolean, seedList?: number[], models: readonly string[] = []): Promise<AccuracyRow[]> {
  const rows: AccuracyRow[] = [];
  const builtin = await builtinDetector();
  const loaded: Detector[] = [];
  // Its detection threads would keep the process alive after the last walk.
  try {
    for (const m of models) loaded.push(await loadModelDetector(m));
    await accuracyWith(builtin, rows, seedList ?? (quick ? [1] : [1, 2, 3]), quick ? [0.3] : [0.3, 0.6], loaded);
  } finally {
    await builtin?.close?.();
    for (const m of loaded) await m.close?.();
  }
  return rows;
}

/** One accuracy walk: 20 s at 640×360, 15 fps. */
const accuracyWalk = (seed: number, speed: number) =>
  cachedWalk(`acc-${seed}-${speed}`, { out: ACCURACY_OUT, seconds: 20, fps: 15, width: 640, height: 360, speed, seed, lighting: LIGHTING });

/**
 * A model's accuracy walks at each video threshold of `confs` (count error after tracking, as the accuracy
 * part measures it), to choose the threshold on tuning walks: `--sweep 0.3,0.35,… --seeds 1-3 [--model m]`.
 */
export async function sweepWalks(model: string, seeds: number[], confs: number[]): Promise<SweepRow[]> {
  const walks: SweepWalk[][] = confs.map(() => []);
  const detector = reusingDetector(await loadModelDetector(model), lowScoreFor(Math.min(...confs)));
  try {
    for (const seed of seeds)
      for (const speed of [0.3, 0.6]) {
        const r = await accuracyWalk(seed, speed);
        const files = clipPaths(r.truthFile, r.truth);
        for (const [i, conf] of confs.entries()) {
          const o = createOracle(r.truth, files, decode, NO_NOISE);
          const b = await scoreWalk({ clips: files, detector, decode: o.decode, options: { ...OPTIONS, conf } });
          const truth = o.expected('fruit', 2, false, b.frames).total;
          walks[i]!.push({
            name: `seed ${seed} ${speed} m/s`,
            truth,
            counted: b.counts.total,
            error: (b.counts.total - truth) / truth,
            breakdown: o.explain(b),
          });
        }
      }
  } finally {
    await detector.close?.();
  }
  return confs.map((conf, i) => sweepRow(conf, walks[i]!));
}

async function accuracyWith(
  builtin: Detector | null,
  rows: AccuracyRow[],
  seeds: number[],
  speeds: number[],
  models: readonly Detector[] = [],
): Promise<void> {
  for (const seed of seeds)
    for (const speed of speeds) {
      const r = await accuracyWalk(seed, speed);
      const files = clipPaths(r.truthFile, r.truth);
      const oracle = createOracle(r.truth, files, decode, { ...TYPICAL_NOISE, seed });
      const res = await scoreWalk({ clips: files, detector: oracle.detector, decode: oracle.decode, options: OPTIONS });
      // Truth on the frames the walk scored (adaptive sampling decodes more than it scores).
      const truth = oracle.expected('fruit', 2, false, res.frames);
      const detected = oracle.expected('fruit', 2, true, res.frames);
      rows.push({
        seed,
        speed,
        detector: 'oracle+noise',
        counted: res.counts.total,
        truth: truth.total,
        error: (res.counts.total - truth.total) / truth.total,
        gridTruth: oracle.expected('fruit', 2, false, onGrid(res.frames)).total,
        detected: detected.total,
        trackerError: (res.counts.total - detected.total) / detected.total,
        byClass: { counted: [res.counts.green, res.counts.turning, res.counts.red], truth: [truth.green, truth.turning, truth.red] },
      });
      for (const det of [...(builtin ? [builtin] : []), ...models]) {
        // The same sampled frames, so the same truth.
        const o2 = createOracle(r.truth, files, decode, NO_NOISE);
        const b = await scoreWalk({ clips: files, detector: det, decode: o2.decode, options: optionsFor(det) });
        const bt = o2.expected('fruit', 2, false, b.frames);
        rows.push({
          seed,
          speed,
          detector: det.info.name,
          counted: b.counts.total,
          truth: bt.total,
          error: (b.counts.total - bt.total) / bt.total,
          gridTruth: o2.expected('fruit', 2, false, onGrid(b.frames)).total,
          breakdown: o2.explain(b),
          byClass: { counted: [b.counts.green, b.counts.turning, b.counts.red], truth: [bt.green, bt.turning, bt.red] },
        });
      }
    }
}

async function boundary(): Promise<NonNullable<WalkBenchResult['boundary']>> {
  const one = await cachedWalk('join-1', { out: OUT, seconds: 18, fps: 15, width: 640, height: 360, speed: 0.3, seed: 11 });
  const three = await cachedWalk('join-3', { out: OUT, seconds: 18, fps: 15, width: 640, height: 360, speed: 0.3, seed: 11, clips: 3 });
  const run = async (r: RenderedWalk, clipBoundary: 'carry' | 'reset') => {
    const files = clipPaths(r.truthFile, r.truth);
    const o = createOracle(r.truth, files, decode, NO_NOISE);
    const res = await scoreWalk({ clips: files, detector: o.detector, decode: o.decode, options: { ...OPTIONS, clipBoundary } });
    return { counted: res.counts.total, truth: o.expected('fruit', 2, false, res.frames).total };
  };
  const a = await run(one, 'carry');
  const b = await run(three, 'carry');
  const c = await run(three, 'reset');
  return { oneClip: a.counted, carry: b.counted, reset: c.counted, truth: b.truth };
}

interface PhaseOut {
  ms: number;
  frames: number;
  maxRssMB: number;
  detector: string;
  provider?: string;
  detections?: number;
  threads?: number;
  resultHash?: string;
  ahead?: unknown;
}
type PhaseKind = 'decode' | 'decode-raw' | 'score' | 'score-one-thread';

/** One phase in this process (run as a child by `speed`). */
async function phase(kind: PhaseKind, file: string, model?: string): Promise<PhaseOut> {
  const t0 = performance.now();
  let frames = 0;
  let detector = 'none';
  let scored: Pick<PhaseOut, 'detections' | 'provider' | 'threads' | 'resultHash' | 'ahead'> = {};
  if (kind === 'decode') {
    for await (const f of decodeFrames(file, DECODE)) {
      frames++;
      void f;
    }
  } else if (kind === 'decode-raw') {
    // ffmpeg alone on the same frames, without the colour conversion: what the conversion costs.
    const { ffmpeg } = await resolveFfmpeg();
    execFileSync(ffmpeg!.path, [
      '-v',
      'error',
      '-i',
      file,
      '-vf',
      `fps=fps=1/${DECODE.sampleSeconds}:round=up,scale=1280:-2:flags=area`,
      '-frames:v',
      String(DECODE.maxFrames),
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-y',
      '/dev/null',
    ]);
    frames = DECODE.maxFrames;
  } else {
    // The model's load (checksum, session) is timed with the scoring, as a job pays for it.
    const threads = model ? 0 : kind === 'score-one-thread' ? 0 : THREADS;
    const det = model ? await loadModelDetector(model) : await builtinDetector(threads);
    if (!det) throw new Error('no detector to time: src/vision/builtin is missing');
    detector = det.info.name;
    const res = await scoreWalk({ clips: [file], detector: det, decode, options: optionsFor(det) });
    const ahead = det.aheadStats;
    await det.close?.();
    frames = res.frames.length;
    scored = {
      detections: res.frames.reduce((a, f) => a + f.detections.fruit, 0),
      ...('executionProvider' in det ? { provider: String(det.executionProvider) } : {}),
      threads,
      // Detection on threads must not change a single count: the two runs' results are compared whole.
      resultHash: createHash('sha256')
        .update(JSON.stringify({ fruit: res.fruit, frames: res.frames }))
        .digest('hex')
        .slice(0, 16),
      ...(ahead ? { ahead } : {}),
    };
  }
  return { ms: performance.now() - t0, frames, maxRssMB: process.resourceUsage().maxRSS / 1024, detector, ...scored };
}

function child(kind: PhaseKind, file: string, model?: string): PhaseOut {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--phase', kind, file, ...(model ? ['--model', model] : [])];
  const out = execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 24 });
  return JSON.parse(out.trim().split('\n').at(-1)!) as PhaseOut;
}

export async function speed(quick: boolean, models: readonly string[] = []): Promise<SpeedResult> {
  const seconds = quick ? 20 : 60;
  // The 0.3 m/s walk (seed 21) is the speed figure; --pace 0.6 times a fast walker (seed 22), whom adaptive sampling scores twice as often.
  const k = process.argv.indexOf('--pace');
  const pace = k > 0 ? Number(process.argv[k + 1]) : 0.3;
  const r = await cachedWalk(pace === 0.3 ? `speed-${seconds}s-1080p` : `speed-${seconds}s-1080p-${pace}`, {
    out: OUT,
    seconds,
    fps: 30,
    width: 1920,
    height: 1080,
    speed: pace,
    seed: pace === 0.3 ? 21 : 22,
  });
  const hlg = process.argv.includes('--phone-hlg');
  const file = hlg ? await phoneHlg(r.files[0]!) : r.files[0]!;
  const dec = child('decode', file);
  const raw = hlg ? child('decode-raw', file) : null;
  const sc = child('score', file);
  // The baseline of the threads: the same walk detected on the scoring process's own thread alone.
  const one = sc.threads ? child('score-one-thread', file) : null;
  const timed = models.map((model): ModelTiming => {
    const m = child('score', file, model);
    return {
      detector: m.detector,
      provider: m.provider ?? 'unknown',
      ms: m.ms,
      fps: (m.frames * 1000) / m.ms,
      maxRssMB: m.maxRssMB,
      detectionsPerFrame: (m.detections ?? 0) / m.frames,
      vsDecode: m.ms / dec.ms,
      vsBuiltin: m.ms / sc.ms,
      realTime: (seconds * 1000) / m.ms,
    };
  });
  return {
    pace,
    clip: hlg ? 'HEVC 10-bit HLG (iPhone default), converted to sRGB' : 'H.264 8-bit SDR',
    ...(raw ? { rawDecode: { ms: raw.ms, frames: raw.frames } } : {}),
    videoSeconds: seconds,
    sampledFrames: sc.frames,
    detector: sc.detector,
    decode: { ms: dec.ms, fps: (dec.frames * 1000) / dec.ms, maxRssMB: dec.maxRssMB },
    score: { ms: sc.ms, fps: (sc.frames * 1000) / sc.ms, maxRssMB: sc.maxRssMB },
    threads: sc.threads ?? 0,
    ...(sc.ahead ? { ahead: sc.ahead as ReadAheadStats } : {}),
    ...(one
      ? {
          oneThread: {
            ms: one.ms,
            fps: (one.frames * 1000) / one.ms,
            maxRssMB: one.maxRssMB,
            sameResult: one.resultHash === sc.resultHash,
            vsThreads: one.ms / sc.ms,
          },
        }
      : {}),
    vsDecode: sc.ms / dec.ms,
    realTime: (seconds * 1000) / sc.ms,
    ...(timed.length ? { models: timed } : {}),
  };
}

/** The walk as an iPhone films it by default: HEVC Main 10, BT.2020 primaries, HLG, reference white at 203 cd/m². Cached. */
async function phoneHlg(sdr: string): Promise<string> {
  const out = sdr.replace(/\.mp4$/, '-hlg.mp4');
  if (existsSync(out)) return out;
  const { ffmpeg } = await resolveFfmpeg();
  execFileSync(ffmpeg!.path, [
    '-v',
    'error',
    '-y',
    '-i',
    sdr,
    '-vf',
    'zscale=tin=iec61966-2-1:min=709:pin=709:rin=limited:transfer=arib-std-b67:primaries=2020:matrix=2020_ncl:range=limited:npl=203,format=yuv420p10le',
    '-c:v',
    'libx265',
    '-preset',
    'fast',
    '-x265-params',
    'log-level=error:crf=20:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc:range=limited',
    '-color_primaries',
    'bt2020',
    '-color_trc',
    'arib-std-b67',
    '-colorspace',
    'bt2020nc',
    '-color_range',
    'tv',
    '-tag:v',
    'hvc1',
    out,
  ]);
  return out;
}

export async function runWalkBench(
  options: { quick?: boolean; seeds?: number[]; accuracyOnly?: boolean; speedOnly?: boolean; model?: string | null } = {},
): Promise<WalkBenchResult> {
  const quick = options.quick ?? false;
  // With no model named, the one that ships in models/ (what a box runs under DETECTOR=auto), beside the built-in detector.
  const shipped = findAutoModel(path.join(ROOT, 'models')).manifest;
  const models = options.model ? [options.model] : options.model === null || !shipped ? [] : [shipped];
  if (options.speedOnly) return { accuracy: [], speed: await speed(quick, models) };
  const acc = await accuracy(quick, options.seeds, models);
  if (options.accuracyOnly) return { accuracy: acc };
  return { accuracy: acc, boundary: await boundary(), speed: await speed(quick, models) };
}

function pct(x: number): string {
  return `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
}

function print(r: WalkBenchResult): void {
  if (r.accuracy.length === 0) return printSpeed(r.speed);
  const sampling = OPTIONS.fastSampleSeconds
    ? `adaptive: every ${OPTIONS.sampleSeconds} s, ${OPTIONS.fastSampleSeconds} s while fast`
    : `every ${OPTIONS.sampleSeconds} s`;
  console.log(
    `walk counting accuracy (640×360, 20 s, ${LIGHTING} lighting, conf ${OPTIONS.conf}, sampled ${sampling}; truth: fruit seen well in 2+ scored frames; goal within 5%)`,
  );
  console.log('seed speed detector        counted truth  error   | grid truth error  | detected≥2 tracker-error | g/t/r counted vs truth');
  for (const a of r.accuracy) {
    console.log(
      `${String(a.seed).padEnd(4)} ${a.speed.toFixed(1).padEnd(5)} ${a.detector.padEnd(15)} ${String(a.counted).padStart(7)} ${String(a.truth).padStart(5)}  ${pct(a.error).padStart(7)} | ` +
        `${String(a.gridTruth).padStart(10)} ${pct((a.counted - a.gridTruth) / a.gridTruth).padStart(6)} | ` +
        `${a.detected === undefined ? '-'.padStart(10) : String(a.detected).padStart(10)} ${a.trackerError === undefined ? '-'.padStart(13) : pct(a.trackerError).padStart(13)} | ` +
        `${a.byClass.counted.join('/')} vs ${a.byClass.truth.join('/')}`,
    );
  }
  const orc = r.accuracy.filter((a) => a.detector === 'oracle+noise');
  const meanAbs = (xs: number[]) => xs.reduce((s, x) => s + Math.abs(x), 0) / Math.max(1, xs.length);
  console.log(
    `oracle+noise: mean |error| vs truth ${(meanAbs(orc.map((a) => a.error)) * 100).toFixed(1)}%, tracker's own ${(meanAbs(orc.map((a) => a.trackerError!)) * 100).toFixed(1)}%`,
  );
  const names = [...new Set(r.accuracy.filter((a) => a.detector !== 'oracle+noise').map((a) => a.detector))];
  if (!names.length) console.log('built-in detector: src/vision/builtin not present, not measured');
  for (const name of names) {
    const bi = r.accuracy.filter((a) => a.detector === name);
    if (bi.length)
      console.log(
        `${bi[0]!.detector}: mean |error| vs truth ${(meanAbs(bi.map((a) => a.error)) * 100).toFixed(1)}%, ${bi.filter((a) => Math.abs(a.error) <= 0.05).length} of ${bi.length} walks within 5%`,
      );
    const parts = bi.flatMap((a) => (a.breakdown ? [a.breakdown] : []));
    if (parts.length) {
      // The error is a difference of two larger numbers: the walks' spread follows their sum.
      const truth = bi.reduce((s, a) => s + a.truth, 0);
      const sum = (k: 'duplicates' | 'outside' | 'unmatched' | 'missed') => parts.reduce((s, p) => s + p[k], 0);
      const share = (n: number) => `${n} (${((n / truth) * 100).toFixed(1)}%)`;
      const hidden = parts.reduce((s, p) => s + p.missedByVisibility.hidden, 0);
      const partly = parts.reduce((s, p) => s + p.missedByVisibility.partly, 0);
      const whole = parts.reduce((s, p) => s + p.missedByVisibility.whole, 0);
      console.log(
        `  of ${truth} truth fruit: too many = second tracks of one fruit ${share(sum('duplicates'))} + tracks where no fruit is ${share(sum('unmatched'))} + ` +
          `fruit not seen well twice ${share(sum('outside'))}; too few = missed ${share(sum('missed'))}, of which at best under half visible ${hidden}, half to 90% ${partly}, whole ${whole}`,
      );
      const byClass = (k: 'counted' | 'truth') => [0, 1, 2].map((i) => bi.reduce((s, a) => s + a.byClass[k][i]!, 0));
      const [cg, ct, cr] = byClass('counted');
      const [tg, tt, tr] = byClass('truth');
      console.log(
        `  by class, all walks: green ${cg} for ${tg} (${pct(cg! / tg! - 1)}), turning ${ct} for ${tt} (${pct(ct! / tt! - 1)}), red ${cr} for ${tr} (${pct(cr! / tr! - 1)})`,
      );
    }
    // Which fruit the detector loses, by the colour stage the renderer drew them in.
    const stages = USDA_STAGES.map((s) => {
      const t = parts.reduce((n, p) => n + p.byStage[s].truth, 0);
      const m = parts.reduce((n, p) => n + p.byStage[s].missed, 0);
      return `${s.replace('_', ' ')} ${m} of ${t} (${((m / Math.max(1, t)) * 100).toFixed(1)}%)`;
    });
    console.log(`  missed by USDA stage: ${stages.join(', ')}`);
  }
  const b = r.boundary;
  if (b)
    console.log(
      `clip joins (18 s as 1 clip vs 3 clips, noise-free oracle, truth ${b.truth}): one clip ${b.oneClip}, three clips carried ${b.carry} (${pct(b.carry / b.oneClip - 1)} vs one clip), three clips reset ${b.reset} (${pct(b.reset / b.oneClip - 1)})`,
    );
  printSpeed(r.speed);
}

export function printSpeed(s: SpeedResult | undefined): void {
  if (!s) return;
  console.log(
    `speed: ${s.videoSeconds} s 1080p30 walk at ${s.pace} m/s (${s.clip}), ${s.sampledFrames} scored frames, detector ${s.detector}`,
  );
  console.log(
    `  ffmpeg decode alone ${(s.decode.ms / 1000).toFixed(1)} s (every ${DECODE.sampleSeconds} s as the walk reads it, ${s.decode.fps.toFixed(1)} frames/s, node peak RSS ${s.decode.maxRssMB.toFixed(0)} MB)`,
  );
  if (s.rawDecode)
    console.log(
      `  of which the conversion to sRGB: ffmpeg decoding the same frames without it ${(s.rawDecode.ms / 1000).toFixed(1)} s (conversion ${(s.decode.ms / s.rawDecode.ms).toFixed(2)}× plain decode)`,
    );
  console.log(
    `  scoring             ${(s.score.ms / 1000).toFixed(1)} s (${s.score.fps.toFixed(1)} frames/s, node peak RSS ${s.score.maxRssMB.toFixed(0)} MB, ${s.threads} detection thread${s.threads === 1 ? '' : 's'})`,
  );
  if (s.ahead)
    console.log(
      `  frames detected ahead ${s.ahead.ahead}: used ${s.ahead.used}, detected again (memory guessed wrong) ${s.ahead.redone}, discarded (pace changed) ${s.ahead.discarded}`,
    );
  if (s.oneThread) {
    const o = s.oneThread;
    console.log(
      `  scoring on one thread ${(o.ms / 1000).toFixed(1)} s (${o.fps.toFixed(1)} frames/s, node peak RSS ${o.maxRssMB.toFixed(0)} MB); one thread / threads = ${o.vsThreads.toFixed(2)}×; results identical: ${o.sameResult ? 'yes' : 'NO'}`,
    );
  }
  console.log(`  scoring / decode-only = ${s.vsDecode.toFixed(2)}×; real time / scoring = ${s.realTime.toFixed(2)}× (goal > 1)`);
  for (const m of s.models ?? []) {
    console.log(
      `  scoring with ${m.detector} (${m.provider}) ${(m.ms / 1000).toFixed(1)} s (${m.fps.toFixed(1)} frames/s, ${m.detectionsPerFrame.toFixed(1)} detections/frame, node peak RSS ${m.maxRssMB.toFixed(0)} MB)`,
    );
    console.log(
      `  model scoring / decode-only = ${m.vsDecode.toFixed(2)}×; / built-in scoring = ${m.vsBuiltin.toFixed(2)}×; real time / model scoring = ${m.realTime.toFixed(2)}× (goal > 1)`,
    );
  }
}

/** Every seed the published figures were measured on: tuning (1-3, 6-8), then held-out sets as docs/builtin-detector.md tells. */
export const PUBLISHED_SEEDS: readonly number[] = [1, 2, 3, ...range(6, 20), ...range(23, 55)];

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** `--seeds 1,2,3`, `--seeds 46-55`, or `--seeds all` (PUBLISHED_SEEDS: 102 walks, about 40 minutes on two cores before the renders are cached). */
export function parseSeeds(arg: string): number[] {
  if (arg === 'all') return [...PUBLISHED_SEEDS];
  const seeds = arg.split(',').flatMap((part) => {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`--seeds: "${part}" is not a seed or a range like 46-55`);
    return m[2] === undefined ? [Number(m[1])] : range(Number(m[1]), Number(m[2]));
  });
  if (seeds.length === 0) throw new Error('--seeds: no seed given');
  return seeds;
}

const self = process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href === import.meta.url;
if (self) {
  const i = process.argv.indexOf('--phase');
  if (i > 0) {
    const m = process.argv.indexOf('--model');
    console.log(
      JSON.stringify(await phase(process.argv[i + 1] as PhaseKind, process.argv[i + 2]!, m > 0 ? process.argv[m + 1] : undefined)),
    );
  } else {
    const k = process.argv.indexOf('--seeds');
    const seeds = k > 0 ? parseSeeds(process.argv[k + 1] ?? '') : undefined;
    const m = process.argv.indexOf('--model');
    const model = m > 0 ? path.resolve(process.argv[m + 1]!) : process.argv.includes('--builtin-only') ? null : undefined;
    const sw = process.argv.indexOf('--sweep');
    if (sw > 0) {
      const manifest = model ?? findAutoModel(path.join(ROOT, 'models')).manifest;
      if (!manifest) throw new Error('--sweep: no model named and none in models/');
      console.log(`the model of ${path.relative(ROOT, manifest)} on the accuracy walks (${LIGHTING} lighting)`);
      console.log(formatSweep(await sweepWalks(manifest, seeds ?? [1, 2, 3], process.argv[sw + 1]!.split(',').map(Number))));
    } else
      print(
        await runWalkBench({
          quick: process.argv.includes('--quick'),
          seeds,
          accuracyOnly: process.argv.includes('--accuracy-only'),
          speedOnly: process.argv.includes('--speed-only'),
          model,
        }),
      );
  }
}
