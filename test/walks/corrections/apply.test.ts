// The rules of staff corrections, on plain values: what each kind does to the fruit and counts,
// in which order they apply, and which ones contradict each other.
import t from 'tap';
import { applyCorrections, boxProblem, conflictingCorrections, type Correction } from '../../../src/walks/corrections/apply.js';
import type { StoredFruit } from '../../../src/walks/jobs/result.js';
import type { Ripeness } from '../../../src/vision/types.js';

const fruit = (track_id: number, ripeness: Ripeness): StoredFruit => ({
  track_id,
  ripeness,
  votes: { green: 0, turning: 0, red: 0 },
  box: [10, 10, 30, 30],
  frame: 2,
  first_frame: 0,
  last_frame: 4,
  frames_seen: 5,
  score: 0.9,
  diameter_mm: null,
});
const FRUIT = [fruit(1, 'green'), fruit(2, 'green'), fruit(3, 'turning'), fruit(4, 'red')];
let n = 0;
/** Ids sort in the order made, like UUIDv7s. */
const c = (kind: Correction['kind'], fields: Partial<Correction> = {}): Correction => ({
  id: `0000-${String(++n).padStart(4, '0')}`,
  kind,
  track_id: null,
  ripeness: null,
  frame_id: null,
  box: null,
  counts: null,
  ...fields,
});

t.test("without corrections the fruit and counts are the detector's", async (t) => {
  const r = applyCorrections(FRUIT, []);
  t.same(r.counts, { green: 2, turning: 1, red: 1, total: 4 });
  t.same(
    r.fruit.map((f) => [f.track_id, f.ripeness, f.model_ripeness, f.correction_id]),
    [
      [1, 'green', 'green', null],
      [2, 'green', 'green', null],
      [3, 'turning', 'turning', null],
      [4, 'red', 'red', null],
    ],
  );
  t.same(r.removed, []);
});

t.test('ripeness, remove and add move the counts fruit by fruit', async (t) => {
  const ripe = c('ripeness', { track_id: 1, ripeness: 'red' });
  const gone = c('remove', { track_id: 3 });
  const added = c('add', { frame_id: 0, ripeness: 'turning', box: [1, 1, 9, 9] });
  const r = applyCorrections(FRUIT, [ripe, gone, added]);
  t.same(r.counts, { green: 1, turning: 1, red: 2, total: 4 });
  t.same(r.removed, [3]);
  t.same(
    r.fruit.find((f) => f.track_id === 1),
    { track_id: 1, ripeness: 'red', model_ripeness: 'green', frame: 2, box: [10, 10, 30, 30], correction_id: ripe.id },
  );
  t.same(
    r.fruit.at(-1),
    { track_id: null, ripeness: 'turning', model_ripeness: null, frame: 0, box: [1, 1, 9, 9], correction_id: added.id },
    'an added fruit comes last, with no track id',
  );
});

t.test('a removal outweighs a ripeness whichever came first; the later ripeness of a fruit wins', async (t) => {
  const before = applyCorrections(FRUIT, [c('ripeness', { track_id: 2, ripeness: 'red' }), c('remove', { track_id: 2 })]);
  const after = applyCorrections(FRUIT, [c('remove', { track_id: 2 }), c('ripeness', { track_id: 2, ripeness: 'red' })]);
  t.same(before.counts, { green: 1, turning: 1, red: 1, total: 3 });
  t.same(after.counts, before.counts);
  const first = c('ripeness', { track_id: 1, ripeness: 'turning' });
  const second = c('ripeness', { track_id: 1, ripeness: 'red' });
  t.equal(applyCorrections(FRUIT, [second, first]).fruit[0]!.ripeness, 'red', 'applied by id (the order made), not the order given');
});

t.test('counts made by hand replace the classes they name; the rest stay corrected fruit by fruit', async (t) => {
  const r = applyCorrections(FRUIT, [c('remove', { track_id: 1 }), c('counts', { counts: { red: 40 } })]);
  t.same(r.counts, { green: 1, turning: 1, red: 40, total: 42 });
  t.same(applyCorrections(FRUIT, [c('counts', { counts: { green: 0, turning: 0, red: 0 } })]).counts, {
    green: 0,
    turning: 0,
    red: 0,
    total: 0,
  });
});

t.test('a correction naming a fruit the walk does not have changes nothing', async (t) => {
  const r = applyCorrections(FRUIT, [c('remove', { track_id: 99 }), c('ripeness', { track_id: 98, ripeness: 'red' })]);
  t.same(r.counts, { green: 2, turning: 1, red: 1, total: 4 });
  t.same(r.removed, []);
});

t.test('which corrections a new one contradicts', async (t) => {
  const ripe = c('ripeness', { track_id: 1, ripeness: 'red' });
  const gone = c('remove', { track_id: 2 });
  const counts = c('counts', { counts: { red: 3 } });
  const all = [ripe, gone, counts];
  t.same(conflictingCorrections(all, { kind: 'ripeness', track_id: 1 }), [ripe], 'a second ripeness for a fruit');
  t.same(conflictingCorrections(all, { kind: 'ripeness', track_id: 2 }), [gone], 'a ripeness for a removed fruit');
  t.same(conflictingCorrections(all, { kind: 'ripeness', track_id: 3 }), []);
  t.same(conflictingCorrections(all, { kind: 'remove', track_id: 2 }), [gone], 'removed twice');
  t.same(
    conflictingCorrections(all, { kind: 'remove', track_id: 1 }),
    [ripe],
    'removing a fruit whose ripeness was corrected: the first names it',
  );
  t.same(conflictingCorrections(all, { kind: 'remove', track_id: 3 }), []);
  t.same(conflictingCorrections(all, { kind: 'counts', track_id: null }), [counts], 'one counts correction per walk');
  t.same(conflictingCorrections(all, { kind: 'add', track_id: null }), [], 'fruit are added freely');
});

t.test('a box must be ordered and inside its frame', async (t) => {
  t.equal(boxProblem([0, 0, 640, 360], 640, 360), null, 'the whole frame');
  t.match(boxProblem([10, 10, 10, 20], 640, 360), /x2 > x1/);
  t.match(boxProblem([10, 30, 20, 20], 640, 360), /y2 > y1/);
  t.match(boxProblem([600, 10, 641, 20], 640, 360), /inside the frame \(640 × 360 px\)/);
  t.match(boxProblem([-1, 10, 20, 20], 640, 360), /inside/);
});
