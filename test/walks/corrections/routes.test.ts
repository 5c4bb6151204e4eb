// Walk corrections over HTTP (docs/api-conventions.md, "Walk corrections"): a real walk rendered, uploaded to a
// crop cycle and scored, then corrected, changed and undone; every refusal leaves the walk as it was.
import t from 'tap';
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { renderWalk } from '../../../scripts/render/walk.js';
import { MAX_CORRECTIONS_PER_WALK } from '../../../src/walks/corrections/commands.js';
import { poll, upload } from '../../helpers/walks.js';
import { createTree, dbCount, startServer } from '../../helpers/server.js';

const dir = t.testdir();
const walk = await renderWalk({ out: path.join(dir, 'walk'), seconds: 4, fps: 10, width: 480, height: 270, speed: 0.3, seed: 5 });
const CLIP = walk.files[0]!;
const CORRUPT = path.join(dir, 'corrupt.mp4');
{
  // The container is read but the frames are gone: the walk fails while scoring.
  const bytes = Buffer.from(readFileSync(CLIP));
  const mdat = bytes.indexOf('mdat');
  bytes.fill(0, mdat + 4, Math.min(bytes.length, mdat + 4 + 4096));
  writeFileSync(CORRUPT, bytes);
}

const s = await startServer(t);
const tree = await createTree(s, { timeZone: 'America/Toronto' });
const other = await createTree(s);
const KEY = tree.adminKey;
const member = (await s.request('POST', `/api/organizations/${tree.orgId}/keys`, { key: KEY, body: { name: 'picker', role: 'member' } }))
  .body;

const up = await upload(s, `${tree.cyclePath}/videos`, KEY, [{ field: 'file', file: CLIP }], { week: '2026-W10' });
const JOB = up.body.job_id as string;
const base = `/api/organizations/${tree.orgId}/walks/${JOB}/corrections`;
// Straight after the upload, while the clip is queued or being scored.
const early = await s.request('POST', base, { key: KEY, body: { kind: 'counts', counts: { red: 1 } } });
let scored: any;

const list = () => s.request('GET', base, { key: KEY });
const storedCorrections = () => dbCount(s, 'select count(*) as n from walk_corrections');
const sum = (c: { green: number; turning: number; red: number }) => c.green + c.turning + c.red;

t.test('a walk still being scored is not corrected (409 with its state)', async (t) => {
  t.equal(up.status, 201);
  scored = (await poll(s, JOB, KEY)).at(-1);
  t.equal(early.status, 409);
  t.equal(early.body.code, 'conflict');
  t.equal(early.body.job_id, JOB);
  t.match(early.body.walk_status, /^(queued|running)$/);
  t.equal(scored.status, 'done');
  t.ok(scored.result.fruit.length >= 4, `${scored.result.fruit.length} fruit to correct`);
  t.same(scored.corrected_counts, scored.counts, "with no corrections the corrected counts are the model's");
});

t.test("GET: no corrections yet, the walk's fruit, its week, and both counts", async (t) => {
  const r = await list();
  t.equal(r.status, 200);
  t.equal(r.body.walk_id, JOB);
  t.equal(r.body.status, 'done');
  t.same(r.body.corrections, []);
  t.same(r.body.weeks, [
    { farm_id: tree.farmId, greenhouse_id: tree.greenhouseId, row_id: tree.rowId, cycle_id: tree.cycleId, week: '2026-W10' },
  ]);
  t.equal(r.body.fruit.length, scored.result.fruit.length);
  t.same(
    r.body.fruit.map((f: any) => f.track_id),
    scored.result.fruit.map((f: any) => f.track_id),
  );
  t.same(r.body.model_counts, scored.counts);
  t.same(r.body.corrected_counts, scored.counts);
  t.same(r.body.removed_track_ids, []);
});

