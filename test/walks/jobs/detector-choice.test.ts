import t from 'tap';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildYoloTestModel } from '../../helpers/onnx-model.js';
import { startServer, createOrg, type TestServer } from '../../helpers/server.js';

/**
 * The model detector chosen by configuration (MODELS_DIR + DETECTOR), end to
 * end through the service: a small ONNX model the test builds, with known
 * predictions, scored by the real onnxruntime in the real worker.
 */
const PHOTO = fileURLToPath(new URL('../../../examples/row-mixed.jpg', import.meta.url));
const CLASSES = [
  { name: 'unripe', maps_to: 'green' },
  { name: 'half', maps_to: 'turning' },
  { name: 'ripe', maps_to: 'red' },
  { name: 'stem', maps_to: 'stem' },
];

function install(dir: string, name: string, tamper = false) {
  // Two anchors in a 64x64 input: a confident ripe fruit and a confident stem; rows are cx, cy, w, h, then class scores.
  const bytes = buildYoloTestModel({
    inputWidth: 64,
    inputHeight: 64,
    base: [
      [20, 40],
      [24, 30],
      [10, 6],
      [10, 40],
      [0.01, 0.01],
      [0.02, 0.01],
      [0.92, 0.01],
      [0.01, 0.88],
    ],
  });
  writeFileSync(path.join(dir, `${name}.onnx`), bytes);
  const sha256 = tamper ? 'c'.repeat(64) : createHash('sha256').update(bytes).digest('hex');
  writeFileSync(
    path.join(dir, `${name}.json`),
    JSON.stringify({ name, file: `${name}.onnx`, sha256, input: { width: 64, height: 64 }, classes: CLASSES }),
  );
}

async function score(s: TestServer, key: string, mode: string) {
  const form = new FormData();
  form.append('mode', mode);
  form.append('file', new Blob([readFileSync(PHOTO)]), 'row.jpg');
  const r = await s.request('POST', '/api/observations', { key, raw: form });
  if (r.status !== 202) return r;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const w = await s.request('GET', `/api/observations/${r.body.job_id}`, { key });
    if (w.body.status === 'done' || w.body.status === 'failed') return w;
    if (Date.now() > deadline) throw new Error(`walk ${r.body.job_id} still ${w.body.status} after 120 s`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

t.test('DETECTOR names a manifest in MODELS_DIR: the walk is scored by the model', async (t) => {
  const dir = t.testdir();
  install(dir, 'tiny-yolo');
  const s = await startServer(t, { modelsDir: dir, detector: 'tiny-yolo.json' });
  const { adminKey } = await createOrg(s);

  const health = await s.request('GET', '/api/health');
  t.equal(health.body.checks.scoring.detector.runs, 'tiny-yolo', 'health says which detector runs');

  const w = await score(s, adminKey, 'auto');
  t.equal(w.body.status, 'done', w.body.error ?? '');
  t.equal(w.body.result.detector.kind, 'onnx');
  t.equal(w.body.result.detector.name, 'tiny-yolo');
  t.same(w.body.counts, { green: 0, turning: 0, red: 1, total: 1 }, 'the one confident fruit, mapped to red');
  t.equal(w.body.result.stems.count, 1, 'the stem class is counted, since the model has one');
  t.equal(w.body.result.fruit[0].ripeness, 'red');

  const builtin = await score(s, adminKey, 'builtin');
  t.equal(builtin.body.result.detector.kind, 'builtin', 'mode=builtin ignores the configured model');
  const again = await score(s, adminKey, 'model');
  t.equal(again.body.status, 'done', 'a second model walk in the same process (onnxruntime loads once per process)');
  t.equal(again.body.result.detector.kind, 'onnx');
});

t.test('a model that fails its checksum: auto falls back with the reason, model fails the walk with it', async (t) => {
  const dir = t.testdir();
  install(dir, 'tampered', true);
  const s = await startServer(t, { modelsDir: dir, detector: 'tampered.json' });
  const { adminKey } = await createOrg(s);
  const auto = await score(s, adminKey, 'auto');
  t.equal(auto.body.status, 'done');
  t.equal(auto.body.result.detector.kind, 'builtin');
  t.match(auto.body.result.detector.fallback_reason, /sha|checksum/i);
  const model = await score(s, adminKey, 'model');
  t.equal(model.body.status, 'failed', 'mode=model insists on the model: the walk fails');
  t.match(model.body.error, /sha|checksum/i, 'with the reason');
});
