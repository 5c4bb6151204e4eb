import type { CycleColumns } from '../records/tables.js';

/** A stored forecast (migration 0009): issued once, never changed; deleted only with its crop cycle. */
export interface ForecastTable extends CycleColumns {
  /** ISO week label the forecast was made as of (its horizon 0). */
  week: string;
  /** Who issued it: the key's name, or "system" for the weekly schedule. */
  made_by: string;
  made_by_key_id: string | null;
  /** JSON: StoredWeek[] as answered when issued. */
  weeks: string;
  /** JSON: what the forecast rested on. */
  inputs: string;
  /** The model's name and version. */
  model: string;
}

export interface StoredWeek {
  week: string;
  horizon: number;
  kg: number;
  kg_per_m2: number | null;
  p10_kg: number;
  p90_kg: number;
  method: string;
}

declare module '../db/schema.js' {
  interface Database {
    forecasts: ForecastTable;
  }
}
