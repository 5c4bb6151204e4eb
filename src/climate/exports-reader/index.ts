// The climate-export reader's public surface.
export { analyseExport, readColumns, readReadings, readHourly, ExportRefused, type ReadOutcome } from './analyse.js';
export { aggregateHourly, HourlyAccumulator, namedColumns, type HourlyValue, type IndexedColumns } from './hourly.js';
export type {
  Analysis,
  AnalyseOptions,
  ColumnChoice,
  ColumnReport,
  ConfirmedMapping,
  ConfirmedMappingColumn,
  DateOrder,
  ExportInput,
  Layout,
  PreviewRow,
  Problem,
  Reading,
  ReadingColumns,
  ReaderLimits,
  ReadOptions,
  ReadStats,
  TimeSpec,
} from './types.js';
export { DEFAULT_LIMITS } from './types.js';
