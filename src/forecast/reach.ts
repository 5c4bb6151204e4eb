/**
 * Which writes can change what the forecast model reads of one crop cycle (src/forecast/queries.ts), judged
 * from the change log's entries, so that a kept replay outlives the writes that cannot change it
 * (src/forecast/forecast.ts, cycleReplay). Anything not named here is taken to reach every cycle and its
 * climate: a kind of record added later costs a replay until it is named, never a stale forecast.
 */

/** Records the model never reads. */
const NOT_READ = new Set(['week_notes', 'forecasts', 'irrigation_entries', 'api_keys']);

/** Records that belong to one crop cycle (their row carries its `cycle_id`) and change only that cycle's inputs. */
const OF_ONE_CYCLE = new Set([
  'harvests',
  'truss_counts',
  'truss_count_rows',
  'walks',
  'walk_corrections',
  'fruit_masses',
  'week_notes',
  'forecasts',
  'irrigation_entries',
]);

/** Records that hold no climate: a write of them leaves the climate days the model read as they were. */
const NOT_CLIMATE = new Set([...OF_ONE_CYCLE, ...NOT_READ]);

export interface LoggedChange {
  entity: string;
  before: string | null;
  after: string | null;
}

export interface Reach {
  /** The cycle's inputs may have changed: read them again. */
  cycle: boolean;
  /** Its climate days may have changed too. */
  climate: boolean;
}

export function reachOf(changes: readonly LoggedChange[], cycleId: string): Reach {
  const reach: Reach = { cycle: false, climate: false };
  for (const c of changes) {
    if (NOT_READ.has(c.entity)) continue;
    if (OF_ONE_CYCLE.has(c.entity)) {
      const owners = [c.before, c.after].map(cycleOf).filter((x) => x !== undefined);
      // A record of another cycle (before and after the write, should it have moved) is not this cycle's.
      if (owners.length && owners.every((x) => x !== cycleId)) continue;
    }
    reach.cycle = true;
    if (!NOT_CLIMATE.has(c.entity)) reach.climate = true;
    if (reach.climate) break;
  }
  return reach;
}

function cycleOf(json: string | null): string | undefined {
  if (!json) return undefined;
  try {
    const id = (JSON.parse(json) as { cycle_id?: unknown }).cycle_id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
