// The tracker on synthetic detection streams: a static row of objects seen by a camera moving sideways.
import t from 'tap';
import type { Box, Ripeness } from '../../../src/vision/types.js';
import {
  BoxKalman,
  diameterMm,
  estimateShift,
  matchByIou,
  summariseFruit,
  Tracker,
  voteRipeness,
  type Track,
  type TrackDetection,
} from '../../../src/vision/track/index.js';

const W = 640,
  H = 360;

/** World objects at fixed x, y; the camera's left edge is at camX pixels. */
function view(objects: { x: number; y: number; s: number }[], camX: number, score = 0.9): TrackDetection[] {
  return objects
    .map((o) => ({ box: [o.x - camX - o.s / 2, o.y - o.s / 2, o.x - camX + o.s / 2, o.y + o.s / 2] as Box, score }))
    .filter((d) => d.box[0] >= 0 && d.box[2] <= W);
}

function row(n: number, seed = 1): { x: number; y: number; s: number }[] {
  let a = seed;
  const rnd = () => (a = (a * 16807) % 2147483647) / 2147483647;
  const out = [];
  for (let i = 0; i < n; i++) out.push({ x: 40 + i * 37 + rnd() * 10, y: 40 + rnd() * 280, s: 24 + rnd() * 10 });
  return out;
}

t.test('Kalman box follows a constant velocity', async (t) => {
  const kf = new BoxKalman([0, 0, 20, 20], 0, 0);
  for (let k = 1; k <= 8; k++) {
    kf.predict();
    kf.update([k * 10, 5, k * 10 + 20, 25]);
  }
  const next = kf.predict();
  t.ok(Math.abs(next[0] - 90) < 3, `predicted x1 ${next[0].toFixed(1)} near 90`);
  t.ok(Math.abs(next[1] - 5) < 2);
});

t.test('IoU matching gives each box to its largest overlap', async (t) => {
  const m = matchByIou(
    [
      [0, 0, 10, 10],
      [8, 0, 18, 10],
    ],
    [
      [7, 0, 17, 10],
      [1, 0, 11, 10],
      [100, 100, 110, 110],
    ],
    0.2,
  );
  t.same(m.pairs.sort(), [
    [0, 1],
    [1, 0],
  ]);
  t.same(m.unmatchedDetections, [2]);
  t.same(m.unmatchedTracks, []);
});

t.test('the camera shift is found although it is larger than the boxes', async (t) => {
  const objs = row(14);
  const before = view(objs, 0).map((d) => d.box);
  const after = view(objs, -130).map((d) => [d.box[0], d.box[1] + 4, d.box[2], d.box[3] + 4] as Box); // moved right by 130, down by 4
  after.splice(3, 1); // one missed
  after.push([500, 20, 530, 50]); // one false positive
  const est = estimateShift(before, after, { minIou: 0.25, maxShift: 400 });
  t.ok(Math.abs(est.dx - 130) < 1 && Math.abs(est.dy - 4) < 1, `shift ${est.dx.toFixed(1)}, ${est.dy.toFixed(1)}`);
  t.ok(est.support >= 9, `support ${est.support}`);
  t.same(estimateShift([], after, { minIou: 0.25, maxShift: 400 }), { dx: 0, dy: 0, support: 0 });
});

t.test('each object of a row is counted once while the camera walks faster than a box width per frame', async (t) => {
  const objs = row(60);
  for (const step of [10, 45, 120]) {
    const tr = new Tracker({ highScore: 0.5 });
    let frames = 0;
    for (let cam = -W; cam < 60 * 37 + 100; cam += step) tr.update(view(objs, cam), { frame: frames++, width: W, height: H });
    const counted = tr.finish();
    t.equal(counted.length, 60, `step ${step}px: ${counted.length} of 60 counted`);
    t.same(
      counted.map((c) => c.id),
      Array.from({ length: 60 }, (_, i) => i + 1),
      'ids are 1..N in counting order',
    );
  }
  // Without motion compensation a fast camera breaks every track.
  const tr = new Tracker({ highScore: 0.5, motionCompensation: false });
  let frames = 0;
  for (let cam = -W; cam < 60 * 37 + 100; cam += 120) tr.update(view(objs, cam), { frame: frames++, width: W, height: H });
  t.not(tr.finish().length, 60, 'no compensation, no single count');
});

t.test('a walker who stops, hurries and steps back still counts each object once', async (t) => {
  const objs = row(60);
  const steps = [45, 45, 0, 0, 0, 130, 130, -40, 20, 90, 160, 10, 60];
  const tr = new Tracker({ highScore: 0.5 });
  let frames = 0;
  for (let cam = -W, k = 0; cam < 60 * 37 + 100; cam += steps[k++ % steps.length]!)
    tr.update(view(objs, cam), { frame: frames++, width: W, height: H });
  t.equal(tr.finish().length, 60);
});

