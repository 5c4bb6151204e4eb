// The YOLOv8n-sized graph that bench/scoring-model.ts times: built with 80 classes it must have
// YOLOv8n's published size, or the bench's figure is not what a trained YOLOv8n costs; and it must
// load and run through the model detector like an Ultralytics export.
import t from 'tap';
import * as ort from 'onnxruntime-node';
import { loadModelDetector } from '../../../src/vision/onnx/index.js';
import type { RgbImage } from '../../../src/vision/types.js';
import { buildYoloSizedModel, installYoloSized } from '../../helpers/onnx-yolo-sized.js';

t.test('with 80 classes it has the published sizes of YOLOv8n and YOLOv8s (Ultralytics, fused, at 640)', async (t) => {
  const n = buildYoloSizedModel({ classes: 80 });
  t.equal(n.parameters, 3_151_904, 'YOLOv8n parameters');
  t.equal(((2 * n.macs) / 1e9).toFixed(1), '8.7', 'YOLOv8n GFLOPs');
  t.equal(n.anchors, 8400, '80² + 40² + 20² anchors');
  const s = buildYoloSizedModel({ classes: 80, scale: 's' });
  t.equal(s.parameters, 11_156_544, 'YOLOv8s parameters');
  t.equal(((2 * s.macs) / 1e9).toFixed(1), '28.6', 'YOLOv8s GFLOPs');
});

t.test('the head is the export layout [1, 4 + nc, N] and the model detector runs it', async (t) => {
  const m = buildYoloSizedModel({ classes: 3, size: 320 });
  t.equal(m.anchors, 40 * 40 + 20 * 20 + 10 * 10);
  const session = await ort.InferenceSession.create(m.bytes);
  t.teardown(() => session.release());
  const out = (await session.run({ images: new ort.Tensor('float32', new Float32Array(3 * 320 * 320).fill(0.5), [1, 3, 320, 320]) }))
    .output0!;
  t.same(out.dims, [1, 7, m.anchors]);
  const data = out.data as Float32Array;
  const scores = data.subarray(4 * m.anchors);
  t.ok(
    scores.every((s) => s > 0 && s < 0.5),
    'class scores are sigmoids, low with the initial biases: no detection above conf',
  );
  // Box widths: the DFL's expected distance (0..15 bins) on both sides, times the stride (8 at the finest scale).
  const w0 = data[2 * m.anchors]!;
  t.ok(w0 > 0 && w0 <= 2 * 15 * 8, `first anchor's width ${w0} is within 2 × 15 × stride`);

  const detector = await loadModelDetector(installYoloSized(t.testdir(), 'sized', m));
  t.teardown(() => detector.close?.());
  const image: RgbImage = { width: 640, height: 360, data: new Uint8Array(640 * 360 * 3).fill(128) };
  t.same(await detector.detect(image, { conf: 0.5 }), [], 'runs a frame end to end; random weights find nothing');
});

t.test('a rectangular export (imgsz=[h, w]) costs its share of the square and runs through the model detector', async (t) => {
  const square = buildYoloSizedModel({ classes: 3, size: 320 });
  const rect = buildYoloSizedModel({ classes: 3, size: 320, height: 192 });
  t.equal(rect.anchors, 40 * 24 + 20 * 12 + 10 * 6);
  t.equal(rect.parameters, square.parameters, 'the same weights');
  t.equal(rect.macs / square.macs, 192 / 320, 'compute in proportion to the input area');
  const detector = await loadModelDetector(installYoloSized(t.testdir(), 'rect', rect));
  t.teardown(() => detector.close?.());
  const image: RgbImage = { width: 640, height: 360, data: new Uint8Array(640 * 360 * 3).fill(128) };
  t.same(await detector.detect(image, { conf: 0.5 }), [], 'a 16:9 frame letterboxed into 320 × 192 runs end to end');
});

t.test('a size that is not a multiple of 32 is refused', async (t) => {
  t.throws(() => buildYoloSizedModel({ classes: 3, size: 300 }), RangeError);
  t.throws(() => buildYoloSizedModel({ classes: 3, size: 320, height: 200 }), RangeError);
});
