// The training pipeline end to end on a handful of images, as CI runs it: one short epoch fine-tuning the
// shipped model, the ONNX export with its manifest, the export loaded by onnxruntime-node through the box's
// own model detector, and a frame scored. Skips, saying why, where the training stack cannot be had.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeImage } from '../../src/vision/media/index.js';
import { loadModelDetector, readManifest, sha256File } from '../../src/vision/onnx/index.js';
import { renderedDataset, runPython, shippedManifest, trainingStackMissing } from './helpers.js';

const missing = trainingStackMissing();
if (missing) {
  t.comment(`skipped: ${missing}`);
  t.pass('training stack not available here');
} else {
  const dir = t.testdir();
  const data = path.join(dir, 'data');
  const images = await renderedDataset(data, 4);
  const shipped = shippedManifest();
  const shippedOnnx = path.join(path.dirname(shipped), (await readManifest(shipped)).file);

  t.test("the dataset reader's own tests: hostile labels and zips (training/test_data.py)", async (t) => {
    const out = await runPython(['-m', 'unittest', '-v', 'training/test_data.py'], 120_000);
    t.match(out, /Ran \d+ tests/);
    t.match(out, /\nOK\s*$/, 'every one passes');
  });

  t.test("the threshold setter's own tests: both places written, the graph untouched (training/test_set_conf.py)", async (t) => {
    const out = await runPython(['-m', 'unittest', '-v', 'training/test_set_conf.py'], 120_000);
    t.match(out, /Ran \d+ tests/);
    t.match(out, /\nOK\s*$/, 'every one passes');
  });

  t.test('one short epoch from the shipped model, exported, loaded by the box and scoring a frame', async (t) => {
    const out = path.join(dir, 'smoke');
    const log = await runPython(
      [
        'training/train.py',
        '--init',
        shippedOnnx,
        '--data',
        data,
        '--epochs',
        '1',
        '--tiles',
        '8',
        '--batch',
        '4',
        '--size',
        '256',
        '--input',
        '256,448',
        '--threads',
        '2',
        '--out',
        path.join(dir, 'run'),
        '--export',
        out,
      ],
      300_000,
    );
    t.match(log, /"epoch": 1/, 'one epoch ran');
    t.match(log, /exported .*smoke\.json/);

    const manifest = await readManifest(`${out}.json`);
    t.equal(manifest.name, 'smoke');
    t.equal(manifest.sha256, await sha256File(`${out}.onnx`), "the manifest's checksum is the file's");
    t.same(manifest.input, { width: 448, height: 256 });
    t.same(
      manifest.classes.map((c) => [c.name, c.maps_to]),
      [
        ['green', 'green'],
        ['turning', 'turning'],
        ['red', 'red'],
      ],
    );
    const inherited = (await readManifest(shipped)).conf;
    t.same(manifest.conf, inherited, "with no tuning set, the shipped model's thresholds carry over");

    const det = await loadModelDetector(`${out}.json`);
    t.teardown(() => det.close());
    t.equal(det.info.kind, 'onnx');
    const frame = await decodeImage(images[0]!);
    const found = await det.detect(frame, { conf: 0.05 });
    t.ok(Array.isArray(found), `scored a frame: ${found.length} detections at conf 0.05`);
    t.ok(
      found.every(
        (d) =>
          d.kind === 'fruit' &&
          d.box[0] >= 0 &&
          d.box[2] <= frame.width &&
          d.box[1] >= 0 &&
          d.box[3] <= frame.height &&
          d.box[2] > d.box[0],
      ),
      'every detection a fruit, inside the frame',
    );
    // The shipped model's weights were read back from its ONNX file: after a short epoch at a small rate
    // it still finds fruit on a rendered photo it was never trained on.
    const shippedDet = await loadModelDetector(shipped);
    t.teardown(() => shippedDet.close());
    const before = await shippedDet.detect(frame, { conf: manifest.conf?.photo ?? 0.4 });
    const after = await det.detect(frame, { conf: manifest.conf?.photo ?? 0.4 });
    t.ok(before.length > 0, `the shipped model finds ${before.length} fruit`);
    t.ok(after.length > 0, `the fine-tuned one ${after.length}`);
    t.ok(readFileSync(`${out}.onnx`).length < 20 * 1024 * 1024, 'under 20 MB');
  });
}
