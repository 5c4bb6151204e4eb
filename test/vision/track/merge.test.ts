// Merging counted tracks that are one fruit seen twice (src/vision/track/merge.ts), on tracks
// built by hand: a row of fruit seen by a camera moving 40 px a frame to the right, so every
// fruit moves 40 px left a frame.
import t from 'tap';
import type { Box, Ripeness } from '../../../src/vision/types.js';
import { containment, mergeDuplicateTracks, summariseFruit, type Track } from '../../../src/vision/track/index.js';
import { scoreWalk, type WalkDecoder } from '../../../src/vision/walk.js';
import type { Detection, Detector } from '../../../src/vision/types.js';

const STEP = -40;

/** A fruit of size s at x (in frame `from`), y, seen in frames from..to (except `skip`), moving with the camera. */
function fruitTrack(
  id: number,
  o: { x: number; y: number; s: number; from: number; to: number; skip?: number[]; r?: Ripeness; score?: number; dx?: number; dy?: number },
): Track {
  const obs = [];
  for (let f = o.from; f <= o.to; f++) {
    if (o.skip?.includes(f)) continue;
    const cx = o.x + (f - o.from) * STEP + (o.dx ?? 0),
      cy = o.y + (o.dy ?? 0);
    const box: Box = [cx - o.s / 2, cy - o.s / 2, cx + o.s / 2, cy + o.s / 2];
    obs.push({ frame: f, box, score: o.score ?? 0.8, ripeness: o.r ?? 'red', atEdge: false });
  }
  return { key: 1000 + id, id, state: 'removed', box: obs[obs.length - 1]!.box, hits: obs.length, misses: 0, observations: obs };
}

/** Six fruit seen in 8 frames each: the walk's typical lifetime is 8 observations. */
function background(): Track[] {
  return [0, 1, 2, 3, 4, 5].map((k) => fruitTrack(101 + k, { x: 400 + (k % 3) * 60, y: 60 + k * 45, s: 30, from: k, to: k + 7 }));
}

const ids = (tracks: Track[]) => tracks.map((x) => x.id);

t.test('containment is the share of the smaller box inside the other', async (t) => {
  t.equal(containment([0, 0, 10, 10], [-5, -5, 20, 20]), 1);
  t.equal(containment([0, 0, 10, 10], [5, 0, 15, 10]), 0.5);
  t.equal(containment([0, 0, 10, 10], [10, 0, 20, 10]), 0, 'boxes that only touch');
});

t.test('a second circle inside a fruit for two frames is merged into it', async (t) => {
  const fruit = fruitTrack(1, { x: 300, y: 200, s: 40, from: 0, to: 7, r: 'turning', score: 0.7 });
  // A smaller circle on the fruit's lower right, seen in frames 3 and 4.
  const second = fruitTrack(2, { x: 300, y: 200, s: 24, from: 3, to: 4, dx: 3 * STEP + 6, dy: 6, r: 'red', score: 0.6 });
  const tracks = [fruit, second, ...background()];
  const before = JSON.stringify(tracks);
  const r = mergeDuplicateTracks(tracks);
  t.equal(r.tracks.length, tracks.length - 1, 'one fruit fewer');
  t.same(r.merges, [{ into: 1, absorbed: 2, reason: 'inside' }]);
  t.notOk(ids(r.tracks).includes(2), 'the duplicate id is gone; the fruit keeps its own');
  const merged = r.tracks.find((x) => x.id === 1)!;
  t.equal(merged.observations.length, 10, "both tracks' observations");
  const f = summariseFruit(merged, 1);
  t.equal(f.frames, 8, 'frames seen count each frame once');
  t.same(f.votes, { green: 0, turning: 5.6, red: 1.2 }, 'the ripeness vote is over both');
  t.equal(f.ripeness, 'turning');
  t.equal(f.diameter_mm, 40, "the size is the kept track's in a frame both saw");
  t.equal(JSON.stringify(tracks), before, 'the tracks given are not changed');
});

