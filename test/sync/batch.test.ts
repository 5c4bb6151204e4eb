// A pushed batch applied as one (src/sync/batch.ts): harvests and irrigation entries are applied
// from reads gathered once for the batch and written with multi-row statements, without a
// savepoint each, yet every rule of a change applied alone holds: a refused change in the middle
// is answered with its reason and leaves nothing, the others stand; a change sees what the changes
// before it in the same batch did (a parent made, a record deleted, a record made then edited);
// the feed numbers follow the batch's order; a batch sent again answers as the first time.
import t from 'tap';
import { newId } from '../../src/db/ids.js';
import { createHash } from 'node:crypto';
import { createTree, dbCount, dbRows } from '../helpers/server.js';
import { storedResult } from '../helpers/stored-result.js';
import { bodyAjv } from '../../src/http/ajv.js';
import { call, fkViolations, startUpstream } from './helpers.js';

type Change = Record<string, any>;

t.test('a batch applied as one keeps every rule of a change applied alone', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const key = tree.adminKey;
  // Templates: the rows as the upstream's own feed sends them.
  await call(up, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: 1 });
  const feed = await call(up, 'GET', '/api/sync/v1/changes?limit=2000', key);
  const template = (kind: string) => feed.changes.find((c: Change) => c.kind === kind && c.op === 'upsert') as Change;
  const harvestRow = template('harvests').row;
  const cycleChange = template('cycles');

  const node = `bt${newId().slice(-10).replace('-', '')}`;
  let n = 0;
  let ms = Date.now();
  const version = () => `${String(++ms).padStart(13, '0')}.000000.${node}`;
  const at = new Date().toISOString();
  const envelope = (kind: string, eid: string, op: 'upsert' | 'delete', v: string) => ({
    id: `${node}:${++n}`,
    origin: node,
    org: tree.orgId,
    kind,
    eid,
    op,
    v,
    at,
  });
  const harvest = (eid: string, fields: Record<string, unknown>, cycleId = tree.cycleId): Change => {
    const v = version();
    return {
      ...envelope('harvests', eid, 'upsert', v),
      row: { ...harvestRow, id: eid, cycle_id: cycleId, created_at: at, updated_at: at, version: v, note: null, ...fields },
    };
  };
  // The fields every synced row carries (src/sync/kinds/rows.ts SYNCED), and a record made with them.
  const synced = (id: string, v: string) => ({ id, organization_id: tree.orgId, created_at: at, updated_at: at, version: v });
  const upsert = (kind: string, eid: string, fields: Record<string, unknown>): Change => {
    const v = version();
    return { ...envelope(kind, eid, 'upsert', v), row: { ...synced(eid, v), ...fields } };
  };
  const irrigation = (eid: string, cycleId = tree.cycleId): Change =>
    upsert('irrigation_entries', eid, {
      farm_id: tree.farmId,
      greenhouse_id: tree.greenhouseId,
      row_id: tree.rowId,
      cycle_id: cycleId,
      at: '2026-03-09T06:00:00.000Z',
      volume_l: 300,
      note: null,
    });
  const remove = (kind: string, eid: string): Change => envelope(kind, eid, 'delete', version());
  const push = async (changes: Change[]) => (await call(up, 'POST', '/api/sync/v1/push', key, { changes }, 200)).results as Change[];
  const harvests = async () =>
    new Map<string, Change>((await call(up, 'GET', `${tree.cyclePath}/harvests`, key)).items.map((h: Change) => [h.harvest_id ?? h.id, h]));

  // Walks as a box sends them: the record, its clip rows and its file list (src/sync/kinds/walks.ts).
  const sha = (s: string) => createHash('sha256').update(s).digest('hex');
  const walkChange = (eid: string, week: string, clipFor = eid, unpresentable = false): Change => {
    // The stored result as scoring writes it; one without its quality the API could not present.
    const whole = storedResult(9, 1);
    const { quality: _quality, ...unshowable } = whole;
    const result = unpresentable ? unshowable : whole;
    const change = upsert('walks', eid, {
      farm_id: tree.farmId,
      greenhouse_id: tree.greenhouseId,
      row_id: tree.rowId,
      cycle_id: tree.cycleId,
      source: 'cycle_batch',
      example_key: null,
      request_hash: sha(eid),
      created_by_key_id: null,
      week,
      status: 'done',
      mode: 'photo',
      options: '{}',
      detector: 'builtin',
      error: null,
      started_at: at,
      finished_at: at,
      count_green: 3,
      count_turning: 3,
      count_red: 3,
      count_total: 9,
      result: JSON.stringify(result),
    });
    const clip = (position: number) => ({
      ...synced(newId(), change.v),
      walk_id: clipFor,
      cycle_id: tree.cycleId,
      position,
      file_name: `0${position}.jpeg`,
      original_name: 'row.jpg',
      size_bytes: 1000,
      sha256: sha(`${eid}clip${position}`),
      kind: 'image',
      format: 'jpeg',
      width: 640,
      height: 480,
      duration_s: 0,
      status: 'done',
      progress: 1,
      frames: 1,
      error: null,
    });
    return {
      ...change,
      fv: {},
      unit: {
        clips: [clip(0), clip(1)],
        files: [
          { name: 'frames/00000-image.jpg', sha256: sha(`${eid}image`), size: 100 },
          { name: 'frames/00000-overlay.jpg', sha256: sha(`${eid}overlay`), size: 100 },
          { name: 'frames/boxes.json', sha256: sha(`${eid}boxes`), size: 10 },
        ],
      },
    };
  };
  t.test('a refused change in the middle: the others are applied, it alone is answered with its reason', async (t) => {
    const [a, b, c, d, e] = [newId(), newId(), newId(), newId(), newId()];
    const batch = [
      harvest(a, { week: '2026-W10', kg: 11 }),
      harvest(b, { week: '2026-W10', kg: -5 }),
      irrigation(c),
      // A change of a kind applied in a savepoint of its own, refused between batched ones.
      {
        ...envelope('week_notes', e, 'upsert', version()),
        row: { id: e, organization_id: tree.orgId, cycle_id: tree.cycleId, week: '2026-W99', body: '{}' },
      },
      harvest(d, { week: '2026-W11', kg: 12 }),
      // A parent not held anywhere: 404, as the API answers a harvest on a cycle it does not hold.
      harvest(newId(), { week: '2026-W11', kg: 1 }, newId()),
    ];
    const results = await push(batch);
    t.same(
      results.map((r) => r.outcome),
      ['applied', 'refused', 'applied', 'refused', 'applied', 'refused'],
      'each change answered on its own',
    );
    t.match(results[1], { status: 422, code: 'validation_failed', errors: [{ name: 'kg' }] }, 'the bad harvest: 422 naming the field');
    t.equal(results[3]!.status, 422, 'the bad week note: 422');
    t.equal(results[5]!.status, 404, 'the harvest on a cycle not held: 404');
    const held = await harvests();
    t.ok(held.has(a) && held.has(d), 'the good harvests are stored');
    t.notOk(held.has(b), 'the refused one is not');
    t.equal(held.get(a)!.kg, 11);
    const again = await push(batch);
    t.same(again, results, 'sent again, the batch answers as the first time and applies nothing twice');
    t.equal((await harvests()).size, held.size, 'nothing stored twice');
  });

  t.test('a walk made by a batch is applied with it; a walk held here is merged alone', async (t) => {
    const count = (table: string, walkId: string) =>
      dbCount(up, `SELECT count(*) AS n FROM ${table} WHERE ${table === 'walks' ? 'id' : 'walk_id'} = ?`, walkId);
    const [w, bad, unpresentable, h1, h2, h3] = [newId(), newId(), newId(), newId(), newId(), newId()];
    const batch = [
      harvest(h1, { week: '2026-W10', kg: 2 }),
      walkChange(w, '2026-W10'),
      harvest(h2, { week: '2026-W10', kg: 3 }),
      // A clip that names another walk: refused before the walk writes anything.
      walkChange(bad, '2026-W10', w),
      // The walk made above, changed again in the same batch: now held here, it is merged alone.
      walkChange(w, '2026-W11'),
      // A result the API could not present (no quality): refused, not stored.
      walkChange(unpresentable, '2026-W10', unpresentable, true),
      harvest(h3, { week: '2026-W10', kg: 4 }),
    ];
    const [{ last }] = (await dbRows<{ last: number }>(up, 'SELECT max(seq) AS last FROM change_log')) as [{ last: number }];
    const before = Number(last);
    const results = await push(batch);
    t.same(
      results.map((r) => r.outcome),
      ['applied', 'applied', 'applied', 'refused', 'applied', 'refused', 'applied'],
      'each change answered on its own',
    );
    t.match(
      results[5],
      { status: 422, code: 'validation_failed', errors: [{ name: String }] },
      'the walk whose result cannot be shown: 422',
    );
    t.match(results[5]!.detail, /result/, 'naming its result');
    t.match(
      results[3],
      { status: 422, code: 'validation_failed', errors: [{ name: 'clips.0' }] },
      'the walk with a stranger clip: 422 naming it',
    );
    const [walk] = await dbRows<Change>(
      up,
      'SELECT week, corrected_green, corrected_turning, corrected_red, corrected_total FROM walks WHERE id = ?',
      w,
    );
    t.equal(walk!.week, '2026-W11', 'the walk holds its later week');
    t.same(
      [walk!.corrected_green, walk!.corrected_turning, walk!.corrected_red, walk!.corrected_total].map(Number),
      [3, 3, 3, 9],
      'its corrected counts made with its row',
    );
    t.equal(await count('walk_clips', w), 2, 'its clips are stored');
    t.equal(await count('sync_walk_files', w), 3, 'its files are awaited');
    const fields = await dbCount(up, 'SELECT count(*) AS n FROM sync_field_versions WHERE entity_id = ?', w);
    t.ok(fields > 0, "its fields' versions are recorded");
    for (const table of ['walks', 'walk_clips', 'sync_walk_files'])
      t.equal(await count(table, bad), 0, `the refused walk left nothing in ${table}`);
    t.equal(await dbCount(up, 'SELECT count(*) AS n FROM change_log WHERE entity_id = ?', bad), 0, 'nor in the change log');
    const held = await harvests();
    t.ok(
      [h1, h2, h3].every((h) => held.has(h)),
      'the harvests around the walks are stored',
    );
    t.same(await fkViolations(up), [], 'every row names a parent that is there');

    // The change log has the batch's changes in its order: the new walk with its clips between the harvests it came between.
    const logged = await dbRows<{ entity: string }>(up, 'SELECT entity FROM change_log WHERE seq > ? ORDER BY seq', before);
    t.same(
      logged.map((r) => r.entity).filter((e, i, all) => e !== all[i - 1]),
      ['harvests', 'walks', 'walk_clips', 'harvests', 'walks', 'walk_clips', 'harvests'],
      'logged in the order of the batch',
    );
    t.same(await push(batch), results, 'sent again, the batch answers as the first time');
    t.equal(await count('walk_clips', w), 2, 'and stores nothing twice');

    // Scored again on the box: the held walk's file list names a new overlay. Merged alone, its
    // files are written over the ones held (one statement with its conflict clause).
    const rescored = walkChange(w, '2026-W11');
    const files = (rescored.unit as { files: { name: string; sha256: string; size: number }[] }).files;
    files[1] = { ...files[1]!, sha256: sha(`${w}overlay-2`), size: 120 };
    t.same(
      (await push([rescored])).map((r) => r.outcome),
      ['applied'],
      'the walk scored again is applied',
    );
    const listed = await dbRows<{ name: string; sha256: string; size: number; present: number }>(
      up,
      'SELECT name, sha256, size, present FROM sync_walk_files WHERE walk_id = ? ORDER BY name',
      w,
    );
    t.same(
      listed.map((r) => [r.name, r.sha256, Number(r.size), Number(r.present)]),
      [
        ['frames/00000-image.jpg', sha(`${w}image`), 100, 0],
        ['frames/00000-overlay.jpg', sha(`${w}overlay-2`), 120, 0],
        ['frames/boxes.json', sha(`${w}boxes`), 10, 0],
      ],
      'the changed file is awaited with its new content and size, the others as they were',
    );
  });

  t.test("a walk's file list is checked before it writes anything: a name a walk cannot have is refused, naming it", async (t) => {
    const file = (name: unknown) => ({ name, sha256: sha(String(name)), size: 10 });
    const cases: [string, (c: Change) => void, string][] = [
      ['a parent folder', (c) => (c.unit.files[0].name = '../../../etc/passwd'), 'files.0.name'],
      ['a parent folder after frames', (c) => (c.unit.files[1].name = 'frames/../../00000-image.jpg'), 'files.1.name'],
      ['an absolute path', (c) => (c.unit.files[2].name = '/etc/passwd'), 'files.2.name'],
      ['a hidden clip file', (c) => c.unit.files.push(file('clips/.htaccess')), 'files.3.name'],
      ['a clip file with backslashes', (c) => c.unit.files.push(file('clips/a\\..\\..\\b')), 'files.3.name'],
      ['a folder below a frame', (c) => c.unit.files.push(file('frames/00000-image.jpg/x')), 'files.3.name'],
      ['a frame file scoring never makes', (c) => c.unit.files.push(file('frames/run.sh')), 'files.3.name'],
      ['no file name', (c) => c.unit.files.push(file('clips/')), 'files.3.name'],
      ['a name that is no text', (c) => c.unit.files.push(file(7)), 'files.3.name'],
      ['a content that is no sha256', (c) => (c.unit.files[0].sha256 = 'abc'), 'files.0.sha256'],
      ['a size below nothing', (c) => (c.unit.files[0].size = -1), 'files.0.size'],
      [
        'a walk id that cannot name a folder',
        (c) => {
          c.eid = c.row.id = '../walks-of-another';
          for (const clip of c.unit.clips) clip.walk_id = c.eid;
        },
        'files.0.name',
      ],
    ];
    const h = newId();
    const batch: Change[] = [];
    for (const [, spoil] of cases) {
      const c = walkChange(newId(), '2026-W10');
      spoil(c);
      batch.push(c);
    }
    batch.push(harvest(h, { week: '2026-W10', kg: 5 }));
    const results = await push(batch);
    for (const [i, [what, , name]] of cases.entries())
      t.match(
        results[i],
        { outcome: 'refused', status: 422, code: 'validation_failed', errors: [{ name }] },
        `${what}: 422 naming ${name}`,
      );
    t.equal(results[cases.length]!.outcome, 'applied', 'the harvest after them is applied');
    for (const c of batch.slice(0, -1)) {
      for (const table of ['walks', 'walk_clips', 'sync_walk_files'])
        t.equal(
          await dbCount(up, `SELECT count(*) AS n FROM ${table} WHERE ${table === 'walks' ? 'id' : 'walk_id'} = ?`, c.eid),
          0,
          `the refused walk ${c.eid} left nothing in ${table}`,
        );
    }
    t.same(await fkViolations(up), [], 'every row names a parent that is there');
  });

  t.test("pushed corrections are checked by the API's schemas, compiled once for all of them", async (t) => {
    const w = newId();
    t.equal((await push([walkChange(w, '2026-W12')]))[0]!.outcome, 'applied', 'the walk they correct');
    const correction = (track: number, ripeness: string): Change =>
      upsert('walk_corrections', newId(), {
        walk_id: w,
        cycle_id: tree.cycleId,
        kind: 'ripeness',
        track_id: track,
        ripeness,
        frame_id: null,
        box: null,
        counts: null,
        note: null,
        created_by_key_id: null,
      });
    // ajv keeps every schema it compiles: a schema made per change would add one for each.
    const kept = () => (bodyAjv as unknown as { _cache: Map<unknown, unknown> })._cache.size;
    t.same(
      (await push([correction(0, 'red')])).map((r) => r.outcome),
      ['applied'],
    );
    const before = kept();
    const results = await push([correction(1, 'red'), correction(2, 'green'), correction(3, 'red'), correction(4, 'purple')]);
    t.same(
      results.map((r) => r.outcome),
      ['applied', 'applied', 'applied', 'refused'],
      'each checked: a ripeness the API does not know is refused',
    );
    t.match(results[3], { status: 422, errors: [{ name: 'ripeness' }] }, 'naming it');
    t.equal(kept(), before, 'and no schema was compiled for them');
    const [row] = await dbRows<Change>(up, 'SELECT corrected_red, corrected_green FROM walks WHERE id = ?', w);
    t.same([Number(row!.corrected_red), Number(row!.corrected_green)], [5, 2], 'the corrected counts follow them');
  });

  t.test('a batch larger than one statement takes is written in several', async (t) => {
    // 4,500 change-log entries of 16 columns: more values than one statement binds (72,000; fails on SQLite unsplit).
    const ids = Array.from({ length: 4500 }, () => newId());
    const results = await push(ids.map((id, i) => harvest(id, { week: '2026-W12', kg: 1 + (i % 50) })));
    t.equal(results.filter((r) => r.outcome === 'applied').length, ids.length, 'every change applied');
    const stored = await call(up, 'GET', `${tree.cyclePath}/harvests?week=2026-W12&limit=1`, key);
    t.equal(stored.total, ids.length, 'every harvest stored');
  });

  t.test('a change sees what the changes before it in the same batch did', async (t) => {
    // A crop cycle made in the batch, then records on it; and a harvest sent before its cycle.
    const cycleId = newId();
    const v = version();
    const cycle = {
      ...envelope('cycles', cycleId, 'upsert', v),
      row: { ...cycleChange.row, id: cycleId, name: 'made in the batch', created_at: at, updated_at: at, version: v },
      fv: Object.fromEntries(Object.keys(cycleChange.fv ?? {}).map((f) => [f, v])),
    };
    const early = newId();
    const [h1, h2, i1] = [newId(), newId(), newId()];
    const first = await push([
      harvest(early, { week: '2026-W10', kg: 3 }, cycleId),
      cycle,
      harvest(h1, { week: '2026-W10', kg: 4 }, cycleId),
      irrigation(i1, cycleId),
      // Made, then edited, in the same batch: the later version stands.
      harvest(h2, { week: '2026-W10', kg: 5 }),
      harvest(h2, { week: '2026-W10', kg: 6 }),
    ]);
    t.same(
      first.map((r) => r.outcome),
      ['applied', 'applied', 'applied', 'applied', 'applied', 'applied'],
      'all applied',
    );
    const onCycle = await call(up, 'GET', `${tree.greenhousePath}/rows/${tree.rowId}/cycles/${cycleId}/harvests`, key);
    t.same(onCycle.items.map((h: Change) => h.kg).sort(), [3, 4], 'both harvests on the cycle made in the batch');
    t.equal((await harvests()).get(h2)!.kg, 6, 'the record made then edited holds the edit');

    // Deleted, then written again later in the same batch: a delete is final.
    const gone = newId();
    const stale = harvest(h2, { week: '2026-W10', kg: 1 });
    stale.v = stale.row.version = `${String(ms - 100_000).padStart(13, '0')}.000000.${node}`;
    const second = await push([
      harvest(gone, { week: '2026-W10', kg: 7 }),
      remove('harvests', gone),
      harvest(gone, { week: '2026-W10', kg: 8 }),
      stale,
      // The cycle deleted (in a savepoint of its own: its harvests go with it), then a late harvest on it.
      remove('cycles', cycleId),
      harvest(newId(), { week: '2026-W10', kg: 9 }, cycleId),
    ]);
    t.same(
      second.map((r) => r.outcome),
      ['applied', 'applied', 'superseded', 'superseded', 'applied', 'superseded'],
      'a write after a delete and an older edit are superseded, a harvest on a cycle deleted before it too',
    );
    const held = await harvests();
    t.notOk(held.has(gone), 'the deleted harvest stays deleted');
    t.equal(held.get(h2)!.kg, 6, 'the older edit did not win');
    t.equal(
      (await up.request('GET', `${tree.greenhousePath}/rows/${tree.rowId}/cycles/${cycleId}/harvests`, { key })).status,
      404,
      'the cycle is gone',
    );

    // The feed gives the batch's changes in the order they were applied.
    const after = await call(up, 'GET', '/api/sync/v1/changes?limit=2000', key);
    const ids = after.changes.map((c: Change) => c.id).filter((id: string) => id.startsWith(`${node}:`) && !id.includes('/'));
    const sorted = [...ids].sort((x: string, y: string) => Number(x.split(':')[1]) - Number(y.split(':')[1]));
    t.same(ids, sorted, 'in the order of the batches');
  });
});
