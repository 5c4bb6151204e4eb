// The ONNX model detector against small models built by the test, run by the real onnxruntime-node.
import t from 'tap';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  createSession,
  letterbox,
  listModelManifests,
  loadModelDetector,
  providerCandidates,
  type ModelManifest,
} from '../../../src/vision/onnx/index.js';
import type { Detection, RgbImage } from '../../../src/vision/types.js';
import { buildYoloTestModel, type TestModelSpec } from '../../helpers/onnx-model.js';

// A 128×64 image: red on the left half, green added on the bottom half.
function testImage(): RgbImage {
  const w = 128,
    h = 64;
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      data[(y * w + x) * 3] = x < 64 ? 255 : 0;
      data[(y * w + x) * 3 + 1] = y >= 32 ? 255 : 0;
    }
  return { width: w, height: h, data };
}

// Into a 64×64 input it is scaled by 0.5 to 64×32 and centred: 16 grey rows above and below.
const CLASSES: ModelManifest['classes'] = [
  { name: 'unripe', maps_to: 'green' },
  { name: 'ripe', maps_to: 'red' },
  { name: 'stem', maps_to: 'stem' },
  { name: 'leaf', maps_to: 'ignore' },
  { name: 'half', maps_to: 'turning' },
];
//          a0    a1    a2    a3    a4    a5    a6    a7
const BASE = [
  [20, 21, 20, 48, 40, 10, 30, 50], // cx
  [32, 32, 32, 32, 40, 40, 40, 40], // cy
  [10, 10, 10, 4, 8, 8, 16, 6], // w
  [10, 10, 10, 30, 8, 8, 16, 6], // h
  [0.9, 0.8, 0, 0, 0, 0.3, 0, 0], // unripe
  [0, 0, 0.85, 0, 0, 0, 0, 0], // ripe
  [0, 0, 0, 0.7, 0, 0, 0, 0], // stem
  [0, 0, 0, 0, 0.95, 0, 0, 0], // leaf
  [0, 0, 0, 0, 0, 0, 0, 0], // half
];
const SPEC: TestModelSpec = {
  inputWidth: 64,
  inputHeight: 64,
  base: BASE,
  probes: [
    // a6 "half" score = mean red inside the image's left half (input rows 18..30 are image rows 4..28): 1.0
    { channel: 0, x0: 4, y0: 18, x1: 28, y1: 30, row: 8, anchor: 6 },
    // a6 cx += 10 × mean green of input rows 34..46 (image rows 36..60, bottom half): 1.0 when the image sits where it should
    { channel: 1, x0: 40, y0: 34, x1: 60, y1: 46, row: 0, anchor: 6, gain: 10 },
    // a7 "unripe" score = mean green of input rows 0..12: the top padding, 114/255
    { channel: 1, x0: 0, y0: 0, x1: 64, y1: 12, row: 4, anchor: 7 },
  ],
};

async function install(dir: string, name: string, spec: TestModelSpec, manifest: Partial<ModelManifest> = {}): Promise<string> {
  const bytes = buildYoloTestModel(spec);
  await writeFile(path.join(dir, `${name}.onnx`), bytes);
  const m: ModelManifest = {
    name,
    file: `${name}.onnx`,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    input: { width: spec.inputWidth, height: spec.inputHeight },
    classes: CLASSES,
    ...manifest,
  };
  const p = path.join(dir, `${name}.json`);
  await writeFile(p, JSON.stringify(m));
  return p;
}

const rounded = (d: Detection[]) =>
  d.map((x) => ({ ...x, box: x.box.map((v) => Math.round(v * 1000) / 1000), score: Math.round(x.score * 1e4) / 1e4 }));

// Image-pixel boxes: model box minus padding (0, 16), divided by the scale 0.5.
const EXPECTED_05 = [
  { kind: 'fruit', ripeness: 'turning', score: 1, box: [64, 32, 96, 64] }, // a6: cx 30 + 10 → 40 → 80 px
  { kind: 'fruit', ripeness: 'green', score: 0.9, box: [30, 22, 50, 42] }, // a0 (a1 suppressed by NMS; so is a2, the same box as red: one fruit)
  { kind: 'stem', score: 0.7, box: [92, 2, 100, 62] }, // a3
];

