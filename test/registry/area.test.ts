import t from 'tap';
import { cycleArea, perM2 } from '../../src/registry/area.js';

t.test("a cycle's area: its own, else plants over density, else null with the reason", async (t) => {
  t.same(cycleArea({ area_m2: 62.5, plants_per_m2: 2 }, { plant_count: 10 }), { area_m2: 62.5, basis: 'cycle_area_m2', reason: null });
  t.same(cycleArea({ area_m2: null, plants_per_m2: 2.5 }, { plant_count: 250 }), {
    area_m2: 100,
    basis: 'row_plant_count_over_plants_per_m2',
    reason: null,
  });
  const none = cycleArea({ area_m2: null, plants_per_m2: null }, { plant_count: null });
  t.equal(none.area_m2, null);
  t.match(none.reason, /area_m2 on the crop cycle, or the row's plant_count and the cycle's plants_per_m2/);
  t.match(
    cycleArea({ area_m2: null, plants_per_m2: 2 }, { plant_count: null }).reason,
    /the row's plant_count \(/,
    'names only what is missing',
  );
  t.equal(perM2(50, cycleArea({ area_m2: 25, plants_per_m2: null }, null)), 2);
  t.equal(perM2(50, none), null);
});
