// Detection ahead on threads (detect-ahead.ts, detect-threads.ts) must answer exactly what
// detecting each frame in its turn answers: the walk's counts may never depend on SCORING_THREADS.
import t from 'tap';
import { renderWalk } from '../../../scripts/render/walk.js';
import { createBuiltinDetector } from '../../../src/vision/builtin/index.js';
import { DetectAhead } from '../../../src/vision/builtin/detect-ahead.js';
import type { FrameDetections } from '../../../src/vision/builtin/detector.js';
import { ScaleMemory } from '../../../src/vision/builtin/scale-memory.js';
import { decodeFrames, probeMedia, resolveFfmpeg } from '../../../src/vision/media/index.js';
import type { Detector, RgbImage } from '../../../src/vision/types.js';
import { scoreWalk, type WalkDecoder, type WalkOptions } from '../../../src/vision/walk.js';

const W = 640;
const H = 360;

// Drawn frames (as scale-memory.test.ts draws them): small red fruit, the same with one 29 px
// blob of touching fruit, and a close view. The clump frame is the one whose analysis the walk's
// memory decides: alone it is a close-up, after small-fruit frames it is small fruit.
function scene(discs: Array<[number, number, number]>): RgbImage {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let c = [60 + ((x * 7 + y * 13) % 17), 110 + ((x * 5 + y * 3) % 23), 50];
      for (const [cx, cy, r] of discs) {
        const d = Math.hypot(x - cx, y - cy);
        if (d <= r) {
          const s = 1 - 0.35 * (d / r) ** 2;
          c = [Math.round(200 * s), Math.round(35 * s), Math.round(30 * s)];
        }
      }
      data.set(c, (y * W + x) * 3);
    }
  return { width: W, height: H, data };
}
const smalls: Array<[number, number, number]> = [];
for (let k = 0; k < 12; k++) smalls.push([40 + (k % 6) * 100, 60 + Math.floor(k / 6) * 220, 12]);
const small = scene(smalls);
const clump = scene([...smalls, [300, 180, 29]]);
const close = scene([
  [150, 180, 45],
  [320, 180, 40],
  [480, 170, 42],
]);
// Each frame its own image object, as a decoder gives them.
const copy = (i: RgbImage): RgbImage => ({ ...i, data: i.data.slice() });
const SEQUENCE = [small, small, small, small, clump, clump, clump, close, close, close, clump, small].map(copy);

t.test('frames announced all at once on threads answer as frames detected in turn', async (t) => {
  const inTurn = createBuiltinDetector();
  const want = [];
  for (const image of SEQUENCE) want.push(await inTurn.detect(image, { conf: 0.2 }));

  const threaded = createBuiltinDetector({ threads: 2 });
  t.teardown(() => threaded.close?.());
  t.equal(threaded.readAhead, 2);
  // Every frame announced before the first is detected: each is analysed under a guess of the
  // memory made before any frame was recorded (nothing small yet), which is wrong for the clumps.
  for (const image of SEQUENCE) threaded.announce!(image, { conf: 0.2 });
  for (let k = 0; k < SEQUENCE.length; k++) t.same(await threaded.detect(SEQUENCE[k]!, { conf: 0.2 }), want[k], `frame ${k}`);
  const s = threaded.aheadStats!;
  t.equal(s.ahead, SEQUENCE.length);
  t.ok(s.redone >= 1, `clump frames whose memory was guessed wrong were detected again (${s.redone})`);
  t.equal(s.used + s.redone, SEQUENCE.length, 'every other frame took its answer from a thread');
});

t.test('a detection that fails on a thread fails the frame with its reason', async (t) => {
  const threaded = createBuiltinDetector({ threads: 1 });
  t.teardown(() => threaded.close?.());
  const image = copy(small);
  threaded.announce!(image, { conf: 2 });
  await t.rejects(threaded.detect(image, { conf: 2 }), /conf must be within \[0, 1\]/);
  // The threads still serve the next frame.
  const next = copy(small);
  threaded.announce!(next, { conf: 0.5 });
  t.same(await threaded.detect(next, { conf: 0.5 }), await createBuiltinDetector().detect(copy(small), { conf: 0.5 }));
});

t.test('after close, an announced frame is refused, never answered wrong', async (t) => {
  const threaded = createBuiltinDetector({ threads: 1 });
  await threaded.close!();
  const image = copy(small);
  threaded.announce!(image, { conf: 0.5 });
  await t.rejects(threaded.detect(image, { conf: 0.5 }), /closed/);
});