t.test('each kind of correction, what it does to the corrected counts, and the model counts left alone', async (t) => {
  const model = scored.counts;
  const notRed = scored.result.fruit.find((f: any) => f.ripeness !== 'red');
  const ripe = await s.request('POST', base, {
    key: member.api_key,
    body: { kind: 'ripeness', track_id: notRed.track_id, ripeness: 'red', note: 'red at the blossom end' },
  });
  t.equal(ripe.status, 201, 'a member key corrects too');
  t.match(ripe.body, {
    walk_id: JOB,
    organization_id: tree.orgId,
    kind: 'ripeness',
    track_id: notRed.track_id,
    ripeness: 'red',
    frame_id: null,
    box: null,
    counts: null,
    note: 'red at the blossom end',
    created_by_key_id: member.key_id,
  });
  t.match(ripe.body.created_at, /-0[45]:00$/, 'instants in the greenhouse zone (Toronto)');
  t.same(ripe.body.model_counts, model);
  t.same(ripe.body.corrected_counts, { ...model, [notRed.ripeness]: model[notRed.ripeness] - 1, red: model.red + 1 });

  const victim = scored.result.fruit.find((f: any) => f.track_id !== notRed.track_id);
  const gone = await s.request('POST', base, { key: KEY, body: { kind: 'remove', track_id: victim.track_id } });
  t.equal(gone.status, 201);
  t.equal(gone.body.corrected_counts.total, model.total - 1);

  const frame = scored.result.frames[0];
  const added = await s.request('POST', base, {
    key: KEY,
    body: { kind: 'add', frame_id: frame.index, ripeness: 'green', box: [1, 2, 30, 40] },
  });
  t.equal(added.status, 201);
  t.same(added.body.box, [1, 2, 30, 40]);
  t.equal(added.body.corrected_counts.total, model.total, 'one removed, one added');

  const r = await list();
  t.same(
    r.body.corrections.map((c: any) => c.correction_id),
    [ripe.body.correction_id, gone.body.correction_id, added.body.correction_id],
    'in the order made',
  );
  t.same(r.body.removed_track_ids, [victim.track_id]);
  t.notOk(
    r.body.fruit.some((f: any) => f.track_id === victim.track_id),
    'the removed fruit is gone',
  );
  t.match(
    r.body.fruit.find((f: any) => f.track_id === notRed.track_id),
    { ripeness: 'red', model_ripeness: notRed.ripeness, correction_id: ripe.body.correction_id },
  );
  t.match(r.body.fruit.at(-1), {
    track_id: null,
    ripeness: 'green',
    model_ripeness: null,
    frame: frame.index,
    box: [1, 2, 30, 40],
    correction_id: added.body.correction_id,
  });
  t.equal(r.body.fruit.length, scored.result.fruit.length);

  const counts = await s.request('POST', base, { key: KEY, body: { kind: 'counts', counts: { red: 50 } } });
  t.equal(counts.status, 201);
  const c = counts.body.corrected_counts;
  t.equal(c.red, 50, 'a class counted by hand');
  t.same(
    [c.green, c.turning],
    [added.body.corrected_counts.green, added.body.corrected_counts.turning],
    'the others as corrected fruit by fruit',
  );
  t.equal(c.total, sum(c));

  const walkNow = await s.request('GET', `/api/observations/${JOB}`, { key: KEY });
  t.same(walkNow.body.counts, model, 'the walk keeps its model counts');
  t.same(walkNow.body.corrected_counts, c, 'and shows the corrected ones');
  const summary = await s.request('GET', `${tree.cyclePath}/walks`, { key: KEY });
  t.same(summary.body.items[0].corrected_counts, c, "the crop cycle's walk list too");

  t.equal(
    await dbCount(s, "select count(*) as n from change_log where entity = 'walk_corrections'"),
    4,
    'the change log has every correction',
  );
});