t.test('confirmation, loss and removal', async (t) => {
  const geo = (frame: number) => ({ frame, width: W, height: H });
  const a: Box = [100, 100, 130, 130];
  const tr = new Tracker({ minHits: 3, maxAge: 2, tentativeMaxAge: 0 });
  let s = tr.update([{ box: a, score: 0.9 }], geo(0));
  t.equal(s.tracks[0]!.state, 'tentative');
  s = tr.update([{ box: a, score: 0.9 }], geo(1));
  t.equal(s.tracks[0]!.id, null, 'not yet counted after 2 of 3 hits');
  s = tr.update([{ box: a, score: 0.9 }], geo(2));
  t.equal(s.confirmed.length, 1);
  t.equal(s.tracks[0]!.id, 1);
  s = tr.update([], geo(3));
  t.equal(s.tracks[0]!.state, 'lost');
  s = tr.update([{ box: a, score: 0.9 }], geo(4));
  t.equal(s.tracks[0]!.state, 'confirmed', 'found again within max age: same fruit');
  t.equal(s.confirmed.length, 0, 'and not counted again');
  tr.update([], geo(5));
  tr.update([], geo(6));
  s = tr.update([], geo(7));
  t.equal(s.tracks.length, 0, 'removed after max age');
  // A flicker seen once in a video is never counted.
  tr.update([{ box: [300, 50, 320, 70], score: 0.9 }], geo(8));
  tr.update([], geo(9));
  t.equal(tr.finish().length, 1);
});

t.test('a single-frame walk (a photo) counts every detection', async (t) => {
  const tr = new Tracker();
  tr.update(view(row(10), 0), { frame: 0, width: W, height: H });
  t.equal(tr.finish().length, 10);
});

t.test('low-score detections extend tracks but never start one (ByteTrack)', async (t) => {
  const geo = (frame: number) => ({ frame, width: W, height: H });
  const tr = new Tracker({ highScore: 0.5, lowScore: 0.1, tentativeMaxAge: 0 });
  tr.update(
    [
      { box: [100, 100, 130, 130], score: 0.9 },
      { box: [300, 100, 330, 130], score: 0.3 },
    ],
    geo(0),
  );
  const s = tr.update(
    [
      { box: [101, 100, 131, 130], score: 0.3 },
      { box: [300, 100, 330, 130], score: 0.3 },
    ],
    geo(1),
  );
  t.equal(s.tracks.length, 1, 'only the confident detection started a track');
  t.equal(s.tracks[0]!.hits, 2, 'and a low-score one extended it');
  t.same(s.assigned, [s.tracks[0]!.key, -1]);
});

t.test('a fruit that left the view is the same fruit when the walker steps back', async (t) => {
  const tr = new Tracker({ maxAge: 3 });
  let frame = 0;
  const obj = [
    { x: 500, y: 100, s: 30 },
    { x: 400, y: 100, s: 30 },
    { x: 200, y: 200, s: 30 },
    { x: 300, y: 300, s: 30 },
  ];
  for (const cam of [0, -60, -120, -180, -240]) tr.update(view(obj, cam), { frame: frame++, width: W, height: H });
  // x=500 (counted) left on the right for two frames; stepping back brings it in again
  for (const cam of [-120, -60, 0]) tr.update(view(obj, cam), { frame: frame++, width: W, height: H });
  t.equal(tr.finish().length, 4);
  // Left for good: dropped after maxAge frames.
  const tr2 = new Tracker({ maxAge: 3 });
  frame = 0;
  let s;
  for (let cam = 0; cam >= -900; cam -= 60) s = tr2.update(view(obj, cam), { frame: frame++, width: W, height: H });
  t.equal(s!.tracks.length, 0, 'tracks that walked out of view are dropped after maxAge');
});

function trackOf(obs: { r: Ripeness; score: number; box?: Box; atEdge?: boolean }[]): Track {
  return {
    key: 1,
    id: 7,
    state: 'confirmed',
    box: [0, 0, 1, 1],
    hits: obs.length,
    misses: 0,
    observations: obs.map((o, i) => ({
      frame: i + 3,
      box: o.box ?? [10, 10, 40, 40],
      score: o.score,
      ripeness: o.r,
      atEdge: o.atEdge ?? false,
    })),
  };
}

t.test('ripeness is the score-weighted vote along the track', async (t) => {
  const tr = trackOf([
    { r: 'turning', score: 0.9 },
    { r: 'red', score: 0.6 },
    { r: 'red', score: 0.6 },
    { r: 'red', score: 0.6 },
    { r: 'red', score: 0.6 },
  ]);
  const v = voteRipeness(tr);
  t.equal(v.ripeness, 'red', 'turning in one frame and red in four is red');
  t.same(v.votes, { green: 0, turning: 0.9, red: 2.4 });
  t.equal(
    voteRipeness(
      trackOf([
        { r: 'green', score: 0.95 },
        { r: 'turning', score: 0.3 },
        { r: 'turning', score: 0.3 },
      ]),
    ).ripeness,
    'green',
    'one confident look outweighs two doubtful ones',
  );
  t.equal(
    voteRipeness(
      trackOf([
        { r: 'green', score: 0.5 },
        { r: 'turning', score: 0.5 },
      ]),
    ).ripeness,
    'turning',
    'a tie goes to the riper class',
  );
});

t.test('a counted fruit reports its track and its size in mm', async (t) => {
  const tr = trackOf([
    { r: 'red', score: 0.7, box: [0, 10, 12, 40], atEdge: true }, // cut by the frame edge: ignored for size
    { r: 'red', score: 0.9, box: [10, 10, 40, 40] },
    { r: 'red', score: 0.8, box: [10, 10, 42, 42] },
    { r: 'red', score: 0.6, box: [10, 10, 38, 39] },
  ]);
  t.equal(diameterMm(tr, 2), 60, 'median min-side 30 px × 2 mm');
  t.equal(diameterMm(tr, undefined), null);
  const f = summariseFruit(tr, 2);
  t.match(f, {
    track_id: 7,
    ripeness: 'red',
    first_frame: 3,
    last_frame: 6,
    frames: 4,
    best_box: [10, 10, 40, 40],
    best_frame: 4,
    score: 0.9,
    diameter_mm: 60,
  });
});
