// An "oracle" detector for rendered walks: it reads the ground truth of the frame it
// is shown and reports those boxes with configurable noise (misses, jitter, false
// positives, wrong ripeness). It stands in for the detector where the tracker and
// the walk pipeline are under test. The frames come from a real decoder; which
// rendered frame each decoded image is, is found by comparing it with an exact
// full-rate decode of the clip, so the oracle does not depend on how the decoder samples.
import path from 'node:path';
import { readAllFrames } from '../../scripts/render/ffmpeg.js';
import { createRng, gaussian } from '../../scripts/render/rng.js';
import { USDA_STAGES, type TruthAppearance, type UsdaStage, type WalkTruth } from '../../scripts/render/truth.js';
import type { Box, Detection, DetectionKind, Detector, RgbImage, Ripeness } from '../../src/vision/types.js';
import { iou } from '../../src/vision/track/box.js';
import type { WalkDecoder, WalkFrameInput } from '../../src/vision/walk.js';

export interface OracleNoise {
  /** Probability that a visible object is not detected in a frame. */
  miss: number;
  /** Standard deviation of each box edge, as a fraction of the box size. */
  jitter: number;
  /** Mean number of false fruit per frame (random place, size and class). */
  falsePositives: number;
  /** Probability that a fruit's ripeness is reported as a neighbouring class. */
  flip: number;
  /** Least visible fraction detected with a confident score; less visible fruit get a low score. */
  minVisible: number;
  /** Random spread added to the score, which otherwise follows the visible fraction. */
  scoreJitter: number;
  seed: number;
}

export const NO_NOISE: OracleNoise = { miss: 0, jitter: 0, falsePositives: 0, flip: 0, minVisible: 0.35, scoreJitter: 0, seed: 1 };
export const TYPICAL_NOISE: OracleNoise = {
  miss: 0.15,
  jitter: 0.06,
  falsePositives: 1,
  flip: 0.15,
  minVisible: 0.35,
  scoreJitter: 0.05,
  seed: 1,
};

const GRID_W = 32;
const GRID_H = 18;

function blockMeans(data: Uint8Array, w: number, h: number): Float32Array {
  const out = new Float32Array(GRID_W * GRID_H * 3);
  const n = new Float32Array(GRID_W * GRID_H);
  for (let y = 0; y < h; y += 2) {
    const gy = Math.min(GRID_H - 1, Math.floor((y * GRID_H) / h));
    for (let x = 0; x < w; x += 2) {
      const g = gy * GRID_W + Math.min(GRID_W - 1, Math.floor((x * GRID_W) / w));
      const p = (y * w + x) * 3;
      out[g * 3] += data[p]!;
      out[g * 3 + 1] += data[p + 1]!;
      out[g * 3 + 2] += data[p + 2]!;
      n[g]++;
    }
  }
  for (let g = 0; g < n.length; g++) for (let c = 0; c < 3; c++) out[g * 3 + c] /= Math.max(1, n[g]!);
  return out;
}

function distance(a: Float32Array, b: Float32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += Math.abs(a[i]! - b[i]!);
  return d;
}

export interface SampledFrame {
  clip: number;
  /** Rendered frame number. */
  frame: number;
  /** The decoder's frame number in the clip (`WalkFrame.clip_frame`). */
  index: number;
}

export interface Oracle {
  detector: Detector;
  /** Wraps a real decoder so the oracle knows which rendered frame each image is. */
  decode: WalkDecoder;
  /** Rendered frames the decoder handed out, in order. */
  sampled: SampledFrame[];
  /**
   * Fruit (or stems/plants) a perfect tracker would count on the sampled frames: seen
   * well (visible ≥ minVisible) in at least minHits of them. With `detected`, only the
   * frames where the oracle actually reported the object confidently count, which
   * takes the detector's misses out and leaves the tracker's own error. With `scored`
   * (the walk's `frames`), only the decoded frames the walk scored count: adaptive
   * sampling decodes more frames than it scores.
   */
  expected(
    kind?: DetectionKind,
    minHits?: number,
    detected?: boolean,
    scored?: readonly { clip: number; clip_frame: number }[],
  ): { total: number; green: number; turning: number; red: number; ids: number[] };
  /**
   * Where a walk's fruit count goes wrong against `expected('fruit', minHits, false, result.frames)`:
   * each counted fruit is, of the truth fruit its best box overlaps (IoU ≥ 0.3) in its best frame,
   * the one with the largest IoU × visible share. counted = matched + duplicates + outside + unmatched; truth = matched + missed.
   */
  explain(
    result: {
      fruit: readonly { best_box: Box; best_frame: number }[];
      frames: readonly { clip: number; clip_frame: number; width: number }[];
    },
    minHits?: number,
  ): CountBreakdown;
}

