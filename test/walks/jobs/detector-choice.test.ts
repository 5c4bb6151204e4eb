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

function install(dir: string, name: string, tamper = false, extra: { created?: string; conf?: { photo: number; video: number } } = {}) {
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
    JSON.stringify({ name, file: `${name}.onnx`, sha256, input: { width: 64, height: 64 }, classes: CLASSES, ...extra }),
  );
  return sha256;
}

async function score(s: TestServer, key: string, mode: string, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.append('mode', mode);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
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

t.test('DETECTOR=auto: the newest usable model in MODELS_DIR, read at start; a tampered newer one is passed over', async (t) => {
  const dir = t.testdir();
  install(dir, 'older', false, { created: '2026-01-01T00:00:00Z' });
  const newest = install(dir, 'newer', false, { created: '2026-02-01T00:00:00Z' });
  install(dir, 'newest-but-tampered', true, { created: '2026-03-01T00:00:00Z' });
  writeFileSync(path.join(dir, 'notes.json'), '{"not": "a manifest"}');
  const s = await startServer(t, { modelsDir: dir, detector: 'auto' });
  const { adminKey } = await createOrg(s);
  const health = (await s.request('GET', '/api/health')).body.checks.scoring.detector;
  t.match(health, { setting: 'auto', runs: 'newer', kind: 'onnx', available: true, model: { manifest: 'newer.json', sha256: newest } });
  t.match(health.passed_over, [/newest-but-tampered\.json: .*SHA-256/, /notes\.json: .*invalid/]);

  const w = await score(s, adminKey, 'auto');
  t.equal(w.body.status, 'done', w.body.error ?? '');
  t.match(w.body.result.detector, {
    kind: 'onnx',
    name: 'newer',
    model: { manifest: 'newer.json', sha256: newest, created: '2026-02-01T00:00:00Z' },
  });

  // A model dropped in while the box runs is not taken until it restarts: a walk never changes model midway.
  install(dir, 'dropped-in', false, { created: '2026-04-01T00:00:00Z' });
  t.equal((await s.request('GET', '/api/health')).body.checks.scoring.detector.runs, 'newer', 'still the model read at start');
  const again = await score(s, adminKey, 'auto');
  t.equal(again.body.result.detector.name, 'newer');
  await s.close();
  const restarted = await startServer(t, { modelsDir: dir, detector: 'auto' });
  t.equal((await restarted.request('GET', '/api/health')).body.checks.scoring.detector.runs, 'dropped-in', 'taken on restart');
});

t.test('DETECTOR=auto with no usable model: the built-in detector, the reason in health, mode model refused', async (t) => {
  const dir = t.testdir();
  install(dir, 'tampered', true);
  const s = await startServer(t, { modelsDir: dir, detector: 'auto' });
  const { adminKey } = await createOrg(s);
  const health = (await s.request('GET', '/api/health')).body.checks.scoring.detector;
  t.match(health, {
    setting: 'auto',
    runs: 'builtin-colour',
    kind: 'builtin',
    available: true,
    reason: /no usable model manifest.*tampered\.json/,
  });
  const w = await score(s, adminKey, 'auto');
  t.equal(w.body.result.detector.kind, 'builtin');
  t.equal(w.body.result.detector.model, null);
  const refused = await score(s, adminKey, 'model');
  t.equal(refused.status, 422);
  t.match(refused.body.errors, [{ name: 'mode', message: /DETECTOR=auto found no model/ }]);
  const empty = await startServer(t, { modelsDir: t.testdir(), detector: 'auto' });
  t.match((await empty.request('GET', '/api/health')).body.checks.scoring.detector, {
    runs: 'builtin-colour',
    reason: /no model manifest in MODELS_DIR/,
  });
});

t.test("a model's own thresholds: used when the upload names no conf, recorded with the walk", async (t) => {
  const dir = t.testdir();
  // The tiny model's fruit scores 0.92: at the manifest's photo threshold 0.95 it is not counted.
  install(dir, 'strict', false, { conf: { photo: 0.95, video: 0.97 } });
  const s = await startServer(t, { modelsDir: dir, detector: 'strict.json' });
  const { adminKey } = await createOrg(s);
  const own = await score(s, adminKey, 'auto');
  t.equal(own.body.status, 'done');
  t.equal(own.body.options.conf, 0.95, "the manifest's photo threshold");
  t.equal(own.body.result.detector.conf, 0.95);
  t.match(own.body.result.detector.model, { conf: { photo: 0.95, video: 0.97 } });
  t.equal(own.body.counts.total, 0, 'the 0.92 fruit is below it');
  const given = await score(s, adminKey, 'auto', { conf: '0.5' });
  t.equal(given.body.options.conf, 0.5, 'a conf in the request wins');
  t.equal(given.body.result.detector.conf, 0.5);
  t.equal(given.body.counts.total, 1);
  const builtin = await score(s, adminKey, 'builtin');
  t.equal(builtin.body.options.conf, 0.35, "the built-in detector's own photo default when it runs");
});
