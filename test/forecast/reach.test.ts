// Which logged writes can change a crop cycle's forecast inputs (src/forecast/reach.ts): the judge that lets a
// kept replay outlive a week note or another row's harvest, and read again after anything it does not know.
import t from 'tap';
import { reachOf } from '../../src/forecast/reach.js';

const ours = 'cycle-a';
const of = (entity: string, cycle: string | null, op: 'after' | 'before' | 'both' = 'after', other?: string) => {
  const json = cycle === null ? JSON.stringify({ id: 'x' }) : JSON.stringify({ id: 'x', cycle_id: cycle });
  return {
    entity,
    before: op === 'after' ? null : op === 'both' && other ? JSON.stringify({ id: 'x', cycle_id: other }) : json,
    after: op === 'before' ? null : json,
  };
};

t.test('nothing written: nothing reached', async (t) => {
  t.same(reachOf([], ours), { cycle: false, climate: false });
});

t.test('records the model never reads reach nothing, of any cycle', async (t) => {
  for (const e of ['week_notes', 'forecasts', 'irrigation_entries', 'api_keys'])
    t.same(reachOf([of(e, ours)], ours), { cycle: false, climate: false }, e);
});

t.test("a cycle's own records reach its inputs but not its climate; another cycle's reach neither", async (t) => {
  for (const e of ['harvests', 'truss_counts', 'truss_count_rows', 'walks', 'walk_corrections', 'fruit_masses']) {
    t.same(reachOf([of(e, ours)], ours), { cycle: true, climate: false }, `${e} of this cycle`);
    t.same(reachOf([of(e, ours, 'before')], ours), { cycle: true, climate: false }, `${e} of this cycle, deleted`);
    t.same(reachOf([of(e, 'cycle-b')], ours), { cycle: false, climate: false }, `${e} of another cycle`);
    t.same(reachOf([of(e, 'cycle-b', 'both', ours)], ours), { cycle: true, climate: false }, `${e} moved here from ours`);
    t.same(reachOf([of(e, null)], ours), { cycle: true, climate: false }, `${e} that does not say its cycle: taken as ours`);
  }
  t.same(
    reachOf([{ entity: 'harvests', before: null, after: 'not json' }], ours),
    { cycle: true, climate: false },
    'unreadable: taken as ours',
  );
});

t.test('climate, weather, the registry and anything unknown reach the inputs and the climate', async (t) => {
  for (const e of ['climate_readings', 'climate_imports', 'weather_hours', 'cycles', 'rows', 'greenhouses', 'farms', 'a_table_added_later'])
    t.same(reachOf([of(e, 'cycle-b')], ours), { cycle: true, climate: true }, e);
  t.same(
    reachOf([of('week_notes', ours), of('harvests', 'cycle-b'), of('harvests', ours), of('weather_hours', null)], ours),
    { cycle: true, climate: true },
    'the widest reach of a run of writes',
  );
});