t.test('decoding, letterbox, class mapping, threshold and NMS against a real session', async (t) => {
  const dir = t.testdir();
  const det = await loadModelDetector(await install(dir, 'cf', SPEC));
  t.teardown(() => det.close());
  t.equal(det.executionProvider, 'cpu');
  t.same(det.info, {
    name: 'cf',
    kind: 'onnx',
    stems: { supported: true },
    plants: { supported: false, reason: 'the model cf has no class mapped to plant in cf.json' },
  });
  t.same(rounded(await det.detect(testImage(), { conf: 0.5 })), EXPECTED_05);
  // Lower the threshold: a7 appears with a score equal to the padding grey.
  const low = await det.detect(testImage(), { conf: 0.4 });
  const a7 = low.find((d) => d.box[0] > 93 && d.box[0] < 95);
  t.ok(a7 && Math.abs(a7.score - 114 / 255) < 1e-4, `padding read as ${a7?.score} (114/255 = ${(114 / 255).toFixed(4)})`);
  t.equal(low.filter((d) => d.ripeness === 'green').length, 2, 'a5 at 0.3 is still below 0.4');
});

t.test('the transposed [1, N, 4 + nc] output gives the same detections', async (t) => {
  const det = await loadModelDetector(await install(t.testdir(), 'tr', { ...SPEC, layout: 'anchors-first' }));
  t.teardown(() => det.close());
  t.same(rounded(await det.detect(testImage(), { conf: 0.5 })), EXPECTED_05);
});

t.test('a rectangular input (an export at imgsz=[h, w]) is letterboxed by its own width and height', async (t) => {
  // 128×64 into 128 × 80: scale 1, no side padding, 8 grey rows above and below.
  const spec: TestModelSpec = {
    inputWidth: 128,
    inputHeight: 80,
    base: [
      [40, 100],
      [40, 6],
      [10, 8],
      [10, 8],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ],
    probes: [
      // a0 "ripe" = mean red of input rows 8..40, columns 0..64: the image's top-left quarter, all red.
      { channel: 0, x0: 0, y0: 8, x1: 64, y1: 40, row: 5, anchor: 0 },
      // a1 "unripe" = mean green of input rows 0..8: the top padding, 114/255.
      { channel: 1, x0: 0, y0: 0, x1: 128, y1: 8, row: 4, anchor: 1 },
    ],
  };
  const det = await loadModelDetector(await install(t.testdir(), 'rect', spec));
  t.teardown(() => det.close());
  t.same(rounded(await det.detect(testImage(), { conf: 0.4 })), [
    { kind: 'fruit', ripeness: 'red', score: 1, box: [35, 27, 45, 37] }, // model (35..45, 35..45) less 8 rows of padding
    { kind: 'fruit', ripeness: 'green', score: Math.round((114 / 255) * 1e4) / 1e4, box: [96, 0, 104, 2] }, // model rows 2..10, mostly in the top band: clipped to the image
  ]);
});

t.test('NMS IoU is configurable', async (t) => {
  const det = await loadModelDetector(await install(t.testdir(), 'nms', SPEC), { iou: 0.9 });
  t.teardown(() => det.close());
  const d = await det.detect(testImage(), { conf: 0.5 });
  t.equal(d.filter((x) => x.ripeness === 'green').length, 2, 'a1 overlaps a0 by IoU 0.82, kept at threshold 0.9');
  t.equal(d.filter((x) => x.ripeness === 'red').length, 0, 'a2 is the box of a0 (IoU 1): suppressed at any threshold below 1');
});

t.test('ripeness classes suppress one another; other classes only themselves', async (t) => {
  // a0 green 0.9 and a2 red 0.85 share one box: one fruit, kept once as its better class. a1, overlapping a0
  // by IoU 0.82, is made a stem here: another object, so it stays.
  const base = BASE.map((row) => [...row]);
  base[4]![1] = 0; // a1 no longer unripe...
  base[6]![1] = 0.8; // ...but a stem
  const det = await loadModelDetector(await install(t.testdir(), 'groups', { ...SPEC, base }));
  t.teardown(() => det.close());
  const d = rounded(await det.detect(testImage(), { conf: 0.5 }));
  t.same(
    d.filter((x) => x.box[0] < 40).map((x) => [x.kind, x.ripeness ?? null, x.score, x.box]),
    [
      ['fruit', 'green', 0.9, [30, 22, 50, 42]],
      ['stem', null, 0.8, [32, 22, 52, 42]],
    ],
  );
});

