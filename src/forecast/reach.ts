/**
 * Which writes can change what the forecast model reads of one crop cycle (src/forecast/queries.ts), judged
 * from the change log's entries, so that a kept replay outlives the writes that cannot change it
 * (src/forecast/forecast.ts, cycleReplay). Anything not named here is taken to reach every cycle and its
 * climate: a kind of record added later costs a replay until it is named, never a stale forecast.
 */

import type { RecordPart } from './queries.js';

/** Records the model never reads, though most belong to a cycle. */
const NOT_READ = new Set(['week_notes', 'forecasts', 'irrigation_entries', 'api_keys']);

/**
 * Records that belong to one crop cycle (their row carries its `cycle_id`) and change only that cycle's inputs,
 * and the part of its load each is read into (src/forecast/queries.ts).
 */
const PART_OF: Record<string, RecordPart> = {
  harvests: 'harvests',
  truss_counts: 'trussCounts',
  truss_count_rows: 'trussCounts',
  walks: 'walks',
  walk_corrections: 'walks',
  fruit_masses: 'fruitMass',
};

export const ALL_PARTS: readonly RecordPart[] = ['harvests', 'trussCounts', 'walks', 'fruitMass', 'climate'];

export interface LoggedChange {
  entity: string;
  before: string | null;
  after: string | null;
}

export interface Reach {
  /** The cycle's inputs may have changed: read them again. */
  cycle: boolean;
  /** The parts of its load that may have changed; the others can be kept. */
  parts: Set<RecordPart>;
}

/** Everything reached: what a judge that cannot tell says. */
export const REACH_ALL: Readonly<Reach> = { cycle: true, parts: new Set(ALL_PARTS) };

export function reachOf(changes: readonly LoggedChange[], cycleId: string): Reach {
  const reach: Reach = { cycle: false, parts: new Set() };
  for (const c of changes) {
    if (NOT_READ.has(c.entity)) continue;
    const part = PART_OF[c.entity];
    if (part) {
      const owners = [c.before, c.after].map(cycleOf).filter((x) => x !== undefined);
      // A record of another cycle (before and after the write, should it have moved) is not this cycle's.
      if (owners.length && owners.every((x) => x !== cycleId)) continue;
      reach.cycle = true;
      reach.parts.add(part);
      continue;
    }
    return { cycle: true, parts: new Set(ALL_PARTS) };
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
