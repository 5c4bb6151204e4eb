/**
 * Walks past real fruit: the labelled tomato photos laid into a wall and filmed by a panning
 * camera (scripts/photo-pan/pan.ts), scored as a video upload is (built-in detector, video
 * defaults, adaptive sampling, tracking), at several fruit sizes: close-ups (96 px, the photos at 0.6
 * of their size), fruit the size of a round tomato filmed from the path
 * (48 px: about 50 mm with 1.2 m of row across 1280 px; rendered walks' fruit are 40–80 px), of a
 * cherry tomato there (24 px, about 25 mm), and between close-up and path (64 px, where the
 * small-fruit gate errs: docs/builtin-detector.md, "Fruit too small for the working size").
 *
 * Truth: the labelled fruit at least 35 % inside the frame in two or more scored frames (all of
 * them: the wall enters and leaves the frame whole). Baseline in the same run: the same detector
 * on the same photos at the same scale, each scored once as a photo upload is (photo default conf),
 * summed: what tracking adds or takes away against counting every photo once. The oracle (the truth
 * with typical noise) through the same tracker checks that the walk itself is countable.
 *
 *   node --import tsx bench/scoring-photo-walk.ts [--sizes 96,64,48,24] [--conf 0.35] [--as-photographed] [--validation]
 *     [--model models/x.json] [--photos train,tune] [--sweep 0.25,0.3,0.35]
 *
 * --model scores walls of the validation photos (training/splits/tomato-photos.json: never trained or
 * tuned on) with that model and with the built-in detector in the same run, each at its own thresholds
 * (a model's manifest conf). --validation: walls of those photos only, built-in detector. --photos: walls
 * of those parts of the split instead (train, tune, validation). --sweep (with --model and --photos, not
 * validation): the model alone at each of those video thresholds, and the one the choosing rule picks
 * (bench/lib/conf-sweep.ts): how the shipped model's video threshold was chosen (training/README.md).
 *
 * Each photo is white-balanced on its own before it goes on the wall, so a frame showing several
 * photos is under one light as a real row is; --as-photographed leaves them as taken (daylight and
 * magenta grow lights side by side in one frame).
 *
 * Skips, saying why, where ../shared/data/tomato-photos is absent.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PHOTO_DIR, trainingSplit } from './scoring-accuracy.js';
import { findAutoModel } from '../src/walks/jobs/detector-choice.js';
import { decodeAtScale, labelledPhotos, renderPhotoPan, type PhotoPan, type PhotoPanTruth } from '../scripts/photo-pan/pan.js';
import { createBuiltinDetector, type BuiltinParams } from '../src/vision/builtin/index.js';
import { optionsFrom, walkOptionsFrom } from '../src/walks/jobs/options.js';
import { decodeFrames } from '../src/vision/media/index.js';
import { loadModelDetector } from '../src/vision/onnx/index.js';
import type { Detection, Detector } from '../src/vision/types.js';
import { lowScoreFor, scoreWalk, type WalkDecoder, type WalkOptions } from '../src/vision/walk.js';
import { formatSweep, reusingDetector, sweepRow, type SweepRow, type SweepWalk } from './lib/conf-sweep.js';
import { createOracle, NO_NOISE, TYPICAL_NOISE, type CountBreakdown } from '../test/helpers/walk-oracle.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PAN_SOURCE = path.join(ROOT, 'scripts', 'photo-pan', 'pan.ts');
const OUT = path.join(
  ROOT,
  'bench',
  'out',
  `photo-pan-${createHash('sha256').update(readFileSync(PAN_SOURCE)).digest('hex').slice(0, 12)}`,
);
const VIDEO: WalkOptions = walkOptionsFrom(optionsFrom({}, { video: true }));
const PHOTO_CONF = optionsFrom({}, { video: false }).conf;
// Experiments: BUILTIN_PARAMS='{"workingLongSide":1280}' scores walks and stills with other detector settings.
const PARAMS = process.env.BUILTIN_PARAMS ? { params: JSON.parse(process.env.BUILTIN_PARAMS) as Partial<BuiltinParams> } : {};

type Counts = { total: number; green: number; red: number };
export interface PhotoWalkRow {
  detector: string;
  fruitPx: number;
  frameSize: string;
  videoSeconds: number;
  scoredFrames: number;
  truth: Counts;
  walk: Counts & { error: number; breakdown: CountBreakdown };
  /** The same photos at the same scale, each detected once at the photo default conf, summed. */
  stills: Counts & { error: number };
  oracle: { counted: number; truth: number; error: number };
}
export interface PhotoWalkResult {
  available: boolean;
  reason?: string;
  rows: PhotoWalkRow[];
}

