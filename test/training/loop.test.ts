// The learning loop end to end on a small rendered walk: the box scores it with the shipped model, staff
// correct it, an admin exports the reviewed frames, training/ fine-tunes the shipped model on the export for
// one epoch and writes a new model into MODELS_DIR, the box restarts and loads it, and a walk scored again
// records the new model. Skips, saying why, where the training stack cannot be had.
import t from 'tap';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderWalk } from '../../scripts/render/walk.js';
import { readManifest, sha256File } from '../../src/vision/onnx/index.js';
import { createTree, startServer } from '../helpers/server.js';
import { unzip } from '../helpers/unzip.js';
import { poll, upload } from '../helpers/walks.js';
import { runPython, shippedManifest, trainingStackMissing } from './helpers.js';

const missing = trainingStackMissing();
if (missing) {
  t.comment(`skipped: ${missing}`);
  t.pass('training stack not available here');
} else {
  const dir = t.testdir();
  const modelsDir = path.join(dir, 'models');
  mkdirSync(modelsDir);
  const shipped = shippedManifest();
  const shippedInfo = await readManifest(shipped);
  copyFileSync(shipped, path.join(modelsDir, path.basename(shipped)));
  copyFileSync(path.join(path.dirname(shipped), shippedInfo.file), path.join(modelsDir, shippedInfo.file));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-loop-'));
  t.teardown(() => import('node:fs').then((fs) => fs.rmSync(dataDir, { recursive: true, force: true })));
  const walk = await renderWalk({ out: path.join(dir, 'walk'), seconds: 4, fps: 10, width: 480, height: 270, speed: 0.3, seed: 7 });
  const CLIP = walk.files[0]!;
  const config = { modelsDir, detector: 'auto', dataDir };

  t.test('score, correct, export, fine-tune one epoch, restart, score again', async (t) => {
    // 1. Scored by the shipped model, which the walk records.
    const first = await startServer(t, config);
    const tree = await createTree(first);
    const health = (await first.request('GET', '/api/health')).body.checks.scoring.detector;
    t.match(health, { setting: 'auto', runs: shippedInfo.name, kind: 'onnx', model: { sha256: shippedInfo.sha256 } });
    const up = await upload(first, `${tree.cyclePath}/videos`, tree.adminKey, [{ field: 'file', file: CLIP }], { week: '2026-W10' });
    t.equal(up.status, 201);
    const scored = (await poll(first, up.body.job_id, tree.adminKey)).at(-1);
    t.equal(scored.status, 'done', scored.error ?? '');
    t.match(scored.result.detector, {
      kind: 'onnx',
      name: shippedInfo.name,
      model: { manifest: path.basename(shipped), sha256: shippedInfo.sha256 },
      conf: shippedInfo.conf?.video,
    });
    t.equal(scored.options.conf, shippedInfo.conf?.video, "no conf given: the model's own video threshold");
    t.ok(scored.result.fruit.length >= 2, `the model counted ${scored.result.fruit.length} fruit`);

    // 2. Corrected: a fruit removed, a ripeness changed, a missed fruit added with its box.
    const base = `/api/organizations/${tree.orgId}/walks/${scored.job_id}/corrections`;
    const [a, b] = scored.result.fruit;
    const post = (body: unknown) => first.request('POST', base, { key: tree.adminKey, body });
    t.equal((await post({ kind: 'remove', track_id: a.track_id })).status, 201);
    t.equal((await post({ kind: 'ripeness', track_id: b.track_id, ripeness: b.ripeness === 'red' ? 'green' : 'red' })).status, 201);
    t.equal((await post({ kind: 'add', frame_id: 0, ripeness: 'red', box: [200, 100, 240, 140] })).status, 201);

    // 3. Exported.
    const res = await fetch(`${first.base}/api/organizations/${tree.orgId}/training-data?greenhouse_id=${tree.greenhouseId}`, {
      headers: { 'x-api-key': tree.adminKey },
    });
    t.equal(res.status, 200);
    const zip = Buffer.from(await res.arrayBuffer());
    const index = JSON.parse(unzip(zip).get('index.json')!.toString());
    t.equal(index.counts.walks, 1);
    t.equal(index.images.length, scored.result.frames.length, 'every frame of the walk');
    t.match(index.walks[0].detector, { kind: 'onnx', sha256: shippedInfo.sha256 }, 'provenance: the model that scored it');
    const zipFile = path.join(dir, 'export.zip');
    writeFileSync(zipFile, zip);
    await first.close();

    // 4. Fine-tuned for one short epoch on the export (the zip as downloaded), written into MODELS_DIR.
    const out = path.join(modelsDir, 'cropwalk-tomato-loop');
    const log = await runPython(
      [
        'training/train.py',
        '--init',
        path.join(modelsDir, shippedInfo.file),
        '--data',
        zipFile,
        '--epochs',
        '1',
        '--tiles',
        '8',
        '--batch',
        '4',
        '--size',
        '256',
        '--threads',
        '2',
        '--out',
        path.join(dir, 'run'),
        '--export',
        out,
      ],
      300_000,
    );
    t.match(log, /exported/);
    const tuned = await readManifest(`${out}.json`);
    t.equal(tuned.sha256, await sha256File(`${out}.onnx`));
    t.not(tuned.sha256, shippedInfo.sha256, 'new weights');
    t.same(tuned.input, shippedInfo.input, "the shipped model's input size");
    t.ok(Date.parse(tuned.created!) > Date.parse(shippedInfo.created ?? '1970-01-01'), 'newer than the shipped model');

    // 5. Restarted: DETECTOR=auto loads the newest model in MODELS_DIR, and a new walk records it.
    const second = await startServer(t, config);
    const after = (await second.request('GET', '/api/health')).body.checks.scoring.detector;
    t.match(after, {
      setting: 'auto',
      runs: 'cropwalk-tomato-loop',
      model: { manifest: 'cropwalk-tomato-loop.json', sha256: tuned.sha256 },
    });
    const again = await upload(second, `${tree.cyclePath}/videos`, tree.adminKey, [{ field: 'file', file: CLIP }], { week: '2026-W11' });
    t.equal(again.status, 201, again.text);
    const rescored = (await poll(second, again.body.job_id, tree.adminKey)).at(-1);
    t.equal(rescored.status, 'done', rescored.error ?? '');
    t.match(rescored.result.detector, { kind: 'onnx', name: 'cropwalk-tomato-loop', model: { sha256: tuned.sha256 } });
    t.equal(rescored.options.conf, tuned.conf?.video, "the new model's thresholds (inherited from the shipped one)");
    t.ok(rescored.counts.total >= 0, `the new model counted ${rescored.counts.total}`);
  });
}
