import { presentInstant } from '../../time/instants.js';
import { correctedCounts, modelCounts } from '../jobs/presenters.js';
import type { WalkTable } from '../jobs/tables.js';
import type { Corrected } from './apply.js';
import { toCorrection } from './commands.js';
import type { WalkCorrectionTable } from './tables.js';

/** Row → JSON of a correction; instants in the walk's greenhouse zone, like the walk's. */
export function presentCorrection(row: WalkCorrectionTable, zone: string) {
  const c = toCorrection(row);
  return {
    correction_id: row.id,
    walk_id: row.walk_id,
    organization_id: row.organization_id,
    kind: row.kind,
    track_id: c.track_id,
    ripeness: c.ripeness,
    frame_id: c.frame_id,
    box: c.box,
    counts: c.counts,
    note: row.note,
    created_by_key_id: row.created_by_key_id,
    created_at: presentInstant(row.created_at, zone),
    updated_at: presentInstant(row.updated_at, zone),
    version: row.version,
  };
}

/** Every answer about corrections carries the walk's model and corrected counts (docs/api-conventions.md, "Walk corrections"). */
export const walkCounts = (walk: WalkTable) => ({ model_counts: modelCounts(walk), corrected_counts: correctedCounts(walk) });

export function presentWalkCorrections(walk: WalkTable, rows: readonly WalkCorrectionTable[], corrected: Corrected | null, zone: string) {
  return {
    walk_id: walk.id,
    status: walk.status,
    weeks:
      walk.cycle_id && walk.week
        ? [{ farm_id: walk.farm_id!, greenhouse_id: walk.greenhouse_id!, row_id: walk.row_id!, cycle_id: walk.cycle_id, week: walk.week }]
        : [],
    corrections: rows.map((r) => presentCorrection(r, zone)),
    fruit: corrected?.fruit ?? [],
    removed_track_ids: corrected?.removed ?? [],
    ...walkCounts(walk),
  };
}
