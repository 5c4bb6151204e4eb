// scoreWalk on rendered walks through the real ffmpeg decoder, with the oracle detector
// (the truth of each frame plus noise) standing in for a detector.
import t from 'tap';
import { renderStill, renderWalk, type RenderedWalk } from '../../scripts/render/walk.js';
import { USDA_STAGES } from '../../scripts/render/truth.js';
import { decodeFrames, probeMedia, resolveFfmpeg } from '../../src/vision/media/index.js';
import { iou } from '../../src/vision/track/index.js';
import { createBuiltinDetector } from '../../src/vision/builtin/index.js';
import type { Detector } from '../../src/vision/types.js';
import { scoreWalk, type WalkDecoder, type WalkOptions } from '../../src/vision/walk.js';
import { clipPaths, createOracle, NO_NOISE, TYPICAL_NOISE, type OracleNoise } from '../helpers/walk-oracle.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

const ffmpeg = await resolveFfmpeg();
if (!ffmpeg.available) {
  t.plan(0, `ffmpeg is not available here, rendered-walk tests skipped: ${ffmpeg.reason}`);
  process.exit(0);
}

const decode = decodeFrames as WalkDecoder;
const OPTIONS: WalkOptions = { conf: 0.5, sampleSeconds: 0.5, maxFrames: 240 };
const renders = new Map<string, Promise<RenderedWalk>>();
const dir = t.testdir();

/** Renders each distinct walk once for the whole file. */
function walk(seed: number, seconds: number, speed: number, clips = 1, clipGapSeconds = 0): Promise<RenderedWalk> {
  const key = `${seed}-${seconds}-${speed}-${clips}-${clipGapSeconds}`;
  if (!renders.has(key))
    renders.set(
      key,
      renderWalk({ out: path.join(dir, key), seconds, fps: 15, width: 640, height: 360, speed, seed, clips, clipGapSeconds }),
    );
  return renders.get(key)!;
}

async function score(r: RenderedWalk, noise: OracleNoise, options: Partial<WalkOptions> = {}, support = { stems: true, plants: true }) {
  const files = clipPaths(r.truthFile, r.truth);
  const oracle = createOracle(r.truth, files, decode, noise, support);
  const result = await scoreWalk({
    clips: files,
    detector: oracle.detector,
    decode: oracle.decode,
    options: { ...OPTIONS, ...options },
    probe: probeMedia,
  });
  return { result, oracle };
}

const within = (got: number, want: number, tol: number) => Math.abs(got - want) <= Math.max(1, tol * want);