export interface CountBreakdown {
  /** Counted fruit that are a truth fruit counted for the first time. */
  matched: number;
  /** Counted fruit that are a truth fruit already counted (a second track of one fruit). */
  duplicates: number;
  /** Counted fruit that are a real fruit but not in the truth (never seen well in minHits frames). */
  outside: number;
  /** Counted fruit where no fruit is (a false detection tracked). */
  unmatched: number;
  /** Truth fruit not counted. */
  missed: number;
  /** Missed fruit by how visible they were at best in a scored frame: under 0.5, 0.5–0.9, 0.9 and up. */
  missedByVisibility: { hidden: number; partly: number; whole: number };
  /** Truth fruit and missed fruit by the USDA colour stage the renderer gave them. */
  byStage: Record<UsdaStage, { truth: number; missed: number }>;
}

export function createOracle(
  truth: WalkTruth,
  clipFiles: string[],
  realDecode: WalkDecoder,
  noise: OracleNoise = TYPICAL_NOISE,
  support: { stems?: boolean; plants?: boolean } = { stems: true, plants: true },
): Oracle {
  const rng = createRng(noise.seed);
  const frameOf = new WeakMap<RgbImage, SampledFrame>();
  const sampled: SampledFrame[] = [];
  const reported = new Set<string>();
  const index = new Map<string, { kind: DetectionKind; id: number; ripeness?: Ripeness; a: TruthAppearance }[]>();
  const add = (kind: DetectionKind, id: number, a: TruthAppearance, ripeness?: Ripeness) => {
    const key = `${a.clip}:${a.frame}`;
    let list = index.get(key);
    if (!list) index.set(key, (list = []));
    list.push({ kind, id, a, ...(ripeness ? { ripeness } : {}) });
  };
  for (const f of truth.fruit) for (const a of f.appearances) add('fruit', f.id, a, f.ripeness);
  for (const s of truth.stems) for (const a of s.appearances) add('stem', s.id, a);
  for (const p of truth.plants) for (const a of p.appearances) add('plant', p.id, a);
  const fruitSize = truth.fruit.length ? truth.fruit.reduce((s, f) => s + f.diameterMm, 0) / truth.fruit.length / truth.mmPerPixel : 30;

  const decode: WalkDecoder = async function* (file, options) {
    const clip = clipFiles.indexOf(file);
    if (clip < 0) throw new Error(`the oracle knows no clip ${file}`);
    const signatures: Float32Array[] = [];
    for await (const raw of readAllFrames(file, truth.width, truth.height)) signatures.push(blockMeans(raw, truth.width, truth.height));
    for await (const f of realDecode(file, options) as AsyncIterable<WalkFrameInput>) {
      const sig = blockMeans(f.image.data, f.image.width, f.image.height);
      const guess = Math.round(f.timeSeconds * truth.fps);
      let best = -1;
      let bestD = Infinity;
      const lo = Math.max(0, guess - truth.fps),
        hi = Math.min(signatures.length - 1, guess + truth.fps);
      for (let k = lo; k <= hi; k++) {
        const d = distance(sig, signatures[k]!);
        if (d < bestD) {
          bestD = d;
          best = k;
        }
      }
      const at = { clip, frame: best, index: f.index };
      sampled.push(at);
      frameOf.set(f.image, at);
      yield f;
    }
  };

  const ripenessFlip = (r: Ripeness): Ripeness => {
    if (r === 'turning') return rng() < 0.5 ? 'green' : 'red';
    return 'turning';
  };

  const detector: Detector = {
    info: {
      name: 'oracle',
      kind: 'builtin',
      stems: support.stems ? { supported: true } : { supported: false, reason: 'the oracle was built without stems' },
      plants: support.plants ? { supported: true } : { supported: false, reason: 'the oracle was built without plants' },
    },
    async detect(image, { conf }) {
      const at = frameOf.get(image);
      if (!at) throw new Error('the oracle was shown an image its decoder did not hand out');
      const sx = image.width / truth.width;
      const sy = image.height / truth.height;
      const out: Detection[] = [];
      for (const o of index.get(`${at.clip}:${at.frame}`) ?? []) {
        if ((o.kind === 'stem' && !support.stems) || (o.kind === 'plant' && !support.plants)) continue;
        if (o.a.visible < 0.1 || rng() < noise.miss) continue;
        const [x1, y1, x2, y2] = o.a.box;
        const j = (size: number) => gaussian(rng) * noise.jitter * size;
        const w = x2 - x1,
          h = y2 - y1;
        const box: Box = [(x1 + j(w)) * sx, (y1 + j(h)) * sy, (x2 + j(w)) * sx, (y2 + j(h)) * sy];
        // Confident when well visible (0.6..1), doubtful when mostly hidden (0.2..0.45).
        const spread = noise.scoreJitter * (2 * rng() - 1);
        const score =
          o.a.visible >= noise.minVisible
            ? Math.min(1, 0.6 + 0.4 * o.a.visible + spread)
            : Math.max(0.2, Math.min(0.45, 0.2 + (0.25 * o.a.visible) / noise.minVisible + spread));
        if (score < conf) continue;
        const d: Detection = { kind: o.kind, box, score };
        if (o.a.visible >= noise.minVisible) reported.add(`${o.kind}:${o.id}:${at.clip}:${at.frame}`);
        if (o.ripeness) d.ripeness = rng() < noise.flip ? ripenessFlip(o.ripeness) : o.ripeness;
        out.push(d);
      }
      // Poisson false positives: a stray fruit-sized blob somewhere in the frame.
      let fp = 0;
      for (let p = Math.exp(-noise.falsePositives), prod = rng(); prod > p; prod *= rng()) fp++;
      for (let k = 0; k < fp; k++) {
        const s = fruitSize * (0.7 + 0.6 * rng());
        const x = rng() * (truth.width - s),
          y = rng() * (truth.height - s);
        const score = 0.5 + 0.3 * rng();
        if (score < conf) continue;
        out.push({
          kind: 'fruit',
          box: [x * sx, y * sy, (x + s) * sx, (y + s) * sy],
          score,
          ripeness: (['green', 'turning', 'red'] as const)[Math.floor(rng() * 3)]!,
        });
      }
      return out;
    },
  };

  const expected: Oracle['expected'] = (kind = 'fruit', minHits = 2, detected = false, scored) => {
    const used = scored ? new Set(scored.map((f) => `${f.clip}:${f.clip_frame}`)) : null;
    const frames = used ? sampled.filter((s) => used.has(`${s.clip}:${s.index}`)) : sampled;
    const seen = new Set(frames.map((s) => `${s.clip}:${s.frame}`));
    const list = kind === 'fruit' ? truth.fruit : kind === 'stem' ? truth.stems : truth.plants;
    const minVisible = kind === 'fruit' ? noise.minVisible : 0.3;
    const r = { total: 0, green: 0, turning: 0, red: 0, ids: [] as number[] };
    const single = frames.length < minHits;
    for (const o of list) {
      const hits = o.appearances.filter(
        (a) =>
          a.visible >= minVisible &&
          seen.has(`${a.clip}:${a.frame}`) &&
          (!detected || reported.has(`${kind}:${o.id}:${a.clip}:${a.frame}`)),
      ).length;
      if (hits >= (single ? 1 : minHits)) {
        r.total++;
        r.ids.push(o.id);
        if ('ripeness' in o) r[(o as { ripeness: Ripeness }).ripeness]++;
      }
    }
    return r;
  };

  const explain: Oracle['explain'] = (result, minHits = 2) => {
    const truthIds = new Set(expected('fruit', minHits, false, result.frames).ids);
    const at = (f: { clip: number; clip_frame: number }) => sampled.find((s) => s.clip === f.clip && s.index === f.clip_frame);
    const byStage = Object.fromEntries(USDA_STAGES.map((s) => [s, { truth: 0, missed: 0 }])) as CountBreakdown['byStage'];
    const out: CountBreakdown = {
      matched: 0,
      duplicates: 0,
      outside: 0,
      unmatched: 0,
      missed: 0,
      missedByVisibility: { hidden: 0, partly: 0, whole: 0 },
      byStage,
    };
    const counted = new Set<number>();
    for (const fruit of result.fruit) {
      const frame = result.frames[fruit.best_frame];
      const s = frame && at(frame);
      // Of the fruit the box overlaps (IoU ≥ 0.3), the one most in view: a fruit hidden behind
      // another has about the same box, and the detector saw the one in front.
      let best = -1;
      let bestSeen = 0;
      if (s) {
        const k = frame.width / truth.width;
        for (const o of index.get(`${s.clip}:${s.frame}`) ?? []) {
          if (o.kind !== 'fruit') continue;
          const v = iou(o.a.box.map((x) => x * k) as Box, fruit.best_box);
          if (v >= 0.3 && v * o.a.visible > bestSeen) {
            bestSeen = v * o.a.visible;
            best = o.id;
          }
        }
      }
      if (best < 0) out.unmatched++;
      else if (!truthIds.has(best)) out.outside++;
      else if (counted.has(best)) out.duplicates++;
      else {
        counted.add(best);
        out.matched++;
      }
    }
    const scored = new Set(
      result.frames
        .map((f) => at(f))
        .filter((s) => s !== undefined)
        .map((s) => `${s.clip}:${s.frame}`),
    );
    for (const f of truth.fruit) {
      if (!truthIds.has(f.id)) continue;
      byStage[f.stage].truth++;
      if (counted.has(f.id)) continue;
      byStage[f.stage].missed++;
      out.missed++;
      const v = Math.max(0, ...f.appearances.filter((a) => scored.has(`${a.clip}:${a.frame}`)).map((a) => a.visible));
      out.missedByVisibility[v < 0.5 ? 'hidden' : v < 0.9 ? 'partly' : 'whole']++;
    }
    return out;
  };

  return { detector, decode, sampled, expected, explain };
}

/** Paths of a rendered walk's clips, as renderWalk wrote them. */
export function clipPaths(truthFile: string, truth: WalkTruth): string[] {
  return truth.clips.map((c) => path.join(path.dirname(truthFile), c.file));
}
