/**
 * What the scheduler remembers of each schedule (and each of its targets: a greenhouse, for the
 * jobs that run once per greenhouse), so that a run due while the box was off is made up at
 * start and GET /api/schedules can say how the last run went. Local to the box, not synced.
 */
export interface ScheduleStateTable {
  schedule: string;
  /** '' for a schedule with one run for the whole box; else the target's key (a greenhouse id). */
  target: string;
  /** ISO 8601 UTC: the next run is the first due time after this (the last run's start, or when first seen). */
  anchor_at: string;
  last_started_at: string | null;
  last_finished_at: string | null;
  /** ok | failed | interrupted (the service stopped while it ran). */
  last_outcome: string | null;
  last_duration_ms: number | null;
  last_error: string | null;
  /** JSON: what the job said it did (counts, a file name). */
  last_result: string | null;
}

declare module '../db/schema.js' {
  interface Database {
    schedule_state: ScheduleStateTable;
  }
}
