// The adaptive sampler: which decoded frames are scored, and when the pace turns fast.
import t from 'tap';
import { AdaptiveSampler, cameraShare } from '../../src/vision/sampling.js';

/** Frame times a sampler takes from a decoder reading every 0.25 s, given the camera share per 0.5 s after each scored frame. */
function run(sampler: AdaptiveSampler, seconds: number, shareAt: (t: number) => number | null, width = 640, height = 360): number[] {
  const taken: number[] = [];
  for (let i = 0; i * 0.25 < seconds; i++) {
    const time = i * 0.25;
    if (!sampler.take(time)) continue;
    const before = taken.at(-1);
    taken.push(time);
    if (before === undefined) continue;
    const share = shareAt(time);
    const dt = time - before;
    // The tracker measures pixels between the two scored frames: share × width per 0.5 s, scaled to dt.
    sampler.observe(share === null ? null : [share * width * (dt / 0.5), 0], dt, width, height);
  }
  return taken;
}

t.test('at a walking pace a frame every regular interval is scored', async (t) => {
  const s = new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 0.25 });
  t.same(
    run(s, 4, () => 0.125),
    [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5],
    'a slow walk (an eighth of the frame per 0.5 s) stays at 0.5 s',
  );
  t.equal(s.fast, false);
});

t.test('a fast walker is sampled at the fast interval from the frame the pace is measured on', async (t) => {
  const s = new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 0.25 });
  t.same(
    run(s, 2.5, () => 0.25),
    [0, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25],
  );
  t.equal(s.fast, true);
});

t.test('the pace follows the walker, with hysteresis', async (t) => {
  // Fast for the first 2 s, then slow: back to 0.5 s.
  const s = new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 0.25 });
  t.same(
    run(s, 4, (time) => (time <= 2 ? 0.3 : 0.1)),
    [0, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.75, 3.25, 3.75],
  );
  // Just under the threshold does not end fast sampling (0.15 ≥ 0.8 × 1/6), nor start it.
  const h = new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 0.25 });
  t.same(
    run(h, 3, (time) => (time <= 1 ? 0.2 : 0.15)),
    [0, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75],
  );
  const slow = new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 0.25 });
  t.same(
    run(slow, 2, () => 0.16),
    [0, 0.5, 1, 1.5],
    '0.16 of the frame is not fast',
  );
});

t.test('an unmeasured step keeps the pace; a new clip restarts the times', async (t) => {
  const s = new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 0.25 });
  t.same(
    run(s, 2, (time) => (time === 0.5 ? 0.3 : null)),
    [0, 0.5, 0.75, 1, 1.25, 1.5, 1.75],
  );
  s.startClip();
  t.ok(s.take(0), 'the first frame of the next clip is scored');
  t.ok(s.take(0.25), 'and the walker is still fast there');
  const slow = new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 0.25 });
  t.ok(slow.take(3));
  slow.startClip();
  t.ok(slow.take(0), 'times start again at 0 in a new clip');
  t.notOk(slow.take(0.25));
});

t.test('decoder times a little off the grid still give one frame per regular interval', async (t) => {
  const s = new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 0.25 });
  const taken = [0, 0.26, 0.49, 0.74, 1.01, 1.24, 1.49, 1.74].filter((x) => s.take(x));
  t.same(taken, [0, 0.49, 1.01, 1.49]);
});

t.test('cameraShare: the larger share along either axis, per regular interval', async (t) => {
  t.equal(cameraShare([64, 0], 0.5, 640, 360, 0.5), 0.1);
  t.equal(cameraShare([32, 0], 0.25, 640, 360, 0.5), 0.1, 'half the motion in half the time');
  t.equal(cameraShare([-10, 72], 0.5, 640, 360, 0.5), 0.2, 'a portrait-like vertical pan counts against the height');
  t.throws(() => new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 1 }), RangeError);
  t.throws(() => new AdaptiveSampler({ regularSeconds: 0.5, fastSeconds: 0 }), RangeError);
});
