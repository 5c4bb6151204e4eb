// Tries tracker and merge settings on the rendered walks in seconds instead of the 40 minutes a
// full `bench/scoring-walk.ts --seeds all` takes. Nearly all of that time is the built-in
// detector; the tracker and the merge take a fraction of a second a walk. So each walk's decoded
// frames and the detections of the frames it scored are recorded once, under
// bench/out/walk-detections-<hash of the detector's source, its parameters and the renders>/,
// and then fed through the real scoreWalk (adaptive sampling, tracker, merge) with the default
// options, which is the baseline, and with each variant, in the same run.
//
//   node --import tsx scripts/replay-walks.ts [--seeds all | 1,2,3 | 46-55]
//     [--variants '{"name": {WalkOptions fields}, ...}'] [--detector-params '{"smallFruit": {...}}'] [--walks]
//
// A variant is a part of WalkOptions: {"tracker": {"matchIou": 0.2}}, {"merge": {"maxJump": 0.8}},
// {"merge": false}, {"conf": 0.55}. The walk asks the detector for everything from a third of conf
// (the tracker's low-score round), so a variant's conf may be above the default 0.5, not under it,
// and it must decode the same frames (sampleSeconds, fastSampleSeconds, maxFrames); the script
// refuses one that does not. --detector-params records the walks afresh with other detector
// parameters (given as createBuiltinDetector takes them: smallFruit replaces the whole set). A frame that a variant scores and the recording did not (adaptive sampling follows
// the camera motion the tracker measures) is detected on the spot from the decoded clip and
// added to the recording (the detector is shown the variant's frames in order, since it remembers
// a walk's fruit size from frame to frame). Checked against full scorings: the 102 walks replay to
// the counts bench/scoring-walk.ts gives, and with {"sampling": {"fastShare": 0.5}}, which scores
// other frames, seeds 1 and 2 at both speeds replay to what scoring them in full with it gives.
// Strictly, the recorded frames' detections are the default run's: a variant that changed the
// detector's remembered size before one of them could see it differently in a full scoring.
// Printed per variant: walks within 5 %, mean, spread and extremes of the count error, the
// error events of Oracle.explain, and each as a ratio to the baseline of the same run.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from './cli.js';
import { cachedWalk, OUT as RENDERS, PUBLISHED_SEEDS, parseSeeds } from '../bench/scoring-walk.js';
import { createBuiltinDetector, type BuiltinParams } from '../src/vision/builtin/index.js';
import { optionsFrom, walkOptionsFrom } from '../src/walks/jobs/options.js';
import { decodeFrames } from '../src/vision/media/index.js';
import { decodePlan, lowScoreFor, scoreWalk, type WalkDecoder, type WalkOptions } from '../src/vision/walk.js';
import type { Detection, Detector, RgbImage } from '../src/vision/types.js';
import { clipPaths, createOracle, NO_NOISE, type CountBreakdown, type SampledFrame } from '../test/helpers/walk-oracle.js';

const USAGE =
  "usage: replay-walks.ts [--seeds all|1,2,3|46-55] [--variants '{\"name\": {...WalkOptions}}'] [--detector-params '{...}'] [--walks]";