t.test('without noise every fruit is counted exactly once', async (t) => {
  const r = await walk(3, 10, 0.3);
  const { result, oracle } = await score(r, NO_NOISE);
  const want = oracle.expected();
  t.ok(want.total > 80, `${want.total} countable fruit`);
  t.equal(result.counts.total, want.total);
  t.same(result.counts, { green: want.green, turning: want.turning, red: want.red, total: want.total }, 'and each by its class');
  // Each counted fruit is a different fruit of the truth.
  const matched = new Set<number>();
  const problems: string[] = [];
  for (const f of result.fruit) {
    const s = oracle.sampled[f.best_frame]!;
    let best = -1,
      bestIou = 0;
    for (const tf of r.truth.fruit) {
      const a = tf.appearances.find((x) => x.clip === s.clip && x.frame === s.frame);
      const v = a ? iou(a.box, f.best_box) : 0;
      if (v > bestIou) {
        bestIou = v;
        best = tf.id;
      }
    }
    if (bestIou < 0.9) problems.push(`fruit ${f.track_id} is no truth fruit`);
    if (matched.has(best)) problems.push(`truth fruit ${best} counted twice`);
    matched.add(best);
  }
  t.same(problems, [], 'each counted fruit is a different truth fruit');
  // The bench's breakdown of a count error (oracle.explain) on this walk and on doctored copies of it.
  const none = { hidden: 0, partly: 0, whole: 0 };
  const clean = oracle.explain(result);
  t.same(
    { ...clean, byStage: undefined },
    { matched: want.total, duplicates: 0, outside: 0, unmatched: 0, missed: 0, missedByVisibility: none, byStage: undefined },
  );
  const stageOf = new Map(r.truth.fruit.map((f) => [f.id, f.stage]));
  const wantStages: Record<string, { truth: number; missed: number }> = {};
  for (const s of USDA_STAGES) wantStages[s] = { truth: want.ids.filter((id) => stageOf.get(id) === s).length, missed: 0 };
  t.same(clean.byStage, wantStages, 'truth fruit by USDA stage, none missed');
  const [a, b, ...rest] = result.fruit;
  const nowhere = { ...rest[0]!, best_box: [0, 0, 1, 1] as typeof a.best_box };
  const doctored = oracle.explain({ frames: result.frames, fruit: [a!, a!, nowhere, ...rest.slice(1)] });
  t.same(
    { ...doctored, missedByVisibility: undefined, byStage: undefined },
    { matched: want.total - 2, duplicates: 1, outside: 0, unmatched: 1, missed: 2, missedByVisibility: undefined, byStage: undefined },
    `fruit ${b!.track_id} dropped, ${a!.track_id} twice, ${nowhere.track_id} moved where no fruit is`,
  );
  const { hidden, partly, whole } = doctored.missedByVisibility;
  t.equal(hidden + partly + whole, 2, 'each missed fruit has a visibility');
  t.same(
    Object.fromEntries(Object.entries(doctored.byStage).map(([s, v]) => [s, v.truth])),
    Object.fromEntries(Object.entries(clean.byStage).map(([s, v]) => [s, v.truth])),
    'the truth by stage does not depend on what was counted',
  );
  t.equal(
    Object.values(doctored.byStage).reduce((n, v) => n + v.missed, 0),
    2,
    'each missed fruit has a stage',
  );
  t.same(
    result.fruit.map((f) => f.track_id),
    Array.from({ length: result.fruit.length }, (_, i) => i + 1),
  );
  t.equal(result.stems.count, oracle.expected('stem').total);
  t.equal(result.plants.count, oracle.expected('plant').total);
});

t.test("with missed detections, jitter, false positives and wrong classes the tracker's count stays within 5%", async (t) => {
  for (const seed of [3, 4]) {
    const r = await walk(seed, 10, 0.3);
    const { result, oracle } = await score(r, { ...TYPICAL_NOISE, seed });
    const want = oracle.expected();
    const detected = oracle.expected('fruit', 2, true);
    t.ok(
      within(result.counts.total, detected.total, 0.05),
      `seed ${seed}: counted ${result.counts.total}, detected in 2+ frames ${detected.total}`,
    );
    t.ok(
      within(result.counts.total, want.total, 0.1),
      `seed ${seed}: counted ${result.counts.total}, truth ${want.total} (15% misses cost some)`,
    );
    for (const c of ['green', 'turning', 'red'] as const)
      t.ok(within(result.counts[c], want[c], 0.15), `seed ${seed} ${c}: ${result.counts[c]} vs ${want[c]} (votes undo most flips)`);
  }
});

t.test('the built-in colour detector counts a rendered walk within 10% after tracking', async (t) => {
  // The whole chain with no oracle: decoded frames, the built-in detector, the tracker. The bench
  // (bench/scoring-walk.ts) measures it on 20 s walks against the 5% goal; this bound is looser so
  // only a regression fails (it counted 66-75% too few before it learned small fruit). The oracle
  // only wraps the decoder, to know which rendered frames were sampled for the truth.
  const detector = createBuiltinDetector();
  for (const [seed, seconds] of [
    [4, 10],
    [5, 12],
  ] as const) {
    const r = await walk(seed, seconds, 0.3);
    const files = clipPaths(r.truthFile, r.truth);
    const oracle = createOracle(r.truth, files, decode, NO_NOISE);
    const result = await scoreWalk({ clips: files, detector, decode: oracle.decode, options: OPTIONS });
    const want = oracle.expected();
    t.ok(within(result.counts.total, want.total, 0.1), `seed ${seed}: counted ${result.counts.total}, truth ${want.total}`);
    // Green fruit among leaves were the misses; each class must be found in good part.
    t.ok(result.counts.green >= 0.5 * want.green, `seed ${seed}: green ${result.counts.green} of ${want.green}`);
    t.ok(
      result.counts.turning + result.counts.red >= 0.5 * (want.turning + want.red),
      `seed ${seed}: turning and red ${result.counts.turning + result.counts.red} of ${want.turning + want.red}`,
    );
  }
});

