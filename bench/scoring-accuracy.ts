/**
 * Accuracy of the built-in fruit detector on the labelled tomato photos in
 * ../shared/data/tomato-photos (not part of the project; absent on a fresh
 * clone, in which case this says so and reports nothing).
 *
 *   node --import tsx bench/scoring-accuracy.ts [--conf 0.35] [--json] [--display-p3] [--hand-weighted]
 *   node --import tsx bench/scoring-accuracy.ts --validation | --model models/x.json [--json] [--overlays bench/out/overlays]
 *
 * --validation / --model: the trained model (the shipped one in models/, or the manifest named) beside
 * the built-in detector on the validation photos of training/splits/tomato-photos.json, at IoU 0.5, each
 * at its own photo threshold (`comparePhotos`); `npm run bench scoring-accuracy` prints both reports.
 * --overlays DIR writes each validation photo with each detector's fruit on it (those matched to no label marked -) and the labels
 * it missed, as <photo>-<detector>.jpg.
 *
 * --hand-weighted: close-up photos scored with the hand-weighted score on inscribed circles alone,
 * as before the fitted score (closeUpScore 'weighted'), to compare in one session.
 *
 * --display-p3: each photo re-expressed in Display P3 (ffmpeg's zscale), as an iPhone stores
 * it, and scored twice: with its profile embedded (the box converts it back to sRGB) and
 * without (read as sRGB, as before the box read profiles); against the photos as they are.
 *
 * Per photo: count errors (total, green, red), detections matched to labels
 * greedily by IoU ≥ 0.3, precision/recall, ripeness agreement of matched
 * fruit; then medians and means, on all photos and on the tuning and check
 * halves separately (tuned on even positions of the sorted list, checked on
 * odd ones). Speed is printed as a ratio against the ffmpeg decode of the
 * same photos measured in the same run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { circleEvidence, createBuiltinDetector, DEFAULT_PARAMS, type BuiltinParams } from '../src/vision/builtin/index.js';
import { decodeImage, requireFfmpeg } from '../src/vision/media/index.js';
import { displayP3Profile, pngWithProfile } from '../test/helpers/icc.js';
import { sharedPath } from '../test/helpers/shared-data.js';
import type { Box, Detection, Detector, RgbImage, Ripeness } from '../src/vision/types.js';
import { drawOverlay, type OverlayBox } from '../src/vision/overlay.js';
import { encodeJpeg } from '../src/vision/media/index.js';
import { loadModelDetector } from '../src/vision/onnx/index.js';
import { findAutoModel } from '../src/walks/jobs/detector-choice.js';

/** The labelled photos in the shared data folder (CROPWALK_SHARED, default ../shared). */
export const PHOTO_DIR = sharedPath('tomato-photos');
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface LabelledFruit {
  ripeness: 'green' | 'red';
  difficult: boolean;
  box: Box;
}

export interface PhotoResult {
  photo: string;
  /** 'tune' / 'check' (even / odd positions, the built-in detector's halves), or the training split's part (train, tune, validation). */
  split: string;
  labels: { total: number; green: number; red: number; difficult: number };
  predicted: { total: number; green: number; turning: number; red: number };
  /** |predicted − labelled| / labelled, against all labelled fruit. */
  countError: { total: number; green: number | null; red: number | null };
  /** Same, against non-difficult fruit only. */
  countErrorNonDifficult: number;
  matched: number;
  precision: number;
  recall: number;
  /** Matched fruit whose class agrees: strict counts "turning" as wrong, lenient as right for either label. */
  ripenessStrict: number;
  ripenessLenient: number;
  detectMs: number;
  decodeMs: number;
  /** CIELAB hue after white balance (degrees, magenta read as negative) of matched non-difficult fruit, by label. */
  hues: { green: number[]; red: number[] };
}

/**
 * The USDA stages' hue bands from a colorimetry study of tomato skins ("Classification of tomato
 * ripeness and maturity by food colorimetry"), the reference the detector's classes are read
 * against: lower bound of each band, degrees.
 */
export const COLORIMETRY_BANDS = [
  { stage: 'red', from: -Infinity },
  { stage: 'light red', from: 36 },
  { stage: 'pink', from: 64 },
  { stage: 'turning', from: 85 },
  { stage: 'breaker', from: 101 },
  { stage: 'green', from: 114 },
] as const;

