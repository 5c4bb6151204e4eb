import type { SyncedColumns } from '../../db/schema.js';

export type ImportKind = 'csv' | 'file' | 'ingest' | 'watch';
export type ImportStatus = 'done' | 'failed' | 'undone';

export interface ClimateImportTable extends SyncedColumns {
  /** A small number per import, unique on the box: how readings name the import that set them. */
  seq: number;
  cycle_id: string;
  greenhouse_id: string;
  file_name: string;
  /** sha256 of the file's bytes, hex. */
  content_hash: string;
  size_bytes: number;
  kind: ImportKind;
  /** `key:<key id>`, `admin-token`, or `watcher`. */
  actor: string;
  rows_read: number;
  readings_added: number;
  readings_updated: number;
  readings_skipped: number;
  from_utc: string | null;
  to_utc: string | null;
  /** JSON array of metric names stored. */
  metrics: string;
  status: ImportStatus;
  failure_reason: string | null;
  /** JSON: the mapping the import used (C1's confirmed mapping), null when it failed before one was known. */
  mapping: string | null;
  /** JSON array of warning texts. */
  warnings: string;
  undone_at: string | null;
}

/** An import's undo record for one metric (packed float64 LE; see engine.ts's UndoLog). */
export interface ClimateImportUndoTable {
  import_seq: number;
  metric: string;
  /** Instants (epoch ms) the import added. */
  added: Buffer;
  /** Triples: instant, previous value, previous import seq (NaN: typed by hand). */
  updated: Buffer;
  /** PostgreSQL only (Citus distributes by it, docs/citus.md), as on climate_points. */
  organization_id?: string;
}

export interface ClimateFileMappingTable extends SyncedColumns {
  greenhouse_id: string;
  /** JSON: the confirmed mapping (column choices) of C1's analysis. */
  mapping: string;
  source_file_name: string;
}

declare module '../../db/schema.js' {
  interface Database {
    climate_imports: ClimateImportTable;
    climate_import_undo: ClimateImportUndoTable;
    climate_file_mappings: ClimateFileMappingTable;
  }
}