t.test('a track that continues another where it breaks off is merged into it', async (t) => {
  const fruit = fruitTrack(1, { x: 500, y: 200, s: 36, from: 0, to: 7, skip: [5, 6, 7] }); // seen in 0..4
  // The same fruit found again in frames 6 and 7 (a missed frame between), a few px off.
  const again = fruitTrack(2, { x: 500, y: 200, s: 34, from: 6, to: 7, dx: 6 * STEP + 4, dy: -3 });
  const r = mergeDuplicateTracks([fruit, again, ...background()]);
  t.same(r.merges, [{ into: 1, absorbed: 2, reason: 'continues' }]);
  const merged = r.tracks.find((x) => x.id === 1)!;
  t.same(
    merged.observations.map((o) => o.frame),
    [0, 1, 2, 3, 4, 6, 7],
  );
  t.equal(summariseFruit(merged).last_frame, 7);
});

t.test('touching and overlapping neighbour fruit are not merged', async (t) => {
  // A truss: a fruit seen all along and its neighbours, each seen in only two or three frames
  // (half hidden the rest of the time), so all of them are short enough to be merged if the
  // rule let them.
  const big = fruitTrack(1, { x: 300, y: 200, s: 40, from: 0, to: 7 });
  const right = fruitTrack(2, { x: 336, y: 200, s: 40, from: 2, to: 3, dx: 2 * STEP }); // touching on the right
  const below = fruitTrack(3, { x: 320, y: 232, s: 36, from: 4, to: 6, dx: 4 * STEP }); // half behind, below right
  const behind = fruitTrack(4, { x: 290, y: 172, s: 30, from: 1, to: 2, dx: STEP }); // peeking out above left
  const tracks = [big, right, below, behind, ...background()];
  for (const [a, b] of [
    [big, right],
    [big, below],
    [big, behind],
  ] as const) {
    const f = b.observations[0]!.frame;
    const c = containment(a.observations.find((o) => o.frame === f)!.box, b.observations[0]!.box);
    t.ok(c > 0 && c < 0.5, `neighbour ${b.id} overlaps the fruit's box by ${c.toFixed(2)} (boxes of touching fruit do overlap)`);
  }
  const r = mergeDuplicateTracks(tracks);
  t.same(r.merges, [], 'nothing merged');
  t.equal(r.tracks.length, tracks.length, 'every fruit counted');
});

t.test('two short tracks one mostly behind the other are two fruit', async (t) => {
  // At the start of the walk two fruit hang one behind the other (the nearer hides half of
  // the farther); both leave the view after three frames, so both tracks are short.
  const front = fruitTrack(1, { x: 190, y: 135, s: 31, from: 0, to: 2 });
  const back = fruitTrack(2, { x: 201, y: 137, s: 34, from: 0, to: 2 });
  t.ok(containment(front.observations[0]!.box, back.observations[0]!.box) > 0.6, "their boxes overlap as much as a second circle's");
  t.same(mergeDuplicateTracks([front, back, ...background()]).merges, [], 'not merged: neither is a fruit seen throughout');
});

t.test('the next fruit along the row is not a continuation', async (t) => {
  // Fruit 1 leaves the view after frame 3; its neighbour one fruit-width further along the row
  // is first seen in frame 4 (it was hidden by a leaf): close in time, one fruit away in space.
  const first = fruitTrack(1, { x: 200, y: 200, s: 36, from: 0, to: 3 });
  const next = fruitTrack(2, { x: 200 + 40, y: 200, s: 36, from: 4, to: 5, dx: 4 * STEP });
  const r = mergeDuplicateTracks([first, next, ...background()]);
  t.same(r.merges, [], 'one box size away is another fruit');
  // The same two one third of a box apart would be one fruit.
  const near = fruitTrack(2, { x: 200 + 12, y: 200, s: 36, from: 4, to: 5, dx: 4 * STEP });
  t.equal(mergeDuplicateTracks([first, near, ...background()]).merges.length, 1);
});

t.test("nothing is merged when the walk's fruit are seen only a few times", async (t) => {
  // Walking fast: every fruit is seen about four times, so a track seen twice may well be a
  // fruit of its own (and a duplicate cannot be told from it by its life).
  const fast = [0, 1, 2, 3, 4, 5].map((k) => fruitTrack(101 + k, { x: 400, y: 60 + k * 45, s: 30, from: k, to: k + 3 }));
  const fruit = fruitTrack(1, { x: 300, y: 200, s: 40, from: 0, to: 3 });
  const second = fruitTrack(2, { x: 300, y: 200, s: 24, from: 1, to: 2, dx: STEP + 6, dy: 6 });
  const r = mergeDuplicateTracks([fruit, second, ...fast]);
  t.same(r.merges, []);
  t.same(
    mergeDuplicateTracks([fruit, second, ...fast], { shortFraction: 0.5 }).merges,
    [{ into: 1, absorbed: 2, reason: 'inside' }],
    'the lifetime gate is what kept it',
  );
});

