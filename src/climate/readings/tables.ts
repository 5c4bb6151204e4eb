/**
 * The readings of one crop cycle, one row per metric and instant (WITHOUT ROWID,
 * keyed by cycle_key, at_ms, metric_code; migration 0005). Not a synced row of its
 * own shape: the reading a client sees (`ClimateReading`) is made from it by
 * `points.ts`, its id derived from the key (`point-id.ts`).
 */
export interface ClimatePointTable {
  cycle_key: number;
  /** The instant, epoch milliseconds. */
  at_ms: number;
  /** climate_metric_codes.code of the metric. */
  metric_code: number;
  /** In the metric's canonical unit. */
  value: number;
  /** climate_imports.seq of the import that last set the value; null when typed or edited by hand. */
  import_seq: number | null;
  created_ms: number;
  /** Null (with `version`) while the value is the one `import_seq` set: that import's time and version stand. */
  changed_ms: number | null;
  version: string | null;
  /** The point_id when it is not derived from the key (readings stored before migration 0005). */
  fixed_id: string | null;
  /** PostgreSQL only (Citus distributes by it, docs/citus.md); SQLite's rows are keyed by cycle_key alone. */
  organization_id?: string;
}

export interface ClimateCycleKeyTable {
  key: number;
  cycle_id: string;
  /** PostgreSQL only, as on climate_points. */
  organization_id?: string;
}

export interface ClimateMetricCodeTable {
  code: number;
  metric: string;
}

/** A climate reading as the API shows it, whatever its storage. */
export interface ClimateReading {
  id: string;
  organization_id: string;
  cycle_id: string;
  metric: string;
  /** UTC, always `YYYY-MM-DDTHH:mm:ss.sssZ`. */
  at_utc: string;
  value: number;
  /** The import that last set the value; null when typed or edited by hand. */
  import_id: string | null;
  created_at: string;
  updated_at: string;
  version: string;
}

declare module '../../db/schema.js' {
  interface Database {
    climate_points: ClimatePointTable;
    climate_cycle_keys: ClimateCycleKeyTable;
    climate_metric_codes: ClimateMetricCodeTable;
  }
}
