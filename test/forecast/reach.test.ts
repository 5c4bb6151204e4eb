// Which logged writes can change a crop cycle's forecast inputs, and which part of its load (src/forecast/reach.ts):
// the judge that lets a kept replay outlive a week note or another row's harvest, read again only the records a
// write reached, and everything after anything it does not know.
import t from 'tap';
import { ALL_PARTS, reachOf } from '../../src/forecast/reach.js';

const ours = 'cycle-a';
const of = (entity: string, cycle: string | null, op: 'after' | 'before' | 'both' = 'after', other?: string) => {
  const json = cycle === null ? JSON.stringify({ id: 'x' }) : JSON.stringify({ id: 'x', cycle_id: cycle });
  return {
    entity,
    before: op === 'after' ? null : op === 'both' && other ? JSON.stringify({ id: 'x', cycle_id: other }) : json,
    after: op === 'before' ? null : json,
  };
};
const reach = (changes: ReturnType<typeof of>[]) => {
  const r = reachOf(changes, ours);
  return { cycle: r.cycle, parts: [...r.parts].sort() };
};
const none = { cycle: false, parts: [] };
const all = { cycle: true, parts: [...ALL_PARTS].sort() };

t.test('nothing written: nothing reached', async (t) => {
  t.same(reach([]), none);
});

t.test('records the model never reads reach nothing, of any cycle', async (t) => {
  for (const e of ['week_notes', 'forecasts', 'irrigation_entries', 'api_keys']) t.same(reach([of(e, ours)]), none, e);
});

t.test("a cycle's own records reach their own part; another cycle's reach nothing", async (t) => {
  for (const [e, part] of [
    ['harvests', 'harvests'],
    ['truss_counts', 'trussCounts'],
    ['truss_count_rows', 'trussCounts'],
    ['walks', 'walks'],
    ['walk_corrections', 'walks'],
    ['fruit_masses', 'fruitMass'],
  ] as const) {
    const own = { cycle: true, parts: [part] };
    t.same(reach([of(e, ours)]), own, `${e} of this cycle`);
    t.same(reach([of(e, ours, 'before')]), own, `${e} of this cycle, deleted`);
    t.same(reach([of(e, 'cycle-b')]), none, `${e} of another cycle`);
    t.same(reach([of(e, 'cycle-b', 'both', ours)]), own, `${e} moved here from ours`);
    t.same(reach([of(e, null)]), own, `${e} that does not say its cycle: taken as ours`);
  }
  t.same(
    reachOf([{ entity: 'harvests', before: null, after: 'not json' }], ours).parts,
    new Set(['harvests']),
    'unreadable: taken as ours',
  );
  t.same(
    reach([of('harvests', ours), of('walks', ours), of('harvests', 'cycle-b')]),
    { cycle: true, parts: ['harvests', 'walks'] },
    'parts add up',
  );
});

t.test('climate, weather, the registry and anything unknown reach every part', async (t) => {
  for (const e of ['climate_readings', 'climate_imports', 'weather_hours', 'cycles', 'rows', 'greenhouses', 'farms', 'a_table_added_later'])
    t.same(reach([of(e, 'cycle-b')]), all, e);
  t.same(
    reach([of('week_notes', ours), of('harvests', 'cycle-b'), of('harvests', ours), of('weather_hours', null)]),
    all,
    'the widest reach of a run of writes',
  );
});
