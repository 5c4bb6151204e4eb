import t from 'tap';
import { renderWalk } from '../../../scripts/render/walk.js';
import { readAllFrames } from '../../../scripts/render/ffmpeg.js';
import { analyseFrame, detectFruit, litFullFor, type Candidate } from '../../../src/vision/builtin/detector.js';
import { DEFAULT_PARAMS, SMALL_FRUIT_PARAMS } from '../../../src/vision/builtin/params.js';
import { resolveFfmpeg } from '../../../src/vision/media/index.js';
import { iou } from '../../../src/vision/track/box.js';
import type { RgbImage } from '../../../src/vision/types.js';
import { lowScoreFor } from '../../../src/vision/walk.js';

// A green circle's lit evidence (its skin lit above its surroundings) is read against the frame's own
// green circles in small-fruit frames: soft, dim light lights every fruit of a frame less, and a fixed
// bound then scores green fruit under conf (docs/builtin-detector.md, "The lit bound read against the frame").
const SMALL = { ...DEFAULT_PARAMS, ...DEFAULT_PARAMS.smallFruit };

function cand(source: 'ripe' | 'green', relativeL: number): Candidate {
  return {
    circle: {
      method: 'inscribed',
      cx: 0,
      cy: 0,
      r: 10,
      explained: 0.9,
      rim: 0.3,
      blob: 1,
      claimed: 300,
      minX: 0,
      minY: 0,
      maxX: 20,
      maxY: 20,
    },
    source,
    score: 0,
    hue: source === 'green' ? 115 : 30,
    measured: { hue: 0, chroma: 30, texture: 2, relativeL },
  };
}
const greens = (values: number[]) => values.map((v) => cand('green', v));

t.test('close-up frames keep the fixed bound', async (t) => {
  t.equal(DEFAULT_PARAMS.litRefFactor, 0);
  t.equal(litFullFor(greens([2, 3, 4, 5, 6, 7, 8, 9]), DEFAULT_PARAMS), 15);
});

t.test('small-fruit frames read it against their green circles', async (t) => {
  t.ok(SMALL.litRefFactor > 0);
  // Studio-lit fruit: the quantile is high and the bound stays at 15.
  t.equal(litFullFor(greens([5, 18, 20, 21, 22, 24, 26, 30]), SMALL), 15);
  // Softly lit fruit: 0.75 quantile of [4, 8, 10, 11, 12, 13, 14, 16] is 13, times 0.7.
  t.equal(litFullFor(greens([16, 4, 13, 8, 11, 10, 14, 12]), SMALL), 13 * SMALL.litRefFactor);
  // Never under 8, whatever the frame: clutter must not get full lit evidence for nothing.
  t.equal(litFullFor(greens([0, 1, 1, 2, 2, 3, 3, 4]), SMALL), 8);
  // Ripe circles do not count, and too few green ones leave the bound fixed.
  t.equal(litFullFor([...greens([4, 5, 6]), ...Array.from({ length: 8 }, () => cand('ripe', 2))], SMALL), 15);
});

// The same rendered scene under both lights (scripts/render: the same fruit, where they were).
// Under the renderer's steep studio light every fruit is lit far above its surroundings, the frame's
// bound stays at 15 and nothing moves; under soft greenhouse light the bound falls, so green
// fruit score higher and more are found, and no box scores lower.
t.test('on a rendered row, soft light raises green fruit to conf and studio light changes nothing', async (t) => {
  const ffmpeg = await resolveFfmpeg();
  if (!ffmpeg.available) {
    t.plan(0, `ffmpeg unavailable to render and decode the row: ${ffmpeg.reason}`);
    return;
  }
  const FIXED = { ...DEFAULT_PARAMS, smallFruit: { ...SMALL_FRUIT_PARAMS, litRefFactor: 0 } };
  const LOW = lowScoreFor(0.5);
  const dir = t.testdir();
  const options = { seconds: 2, fps: 15, width: 640, height: 360, speed: 0.3, seed: 26, out: dir };
  const found = { fixed: 0, relative: 0, greens: 0 };
  let raised = 0;
  for (const lighting of ['studio', 'greenhouse'] as const) {
    const walk = await renderWalk({ ...options, name: lighting, lighting });
    let k = 0;
    for await (const data of readAllFrames(walk.files[0]!, 640, 360)) {
      const frame = k++;
      if (frame % 8 !== 7) continue;
      const image: RgbImage = { width: 640, height: 360, data };
      t.equal(analyseFrame(image).smallFruit, true, `${lighting} frame ${frame} is a small-fruit frame`);
      // What a walk asks the detector for: everything from its low score up.
      const relative = detectFruit(image, LOW, DEFAULT_PARAMS);
      const fixed = detectFruit(image, LOW, FIXED);
      if (lighting === 'studio') {
        t.same(relative, fixed, `studio frame ${frame}: the same detections, scores and all`);
        continue;
      }
      for (const d of relative) {
        const same = fixed.find((f) => f.box.every((v, i) => v === d.box[i]));
        if (!same) continue;
        t.ok(d.score >= same.score, `greenhouse frame ${frame}: ${d.box.map(Math.round).join(',')} scores ${d.score} ≥ ${same.score}`);
        if (d.score > same.score) raised++;
      }
      const greens = walk.truth.fruit.flatMap((f) => {
        const seen = f.appearances.find((a) => a.frame === frame);
        return f.ripeness === 'green' && seen && seen.visible >= 0.95 ? [seen.box] : [];
      });
      const confidentOn = (dets: typeof relative) => greens.filter((b) => dets.some((d) => d.score >= 0.5 && iou(d.box, b) >= 0.3)).length;
      found.greens += greens.length;
      found.relative += confidentOn(relative);
      found.fixed += confidentOn(fixed);
    }
  }
  t.ok(raised >= 10, `${raised} greenhouse boxes score higher`);
  t.ok(
    found.relative >= found.fixed,
    `green fruit wholly in view found at conf 0.5: ${found.relative} against ${found.fixed} with the fixed bound, of ${found.greens}`,
  );
});