t.test("a model whose checksum is not the manifest's is refused", async (t) => {
  const dir = t.testdir();
  const p = await install(dir, 'bad', SPEC, { sha256: 'a'.repeat(64) });
  await t.rejects(loadModelDetector(p), { code: 'checksum_mismatch', message: /SHA-256 [0-9a-f]{64}.*expects a{64}/ });
  await writeFile(
    path.join(dir, 'gone.json'),
    JSON.stringify({ name: 'gone', file: 'gone.onnx', sha256: 'b'.repeat(64), input: { width: 64, height: 64 }, classes: CLASSES }),
  );
  await t.rejects(loadModelDetector(path.join(dir, 'gone.json')), { code: 'model_missing' });
  await writeFile(
    path.join(dir, 'escape.json'),
    JSON.stringify({ name: 'x', file: '../x.onnx', sha256: 'b'.repeat(64), input: { width: 64, height: 64 }, classes: CLASSES }),
  );
  await t.rejects(loadModelDetector(path.join(dir, 'escape.json')), { code: 'manifest_invalid' });
});

t.test('an unexpected output shape is a clear error', async (t) => {
  const dir = t.testdir();
  const d4 = await loadModelDetector(await install(dir, 'rank4', { ...SPEC, reshapeOutput: [1, 9, 8, 1] }));
  t.teardown(() => d4.close());
  await t.rejects(d4.detect(testImage(), { conf: 0.5 }), {
    code: 'model_output_unexpected',
    message: /shape \[1, 9, 8, 1\].*5 classes gives \[1, 9, N\] or \[1, N, 9\]/,
  });
  const fewer = await loadModelDetector(await install(dir, 'fewer', SPEC, { classes: CLASSES.slice(0, 3) }));
  t.teardown(() => fewer.close());
  await t.rejects(fewer.detect(testImage(), { conf: 0.5 }), {
    code: 'model_output_unexpected',
    message: /\[1, 9, 8\].*3 classes gives \[1, 7, N\]/,
  });
});

t.test('manifests in a folder are listed, broken ones with their reason', async (t) => {
  const dir = t.testdir({ 'notes.txt': 'x', 'broken.json': '{"name": 1}' });
  await install(dir, 'good', SPEC);
  const list = await listModelManifests(dir);
  t.same(
    list.map((l) => [path.basename(l.path), l.manifest?.name ?? null, !!l.error]),
    [
      ['broken.json', null, true],
      ['good.json', 'good', false],
    ],
  );
  t.match(list[0]!.error, /invalid: .*name/);
  t.same(await listModelManifests(path.join(dir, 'none')), []);
});

t.test('execution providers: CPU here, GPU providers tried first when asked and skipped with a reason', async (t) => {
  t.same(providerCandidates({}), ['cpu'], 'no CUDA/TensorRT libraries ship with the npm package');
  t.same(providerCandidates({ CROPWALK_ONNX_PROVIDERS: 'cuda' }), ['cuda', 'cpu']);
  const s = await createSession(buildYoloTestModel(SPEC), ['cuda', 'cpu']);
  t.teardown(() => s.session.release());
  t.equal(s.provider, 'cpu');
  t.equal(s.skipped[0]?.provider, 'cuda');
  t.match(s.skipped[0]?.reason, /Cuda|CUDA|cuda/);
});

t.test('letterbox keeps the aspect ratio and pads both sides with 114', async (t) => {
  const img: RgbImage = { width: 20, height: 40, data: new Uint8Array(20 * 40 * 3).fill(200) };
  const lb = letterbox(img, 32, 32);
  t.same([lb.scale, lb.padX, lb.padY], [0.8, 8, 0]);
  const at = (c: number, x: number, y: number) => lb.tensor[c * 32 * 32 + y * 32 + x]!;
  t.equal(at(0, 0, 10), Math.fround(114 / 255));
  t.equal(at(2, 31, 10), Math.fround(114 / 255));
  t.ok(Math.abs(at(1, 8, 10) - 200 / 255) < 1e-6 && Math.abs(at(1, 23, 31) - 200 / 255) < 1e-6);
  t.equal(at(0, 24, 10), Math.fround(114 / 255));
});
