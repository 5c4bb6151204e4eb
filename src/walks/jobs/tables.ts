import type { SyncedColumns } from '../../db/schema.js';

/**
 * The walk (scoring job) tables. A walk row is the job: the runner claims it,
 * scores it and writes the result into the same row, so a restart can always
 * tell what was done and nothing is scored into two walks.
 */
export type WalkStatus = 'queued' | 'running' | 'done' | 'failed';
export const WALK_STATUSES: readonly WalkStatus[] = ['queued', 'running', 'done', 'failed'];

/** Where the walk came from: the org-less upload, a crop-cycle upload (one clip or a batch), or a shipped example. */
export type WalkSource = 'observation' | 'cycle_video' | 'cycle_batch' | 'example';

export interface WalkTable extends SyncedColumns {
  farm_id: string | null;
  greenhouse_id: string | null;
  row_id: string | null;
  cycle_id: string | null;
  /** ISO week label, with cycle_id. */
  week: string | null;
  source: WalkSource;
  example_key: string | null;
  status: WalkStatus;
  progress: number;
  mode: string;
  /** JSON of ScoringOptions. */
  options: string;
  /** Name of the detector that scored it (set when it ran). */
  detector: string | null;
  error: string | null;
  idempotency_key: string | null;
  /** sha256 over the upload's bytes and form fields: tells a true retry from a reused key. */
  request_hash: string;
  created_by_key_id: string | null;
  attempts: number;
  started_at: string | null;
  finished_at: string | null;
  count_green: number | null;
  count_turning: number | null;
  count_red: number | null;
  count_total: number | null;
  /** Counts after staff corrections (src/walks/corrections; the detector's while there are none); null until done. */
  corrected_green: number | null;
  corrected_turning: number | null;
  corrected_red: number | null;
  corrected_total: number | null;
  /** JSON of StoredResult when done. */
  result: string | null;
  /**
   * The process that claimed the walk (its instance number on PostgreSQL, where several share the
   * queue; null on SQLite and before the first claim). Migration 0011.
   */
  claimed_by?: number | null;
  /** When the uploaded clips were removed by the retention setting (null while kept). */
  clips_removed_at: string | null;
  /** When the frames and overlays were removed by the retention setting (null while kept). */
  frames_removed_at: string | null;
}

export interface WalkClipTable extends SyncedColumns {
  walk_id: string;
  cycle_id: string | null;
  /** 0-based walking order. */
  position: number;
  /** Name the box gave the file under DATA_DIR/walks/<walk>/clips/. */
  file_name: string;
  original_name: string;
  size_bytes: number;
  sha256: string;
  kind: 'image' | 'video';
  format: string;
  width: number;
  height: number;
  duration_s: number;
  status: WalkStatus;
  progress: number;
  frames: number;
  error: string | null;
}

declare module '../../db/schema.js' {
  interface Database {
    walks: WalkTable;
    walk_clips: WalkClipTable;
  }
}
