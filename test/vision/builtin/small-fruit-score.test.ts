import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderStill } from '../../../scripts/render/walk.js';
import { analyseFrame, circleEvidence, detectFruit, throughKnots } from '../../../src/vision/builtin/detector.js';
import { fittedFruitScore, SMALL_FRUIT_SCORE_WEIGHTS } from '../../../src/vision/builtin/fruit-score.js';
import { DEFAULT_PARAMS, SMALL_FRUIT_PARAMS } from '../../../src/vision/builtin/params.js';
import { iou } from '../../../src/vision/track/box.js';
import { decodeImage, resolveFfmpeg } from '../../../src/vision/media/index.js';

// Small-fruit frames scored by the logistic model fitted for them (smallFruitScore 'fitted',
// SMALL_FRUIT_SCORE_WEIGHTS) read through params.smallFruitScoreKnots. Not the default: it counts
// real fruit at walk sizes worse (docs/builtin-detector.md, "The fitted score of small-fruit frames").
const FITTED = { ...DEFAULT_PARAMS, smallFruitScore: 'fitted' as const };

t.test('the knots map is piecewise linear through (0, 0), each knot and (1, 1), and monotone', async (t) => {
  const knots = DEFAULT_PARAMS.smallFruitScoreKnots;
  t.equal(throughKnots(0, knots), 0);
  t.equal(throughKnots(1, knots), 1);
  for (const [raw, score] of knots) t.ok(Math.abs(throughKnots(raw, knots) - score) < 1e-12, `${raw} reads ${score}`);
  t.ok(Math.abs(throughKnots(0.82, knots) - 0.5) < 1e-12, 'where the tuning walks balance reads the video conf');
  // Half-way between two knots is half-way between their scores.
  const [[x0, y0], [x1, y1]] = knots as [[number, number], [number, number]];
  t.ok(Math.abs(throughKnots((x0 + x1) / 2, knots) - (y0 + y1) / 2) < 1e-12);
  let last = -1;
  for (let raw = 0; raw <= 1; raw += 0.01) {
    const s = throughKnots(raw, knots);
    t.ok(s >= last, `monotone at ${raw.toFixed(2)}`);
    last = s;
  }
  t.equal(throughKnots(0.5, [[0.5, 0.8]]), 0.8, 'other knots');
  t.equal(throughKnots(0.75, [[0.5, 0.8]]), 0.9);
});

t.test('with smallFruitScore fitted, a walk frame of small fruit scores its circles by the fitted small-fruit model', async (t) => {
  const ffmpeg = await resolveFfmpeg();
  if (!ffmpeg.available) {
    t.plan(0, `ffmpeg unavailable to decode the rendered frame: ${ffmpeg.reason}`);
    return;
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-small-score-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { jpeg, truth } = await renderStill({ seed: 5, width: 640, height: 360 });
  writeFileSync(path.join(dir, 'row.jpg'), jpeg);
  const image = await decodeImage(path.join(dir, 'row.jpg'));

  t.notOk(analyseFrame(image).fitted, 'by default the hand-weighted score');
  const frame = analyseFrame(image, FITTED);
  t.equal(frame.smallFruit, true, 'a row filmed from the path is a small-fruit frame');
  t.equal(frame.fitted, true, 'scored by the fitted model');

  const small = { ...DEFAULT_PARAMS, ...SMALL_FRUIT_PARAMS };
  const circles = circleEvidence(image, FITTED);
  const dets = detectFruit(image, 0, FITTED);
  t.ok(dets.length > 20, `detections (${dets.length})`);
  for (const d of dets) {
    const c = circles.find((k) => k.box.every((v, i) => v === d.box[i]));
    if (!c) {
      t.fail(`no circle with the box ${d.box.join(',')}`);
      continue;
    }
    const expected =
      Math.round(throughKnots(fittedFruitScore(c.evidence, small, SMALL_FRUIT_SCORE_WEIGHTS), DEFAULT_PARAMS.smallFruitScoreKnots) * 1000) /
      1000;
    t.equal(d.score, expected, `score of ${d.box.map(Math.round).join(',')}`);
  }

  // It finds the frame's fruit: of those at least half in view, most are covered at the video conf,
  // and few of its detections lie on no fruit (a hidden one is neither).
  const fruit = truth.fruit.filter((f) => f.visible >= 0.5).map((f) => f.box);
  const confident = detectFruit(image, 0.5, FITTED);
  const covered = fruit.filter((b) => confident.some((d) => iou(b, d.box) >= 0.3)).length;
  const onNone = confident.filter((d) => !truth.fruit.some((f) => iou(f.box, d.box) >= 0.3)).length;
  t.ok(covered >= 0.8 * fruit.length, `${covered} of ${fruit.length} fruit found`);
  t.ok(onNone <= 0.1 * confident.length, `${onNone} of ${confident.length} detections on no fruit`);
});