// Each photo balanced on its own by default: a real row is under one light (see PhotoPanOptions.balanceEach).
const BALANCE = !process.argv.includes('--as-photographed');
async function cached(fruitPx: number, only?: PhotoSubset): Promise<PhotoPan> {
  const name = `pan-${fruitPx}${BALANCE ? '-balanced' : ''}${only ? `-${only.name}` : ''}`;
  const truthFile = path.join(OUT, `${name}.json`);
  const file = path.join(OUT, `${name}.mp4`);
  if (existsSync(truthFile) && existsSync(file))
    return { files: [file], truthFile, truth: JSON.parse(readFileSync(truthFile, 'utf8')) as PhotoPanTruth };
  return renderPhotoPan({ photos: PHOTO_DIR, out: OUT, name, fruitPx, balanceEach: BALANCE, ...(only ? { only: only.photos } : {}) });
}

const countsOf = (fruit: readonly { ripeness: string }[]): Counts => ({
  total: fruit.length,
  green: fruit.filter((f) => f.ripeness === 'green').length,
  red: fruit.filter((f) => f.ripeness !== 'green').length,
});

/** A fresh detector: the built-in one, or the model a manifest names (`--model models/x.json`). */
type DetectorFactory = () => Promise<Detector>;
const builtin: DetectorFactory = async () => createBuiltinDetector(PARAMS);

/** A model's own thresholds (its manifest's conf), else the box's defaults for the built-in detector. */
function confOf(detector: Detector, kind: 'photo' | 'video'): number | undefined {
  return 'manifest' in detector ? (detector as { manifest: { conf?: { photo: number; video: number } } }).manifest.conf?.[kind] : undefined;
}

async function stills(scale: number, make: DetectorFactory, only?: string[]): Promise<Counts> {
  const detector = await make();
  const found: Detection[] = [];
  for (const p of labelledPhotos(PHOTO_DIR)) {
    if (only && !only.includes(p.photo)) continue;
    const image = await decodeAtScale(PHOTO_DIR, p, scale);
    found.push(...(await detector.detect(image, { conf: confOf(detector, 'photo') ?? PHOTO_CONF })).filter((d) => d.kind === 'fruit'));
  }
  await detector.close?.();
  // The photos are labelled green or red: a turning answer is counted with red, as the photo bench does.
  return countsOf(found.map((d) => ({ ripeness: d.ripeness ?? 'green' })));
}

type SplitPart = 'train' | 'tune' | 'validation';
/** Photos of a wall made from part of the split, and the name its cached video goes by. */
interface PhotoSubset {
  name: string;
  photos: string[];
}
/** The photos of these parts of training/splits/tomato-photos.json, in name order. */
export function photoSubset(parts: readonly SplitPart[]): PhotoSubset {
  const photos = [...trainingSplit()]
    .filter(([, part]) => parts.includes(part))
    .map(([photo]) => photo)
    .sort();
  return { name: [...parts].sort().join('+'), photos };
}
function parseParts(arg: string): SplitPart[] {
  const parts = arg.split(/[,+]/);
  for (const p of parts)
    if (p !== 'train' && p !== 'tune' && p !== 'validation') throw new Error(`--photos: "${p}" is not train, tune or validation`);
  return parts as SplitPart[];
}