t.test('tracks survive fast walking', async (t) => {
  // 1 m/s sampled every 0.5 s: the row moves 40% of the frame between samples.
  const r = await walk(2, 8, 1.0);
  const { result, oracle } = await score(r, { ...NO_NOISE, jitter: 0.05 });
  const want = oracle.expected();
  t.ok(within(result.counts.total, want.total, 0.03), `counted ${result.counts.total}, truth ${want.total}`);
  const naive = await score(r, { ...NO_NOISE, jitter: 0.05 }, { tracker: { motionCompensation: false } });
  t.notOk(
    within(naive.result.counts.total, want.total, 0.2),
    `without motion compensation the count is far off: ${naive.result.counts.total}`,
  );
});

t.test('adaptive sampling: every 0.25 s while the walker is fast, every 0.5 s at a walking pace', async (t) => {
  const ADAPTIVE: Partial<WalkOptions> = { fastSampleSeconds: 0.25 };
  const slow = await score(await walk(3, 10, 0.3), NO_NOISE, ADAPTIVE);
  t.same(
    slow.result.frames.map((f) => f.time_seconds),
    [...Array(20).keys()].map((i) => i * 0.5),
    'at 0.3 m/s (an eighth of the frame per 0.5 s) as with fixed sampling',
  );

  const r = await walk(2, 8, 1.0);
  const fast = await score(r, NO_NOISE, ADAPTIVE);
  const times = fast.result.frames.map((f) => f.time_seconds);
  t.same(times.slice(0, 4), [0, 0.5, 0.75, 1], 'fast from the second frame, where the pace is first measured');
  t.ok(
    times.slice(1).every((x, i) => Math.abs(x - times[i]! - (i === 0 ? 0.5 : 0.25)) < 1e-6),
    'then every 0.25 s',
  );
  t.equal(fast.result.frames.length, 31);
  // Noise-free, every fruit seen well in two scored frames is counted once, whatever the rhythm.
  t.equal(fast.result.counts.total, fast.oracle.expected('fruit', 2, false, fast.result.frames).total);

  // The point of it: with a detector that misses 30% of fruit, a fruit seen two or three times at
  // 1 m/s is often lost; seen five times it is found. Both against the fruit of the regular grid.
  const noisy = { ...TYPICAL_NOISE, miss: 0.3, seed: 9 };
  const fixed = await score(r, noisy);
  const grid = fixed.oracle.expected().total;
  const adaptive = await score(r, noisy, ADAPTIVE);
  const errFixed = (fixed.result.counts.total - grid) / grid;
  const errAdaptive = (adaptive.result.counts.total - grid) / grid;
  t.ok(errFixed < -0.15, `fixed 0.5 s sampling loses fruit: ${fixed.result.counts.total} of ${grid}`);
  t.ok(Math.abs(errAdaptive) < 0.05, `adaptive sampling counts ${adaptive.result.counts.total} of ${grid}`);

  // The stretch read is the same: maxFrames regular samples (4 → the first 2 s).
  const capped = await score(r, NO_NOISE, { ...ADAPTIVE, maxFrames: 4 });
  t.same(
    capped.result.frames.map((f) => f.time_seconds),
    [0, 0.5, 0.75, 1, 1.25, 1.5, 1.75],
  );
});

t.test('three consecutive clips count the same fruit as one clip of the same stretch', async (t) => {
  const one = await score(await walk(5, 12, 0.3, 1), NO_NOISE);
  const three = await score(await walk(5, 12, 0.3, 3), NO_NOISE);
  t.equal(three.result.clips.length, 3);
  t.ok(three.result.clips.every((c) => c.done && c.frames === 8));
  t.ok(
    within(three.result.counts.total, one.result.counts.total, 0.05),
    `3 clips ${three.result.counts.total}, 1 clip ${one.result.counts.total}`,
  );
  t.ok(within(three.result.counts.total, three.oracle.expected().total, 0.05), `truth ${three.oracle.expected().total}`);
  // Tracking each clip alone counts the fruit at the joins twice: why tracks carry over.
  const reset = await score(await walk(5, 12, 0.3, 3), NO_NOISE, { clipBoundary: 'reset' });
  t.ok(reset.result.counts.total > three.result.counts.total * 1.1, `reset at joins: ${reset.result.counts.total}`);

  // The walker kept walking for 1.2 s between clips: the row jumps by 0.36 m (30% of the frame) at each join.
  const gapped = await score(await walk(5, 12, 0.3, 3, 1.2), NO_NOISE);
  t.same(
    gapped.result.clips.map((c) => c.frames),
    [8, 8, 8],
  );
  t.equal(gapped.result.counts.total, gapped.oracle.expected().total, `joins with a gap: ${gapped.result.counts.total}`);
});

