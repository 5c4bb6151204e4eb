import type { SyncKind } from './kind.js';
import { apiKeysKind, cyclesKind, farmsKind, greenhousesKind, organizationsKind, rowsKind } from './registry.js';
import { fruitMassKind, harvestsKind, irrigationKind, trussCountRowsKind, trussCountsKind, weekNotesKind } from './records.js';
import { climateFileMappingsKind, climateImportsKind, climateReadingsKind } from './climate.js';
import { walkClipsKind, walkCorrectionsKind, walksKind } from './walks.js';
import { forecastsKind, weatherKinds } from './forecasts.js';

export type { SyncKind } from './kind.js';
export { rowKind, SYNCED } from './rows.js';

/**
 * Every kind of record that travels, by change-log entity (docs/sync.md, "Conflicts, kind by
 * kind"). A feature with records of its own adds its kinds through `Feature.syncKinds`
 * (src/feature.ts); a change of a kind nobody declared is refused where it arrives.
 */
export const BUILTIN_KINDS: SyncKind[] = [
  organizationsKind,
  apiKeysKind,
  farmsKind,
  greenhousesKind,
  rowsKind,
  cyclesKind,
  harvestsKind,
  irrigationKind,
  fruitMassKind,
  weekNotesKind,
  trussCountsKind,
  trussCountRowsKind,
  climateReadingsKind,
  climateImportsKind,
  climateFileMappingsKind,
  walksKind,
  walkClipsKind,
  walkCorrectionsKind,
  forecastsKind,
  ...weatherKinds,
];