export async function runPhotoWalkBench(
  options: { sizes?: number[]; conf?: number; detector?: DetectorFactory; validationOnly?: boolean; photos?: SplitPart[] } = {},
): Promise<PhotoWalkResult> {
  const make = options.detector ?? builtin;
  // The trained model is measured on walls of the photos it was never trained or tuned on only.
  const subset = options.photos ? photoSubset(options.photos) : options.validationOnly ? photoSubset(['validation']) : undefined;
  const only = subset?.photos;
  if (!existsSync(PHOTO_DIR)) return { available: false, reason: `labelled photos not found at ${PHOTO_DIR}: nothing to film`, rows: [] };
  const rows: PhotoWalkRow[] = [];
  for (const fruitPx of options.sizes ?? [96, 64, 48, 24]) {
    const pan = await cached(fruitPx, subset);
    const t = pan.truth;
    const real = createOracle(t, pan.files, decodeFrames as WalkDecoder, NO_NOISE);
    const detector = await make();
    const conf = options.conf ?? confOf(detector, 'video');
    const video: WalkOptions = conf === undefined ? VIDEO : { ...VIDEO, conf };
    const walk = await scoreWalk({ clips: pan.files, detector, decode: real.decode, options: video });
    await detector.close?.();
    const expected = real.expected('fruit', 2, false, walk.frames);
    const ids = new Set(expected.ids);
    const truth = countsOf(t.fruit.filter((f) => ids.has(f.id)));
    const counted = { total: walk.counts.total, green: walk.counts.green, red: walk.counts.turning + walk.counts.red };
    const noisy = createOracle(t, pan.files, decodeFrames as WalkDecoder, TYPICAL_NOISE);
    const o = await scoreWalk({ clips: pan.files, detector: noisy.detector, decode: noisy.decode, options: video });
    const ot = noisy.expected('fruit', 2, false, o.frames).total;
    const s = await stills(t.scale, make, only);
    rows.push({
      detector: detector.info.name,
      fruitPx,
      frameSize: `${t.width}×${t.height}`,
      videoSeconds: t.clips[0]!.seconds,
      scoredFrames: walk.frames.length,
      truth,
      walk: { ...counted, error: (counted.total - truth.total) / truth.total, breakdown: real.explain(walk) },
      stills: { ...s, error: (s.total - truth.total) / truth.total },
      oracle: { counted: o.counts.total, truth: ot, error: (o.counts.total - ot) / ot },
    });
  }
  return { available: true, rows };
}

/**
 * `npm run bench scoring-photo-walk`: the walls of all the photos with the built-in detector (the published
 * figures), then, when a model ships in models/, walls of the validation photos only (never trained or tuned
 * on) scored by the built-in detector and by the model in the same run.
 */