t.test('stems and plants are never invented for a detector that cannot see them', async (t) => {
  const { result } = await score(await walk(3, 10, 0.3), NO_NOISE, {}, { stems: false, plants: false });
  t.same(result.stems, { count: null, reason: 'the oracle was built without stems', items: [] });
  t.equal(result.plants.count, null);
  t.ok(result.counts.total > 0);
});

t.test('diameters in mm from mm_per_pixel of the original clip, at any working size', async (t) => {
  const r = await walk(3, 10, 0.3);
  for (const maxLongSide of [640, 320]) {
    const { result, oracle } = await score(r, NO_NOISE, { mmPerPixel: r.truth.mmPerPixel, maxLongSide });
    void oracle;
    t.ok(result.frames.every((f) => f.width === maxLongSide));
    const errors: number[] = [];
    for (const f of result.fruit) {
      const s = oracle.sampled[f.best_frame]!;
      const sx = r.truth.width / result.frames[0]!.width;
      const box = f.best_box.map((v) => v * sx) as typeof f.best_box;
      const tf = r.truth.fruit.find((x) => x.appearances.some((a) => a.clip === s.clip && a.frame === s.frame && iou(a.box, box) > 0.8));
      if (tf) errors.push(Math.abs(f.diameter_mm! - tf.diameterMm) / tf.diameterMm);
    }
    errors.sort((a, b) => a - b);
    const med = errors[errors.length >> 1]!;
    t.ok(
      errors.length > 50 && med < 0.06,
      `working width ${maxLongSide}: median diameter error ${(med * 100).toFixed(1)}% over ${errors.length} fruit`,
    );
  }
});

t.test('hooks: every frame, progress to 1, cancellation', async (t) => {
  const r = await walk(5, 12, 0.3, 3);
  const files = clipPaths(r.truthFile, r.truth);
  const oracle = createOracle(r.truth, files, decode, NO_NOISE);
  const seen: number[] = [];
  const fractions: number[] = [];
  const perClip: [number, number][] = [];
  const problems: string[] = [];
  const result = await scoreWalk({
    clips: files,
    detector: oracle.detector,
    decode: oracle.decode,
    options: OPTIONS,
    probe: probeMedia,
    onFrame: (info) => {
      seen.push(info.frameIndex);
      if (info.image.width !== 640) problems.push(`frame ${info.frameIndex} width ${info.image.width}`);
      if (info.frameIndex > 1 && !info.tracks.some((x) => x.track_id !== null && x.kind === 'fruit'))
        problems.push(`frame ${info.frameIndex} shows no counted track`);
      if (!info.detections.every((d) => d.score >= 0.5 || d.track_key !== null))
        problems.push(`frame ${info.frameIndex} shows a stray low-score detection`);
    },
    onProgress: (p) => {
      fractions.push(p.fraction!);
      perClip.push([p.clip, p.clipFraction!]);
    },
  });
  t.same(problems, []);
  t.same(
    seen,
    result.frames.map((f) => f.frame),
  );
  t.same(
    seen,
    Array.from({ length: 24 }, (_, i) => i),
  );
  t.same(
    result.frames.slice(7, 10).map((f) => [f.clip, f.clip_frame]),
    [
      [0, 7],
      [1, 0],
      [1, 1],
    ],
  );
  t.ok(
    fractions.every((x, i) => i === 0 || x >= fractions[i - 1]!),
    'progress never goes back',
  );
  t.equal(fractions.at(-1), 1);
  for (const clip of [0, 1, 2]) {
    const mine = perClip.filter(([c]) => c === clip).map(([, f]) => f);
    t.ok(mine[0]! > 0 && mine[0]! < 0.5, `clip ${clip}: its first frame stands for the first sampling interval (${mine[0]})`);
    t.ok(
      mine.every((x, i) => i === 0 || x >= mine[i - 1]!),
      `clip ${clip}: progress never goes back`,
    );
    t.equal(mine.at(-1), 1, `clip ${clip} ends at 1`);
  }

  const ac = new AbortController();
  const o2 = createOracle(r.truth, files, decode, NO_NOISE);
  await t.rejects(
    scoreWalk({
      clips: files,
      detector: o2.detector,
      decode: o2.decode,
      options: OPTIONS,
      signal: ac.signal,
      onFrame: (i) => {
        if (i.frameIndex === 2) ac.abort(new Error('stop'));
      },
    }),
    { message: /stop|cancel/ },
  );
});