t.test('a short track merged into a short track follows it into the long one', async (t) => {
  const fruit = fruitTrack(1, { x: 500, y: 200, s: 36, from: 0, to: 4 });
  const again = fruitTrack(2, { x: 500, y: 200, s: 36, from: 6, to: 7, dx: 6 * STEP }); // continues 1
  const third = fruitTrack(3, { x: 500, y: 200, s: 36, from: 9, to: 10, dx: 9 * STEP + 3 }); // continues 2
  const r = mergeDuplicateTracks([fruit, again, third, ...background()]);
  t.same(r.merges.map((m) => [m.absorbed, m.into]).sort(), [
    [2, 1],
    [3, 1],
  ]);
  t.same(
    r.tracks.find((x) => x.id === 1)!.observations.map((o) => o.frame),
    [0, 1, 2, 3, 4, 6, 7, 9, 10],
  );
});

t.test('a photo (one frame) and a single track are left alone', async (t) => {
  const a = fruitTrack(1, { x: 100, y: 100, s: 40, from: 0, to: 0 });
  const b = fruitTrack(2, { x: 104, y: 104, s: 24, from: 0, to: 0 });
  t.same(mergeDuplicateTracks([a, b]).merges, [], "a photo's fruit are each seen once: none is short against the others");
  t.same(mergeDuplicateTracks([a]).tracks, [a]);
  t.same(mergeDuplicateTracks([]).tracks, []);
});

t.test('scoreWalk counts a fruit with a second circle once, and merge: false counts it twice', async (t) => {
  // Eight fruit in a row, camera moving 40 px a frame; fruit 3 has a second circle in frames 4 and 5.
  const W = 640,
    H = 360;
  const frames = 16;
  const dets = (f: number): Detection[] => {
    const out: Detection[] = [];
    for (let k = 0; k < 8; k++) {
      const cx = 660 + k * 70 - f * 40,
        cy = 80 + (k % 4) * 60,
        s = 34;
      if (cx - s / 2 < 0 || cx + s / 2 > W) continue;
      out.push({ kind: 'fruit', box: [cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2], score: 0.8, ripeness: 'red' });
      if (k === 3 && (f === 10 || f === 11))
        out.push({ kind: 'fruit', box: [cx - 6, cy - 6, cx + 14, cy + 14], score: 0.6, ripeness: 'red' });
    }
    return out;
  };
  const run = async (merge?: false) => {
    let f = 0;
    // The detector is scripted, but the frames still pass the scene check (quality.ts): they carry
    // camera-like noise, as a real frame does, so none is taken for a test pattern.
    const noise = new Uint8Array(W * H * 3);
    let seed = 7;
    for (let i = 0; i < noise.length; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      noise[i] = 40 + (seed >>> 24) / 2;
    }
    const decode: WalkDecoder = async function* () {
      for (let i = 0; i < frames; i++) yield { index: i, timeSeconds: i / 2, image: { width: W, height: H, data: noise } };
    };
    const detector: Detector = {
      info: { name: 'hand', kind: 'builtin', stems: { supported: false, reason: 'no' }, plants: { supported: false, reason: 'no' } },
      async detect() {
        return dets(f++);
      },
    };
    return scoreWalk({
      clips: ['walk'],
      detector,
      decode,
      options: { conf: 0.5, sampleSeconds: 0.5, maxFrames: 100, ...(merge === false ? { merge } : {}) },
    });
  };
  const off = await run(false);
  t.equal(off.counts.total, 9, 'without merging the second circle is a fruit of its own');
  const on = await run();
  t.equal(on.counts.total, 8, 'merged: eight fruit');
  const second = off.fruit.find((x) => x.best_box[2] - x.best_box[0] === 20)!;
  t.ok(second, "the second circle's track");
  t.same(
    on.fruit.map((x) => x.track_id),
    off.fruit.map((x) => x.track_id).filter((id) => id !== second.track_id),
    "the fruit keep their ids; the duplicate's is gone",
  );
  t.same(
    on.fruit.map((x) => x.frames),
    off.fruit.filter((x) => x !== second).map((x) => x.frames),
    'and their frames',
  );
});