export interface HueSpread {
  fruit: number;
  /** 2nd, 50th and 98th percentiles. */
  p2: number;
  median: number;
  p98: number;
  /** Fruit in each colorimetry band, in COLORIMETRY_BANDS order. */
  bands: number[];
}

export interface SplitSummary {
  photos: number;
  medianCountError: number;
  meanCountError: number;
  medianCountErrorNonDifficult: number;
  precision: number;
  recall: number;
  ripenessStrict: number;
  ripenessLenient: number;
}

export interface Summary {
  available: boolean;
  reason?: string;
  conf: number;
  photos: PhotoResult[];
  all: SplitSummary;
  tune: SplitSummary;
  check: SplitSummary;
  /** Mean detect time / mean ffmpeg decode time of the same photos. */
  speedRatioVsDecode: number;
  meanDetectMs: number;
  /** Walk-sized frames (photos decoded at 1280 px long side): CPU ms per frame, median of the photos. */
  walkFrameCpuMs: number;
  /** That over the 500 ms between default samples: below 1 scores a walk faster than real time on one core. */
  walkRealTimeRatio: number;
  /** Where the labelled fruit's measured hues fall, all photos: what the ripeness bounds can and cannot separate. */
  hueByLabel: { green: HueSpread; red: HueSpread };
  /**
   * Built-in detector only: the labelled fruit by the best circle the detector made on them before
   * its score and overlap suppression (IoU ≥ 0.3: a circle of the whole fruit; 0.1–0.3: of a piece
   * of it; none). What no score on those circles can recover.
   */
  circles: { whole: number; piece: number; none: number } | null;
}