t.test('a photo counts every fruit it shows, also inside a batch of clips', async (t) => {
  const { jpeg, truth } = await renderStill({ seed: 4, width: 800, height: 600 });
  const photo = path.join(dir, 'photo.jpg');
  await writeFile(photo, jpeg);
  const visible = truth.fruit.filter((f) => f.visible >= 0.35);
  const stillDetector: Detector = {
    info: { name: 'still-truth', kind: 'builtin', stems: { supported: false, reason: 'n/a' }, plants: { supported: false, reason: 'n/a' } },
    async detect(image) {
      if (image.width !== 800) throw new Error('not the photo');
      return visible.map((f) => ({ kind: 'fruit' as const, box: f.box, score: 0.9, ripeness: f.ripeness }));
    },
  };
  const alone = await scoreWalk({ clips: [photo], detector: stillDetector, decode, options: OPTIONS });
  t.equal(alone.frames.length, 1);
  t.equal(alone.counts.total, visible.length);
  t.equal(alone.counts.red, visible.filter((f) => f.ripeness === 'red').length);

  // A photo between two clips is counted on its own and never linked to the clips' tracks.
  const r = await walk(5, 12, 0.3, 3);
  const files = clipPaths(r.truthFile, r.truth);
  const oracle = createOracle(r.truth, files, decode, NO_NOISE);
  const batch = await scoreWalk({
    clips: [files[0]!, photo, files[1]!],
    detector: {
      info: oracle.detector.info,
      detect: (img, o) => (img.width === 800 ? stillDetector.detect(img, o) : oracle.detector.detect(img, o)),
    },
    decode: (file, o) => (file === photo ? decode(file, o) : oracle.decode(file, o)),
    options: OPTIONS,
  });
  t.same(
    batch.clips.map((c) => c.frames),
    [8, 1, 8],
  );
  let separately = visible.length;
  for (const file of [files[0]!, files[1]!]) {
    const o = createOracle(r.truth, files, decode, NO_NOISE);
    separately += (await scoreWalk({ clips: [file], detector: o.detector, decode: o.decode, options: OPTIONS })).counts.total;
  }
  t.equal(
    batch.counts.total,
    separately,
    `${batch.counts.total} vs ${separately}: the photo splits the walk: each side is tracked alone, the photo adds its fruit`,
  );
});

t.test("a photo's frame carries the track id of every fruit it counts, as a video frame does (for its overlay)", async (t) => {
  const { jpeg, truth } = await renderStill({ seed: 6, width: 800, height: 600 });
  const photo = path.join(dir, 'photo-ids.jpg');
  await writeFile(photo, jpeg);
  const visible = truth.fruit.filter((f) => f.visible >= 0.35);
  const detector: Detector = {
    info: { name: 'still-truth', kind: 'builtin', stems: { supported: false, reason: 'n/a' }, plants: { supported: false, reason: 'n/a' } },
    async detect() {
      return visible.map((f) => ({ kind: 'fruit' as const, box: f.box, score: 0.9, ripeness: f.ripeness }));
    },
  };
  const seen: { ids: (number | null)[]; detections: number }[] = [];
  const result = await scoreWalk({
    clips: [photo],
    detector,
    decode,
    options: OPTIONS,
    onFrame: (info) => {
      seen.push({ ids: info.tracks.filter((v) => v.kind === 'fruit').map((v) => v.track_id), detections: info.detections.length });
    },
  });
  t.equal(seen.length, 1, 'one frame');
  t.ok(result.fruit.length > 5, `${result.fruit.length} fruit counted`);
  t.same(
    [...seen[0]!.ids].sort((a, b) => (a ?? -1) - (b ?? -1)),
    result.fruit.map((f) => f.track_id),
    "the frame's fruit carry the ids of the result's fruit, none without",
  );
});
