// The training export (GET {org}/training-data): a rendered walk scored, corrected in every way a
// person corrects one, and exported as a YOLO dataset; each label checked against the boxes the worker
// kept for the frame and the corrections, each refusal a problem+json.
import t from 'tap';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { renderWalk } from '../../../scripts/render/walk.js';
import { poll, upload } from '../../helpers/walks.js';
import { createTree, startServer } from '../../helpers/server.js';
import { unzip } from '../../helpers/unzip.js';
import { framesDir, frameFileName } from '../../../src/walks/jobs/storage.js';
import { readFrameBoxes } from '../../../src/walks/jobs/frame-boxes.js';

const dir = t.testdir();
const walk = await renderWalk({ out: path.join(dir, 'walk'), seconds: 4, fps: 10, width: 480, height: 270, speed: 0.3, seed: 5 });
const CLIP = walk.files[0]!;

const s = await startServer(t);
const tree = await createTree(s, { timeZone: 'Pacific/Auckland' });
const other = await createTree(s);
const KEY = tree.adminKey;
const ORG = `/api/organizations/${tree.orgId}`;

async function exportZip(query = '', key = KEY) {
  const res = await fetch(`${s.base}${ORG}/training-data${query}`, { headers: { 'x-api-key': key } });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, json: () => JSON.parse(body.toString('utf8')) };
}

const up = await upload(s, `${tree.cyclePath}/videos`, KEY, [{ field: 'file', file: CLIP }], { week: '2026-W10' });
const JOB = up.body.job_id as string;
const scored = (await poll(s, JOB, KEY)).at(-1);
// A second walk, scored and never corrected: not reviewed, so not exported.
const up2 = await upload(s, `${tree.cyclePath}/videos`, KEY, [{ field: 'file', file: CLIP }], { week: '2026-W11' });
await poll(s, up2.body.job_id, KEY);
const corrections = `${ORG}/walks/${JOB}/corrections`;

t.test('the worker keeps every frame’s fruit boxes with the counted fruit each belongs to', async (t) => {
  t.equal(scored.status, 'done');
  const boxes = await readFrameBoxes(framesDir(s.dataDir, JOB));
  t.ok(boxes, 'frames/boxes.json is written');
  t.equal(boxes!.length, scored.result.frames.length, 'one entry per scored frame');
  const counted = new Set<number>(scored.result.fruit.map((f: any) => f.track_id as number));
  const ids = new Set(boxes!.flatMap((b) => b.fruit.map((d) => d.track_id)).filter((id) => id !== null));
  t.ok(
    [...ids].every((id) => counted.has(id)),
    'every track id in the boxes is a counted fruit',
  );
  t.ok(
    [...counted].every((id) => ids.has(id)),
    'every counted fruit has boxes',
  );
});

t.test('before any correction the export holds no walk', async (t) => {
  const r = await exportZip();
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/zip');
  t.match(r.headers.get('content-disposition'), /^attachment; filename="cropwalk-training-\d{4}-\d{2}-\d{2}\.zip"$/);
  const files = unzip(r.body);
  t.same([...files.keys()].sort(), ['classes.txt', 'index.json']);
  t.equal(files.get('classes.txt')!.toString(), 'green\nturning\nred\n');
  const index = JSON.parse(files.get('index.json')!.toString());
  t.match(index, { format: 'yolo', classes: ['green', 'turning', 'red'], organization_id: tree.orgId, counts: { walks: 0, images: 0 } });
});