// The guess and the check, with frames whose analysis is scripted: which memory each frame is
// analysed under, and which answer is kept.
t.test('the memory is guessed from the frames ahead, and an answer stands only when it would have been the same', async (t) => {
  const calls: { where: 'ahead' | 'now'; smallLikely: boolean; conf: number }[] = [];
  // Every frame is a small-fruit frame; `decided` frames are ones the memory decides.
  const decided = new Set<RgbImage>();
  const runner = (where: 'ahead' | 'now') => (image: RgbImage, conf: number, smallLikely: boolean) => {
    calls.push({ where, smallLikely, conf });
    const found: FrameDetections = {
      detections: [{ kind: 'fruit', box: [0, 0, 1, 1], score: smallLikely ? 0.9 : 0.1 }],
      smallFruit: true,
      memoryDecided: decided.has(image),
    };
    let cancelled = false;
    const result = Promise.resolve().then(() => (cancelled ? Promise.reject(new Error('cancelled')) : found));
    result.catch(() => undefined);
    return {
      result,
      cancel: () => {
        cancelled = true;
      },
    };
  };
  const memory = new ScaleMemory();
  const ahead = new DetectAhead(memory, runner('ahead'), runner('now'));
  const frames = Array.from({ length: 8 }, () => copy(small));
  decided.add(frames[3]!).add(frames[6]!);

  // Nothing recorded yet: the first three frames' memory cannot hold (fewer than three frames);
  // the fourth's guess takes the three before it to be what the last recorded frame was (none: not small).
  for (const f of frames.slice(0, 4)) ahead.announce(f, 0.5);
  t.same(
    calls.map((c) => c.smallLikely),
    [false, false, false, false],
  );
  for (const f of frames.slice(0, 3)) await ahead.detect(f, 0.5);
  t.ok(memory.smallLikely(W, H), 'three small-fruit frames recorded: the memory holds');
  // Frame 3 was analysed as if the memory did not hold, and the memory decides it: detected again.
  const third = await ahead.detect(frames[3]!, 0.5);
  t.equal(third[0]!.score, 0.9, 'frame 3 answers as under the true memory');
  t.same(calls.at(-1), { where: 'now', smallLikely: true, conf: 0.5 });
  t.same(ahead.stats, { ahead: 4, used: 3, redone: 1, discarded: 0 });

  // Now the guesses carry the small-fruit frames on: frames 4-6 are analysed as after small fruit.
  calls.length = 0;
  for (const f of frames.slice(4, 7)) ahead.announce(f, 0.5);
  t.same(
    calls.map((c) => c.smallLikely),
    [true, true, true],
  );
  // A frame announced at one conf and asked for at another is detected afresh.
  await ahead.detect(frames[4]!, 0.3);
  t.same(calls.at(-1), { where: 'now', smallLikely: true, conf: 0.3 });
  // Frame 5 is dropped (the pace changed): it is never used, and frame 6 still answers from its thread.
  ahead.discard(frames[5]!);
  const sixth = await ahead.detect(frames[6]!, 0.5);
  t.equal(sixth[0]!.score, 0.9);
  t.same(ahead.stats, { ahead: 7, used: 4, redone: 1, discarded: 1 });
  // A frame never announced is detected in its turn.
  await ahead.detect(frames[7]!, 0.5);
  t.same(calls.at(-1), { where: 'now', smallLikely: true, conf: 0.5 });
});

const ffmpeg = await resolveFfmpeg();

t.test('a rendered walk counts the same with detection threads as without', async (t) => {
  if (!ffmpeg.available) {
    t.plan(0, `ffmpeg unavailable to render and decode the walk: ${ffmpeg.reason}`);
    return;
  }
  // A fast walker, then a slow one (two clips of one walk; the pace carries over): adaptive sampling
  // turns fast in the first and back in the second, so frames announced at one pace are not all
  // taken at the other, and some are taken that were not announced.
  const dir = t.testdir();
  const fast = await renderWalk({ out: dir, name: 'fast', seconds: 4, fps: 15, width: W, height: H, speed: 0.6, seed: 12 });
  const slow = await renderWalk({ out: dir, name: 'slow', seconds: 4, fps: 15, width: W, height: H, speed: 0.3, seed: 13 });
  const clips = [fast.files[0]!, slow.files[0]!];
  const options: WalkOptions = { conf: 0.5, sampleSeconds: 0.5, fastSampleSeconds: 0.25, maxFrames: 240 };
  const score = (detector: Detector) => scoreWalk({ clips, detector, decode: decodeFrames as WalkDecoder, options, probe: probeMedia });
  const inTurn = await score(createBuiltinDetector());
  const detector = createBuiltinDetector({ threads: 2 });
  t.teardown(() => detector.close?.());
  const threaded = await score(detector);
  t.ok(inTurn.counts.total > 20, `${inTurn.counts.total} fruit counted`);
  t.same(threaded, inTurn, 'the same result: frames, fruit, tracks, counts');
  const s = detector.aheadStats!;
  t.ok(s.used >= threaded.frames.length - 6, `${s.used} of ${threaded.frames.length} frames detected on the threads`);
  t.ok(s.discarded >= 1, `frames announced at the fast pace and not taken at the slow one were discarded (${s.discarded})`);
});
