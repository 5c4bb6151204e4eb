// Shapes shared by the export reader and its callers (preview, import, watched folder).
import type { HourlyValue } from './hourly.js';

/** A file to read: its bytes, or a path to stream it from. fileName decides nothing by itself (content does) but is reported. */
export type ExportInput = { bytes: Uint8Array; fileName?: string } | { path: string; fileName?: string };

export type DateOrder = 'dmy' | 'mdy';

/**
 * A column the caller names explicitly: `column` is the header text as `analyseExport`
 * reports it in `columns[].header` (or its name cell alone), or a 0-based column index.
 * `unit` is the unit of the file's values (any spelling parseUnit knows); left out, the
 * unit found in the header is used, else the metric's canonical unit.
 */
export interface ColumnChoice {
  column: string | number;
  metric: string;
  unit?: string;
}

export type TimeSpec =
  | { kind: 'single'; column: number }
  | { kind: 'date_time'; date_column: number; time_column: number }
  /** A period per row; the reading is stamped with the period's start (see docs/climate-exports.md). */
  | { kind: 'period'; start_column: number; end_column: number; stamp: 'start' };

export interface ConfirmedMappingColumn {
  index: number;
  header: string;
  metric: string;
  /** The unit of the file's values, as a unit symbol. */
  unit: string;
}

/** What a caller confirms after a preview and may save per greenhouse; plain JSON. */
export interface ConfirmedMapping {
  version: 1;
  /** sha256 over the normalised header cells: the mapping applies only to files with the same header. */
  fingerprint: string;
  time: TimeSpec;
  /** 'ymd' for ISO-like dates and Excel serials. */
  date_order: 'ymd' | DateOrder;
  compartment: string | null;
  columns: ConfirmedMappingColumn[];
}

export interface AnalyseOptions {
  /** The greenhouse's IANA zone; wall-clock times without an offset are read in it. */
  timeZone: string;
  compartment?: string;
  dateOrder?: DateOrder;
  columns?: ColumnChoice[];
  mapping?: ConfirmedMapping;
  /** A workbook's sheet to read, by name; left out, the sheet that reads best is chosen. */
  sheet?: string;
  /** Rows returned in first_rows (default 10, at most 200). */
  previewRows?: number;
  /**
   * analyseExport only: also answer `first_hours`, the hourly values (as aggregateHourly makes
   * them) of the readings from the first one's hour up to this many hours later, read in the
   * same pass; reading them stops at the first reading past that.
   */
  firstHours?: number;
  limits?: Partial<ReaderLimits>;
}

export interface ReaderLimits {
  maxColumns: number;
  maxLineChars: number;
  /** Largest .xlsx file accepted (bytes on disk). */
  maxXlsxBytes: number;
  /** Largest total declared uncompressed size of an .xlsx's zip entries. */
  maxXlsxInflatedBytes: number;
  maxXlsxRows: number;
}

export const DEFAULT_LIMITS: ReaderLimits = {
  maxColumns: 2000,
  maxLineChars: 1024 * 1024,
  maxXlsxBytes: 50 * 1024 * 1024,
  maxXlsxInflatedBytes: 200 * 1024 * 1024,
  maxXlsxRows: 1_100_000,
};

/**
 * A warning or a blocking problem. `code` is stable; `rows` are 1-based file rows; `column`, and
 * every "column N" in a message, is the 0-based `ColumnReport.index`, one numbering for the API.
 */
export interface Problem {
  code: string;
  message: string;
  count?: number;
  rows?: number[];
  column?: number;
}

export type HeaderRole = 'names' | 'compartments' | 'units' | 'title' | 'delimiter_hint';

export interface Layout {
  kind: 'csv' | 'xlsx';
  encoding: string | null;
  bom: boolean;
  delimiter: string | null;
  decimal: '.' | ',';
  quoted: boolean;
  /** The workbook's sheet read (null for a text file). */
  sheet: string | null;
  /** The workbook's other sheets, in workbook order, and why each was not read. */
  other_sheets: { name: string; reason: string }[];
  header_rows: { row: number; role: HeaderRole }[];
  time: TimeSpec | null;
  date_format: string | null;
  date_order: 'ymd' | DateOrder | null;
  /** 1-based file rows of the first and last data row. */
  data_rows: { first: number; last: number } | null;
  trailing_rows_dropped: number;
  compartments: string[];
  bytes_read: number;
}

export interface ColumnReport {
  index: number;
  header: string;
  name: string;
  compartment: string | null;
  metric: string | null;
  unit: string | null;
  canonical_unit: string | null;
  conversion: string | null;
  confidence: number;
  reason: string;
  setpoint: boolean;
  selected: boolean;
}

export interface SkipCounts {
  empty: number;
  not_a_number: number;
  out_of_range: number;
}

export interface ReadStats {
  rows_read: number;
  data_rows: number;
  values: number;
  skipped: SkipCounts;
  skipped_by_column: { index: number; metric: string; skipped: SkipCounts }[];
  rows_without_time: number;
  dst: {
    repeated_hours: string[];
    repeated_rows: number;
    missing_hours: string[];
    missing_rows_skipped: number;
  };
}

export interface PreviewRow {
  at: string;
  values: Record<string, number>;
}

export interface Analysis {
  file_name: string | null;
  layout: Layout;
  columns: ColumnReport[];
  time_zone: string;
  time_range: { from: string; to: string } | null;
  first_rows: PreviewRow[];
  warnings: Problem[];
  blocking: Problem[];
  mapping: ConfirmedMapping | null;
  stats: ReadStats;
  /** When options.firstHours was given and the file was read through. */
  first_hours?: HourlyValue[];
}

export interface Reading {
  /** ISO 8601 instant with the greenhouse zone's offset. */
  at: string;
  metric: string;
  value: number;
}

/** Readings as columns, for writing without an object per reading. */
export interface ReadingColumns {
  length: number;
  /** The instant, epoch ms. */
  ms: Float64Array;
  metric: string[];
  /** In the metric's canonical unit. */
  value: Float64Array;
}

export interface ReadOptions extends AnalyseOptions {
  /** Readings per yielded batch (default 5000). */
  batchSize?: number;
}