t.test('a corrected walk: every frame, boxes as corrected, provenance in index.json', async (t) => {
  const fruit = scored.result.fruit as any[];
  t.ok(fruit.length >= 4, `${fruit.length} fruit`);
  const changed = fruit.find((f) => f.ripeness !== 'red')!;
  const removed = fruit.find((f) => f.track_id !== changed.track_id)!;
  const frames = scored.result.frames as any[];
  const withBox = frames[1]!;
  const withoutBox = frames[2]!;
  const post = (body: unknown) => s.request('POST', corrections, { key: KEY, body });
  t.equal((await post({ kind: 'ripeness', track_id: changed.track_id, ripeness: 'red' })).status, 201);
  t.equal((await post({ kind: 'remove', track_id: removed.track_id })).status, 201);
  t.equal((await post({ kind: 'add', frame_id: withBox.index, ripeness: 'turning', box: [10, 20, 40, 60] })).status, 201);
  t.equal((await post({ kind: 'add', frame_id: withoutBox.index, ripeness: 'green' })).status, 201);

  const r = await exportZip();
  t.equal(r.status, 200);
  const files = unzip(r.body);
  const index = JSON.parse(files.get('index.json')!.toString());
  t.equal(index.counts.walks, 1, 'the corrected walk only');
  t.match(index.walks[0], {
    walk_id: JOB,
    farm_id: tree.farmId,
    greenhouse_id: tree.greenhouseId,
    row_id: tree.rowId,
    cycle_id: tree.cycleId,
    week: '2026-W10',
    detector: { name: 'builtin-colour', kind: 'builtin', sha256: null },
    corrections: 4,
    frames: frames.length - 1,
    skipped_frames: [{ frame: withoutBox.index, reason: /added on it without a box/ }],
  });
  t.equal(index.images.length, frames.length - 1, 'every frame but the one with a fruit added without a box');

  const kept = await readFrameBoxes(framesDir(s.dataDir, JOB));
  const width = frames[0].width;
  const height = frames[0].height;
  for (const img of index.images) {
    const label = files.get(img.label)!.toString();
    const lines = label ? label.trimEnd().split('\n') : [];
    // The labels are the kept boxes of counted fruit not removed, and the added box on its frame.
    const expected = kept!
      .find((b) => b.frame === img.frame)!
      .fruit.filter((d) => d.track_id !== null && d.track_id !== removed.track_id)
      .map((d) => ({
        box: d.box,
        cls:
          d.track_id === changed.track_id ? 2 : ['green', 'turning', 'red'].indexOf(fruit.find((f) => f.track_id === d.track_id).ripeness),
      }));
    if (img.frame === withBox.index) expected.push({ box: [10, 20, 40, 60], cls: 1 });
    t.equal(lines.length, expected.length, `frame ${img.frame}: ${expected.length} labels`);
    t.same(
      lines.map((l) => Number(l.split(' ')[0])),
      expected.map((e) => e.cls),
      `frame ${img.frame}: classes as corrected`,
    );
    for (const [k, line] of lines.entries()) {
      const [, cx, cy, w, h] = line.split(' ').map(Number) as [number, number, number, number, number];
      const b = expected[k]!.box;
      t.ok(
        Math.abs(cx * width - (b[0] + b[2]) / 2) < 0.01 &&
          Math.abs(cy * height - (b[1] + b[3]) / 2) < 0.01 &&
          Math.abs(w * width - (b[2] - b[0])) < 0.01 &&
          Math.abs(h * height - (b[3] - b[1])) < 0.01,
        `frame ${img.frame} label ${k} is its box, normalised`,
      );
    }
    t.notOk(
      img.boxes.some((b: any) => b.track_id === removed.track_id),
      'the removed fruit is in no label',
    );
    t.same(
      files.get(img.image),
      readFileSync(path.join(framesDir(s.dataDir, JOB), frameFileName(img.frame, 'image.jpg'))),
      'the image is the stored frame, byte for byte',
    );
    t.match(img, { walk_id: JOB, width, height });
  }
  const changedBoxes = index.images.flatMap((i: any) => i.boxes).filter((b: any) => b.track_id === changed.track_id);
  t.ok(changedBoxes.length > 0 && changedBoxes.every((b: any) => b.ripeness === 'red' && b.source === 'model, ripeness corrected'));
  const addedBox = index.images.find((i: any) => i.frame === withBox.index).boxes.find((b: any) => b.source === 'added');
  t.same(addedBox, { ripeness: 'turning', box: [10, 20, 40, 60], track_id: null, source: 'added' });
});

t.test('filters: greenhouse and local dates', async (t) => {
  // The walk was recorded "now", on today's date in Auckland; a window that ends yesterday holds nothing.
  const auckland = new Date().toLocaleDateString('en-CA', { timeZone: 'Pacific/Auckland' });
  const yesterday = new Date(Date.parse(auckland) - 86_400_000).toISOString().slice(0, 10);
  const tomorrow = new Date(Date.parse(auckland) + 86_400_000).toISOString().slice(0, 10);
  const count = async (q: string) =>
    JSON.parse(
      unzip((await exportZip(q)).body)
        .get('index.json')!
        .toString(),
    ).counts.walks;
  t.equal(await count(`?greenhouse_id=${tree.greenhouseId}`), 1);
  t.equal(await count(`?from=${auckland}&to=${auckland}`), 1, 'the local day it was recorded on');
  t.equal(await count(`?from=${tomorrow}`), 0);
  t.equal(await count(`?to=${yesterday}`), 0);
  t.equal(await count(`?greenhouse_id=${tree.greenhouseId}&from=${yesterday}&to=${tomorrow}`), 1);
});

t.test('refusals: problem+json, nothing exported', async (t) => {
  const bad = await exportZip(`?from=2026-03-02&to=2026-03-01`);
  t.equal(bad.status, 422);
  t.match(bad.json(), { code: 'validation_failed', errors: [{ in: 'query', name: 'to', message: /before from/ }] });
  const notDate = await exportZip(`?from=yesterday`);
  t.equal(notDate.status, 422);
  t.match(notDate.json(), { errors: [{ in: 'query', name: 'from' }] });
  const extra = await exportZip(`?cycle_id=x`);
  t.equal(extra.status, 422);
  const theirs = await exportZip(`?greenhouse_id=${other.greenhouseId}`);
  t.equal(theirs.status, 404, "another organization's greenhouse");
  t.equal(theirs.headers.get('content-type'), 'application/problem+json');
  const member = (await s.request('POST', `${ORG}/keys`, { key: KEY, body: { name: 'picker', role: 'member' } })).body;
  t.equal((await exportZip('', member.api_key)).status, 403, 'admin keys only');
  const otherOrg = await fetch(`${s.base}/api/organizations/${other.orgId}/training-data`, { headers: { 'x-api-key': KEY } });
  t.equal(otherOrg.status, 404, "another organization's export");
  const none = await fetch(`${s.base}${ORG}/training-data`);
  t.equal(none.status, 401);
});
