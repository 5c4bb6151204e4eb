import t from 'tap';
import { startServer, createTree } from '../../helpers/server.js';
import { measureNote } from '../../../src/records/week-notes/limits.js';

const nested = (depth: number): Record<string, unknown> => {
  let o: Record<string, unknown> = { leaf: 1 };
  for (let d = 1; d < depth; d++) o = { n: o };
  return o;
};

t.test('measureNote', async (t) => {
  t.same(measureNote({}), { depth: 1, keys: 0 });
  t.same(measureNote({ a: 1, b: { c: [1, { d: 2 }] } }), { depth: 4, keys: 4 });
  t.equal(measureNote(nested(8)).depth, 8);
  t.equal(measureNote(nested(9)).depth, 9);
  let arrays: unknown = [];
  for (let i = 1; i < 9; i++) arrays = [arrays];
  t.equal(measureNote({ a: arrays }, { depth: 100, keys: 100 }).depth, 10, 'arrays count as levels: the object and 9 arrays');
  t.equal(measureNote({ a: arrays }).depth, 9, 'with the default limits it stops once past depth 8');
  let deep: unknown = {};
  for (let i = 0; i < 100_000; i++) deep = { d: deep };
  t.ok(measureNote(deep).depth > 8, 'very deep input does not overflow the stack');
});

t.test('week notes over HTTP', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const key = tree.adminKey;
  const url = (w: string) => `${tree.cyclePath}/weeks/${w}`;
  const stored = async () =>
    (
      await s.app.services.db
        .selectFrom('week_notes')
        .select(['week', 'body'])
        .where('cycle_id', '=', tree.cycleId)
        .orderBy('week')
        .execute()
    ).map((r) => [r.week, JSON.parse(r.body)]);

  const note = { pests: { whitefly: 'low' }, leaf_removal: true, tasks: ['deleaf rows 1-4', { row: 5, done: false }], 'emoji ok': '🍅' };
  const r = await s.request('POST', url('2026-02-11'), { key, body: note });
  t.equal(r.status, 201, r.text);
  t.match(r.body, { week: '2026-W07', cycle_id: tree.cycleId });
  t.same(r.body.note, note);

  const again = await s.request('POST', url('2026-W07'), { key, body: { replaced: 1 } });
  t.equal(again.status, 201);
  t.same(again.body.note, { replaced: 1 });
  t.not(again.body.version, r.body.version);
  t.same(await stored(), [['2026-W07', { replaced: 1 }]], 'saving again replaces; one note per week');

  const proto = await s.request('POST', url('2026-W08'), {
    key,
    body: '{"__proto__":{"polluted":true},"a":1}',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(proto.status, 422, 'a __proto__ key is refused by the JSON reader');
  t.equal(({} as any).polluted, undefined, 'no prototype pollution');
  t.same(await stored(), [['2026-W07', { replaced: 1 }]], 'nothing stored');

  t.test('caps and shapes: 4xx and nothing changed', async (t) => {
    const before = await stored();
    const atDepth8 = await s.request('POST', url('2026-W09'), { key, body: nested(8) });
    t.equal(atDepth8.status, 201, 'depth 8 is allowed');
    const deep = await s.request('POST', url('2026-W09'), { key, body: nested(9) });
    t.equal(deep.status, 422);
    t.match(deep.body.errors[0].message, /depth limit 8/);

    const keys1000 = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    t.equal((await s.request('POST', url('2026-W10'), { key, body: keys1000 })).status, 201, '1,000 keys allowed');
    const keys = {
      a: Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`k${i}`, i])),
      b: Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, i])),
    };
    const tooMany = await s.request('POST', url('2026-W11'), { key, body: keys });
    t.equal(tooMany.status, 422, '1,002 keys in all levels');
    t.match(tooMany.body.errors[0].message, /key limit 1000/);

    const big = await s.request('POST', url('2026-W11'), { key, body: { text: 'x'.repeat(65 * 1024) } });
    t.equal(big.status, 413);
    t.equal(big.body.code, 'payload_too_large');
    const padded = await s.request('POST', url('2026-W11'), {
      key,
      body: `{"a":1${' '.repeat(70 * 1024)}}`,
      headers: { 'content-type': 'application/json' },
    });
    t.equal(padded.status, 413, 'the body as sent counts, whitespace too');
    const huge = await s.request('POST', url('2026-W11'), { key, body: { text: 'x'.repeat(2 * 1024 * 1024) } });
    t.equal(huge.status, 413, 'above the JSON body limit');

    for (const body of ['[1,2]', '"text"', '42', 'null', 'true']) {
      const r = await s.request('POST', url('2026-W11'), { key, body, headers: { 'content-type': 'application/json' } });
      t.equal(r.status, 422, `${body} is not an object`);
    }
    t.equal(
      (await s.request('POST', url('2026-W11'), { key, body: '{bad json', headers: { 'content-type': 'application/json' } })).status,
      422,
    );
    t.equal((await s.request('POST', url('2027-W53'), { key, body: { a: 1 } })).status, 422, 'a week that does not exist');
    const badWeek = await s.request('POST', url('week-11'), { key, body: { a: 1 } });
    t.equal(badWeek.status, 422);
    t.equal(badWeek.body.errors[0].in, 'path');
    t.equal((await s.request('POST', url('2026-W11'), { key, body: 'a=1', headers: { 'content-type': 'text/plain' } })).status, 415);

    const after = await stored();
    t.same(
      after.filter(([w]) => !['2026-W09', '2026-W10'].includes(w)),
      before,
      'nothing else stored or changed',
    );
    t.same(
      after.map(([w]) => w),
      ['2026-W07', '2026-W09', '2026-W10'],
    );
  });

  t.test('404 for another organization', async (t) => {
    const other = await createTree(s);
    t.equal((await s.request('POST', `${other.cyclePath}/weeks/2026-W07`, { key, body: { a: 1 } })).status, 404);
    const mixed = url('2026-W07').replace(tree.cycleId, other.cycleId);
    t.equal((await s.request('POST', mixed, { key, body: { a: 1 } })).status, 404);
  });
});

t.test('weekWindowUtc follows the greenhouse clock', async (t) => {
  const { weekWindowUtc } = await import('../../../src/time/weeks.js');
  const { parseWeek } = await import('../../../src/time/weeks.js');
  t.same(weekWindowUtc(parseWeek('2026-W07')!, 'Europe/Amsterdam'), { from: '2026-02-08T23:00:00.000Z', to: '2026-02-15T23:00:00.000Z' });
  const dst = weekWindowUtc(parseWeek('2026-W13')!, 'Europe/Amsterdam');
  t.same(dst, { from: '2026-03-22T23:00:00.000Z', to: '2026-03-29T22:00:00.000Z' }, 'the week with the spring change is 167 hours');
  t.same(weekWindowUtc(parseWeek('2026-W07')!, 'America/New_York'), { from: '2026-02-09T05:00:00.000Z', to: '2026-02-16T05:00:00.000Z' });
});