t.test('a second correction of the same thing is a 409 naming the one to change or undo; nothing is stored', async (t) => {
  const r = await list();
  const byKind = (k: string) => r.body.corrections.find((c: any) => c.kind === k);
  const before = await storedCorrections();
  const again = await s.request('POST', base, {
    key: KEY,
    body: { kind: 'ripeness', track_id: byKind('ripeness').track_id, ripeness: 'green' },
  });
  t.equal(again.status, 409);
  t.equal(again.body.code, 'conflict');
  t.same(again.body.correction_ids, [byKind('ripeness').correction_id]);
  const removedRipe = await s.request('POST', base, {
    key: KEY,
    body: { kind: 'ripeness', track_id: byKind('remove').track_id, ripeness: 'green' },
  });
  t.equal(removedRipe.status, 409, 'a ripeness for a removed fruit');
  t.same(removedRipe.body.correction_ids, [byKind('remove').correction_id]);
  t.match(removedRipe.body.detail, /was removed/);
  // Whatever the kinds: a removal of a fruit whose ripeness was corrected names that correction.
  const removeRipe = await s.request('POST', base, { key: KEY, body: { kind: 'remove', track_id: byKind('ripeness').track_id } });
  t.equal(removeRipe.status, 409, 'a removal of a fruit with a ripeness correction');
  t.same(removeRipe.body.correction_ids, [byKind('ripeness').correction_id]);
  t.match(removeRipe.body.detail, /already has a ripeness correction/);
  const twice = await s.request('POST', base, { key: KEY, body: { kind: 'remove', track_id: byKind('remove').track_id } });
  t.equal(twice.status, 409, 'removed twice');
  const counts = await s.request('POST', base, { key: KEY, body: { kind: 'counts', counts: { green: 1 } } });
  t.equal(counts.status, 409, 'a second counts correction');
  t.same(counts.body.correction_ids, [byKind('counts').correction_id]);
  t.equal(await storedCorrections(), before);
  t.same((await list()).body.corrected_counts, r.body.corrected_counts);
});

