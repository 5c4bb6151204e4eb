import type { SyncedColumns } from '../../db/schema.js';

/** One reading of one metric at one instant in one crop cycle (unique on the three). */
export interface ClimateReadingTable extends SyncedColumns {
  cycle_id: string;
  metric: string;
  /** UTC, always `YYYY-MM-DDTHH:mm:ss.sssZ` (24 characters), so text order is time order. */
  at_utc: string;
  /** In the metric's canonical unit. */
  value: number;
  /** The import that last set the value; null when typed or edited by hand. */
  import_id: string | null;
}

declare module '../../db/schema.js' {
  interface Database {
    climate_readings: ClimateReadingTable;
  }
}