const values = parseCli(
  {
    options: {
      seeds: { type: 'string', default: 'all' },
      variants: { type: 'string', default: '{}' },
      'detector-params': { type: 'string', default: '{}' },
      walks: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  },
  USAGE,
);

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BASE: WalkOptions = walkOptionsFrom(optionsFrom({}, { video: true }));
const json = <T>(name: string, text: string): T => {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    console.error(`--${name}: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
};
const variants = json<Record<string, Partial<WalkOptions>>>('variants', values.variants);
const detectorParams = json<Partial<BuiltinParams>>('detector-params', values['detector-params']);
const seeds = values.seeds === 'all' ? [...PUBLISHED_SEEDS] : parseSeeds(values.seeds);
const optionsOf = (v: Partial<WalkOptions>): WalkOptions => ({ ...BASE, ...v, tracker: { ...BASE.tracker, ...v.tracker } });

// A recording is only valid for the detector that made it: its source, its parameters and the renders.
const builtinDir = path.join(ROOT, 'src', 'scoring', 'builtin');
const CACHE = path.join(
  ROOT,
  'bench',
  'out',
  `walk-detections-${createHash('sha256')
    .update(
      readdirSync(builtinDir)
        .sort()
        .map((f) => readFileSync(path.join(builtinDir, f), 'utf8'))
        .join('\0'),
    )
    .update(JSON.stringify(detectorParams))
    .update(path.basename(RENDERS))
    .digest('hex')
    .slice(0, 12)}`,
);

interface Recording {
  /** Every frame the decoder handed out, scored or not. */
  frames: { clip: number; index: number; timeSeconds: number; width: number; height: number }[];
  /** Detections by `${clip}:${index}` of the frames scored. */
  detections: Record<string, Detection[]>;
  /** Which rendered frame each decoded frame is (the oracle's matching). */
  sampled: SampledFrame[];
}

const detector = createBuiltinDetector({ params: detectorParams });
const recordedLow = lowScoreFor(BASE.conf);

/** Scores the walk once for real, keeping what replaying needs. */
async function record(files: string[], truth: Parameters<typeof createOracle>[0]): Promise<Recording> {
  const oracle = createOracle(truth, files, decodeFrames as WalkDecoder, NO_NOISE);
  const rec: Recording = { frames: [], detections: {}, sampled: [] };
  const keyOf = new WeakMap<RgbImage, string>();
  const decode: WalkDecoder = async function* (file, options) {
    const clip = files.indexOf(file);
    for await (const f of oracle.decode(file, options)) {
      rec.frames.push({ clip, index: f.index, timeSeconds: f.timeSeconds, width: f.image.width, height: f.image.height });
      keyOf.set(f.image, `${clip}:${f.index}`);
      yield f;
    }
  };
  const recording: Detector = {
    info: detector.info,
    async detect(image, options) {
      const found = await detector.detect(image, options);
      rec.detections[keyOf.get(image)!] = found;
      return found;
    },
  };
  await scoreWalk({ clips: files, detector: recording, decode, options: BASE });
  rec.sampled = [...oracle.sampled];
  return rec;
}

/**
 * Detects the given frames from the decoded clips and adds them to the recording. The detector
 * remembers the walk's fruit size from frame to frame, so it is shown every frame scored so far
 * in order, as in a real scoring, and only the missing frames' detections are kept.
 */
async function detectMissing(rec: Recording, files: string[], missing: Set<string>, scoredOrder: string[]): Promise<void> {
  const fresh = createBuiltinDetector({ params: detectorParams });
  const wanted = new Set([...scoredOrder, ...missing]);
  const plan = decodePlan(BASE);
  for (let clip = 0; clip < files.length; clip++) {
    for await (const f of decodeFrames(files[clip]!, plan)) {
      const key = `${clip}:${f.index}`;
      if (!wanted.has(key)) continue;
      const found = await fresh.detect(f.image, { conf: recordedLow });
      if (missing.has(key)) rec.detections[key] = found;
    }
  }
}

interface WalkFigure {
  counted: number;
  truth: number;
  error: number;
  breakdown: CountBreakdown;
}

/** Replays a recorded walk with the given options; null (and the recording grown) when it scored frames not recorded. */
async function replay(
  rec: Recording,
  files: string[],
  truth: Parameters<typeof createOracle>[0],
  options: WalkOptions,
): Promise<{ figure: WalkFigure | null; missing: Set<string>; order: string[] }> {
  const oracle = createOracle(truth, files, decodeFrames as WalkDecoder, NO_NOISE);
  oracle.sampled.push(...rec.sampled);
  const keyOf = new WeakMap<RgbImage, string>();
  const decode: WalkDecoder = async function* (file) {
    const clip = files.indexOf(file);
    for (const f of rec.frames) {
      if (f.clip !== clip) continue;
      // Replayed frames carry no pixels: the recorded detections stand for them.
      const image: RgbImage = { width: f.width, height: f.height, data: new Uint8Array(0) };
      keyOf.set(image, `${clip}:${f.index}`);
      yield { index: f.index, timeSeconds: f.timeSeconds, image };
    }
  };
  const missing = new Set<string>();
  const order: string[] = [];
  const replayed: Detector = {
    info: detector.info,
    async detect(image, { conf }) {
      const key = keyOf.get(image)!;
      order.push(key);
      const found = rec.detections[key];
      if (!found) {
        missing.add(key);
        return [];
      }
      return found.filter((d) => d.score >= conf).map((d) => ({ ...d }));
    },
  };
  const result = await scoreWalk({ clips: files, detector: replayed, decode, options });
  if (missing.size > 0) return { figure: null, missing, order };
  const expected = oracle.expected('fruit', 2, false, result.frames).total;
  return {
    figure: {
      counted: result.counts.total,
      truth: expected,
      error: (result.counts.total - expected) / expected,
      breakdown: oracle.explain(result),
    },
    missing,
    order,
  };
}

interface Summary {
  walks: number;
  within5: number;
  mean: number;
  sd: number;
  min: number;
  max: number;
  counted: number;
  truth: number;
  duplicates: number;
  unmatched: number;
  missed: number;
}

function summarise(figures: WalkFigure[]): Summary {
  const e = figures.map((f) => f.error);
  const mean = e.reduce((a, b) => a + b, 0) / e.length;
  const sum = (k: 'duplicates' | 'unmatched' | 'missed') => figures.reduce((a, f) => a + f.breakdown[k], 0);
  return {
    walks: e.length,
    within5: e.filter((x) => Math.abs(x) <= 0.05).length,
    mean,
    sd: Math.sqrt(e.reduce((a, b) => a + (b - mean) ** 2, 0) / e.length),
    min: Math.min(...e),
    max: Math.max(...e),
    counted: figures.reduce((a, f) => a + f.counted, 0),
    truth: figures.reduce((a, f) => a + f.truth, 0),
    duplicates: sum('duplicates'),
    unmatched: sum('unmatched'),
    missed: sum('missed'),
  };
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

// The recording holds the frames the default options decode, and detections from the tracker's
// low-score round at the default conf: a variant must decode the same frames and read no lower.
for (const [name, v] of Object.entries(variants)) {
  const o = optionsOf(v);
  const refuse = (why: string) => {
    console.error(`variant ${name}: ${why}\n${USAGE}`);
    process.exit(2);
  };
  if (name === 'default') refuse('"default" is the name of the baseline');
  if (JSON.stringify(decodePlan(o)) !== JSON.stringify(decodePlan(BASE)) || o.maxLongSide !== BASE.maxLongSide)
    refuse('it decodes other frames than the recording (sampleSeconds, fastSampleSeconds, maxFrames, maxLongSide)');
  if (lowScoreFor(o.conf) < recordedLow - 1e-9)
    refuse(
      `conf ${o.conf} reads detections from ${lowScoreFor(o.conf).toFixed(3)}, under the lowest recorded (${recordedLow.toFixed(3)}, conf ${BASE.conf})`,
    );
}

mkdirSync(CACHE, { recursive: true });
console.log(`recordings: ${path.relative(ROOT, CACHE)}`);
const all: Record<string, WalkFigure[]> = { default: [] };
for (const name of Object.keys(variants)) all[name] = [];
for (const seed of seeds)
  for (const speed of [0.3, 0.6]) {
    const walk = await cachedWalk(`acc-${seed}-${speed}`, { out: RENDERS, seconds: 20, fps: 15, width: 640, height: 360, speed, seed });
    const files = clipPaths(walk.truthFile, walk.truth);
    const file = path.join(CACHE, `${seed}-${speed}.json`);
    let rec: Recording;
    if (existsSync(file)) rec = JSON.parse(readFileSync(file, 'utf8')) as Recording;
    else {
      const started = Date.now();
      rec = await record(files, walk.truth);
      writeFileSync(`${file}.part`, JSON.stringify(rec));
      renameSync(`${file}.part`, file);
      console.log(`recorded seed ${seed} at ${speed} m/s in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    const line = [`seed ${seed} at ${speed} m/s:`];
    for (const [name, v] of [['default', {}] as const, ...Object.entries(variants)]) {
      const options = optionsOf(v);
      let r = await replay(rec, files, walk.truth, options);
      if (!r.figure) {
        await detectMissing(rec, files, r.missing, r.order);
        writeFileSync(`${file}.part`, JSON.stringify(rec));
        renameSync(`${file}.part`, file);
        r = await replay(rec, files, walk.truth, options);
        if (!r.figure) throw new Error(`seed ${seed} at ${speed} m/s: frames ${[...r.missing].join(', ')} could not be detected`);
      }
      all[name]!.push(r.figure);
      const b = r.figure.breakdown;
      line.push(
        `${name} ${r.figure.counted}/${r.figure.truth} ${pct(r.figure.error)} (second tracks ${b.duplicates}, no fruit ${b.unmatched}, missed ${b.missed})`,
      );
    }
    if (values.walks) console.log(line.join(' | '));
  }

const base = summarise(all.default!);
for (const [name, figures] of Object.entries(all)) {
  const s = summarise(figures);
  const ratio = (a: number, b: number) => (name === 'default' ? '' : ` (${(a / b).toFixed(2)}× default)`);
  console.log(
    `${name}: ${s.within5} of ${s.walks} walks within 5 %; error mean ${pct(s.mean)}, σ ${(s.sd * 100).toFixed(2)} %${ratio(s.sd, base.sd)}, ${pct(s.min)} … ${pct(s.max)}; ` +
      `counted ${s.counted} for ${s.truth} (${pct(s.counted / s.truth - 1)}); second tracks ${s.duplicates}${ratio(s.duplicates, base.duplicates)}, ` +
      `tracks on no fruit ${s.unmatched}${ratio(s.unmatched, base.unmatched)}, missed ${s.missed}${ratio(s.missed, base.missed)}`,
  );
}
