import { presentParents } from '../common.js';
import { weekOfDate } from '../../time/weeks.js';
import type { CycleTable } from '../../db/schema.js';
import { countSeries } from './figures.js';
import type { StoredCount } from './commands.js';

/** Every count newest first, each with its figures and the change since the one before it. */
export function presentTrussCounts(counts: StoredCount[], cycle: CycleTable) {
  return countSeries(counts, { stems_per_m2: cycle.stems_per_m2, plants_per_m2: cycle.plants_per_m2 }).map(
    ({ count, figures, change }) => ({
      count_id: count.id,
      ...presentParents(count),
      counted_on: count.counted_on,
      week: weekOfDate(count.counted_on)!.label,
      stems_per_m2: count.stems_per_m2,
      rows: count.rows.map((r) => ({ plant: r.plant, truss: r.truss, fruits: r.fruits, flowers: r.flowers })),
      figures,
      change,
      created_at: count.created_at,
      updated_at: count.updated_at,
      version: count.version,
    }),
  );
}