t.test('every kind of bad correction is a 422 naming the field, and stores nothing', async (t) => {
  const before = await list();
  const known = scored.result.fruit[0].track_id;
  const frames = scored.result.frames.length;
  const { width } = scored.result.frames[0];
  const cases: [string, unknown, string][] = [
    ['no kind', { track_id: known }, 'kind'],
    ['an unknown kind', { kind: 'recount' }, 'kind'],
    ['ripeness without track_id', { kind: 'ripeness', ripeness: 'red' }, 'track_id'],
    ['ripeness without ripeness', { kind: 'ripeness', track_id: known }, 'ripeness'],
    ['an unknown ripeness', { kind: 'ripeness', track_id: known, ripeness: 'purple' }, 'ripeness'],
    ['remove without track_id', { kind: 'remove' }, 'track_id'],
    ['a track_id the walk does not have', { kind: 'remove', track_id: 99_999 }, 'track_id'],
    ['a negative track_id', { kind: 'remove', track_id: -1 }, 'track_id'],
    ['a fractional track_id', { kind: 'remove', track_id: 1.5 }, 'track_id'],
    ['a track_id as text', { kind: 'remove', track_id: '1' }, 'track_id'],
    ['add without frame_id', { kind: 'add', ripeness: 'red' }, 'frame_id'],
    ['add without ripeness', { kind: 'add', frame_id: 0 }, 'ripeness'],
    ['a frame the walk does not have', { kind: 'add', frame_id: frames, ripeness: 'red' }, 'frame_id'],
    ['a box outside the frame', { kind: 'add', frame_id: 0, ripeness: 'red', box: [0, 0, width + 1, 10] }, 'box'],
    ['a box upside down', { kind: 'add', frame_id: 0, ripeness: 'red', box: [20, 20, 10, 30] }, 'box'],
    ['a box of three numbers', { kind: 'add', frame_id: 0, ripeness: 'red', box: [0, 0, 10] }, 'box'],
    ['a box with a negative corner', { kind: 'add', frame_id: 0, ripeness: 'red', box: [-5, 0, 10, 10] }, 'box'],
    ['a box on a ripeness correction', { kind: 'ripeness', track_id: known, ripeness: 'red', box: [0, 0, 10, 10] }, 'box'],
    ['a track_id on an add', { kind: 'add', frame_id: 0, ripeness: 'red', track_id: known }, 'track_id'],
    ['counts on a remove', { kind: 'remove', track_id: known, counts: { red: 1 } }, 'counts'],
    ['counts without counts', { kind: 'counts' }, 'counts'],
    ['empty counts', { kind: 'counts', counts: {} }, 'counts'],
    ['a negative count', { kind: 'counts', counts: { red: -1 } }, 'counts'],
    ['a count above 1,000,000', { kind: 'counts', counts: { red: 1_000_001 } }, 'counts'],
    ['a fractional count', { kind: 'counts', counts: { red: 2.5 } }, 'counts'],
    ['a count of an unknown class', { kind: 'counts', counts: { purple: 2 } }, 'counts'],
    ['a note over 500 characters', { kind: 'counts', counts: { red: 1 }, note: 'x'.repeat(501) }, 'note'],
    ['a field the spec does not have', { kind: 'remove', track_id: known, reason: 'leaf' }, 'reason'],
  ];
  for (const [what, body, field] of cases) {
    const r = await s.request('POST', base, { key: KEY, body });
    t.equal(r.status, 422, `${what}: 422`);
    t.equal(r.body.code, 'validation_failed', `${what}: code`);
    t.ok(
      r.body.errors?.some((e: any) => e.in === 'body' && (e.name === field || e.name.startsWith(`${field}`))),
      `${what}: names ${field} (${JSON.stringify(r.body.errors)})`,
    );
  }
  const notJson = await s.request('POST', base, {
    key: KEY,
    raw: 'kind=remove',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.ok(notJson.status === 415 || notJson.status === 422, `a form body: ${notJson.status}`);
  const after = await list();
  t.same(after.body.corrections, before.body.corrections, 'no correction stored');
  t.same(after.body.corrected_counts, before.body.corrected_counts);
});

t.test('PATCH changes ripeness, box, counts or note; kind and fruit stay; DELETE undoes', async (t) => {
  const r = await list();
  const byKind = (k: string) => r.body.corrections.find((c: any) => c.kind === k);
  const ripe = byKind('ripeness');
  const url = (c: any) => `${base}/${c.correction_id}`;

  const turned = await s.request('PATCH', url(ripe), { key: KEY, body: { ripeness: 'turning', note: null } });
  t.equal(turned.status, 200);
  t.match(turned.body, { correction_id: ripe.correction_id, kind: 'ripeness', ripeness: 'turning', note: null, track_id: ripe.track_id });
  t.not(turned.body.version, ripe.version);
  t.equal(turned.body.corrected_counts.turning, r.body.corrected_counts.turning + 1, 'the fruit moved from red (corrected) to turning');

  const box = await s.request('PATCH', url(byKind('add')), { key: KEY, body: { box: [5, 5, 25, 25], ripeness: 'red' } });
  t.equal(box.status, 200);
  t.same([box.body.box, box.body.ripeness], [[5, 5, 25, 25], 'red']);

  const counts = await s.request('PATCH', url(byKind('counts')), { key: KEY, body: { counts: { green: 7 } } });
  t.equal(counts.status, 200);
  t.same(counts.body.counts, { green: 7 }, 'the counts object is replaced');
  t.equal(counts.body.corrected_counts.green, 7);
  t.not(counts.body.corrected_counts.red, 50, 'red is no longer set by hand');

  const before = await list();
  const refused: [string, any, unknown, number][] = [
    ['the kind', ripe, { kind: 'remove' }, 422],
    ['the fruit', ripe, { track_id: 0 }, 422],
    ['the frame of an added fruit', byKind('add'), { frame_id: 0 }, 422],
    ['a box on a ripeness correction', ripe, { box: [0, 0, 5, 5] }, 422],
    ['a ripeness on a removal', byKind('remove'), { ripeness: 'red' }, 422],
    ['counts on an add', byKind('add'), { counts: { red: 1 } }, 422],
    ['a box outside the frame', byKind('add'), { box: [0, 0, 100_000, 5] }, 422],
    ['empty counts', byKind('counts'), { counts: {} }, 422],
    ['nothing', ripe, {}, 422],
  ];
  for (const [what, c, body, status] of refused) {
    const res = await s.request('PATCH', url(c), { key: KEY, body });
    t.equal(res.status, status, `changing ${what}: ${status}`);
  }
  t.same((await list()).body.corrections, before.body.corrections, 'refused changes change nothing');

  const unknown = await s.request('PATCH', `${base}/0190a000-0000-7000-8000-000000000000`, { key: KEY, body: { note: 'x' } });
  t.equal(unknown.status, 404);

  const undo = await s.request('DELETE', url(byKind('remove')), { key: KEY });
  t.equal(undo.status, 200);
  t.same(Object.keys(undo.body).sort(), ['corrected_counts', 'correction_id', 'deleted', 'model_counts']);
  t.equal(undo.body.corrected_counts.total, before.body.corrected_counts.total + 1, 'the removed fruit is back');
  t.equal((await s.request('DELETE', url(byKind('remove')), { key: KEY })).status, 404, 'undone once');
  t.same((await list()).body.removed_track_ids, []);
});

t.test('corrections belong to their walk and organization', async (t) => {
  const r = await list();
  const c = r.body.corrections[0];
  const otherOrgPath = `/api/organizations/${other.orgId}/walks/${JOB}/corrections`;
  t.equal((await s.request('GET', otherOrgPath, { key: other.adminKey })).status, 404, "another organization's key does not find the walk");
  t.equal((await s.request('GET', base, { key: other.adminKey })).status, 404);
  t.equal((await s.request('DELETE', `${base}/${c.correction_id}`, { key: other.adminKey })).status, 404);

  const second = await upload(s, `${tree.cyclePath}/videos`, KEY, [{ field: 'file', file: CLIP }], {
    week: '2026-W11',
    sample_seconds: '1',
  });
  await poll(s, second.body.job_id, KEY);
  const elsewhere = `/api/organizations/${tree.orgId}/walks/${second.body.job_id}/corrections/${c.correction_id}`;
  t.equal(
    (await s.request('PATCH', elsewhere, { key: KEY, body: { note: 'x' } })).status,
    404,
    'a correction is found under its own walk only',
  );
  t.equal((await s.request('DELETE', elsewhere, { key: KEY })).status, 404);
  t.same((await list()).body.corrections, r.body.corrections);
});

t.test('a corrected walk is not scored again until its corrections are undone', async (t) => {
  const r = await list();
  const refused = await s.request('POST', `/api/observations/${JOB}/rescore`, { key: KEY, body: {} });
  t.equal(refused.status, 409);
  t.same(
    refused.body.correction_ids,
    r.body.corrections.map((c: any) => c.correction_id),
  );
  t.equal((await s.request('GET', `/api/observations/${JOB}`, { key: KEY })).body.status, 'done', 'still done');
  for (const c of r.body.corrections) t.equal((await s.request('DELETE', `${base}/${c.correction_id}`, { key: KEY })).status, 200);
  const cleared = await list();
  t.same(cleared.body.corrected_counts, cleared.body.model_counts, 'every correction undone: the model counts again');
  const again = await s.request('POST', `/api/observations/${JOB}/rescore`, { key: KEY, body: {} });
  t.equal(again.status, 202);
  const during = await s.request('DELETE', `${base}/0190a000-0000-7000-8000-000000000000`, { key: KEY });
  t.equal(during.status, 409, 'undo while it is scored again: 409 before anything else');
  const done = (await poll(s, JOB, KEY)).at(-1);
  t.same(done.corrected_counts, done.counts);
});

t.test('a failed walk has nothing to correct (409)', async (t) => {
  const bad = await upload(s, `${tree.cyclePath}/videos`, KEY, [{ field: 'file', file: CORRUPT }], { week: '2026-W12' });
  t.equal(bad.status, 201);
  const failed = (await poll(s, bad.body.job_id, KEY)).at(-1);
  t.equal(failed.status, 'failed');
  t.equal(failed.corrected_counts, null);
  const r = await s.request('POST', `/api/organizations/${tree.orgId}/walks/${bad.body.job_id}/corrections`, {
    key: KEY,
    body: { kind: 'counts', counts: { red: 3 } },
  });
  t.equal(r.status, 409);
  t.equal(r.body.walk_status, 'failed');
  const g = await s.request('GET', `/api/organizations/${tree.orgId}/walks/${bad.body.job_id}/corrections`, { key: KEY });
  t.same([g.body.status, g.body.fruit, g.body.model_counts, g.body.corrected_counts], ['failed', [], null, null]);
});

t.test(`at most ${MAX_CORRECTIONS_PER_WALK} corrections per walk`, async (t) => {
  const w = (await poll(s, JOB, KEY)).at(-1);
  const frame = w.result.frames[0].index;
  // Filled in the database (one request each would take minutes): the walk's own rows, as the API would store them.
  await s.app.services.db
    .insertInto('walk_corrections')
    .values(
      Array.from({ length: MAX_CORRECTIONS_PER_WALK - 1 }, (_, i) => ({
        id: `0190a000-0000-7000-8000-${String(i).padStart(12, '0')}`,
        organization_id: tree.orgId,
        created_at: '2026-03-01T10:00:00.000Z',
        updated_at: '2026-03-01T10:00:00.000Z',
        version: 'v',
        walk_id: JOB,
        cycle_id: tree.cycleId,
        kind: 'add' as const,
        track_id: null,
        ripeness: 'green' as const,
        frame_id: frame,
        box: null,
        counts: null,
        note: null,
        created_by_key_id: null,
      })),
    )
    .execute();
  const last = await s.request('POST', base, { key: KEY, body: { kind: 'add', frame_id: frame, ripeness: 'red' } });
  t.equal(last.status, 201, `the ${MAX_CORRECTIONS_PER_WALK}th`);
  t.equal(last.body.corrected_counts.total, w.counts.total + MAX_CORRECTIONS_PER_WALK, 'every added fruit counts');
  const over = await s.request('POST', base, { key: KEY, body: { kind: 'add', frame_id: frame, ripeness: 'red' } });
  t.equal(over.status, 409);
  t.equal(over.body.limit, MAX_CORRECTIONS_PER_WALK);
  t.equal(await storedCorrections(), MAX_CORRECTIONS_PER_WALK);
  const g = await list();
  t.equal(g.body.corrections.length, MAX_CORRECTIONS_PER_WALK);
});

t.test('deleting the walk, or its crop cycle, takes its corrections with it', async (t) => {
  const contents = await s.request('GET', `${tree.cyclePath}/contents`, { key: KEY });
  t.equal(contents.status, 200);
  t.equal(contents.body.counts?.walk_corrections, MAX_CORRECTIONS_PER_WALK, 'the crop cycle counts them');
  t.equal((await s.request('DELETE', `/api/observations/${JOB}`, { key: KEY })).status, 200);
  t.equal(await storedCorrections(), 0);
  t.equal((await list()).status, 404);

  const kept = await upload(s, `${tree.cyclePath}/videos`, KEY, [{ field: 'file', file: CLIP }], { week: '2026-W13', sample_seconds: '1' });
  const w = (await poll(s, kept.body.job_id, KEY)).at(-1);
  const url = `/api/organizations/${tree.orgId}/walks/${w.job_id}/corrections`;
  t.equal((await s.request('POST', url, { key: KEY, body: { kind: 'remove', track_id: w.result.fruit[0].track_id } })).status, 201);
  const del = await s.request('DELETE', `${tree.cyclePath}?cascade=true`, { key: KEY });
  t.equal(del.status, 200);
  t.equal(del.body.counts.walk_corrections, 1);
  t.equal(await storedCorrections(), 0);
});