export async function runPhotoWalkComparison(): Promise<{
  all: PhotoWalkResult;
  validation?: { builtin: PhotoWalkResult; model: PhotoWalkResult };
}> {
  const all = await runPhotoWalkBench();
  console.log(formatPhotoWalk(all));
  const shipped = findAutoModel(path.join(ROOT, 'models')).manifest;
  if (!shipped || !all.available) return { all };
  const b = await runPhotoWalkBench({ validationOnly: true });
  const m = await runPhotoWalkBench({ validationOnly: true, detector: () => loadModelDetector(shipped) });
  console.log('walls of the validation photos only:');
  console.log(formatPhotoWalk({ available: true, rows: [...b.rows, ...m.rows] }));
  return { all, validation: { builtin: b, model: m } };
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
const missedShare = (s: { truth: number; missed: number }) =>
  `${s.missed} of ${s.truth} (${((s.missed / Math.max(1, s.truth)) * 100).toFixed(0)} %)`;
export function formatPhotoWalk(r: PhotoWalkResult): string {
  if (!r.available) return `skipped: ${r.reason}`;
  const lines = [
    'detector | fruit px | frame | video s | scored | truth (green/red) | walk counted (green/red) | error | stills summed | error | oracle error | walk: duplicates, no fruit, outside, missed (hidden/partly/whole) | missed green, red',
  ];
  for (const x of r.rows) {
    const b = x.walk.breakdown;
    lines.push(
      [
        x.detector,
        x.fruitPx,
        x.frameSize,
        x.videoSeconds.toFixed(1),
        x.scoredFrames,
        `${x.truth.total} (${x.truth.green}/${x.truth.red})`,
        `${x.walk.total} (${x.walk.green}/${x.walk.red})`,
        pct(x.walk.error),
        `${x.stills.total} (${x.stills.green}/${x.stills.red})`,
        pct(x.stills.error),
        pct(x.oracle.error),
        `${b.duplicates}, ${b.unmatched}, ${b.outside}, ${b.missed} (${b.missedByVisibility.hidden}/${b.missedByVisibility.partly}/${b.missedByVisibility.whole})`,
        // The labels have two classes: the wall's truth gives every fruit the stage green or red.
        `${missedShare(b.byStage.green)}, ${missedShare(b.byStage.red)}`,
      ].join(' | '),
    );
  }
  return lines.join('\n');
}

/**
 * A model's walks of the walls of some photos at each video threshold of `confs` (count error after
 * tracking, as runPhotoWalkBench measures it), to choose the threshold on walls of photos it may be
 * tuned on: `--photos train,tune --sweep 0.2,0.25,…`, never the validation photos.
 */
export async function sweepVideoConf(o: { model: string; confs: number[]; sizes: number[]; photos: SplitPart[] }): Promise<SweepRow[]> {
  const subset = photoSubset(o.photos);
  const walks: SweepWalk[][] = o.confs.map(() => []);
  for (const fruitPx of o.sizes) {
    const pan = await cached(fruitPx, subset);
    const detector = reusingDetector(await loadModelDetector(o.model), lowScoreFor(Math.min(...o.confs)));
    try {
      for (const [i, conf] of o.confs.entries()) {
        const real = createOracle(pan.truth, pan.files, decodeFrames as WalkDecoder, NO_NOISE);
        const walk = await scoreWalk({ clips: pan.files, detector, decode: real.decode, options: { ...VIDEO, conf } });
        const ids = new Set(real.expected('fruit', 2, false, walk.frames).ids);
        const truth = pan.truth.fruit.filter((f) => ids.has(f.id)).length;
        const counted = walk.counts.total;
        walks[i]!.push({ name: `${fruitPx} px`, truth, counted, error: (counted - truth) / truth, breakdown: real.explain(walk) });
        // A sweep of the large walls takes long on 2 cores: each walk as it is measured.
        console.error(`${fruitPx} px at ${conf}: ${counted} of ${truth}`);
      }
    } finally {
      await detector.close?.();
    }
  }
  return o.confs.map((conf, i) => sweepRow(conf, walks[i]!));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--sizes');
  const sizes = at > 0 ? process.argv[at + 1]!.split(',').map(Number) : undefined;
  const c = process.argv.indexOf('--conf');
  const m = process.argv.indexOf('--model');
  const model = m > 0 ? process.argv[m + 1]! : null;
  const validationOnly = process.argv.includes('--validation');
  const p = process.argv.indexOf('--photos');
  const photos = p > 0 ? parseParts(process.argv[p + 1] ?? '') : undefined;
  const sw = process.argv.indexOf('--sweep');
  const sweep = sw > 0 ? process.argv[sw + 1]!.split(',').map(Number) : null;
  if (model) console.log(`detector: the model of ${model}`);
  const run = (detector?: DetectorFactory) =>
    runPhotoWalkBench({
      ...(sizes ? { sizes } : {}),
      ...(c > 0 ? { conf: Number(process.argv[c + 1]) } : {}),
      ...(detector ? { detector } : {}),
      ...(photos ? { photos } : {}),
      validationOnly: validationOnly || model !== null,
    });
  if (sweep) {
    if (!model || !photos) throw new Error('--sweep needs --model and --photos (the parts of the split to choose on)');
    if (photos.includes('validation')) throw new Error('--sweep chooses a threshold: not on the validation photos');
    console.log(`walls of the ${photoSubset(photos).name} photos (${photoSubset(photos).photos.length})`);
    console.log(formatSweep(await sweepVideoConf({ model: path.resolve(model), confs: sweep, sizes: sizes ?? [96, 64, 48, 24], photos })));
  } else if (model) {
    // The model beside the built-in detector, on the walls of the validation photos, in one run.
    const b = await run();
    const r = await run(() => loadModelDetector(path.resolve(model)));
    console.log(formatPhotoWalk({ available: r.available, reason: r.reason, rows: [...b.rows, ...r.rows] }));
  } else console.log(formatPhotoWalk(await run()));
}