/** CPU time (user + system) of a synchronous-enough async call, in ms; steadier than wall time on a shared box. */
async function cpuMs(f: () => Promise<unknown>): Promise<number> {
  const c0 = process.cpuUsage();
  await f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

export function iou(a: Box, b: Box): number {
  const ix = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const iy = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = ix * iy;
  const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return union > 0 ? inter / union : 0;
}

/** Greedy one-to-one matching by IoU, best pairs first. Returns [detectionIndex, labelIndex] pairs. */
export function matchGreedy(dets: readonly Box[], labels: readonly Box[], minIou = 0.3): Array<[number, number]> {
  const pairs: Array<[number, number, number]> = [];
  dets.forEach((d, i) =>
    labels.forEach((l, j) => {
      const v = iou(d, l);
      if (v >= minIou) pairs.push([v, i, j]);
    }),
  );
  pairs.sort((a, b) => b[0] - a[0]);
  const usedD = new Set<number>();
  const usedL = new Set<number>();
  const out: Array<[number, number]> = [];
  for (const [, i, j] of pairs) {
    if (usedD.has(i) || usedL.has(j)) continue;
    usedD.add(i);
    usedL.add(j);
    out.push([i, j]);
  }
  return out;
}

const relErr = (pred: number, truth: number): number | null => (truth > 0 ? Math.abs(pred - truth) / truth : pred > 0 ? null : 0);

function scorePhoto(
  photo: string,
  split: string,
  dets: Detection[],
  fruit: LabelledFruit[],
  detectMs: number,
  decodeMs: number,
  minIou = 0.3,
): PhotoResult {
  const count = (r: Ripeness) => dets.filter((d) => d.ripeness === r).length;
  const predicted = { total: dets.length, green: count('green'), turning: count('turning'), red: count('red') };
  const labels = {
    total: fruit.length,
    green: fruit.filter((f) => f.ripeness === 'green').length,
    red: fruit.filter((f) => f.ripeness === 'red').length,
    difficult: fruit.filter((f) => f.difficult).length,
  };
  const pairs = matchGreedy(
    dets.map((d) => d.box),
    fruit.map((f) => f.box),
    minIou,
  );
  let strict = 0;
  let lenient = 0;
  const hues: PhotoResult['hues'] = { green: [], red: [] };
  for (const [i, j] of pairs) {
    const hue = dets[i]!.hue;
    if (hue !== undefined && !fruit[j]!.difficult) hues[fruit[j]!.ripeness].push(hue > 300 ? hue - 360 : hue);
    const p = dets[i]!.ripeness;
    const l = fruit[j]!.ripeness;
    if (p === l) {
      strict++;
      lenient++;
    } else if (p === 'turning') lenient++;
  }
  const nonDifficult = labels.total - labels.difficult;
  return {
    photo,
    split,
    labels,
    predicted,
    // Two-class comparison: turning fruit is counted with red, since the photos' labellers put orange fruit under "red" or "green".
    countError: {
      total: relErr(predicted.total, labels.total) ?? 1,
      green: relErr(predicted.green, labels.green),
      red: relErr(predicted.red + predicted.turning, labels.red),
    },
    countErrorNonDifficult: relErr(predicted.total, nonDifficult) ?? 1,
    matched: pairs.length,
    precision: dets.length ? pairs.length / dets.length : 1,
    recall: fruit.length ? pairs.length / fruit.length : 1,
    ripenessStrict: pairs.length ? strict / pairs.length : 1,
    ripenessLenient: pairs.length ? lenient / pairs.length : 1,
    detectMs,
    decodeMs,
    hues,
  };
}

function hueSpread(hues: number[]): HueSpread {
  const s = [...hues].sort((a, b) => a - b);
  const at = (p: number) => (s.length ? s[Math.round(p * (s.length - 1))]! : NaN);
  const bands = COLORIMETRY_BANDS.map((b, k) => {
    const to = COLORIMETRY_BANDS[k + 1]?.from ?? Infinity;
    return s.filter((h) => h >= b.from && h < to).length;
  });
  return { fruit: s.length, p2: at(0.02), median: at(0.5), p98: at(0.98), bands };
}

const median = (xs: number[]) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

export function summarise(rs: PhotoResult[]): SplitSummary {
  const matched = rs.reduce((a, r) => a + r.matched, 0);
  const dets = rs.reduce((a, r) => a + r.predicted.total, 0);
  const labels = rs.reduce((a, r) => a + r.labels.total, 0);
  return {
    photos: rs.length,
    medianCountError: median(rs.map((r) => r.countError.total)),
    meanCountError: mean(rs.map((r) => r.countError.total)),
    medianCountErrorNonDifficult: median(rs.map((r) => r.countErrorNonDifficult)),
    precision: dets ? matched / dets : 1,
    recall: labels ? matched / labels : 1,
    ripenessStrict: matched ? rs.reduce((a, r) => a + r.ripenessStrict * r.matched, 0) / matched : 1,
    ripenessLenient: matched ? rs.reduce((a, r) => a + r.ripenessLenient * r.matched, 0) / matched : 1,
  };
}

export interface AccuracyOptions {
  conf?: number;
  detector?: Detector;
  /** Only these photo names (e.g. ["0011.jpg"]), for quick runs. */
  only?: string[];
  /** Re-express each photo in Display P3 first, with its profile embedded ('p3') or not ('p3-untagged'). */
  colour?: 'as-is' | 'p3' | 'p3-untagged';
  /** Built-in detector settings (without `detector`), e.g. { closeUpScore: 'weighted' }. */
  params?: Partial<BuiltinParams>;
  /** Least IoU of a detection with a label to count as found (default 0.3; the trained model's goals are at 0.5). */
  minIou?: number;
  /** Which part of a split each photo is in (default: 'tune' for even positions, 'check' for odd). */
  splitOf?: (photo: string, position: number) => string;
  /** Called with each photo as decoded, its detections and its labels (overlays). */
  onPhoto?: (photo: string, image: RgbImage, dets: Detection[], labels: LabelledFruit[]) => Promise<void>;
}

/** The photo's colours in Display P3 (zscale, lossless PNG), tagged with the profile or not. */
async function inDisplayP3(file: string, dir: string, tagged: boolean): Promise<string> {
  const { ffmpeg } = await requireFfmpeg();
  const bare = path.join(dir, 'p3.png');
  execFileSync(ffmpeg, [
    '-v',
    'error',
    '-y',
    '-i',
    file,
    '-vf',
    'zscale=pin=709:tin=iec61966-2-1:min=470bg:rin=full:p=smpte432:t=iec61966-2-1,format=rgb24',
    bare,
  ]);
  if (!tagged) return bare;
  const out = path.join(dir, 'p3-tagged.png');
  writeFileSync(out, pngWithProfile(readFileSync(bare), displayP3Profile()));
  return out;
}

export const DEFAULT_BENCH_CONF = 0.35;

export async function runPhotoAccuracy(options: AccuracyOptions = {}): Promise<Summary> {
  const conf = options.conf ?? DEFAULT_BENCH_CONF;
  const empty = summarise([]);
  if (!existsSync(PHOTO_DIR)) {
    return {
      available: false,
      reason: `labelled photos not found at ${PHOTO_DIR}`,
      conf,
      photos: [],
      all: empty,
      tune: empty,
      check: empty,
      speedRatioVsDecode: NaN,
      meanDetectMs: NaN,
      walkFrameCpuMs: NaN,
      walkRealTimeRatio: NaN,
      hueByLabel: { green: hueSpread([]), red: hueSpread([]) },
      circles: null,
    };
  }
  const detector = options.detector ?? createBuiltinDetector({ params: options.params });
  const builtinParams = options.detector ? null : { ...DEFAULT_PARAMS, ...options.params };
  const circles = builtinParams ? { whole: 0, piece: 0, none: 0 } : null;
  const names = readdirSync(PHOTO_DIR)
    .filter((f) => f.endsWith('.jpg'))
    .sort();
  const photos: PhotoResult[] = [];
  const colour = options.colour ?? 'as-is';
  const scratch = colour === 'as-is' ? null : mkdtempSync(path.join(tmpdir(), 'cropwalk-p3-'));
  for (const [k, name] of names.entries()) {
    if (options.only && !options.only.includes(name)) continue;
    const labelled = JSON.parse(readFileSync(path.join(PHOTO_DIR, name.replace(/\.jpg$/, '.json')), 'utf8')) as { fruit: LabelledFruit[] };
    const source = scratch ? await inDisplayP3(path.join(PHOTO_DIR, name), scratch, colour === 'p3') : path.join(PHOTO_DIR, name);
    const t0 = performance.now();
    // Full resolution, so boxes are in the labels' pixel grid; the detector scales down itself.
    const image = await decodeImage(source, { maxLongSide: 4096 });
    const t1 = performance.now();
    const dets = await detector.detect(image, { conf });
    const t2 = performance.now();
    const split = options.splitOf ? options.splitOf(name, k) : k % 2 === 0 ? 'tune' : 'check';
    await options.onPhoto?.(name, image, dets, labelled.fruit);
    photos.push(scorePhoto(name, split, dets, labelled.fruit, t2 - t1, t1 - t0, options.minIou));
    if (circles && builtinParams) {
      const boxes = circleEvidence(image, builtinParams).map((c) => c.box);
      for (const f of labelled.fruit) {
        const best = boxes.reduce((m, b) => Math.max(m, iou(b, f.box)), 0);
        if (best >= 0.3) circles.whole++;
        else if (best >= 0.1) circles.piece++;
        else circles.none++;
      }
    }
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  const meanDetectMs = mean(photos.map((p) => p.detectMs));
  // Walk frames: the job runner decodes at 1280 px long side; time detection on such frames.
  const walkTimes: number[] = [];
  for (const p of photos.slice(0, 12)) {
    const frame = await decodeImage(path.join(PHOTO_DIR, p.photo), { maxLongSide: 1280 });
    await detector.detect(frame, { conf }); // warm
    walkTimes.push(await cpuMs(() => detector.detect(frame, { conf })));
  }
  const walkFrameCpuMs = median(walkTimes);
  return {
    available: true,
    conf,
    photos,
    all: summarise(photos),
    tune: summarise(photos.filter((p) => p.split === 'tune')),
    check: summarise(photos.filter((p) => p.split === 'check')),
    speedRatioVsDecode: meanDetectMs / mean(photos.map((p) => p.decodeMs)),
    meanDetectMs,
    walkFrameCpuMs,
    walkRealTimeRatio: walkFrameCpuMs / 500,
    hueByLabel: { green: hueSpread(photos.flatMap((p) => p.hues.green)), red: hueSpread(photos.flatMap((p) => p.hues.red)) },
    circles,
  };
}

const pct = (x: number | null) => (x === null || Number.isNaN(x) ? '   - ' : `${(x * 100).toFixed(0).padStart(4)}%`);

export function formatSummary(s: Summary): string {
  if (!s.available) return `scoring-accuracy: skipped (${s.reason})`;
  const lines: string[] = [];
  lines.push('photo     split  labels(g/r)  pred(g/t/r)   errTot errGrn errRed  prec  recall ripeS ripeL  ms');
  for (const p of s.photos) {
    lines.push(
      `${p.photo.padEnd(9)} ${p.split.padEnd(5)} ${`${p.labels.total}(${p.labels.green}/${p.labels.red})`.padEnd(12)} ${`${p.predicted.total}(${p.predicted.green}/${p.predicted.turning}/${p.predicted.red})`.padEnd(13)} ${pct(p.countError.total)} ${pct(p.countError.green)} ${pct(p.countError.red)} ${pct(p.precision)} ${pct(p.recall)} ${pct(p.ripenessStrict)} ${pct(p.ripenessLenient)} ${p.detectMs.toFixed(0).padStart(4)}`,
    );
  }
  const line = (label: string, x: SplitSummary) =>
    `${label.padEnd(6)} photos ${x.photos}: count error median ${pct(x.medianCountError)} mean ${pct(x.meanCountError)} (non-difficult median ${pct(x.medianCountErrorNonDifficult)}), precision ${pct(x.precision)}, recall ${pct(x.recall)}, ripeness strict ${pct(x.ripenessStrict)} lenient ${pct(x.ripenessLenient)}`;
  lines.push('');
  lines.push(line('tune', s.tune));
  lines.push(line('check', s.check));
  lines.push(line('all', s.all));
  lines.push(
    `speed: detect ${s.meanDetectMs.toFixed(0)} ms per 1600-px photo = ${s.speedRatioVsDecode.toFixed(2)}× the ffmpeg decode of the same photo (conf ${s.conf})`,
  );
  lines.push(
    `walk frames (1280 px): ${s.walkFrameCpuMs.toFixed(0)} CPU ms per frame = ${s.walkRealTimeRatio.toFixed(2)}× the 0.5 s sample interval (below 1: faster than real time on one core)`,
  );
  lines.push(
    `hue after white balance of matched fruit (not difficult), by label, against the colorimetry bands (${COLORIMETRY_BANDS.map((b) => b.stage).join(' / ')}):`,
  );
  for (const label of ['green', 'red'] as const) {
    const h = s.hueByLabel[label];
    lines.push(
      `  ${label.padEnd(5)} ${h.fruit} fruit: p2 ${h.p2.toFixed(0)}°, median ${h.median.toFixed(0)}°, p98 ${h.p98.toFixed(0)}°; by band ${h.bands.join(' / ')}`,
    );
  }
  if (s.circles) {
    const c = s.circles;
    lines.push(
      `circles before the score: of ${c.whole + c.piece + c.none} labelled fruit, ${c.whole} have a circle of the whole fruit (IoU ≥ 0.3) at any score, ${c.piece} one on a piece of it only (0.1–0.3), ${c.none} none`,
    );
  }
  return lines.join('\n');
}

/** The fixed split of the photos for the trained model (training/splits/tomato-photos.json): photo stem → part. */
export function trainingSplit(): Map<string, 'train' | 'tune' | 'validation'> {
  const doc = JSON.parse(readFileSync(path.join(repoRoot, 'training', 'splits', 'tomato-photos.json'), 'utf8')) as Record<string, string[]>;
  const out = new Map<string, 'train' | 'tune' | 'validation'>();
  for (const part of ['train', 'tune', 'validation'] as const) for (const stem of doc[part] ?? []) out.set(`${stem}.jpg`, part);
  return out;
}

export interface DetectorOnPhotos {
  detector: string;
  conf: number;
  validation: SplitSummary;
  /** Photos the model was trained or tuned on: shown, never a figure. */
  trainedOn: SplitSummary;
  photos: PhotoResult[];
  walkFrameCpuMs: number;
}

export interface PhotoComparison {
  available: boolean;
  reason?: string;
  minIou: number;
  rows: DetectorOnPhotos[];
  /** Model CPU ms per 1280-px frame / the built-in detector's, this run. */
  msPerFrameVsBuiltin: number | null;
}

/**
 * The trained model beside the built-in detector on the validation photos of the training split (never trained
 * or tuned on), at IoU 0.5: the figures of issue 39. Each at its own photo threshold (the built-in detector's
 * 0.35, the model's manifest `conf.photo`). Without a model, the built-in detector alone.
 */
export async function comparePhotos(manifest: string | null, overlaysDir: string | null = null): Promise<PhotoComparison> {
  const minIou = 0.5;
  if (!existsSync(PHOTO_DIR))
    return { available: false, reason: `labelled photos not found at ${PHOTO_DIR}`, minIou, rows: [], msPerFrameVsBuiltin: null };
  const split = trainingSplit();
  const splitOf = (name: string) => split.get(name) ?? 'validation';
  const rows: DetectorOnPhotos[] = [];
  const one = async (name: string, detector: Detector | undefined, conf: number) => {
    const onPhoto = overlaysDir
      ? async (photo: string, image: RgbImage, dets: Detection[], labels: LabelledFruit[]) => {
          if (splitOf(photo) !== 'validation') return;
          await writeOverlay(path.join(overlaysDir, `${photo.replace(/\.jpg$/, '')}-${name}.jpg`), image, dets, labels, minIou);
        }
      : undefined;
    const r = await runPhotoAccuracy({ detector, conf, minIou, splitOf, onPhoto });
    rows.push({
      detector: name,
      conf,
      validation: summarise(r.photos.filter((p) => p.split === 'validation')),
      trainedOn: summarise(r.photos.filter((p) => p.split !== 'validation')),
      photos: r.photos,
      walkFrameCpuMs: r.walkFrameCpuMs,
    });
  };
  await one('builtin-colour', undefined, DEFAULT_BENCH_CONF);
  if (manifest) {
    const model = await loadModelDetector(manifest);
    try {
      await one(model.info.name, model, model.manifest.conf?.photo ?? DEFAULT_BENCH_CONF);
    } finally {
      await model.close();
    }
  }
  return {
    available: true,
    minIou,
    rows,
    msPerFrameVsBuiltin: rows.length > 1 ? rows[1]!.walkFrameCpuMs / rows[0]!.walkFrameCpuMs : null,
  };
}

/**
 * A photo with a detector's fruit in their ripeness colours (green, orange, red), those matched to no label
 * at minIou marked "-", and the labels it missed in white, marked with their class ("G" or "R"). The
 * overlay font has digits and a few letters only (src/vision/image/font.ts).
 */
async function writeOverlay(file: string, image: RgbImage, dets: Detection[], labels: LabelledFruit[], minIou: number): Promise<void> {
  const pairs = matchGreedy(
    dets.map((d) => d.box),
    labels.map((l) => l.box),
    minIou,
  );
  const matchedDet = new Set(pairs.map(([i]) => i));
  const matchedLabel = new Set(pairs.map(([, j]) => j));
  const boxes: OverlayBox[] = [
    ...labels.flatMap((l, j): OverlayBox[] =>
      matchedLabel.has(j) ? [] : [{ box: l.box, kind: 'fruit', trackId: l.ripeness === 'green' ? 'G' : 'R' }],
    ),
    ...dets.map((d, i): OverlayBox => ({
      box: d.box,
      kind: 'fruit',
      ripeness: d.ripeness,
      ...(matchedDet.has(i) ? {} : { trackId: '-' }),
    })),
  ];
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, await encodeJpeg(drawOverlay(image, boxes), 80));
}

export function formatComparison(c: PhotoComparison): string {
  if (!c.available) return `scoring-accuracy: skipped (${c.reason})`;
  const val = c.rows[0]!.photos.filter((p) => p.split === 'validation');
  const lines = [
    `validation photos of training/splits/tomato-photos.json (${val.length} photos, ${val.reduce((n, p) => n + p.labels.total, 0)} fruit; never trained or tuned on), matched at IoU ≥ ${c.minIou}; goals: precision and recall ≥ 80 %, median count error ≤ 10 %, ripeness ≥ 90 %`,
    'detector              conf  precision recall  median count error  ripeness (strict)  CPU ms per 1280-px frame',
  ];
  for (const r of c.rows) {
    const v = r.validation;
    lines.push(
      `${r.detector.padEnd(21)} ${r.conf.toFixed(2)}  ${pct(v.precision).padStart(9)} ${pct(v.recall).padStart(6)}  ${pct(v.medianCountError).padStart(18)}  ${pct(v.ripenessStrict).padStart(17)}  ${r.walkFrameCpuMs.toFixed(0).padStart(6)}`,
    );
  }
  if (c.msPerFrameVsBuiltin !== null) lines.push(`model CPU ms per frame / built-in: ${c.msPerFrameVsBuiltin.toFixed(2)}×`);
  lines.push('per validation photo (labels; found by each detector; matched):');
  for (const p of val) {
    const cells = c.rows.map((r) => {
      const q = r.photos.find((x) => x.photo === p.photo)!;
      return `${String(q.predicted.total).padStart(3)} found ${String(q.matched).padStart(3)} matched (${pct(q.countError.total).trim()})`;
    });
    lines.push(`  ${p.photo} ${String(p.labels.total).padStart(3)} labels: ${cells.join('  |  ')}`);
  }
  for (const r of c.rows)
    lines.push(
      `(${r.detector} on the ${r.trainedOn.photos} photos it was trained or tuned on, not a figure: precision ${pct(r.trainedOn.precision)}, recall ${pct(r.trainedOn.recall)}, median count error ${pct(r.trainedOn.medianCountError)})`,
    );
  return lines.join('\n');
}

/** `npm run bench scoring-accuracy`: the photo figures, the shipped model (models/) beside the built-in detector when one is there. */
export async function runPhotoBench(): Promise<PhotoComparison & { builtin: Summary }> {
  const shipped = findAutoModel(path.join(repoRoot, 'models')).manifest;
  const builtin = await runPhotoAccuracy();
  console.log(formatSummary(builtin));
  const c = await comparePhotos(shipped);
  console.log(formatComparison(c));
  return { ...c, builtin };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const confAt = args.indexOf('--conf');
  const conf = confAt >= 0 ? Number(args[confAt + 1]) : undefined;
  if (args.includes('--display-p3')) {
    for (const [colour, what] of [
      ['as-is', 'as they are (sRGB)'],
      ['p3', 'in Display P3 with the profile (converted by the box)'],
      ['p3-untagged', 'in Display P3 read as sRGB (no profile)'],
    ] as const) {
      const r = await runPhotoAccuracy({ conf, colour });
      if (!r.available) {
        console.log(r.reason);
        break;
      }
      const red = median(r.photos.map((p) => Math.abs(p.countError.red ?? 0)));
      const predicted = r.photos.reduce((n, p) => n + p.predicted.red + p.predicted.turning, 0);
      console.log(
        `photos ${what}: median |count error| ${pct(r.all.medianCountError)}, median |red error| ${pct(red)}, red+turning found ${predicted}, ripeness agreement strict ${pct(r.all.ripenessStrict)}`,
      );
    }
  } else if (args.includes('--model') || args.includes('--validation')) {
    // --model models/x.json: that model beside the built-in detector on the validation photos; --validation: the shipped one.
    const at = args.indexOf('--model');
    const manifest = at >= 0 ? path.resolve(args[at + 1]!) : findAutoModel(path.join(repoRoot, 'models')).manifest;
    const o = args.indexOf('--overlays');
    const c = await comparePhotos(manifest, o >= 0 ? path.resolve(args[o + 1]!) : null);
    if (args.includes('--json')) console.log(JSON.stringify(c, null, 2));
    else console.log(formatComparison(c));
  } else {
    // --hand-weighted: close-up frames scored as before the fitted score (docs/builtin-detector.md).
    const summary = await runPhotoAccuracy({ conf, params: args.includes('--hand-weighted') ? { closeUpScore: 'weighted' } : undefined });
    if (args.includes('--json')) console.log(JSON.stringify(summary, null, 2));
    else console.log(formatSummary(summary));
  }
}
