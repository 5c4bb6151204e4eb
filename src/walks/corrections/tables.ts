import type { SyncedColumns } from '../../db/schema.js';
import type { Ripeness } from '../../vision/types.js';

export type CorrectionKind = 'ripeness' | 'remove' | 'add' | 'counts';
export const CORRECTION_KINDS: readonly CorrectionKind[] = ['ripeness', 'remove', 'add', 'counts'];

/** One staff correction of a walk (docs/api-conventions.md, "Walk corrections"). */
export interface WalkCorrectionTable extends SyncedColumns {
  walk_id: string;
  /** The walk's crop cycle (null for a quick score), for cascades by cycle. */
  cycle_id: string | null;
  kind: CorrectionKind;
  /** ripeness, remove: the fruit (result.fruit[].track_id). */
  track_id: number | null;
  /** ripeness, add: the ripeness the fruit has. */
  ripeness: Ripeness | null;
  /** add: walk-wide index of the frame the fruit is seen in. */
  frame_id: number | null;
  /** add: JSON [x1, y1, x2, y2], pixels of that frame; null when not given. */
  box: string | null;
  /** counts: JSON {green?, turning?, red?}. */
  counts: string | null;
  note: string | null;
  created_by_key_id: string | null;
}

declare module '../../db/schema.js' {
  interface Database {
    walk_corrections: WalkCorrectionTable;
  }
}
