import type SQLite from 'better-sqlite3';
import type { Writer } from '../../db/store.js';
import type { HybridLogicalClock } from '../../db/hlc.js';
import type { CycleTable } from '../../db/schema.js';
import { newId } from '../../db/ids.js';
import type { ClimateImportTable, ImportKind } from './tables.js';
import './tables.js';
import '../readings/tables.js';

/** One reading as an export reader yields it: an instant (ISO with offset, or epoch ms), a metric, a canonical value. */
export interface IncomingReading {
  at: string | number;
  metric: string;
  value: number;
}

export interface ImportMeta {
  kind: ImportKind;
  fileName: string;
  contentHash: string;
  sizeBytes: number;
  /** `key:<id>`, `admin-token` or `watcher`. */
  actor: string;
  mapping: unknown;
  /** Warning texts; a function when they are known only once the file is read. */
  warnings: string[] | (() => string[]);
  /** File rows read; when absent, the number of distinct instants seen. */
  rowsRead?: () => number;
}

export interface ImportTotals {
  added: number;
  updated: number;
  skipped: number;
  /** The same metric at the same instant twice in one file: the later value wins. */
  duplicates: number;
}

/**
 * Stores an import's readings and its record, in the caller's transaction
 * (`store.write`): a failure anywhere, a reading that breaks a CHECK included,
 * leaves nothing behind. For each reading:
 * - new (cycle, metric, instant): inserted, remembered as `added`;
 * - existing with the same value: left alone, counted as skipped;
 * - existing with another value: updated, remembered as `updated` with the
 *   previous value and source, so undo can put them back.
 *
 * Readings go through prepared statements on the same connection as the
 * Kysely transaction (better-sqlite3 has one): per-row Kysely inserts with a
 * change-log row each are an order of magnitude slower on a year of
 * five-minute data. The change log gets one entry for the whole import (its
 * record, with counts, time range and mapping): an import is audited and
 * undone as one unit, not reading by reading.
 */
export async function storeImport(
  w: Writer,
  sqlite: SQLite.Database,
  clock: HybridLogicalClock,
  cycle: CycleTable,
  meta: ImportMeta,
  batches: AsyncIterable<IncomingReading[]> | Iterable<IncomingReading[]>,
): Promise<ClimateImportTable & { duplicates: number }> {
  const importId = newId();
  const org = cycle.organization_id;
  const insert = sqlite.prepare(
    `INSERT INTO climate_readings (id, organization_id, created_at, updated_at, version, cycle_id, metric, at_utc, value, import_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (cycle_id, metric, at_utc) DO NOTHING`,
  );
  const find = sqlite.prepare('SELECT id, value, import_id FROM climate_readings WHERE cycle_id = ? AND metric = ? AND at_utc = ?');
  const update = sqlite.prepare('UPDATE climate_readings SET value = ?, import_id = ?, updated_at = ?, version = ? WHERE id = ?');
  const effect = sqlite.prepare(
    'INSERT INTO climate_import_effects (organization_id, cycle_id, import_id, point_id, action, previous_value, previous_import_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );

  const totals: ImportTotals = { added: 0, updated: 0, skipped: 0, duplicates: 0 };
  const metrics = new Set<string>();
  let from: string | null = null;
  let to: string | null = null;
  let instants = 0;
  let lastAt: string | number | null = null;
  const now = w.now;

  for await (const batch of batches) {
    for (const r of batch) {
      if (r.at !== lastAt) {
        lastAt = r.at;
        instants++;
      }
      const ms = typeof r.at === 'number' ? r.at : Date.parse(r.at);
      if (!Number.isFinite(ms)) throw new Error(`reading without a valid instant: ${String(r.at)}`);
      const at = new Date(ms).toISOString();
      if (from === null || at < from) from = at;
      if (to === null || at > to) to = at;
      metrics.add(r.metric);
      const id = newId();
      const version = clock.now();
      if (insert.run(id, org, now, now, version, cycle.id, r.metric, at, r.value, importId).changes === 1) {
        effect.run(org, cycle.id, importId, id, 'added', null, null);
        totals.added++;
        continue;
      }
      const existing = find.get(cycle.id, r.metric, at) as { id: string; value: number; import_id: string | null };
      if (existing.import_id === importId) {
        // Written earlier by this same import: its effect already says how to undo it.
        if (existing.value !== r.value) update.run(r.value, importId, now, version, existing.id);
        totals.duplicates++;
      } else if (existing.value === r.value) {
        totals.skipped++;
      } else {
        update.run(r.value, importId, now, version, existing.id);
        effect.run(org, cycle.id, importId, existing.id, 'updated', existing.value, existing.import_id);
        totals.updated++;
      }
    }
  }

  const row = await w.insert<ClimateImportTable>('climate_imports', {
    id: importId,
    organization_id: org,
    cycle_id: cycle.id,
    greenhouse_id: cycle.greenhouse_id,
    file_name: meta.fileName,
    content_hash: meta.contentHash,
    size_bytes: meta.sizeBytes,
    kind: meta.kind,
    actor: meta.actor,
    rows_read: meta.rowsRead ? meta.rowsRead() : instants,
    readings_added: totals.added,
    readings_updated: totals.updated,
    readings_skipped: totals.skipped + totals.duplicates,
    from_utc: from,
    to_utc: to,
    metrics: JSON.stringify([...metrics].sort()),
    status: 'done',
    failure_reason: null,
    mapping: meta.mapping === undefined || meta.mapping === null ? null : JSON.stringify(meta.mapping),
    warnings: JSON.stringify(typeof meta.warnings === 'function' ? meta.warnings() : meta.warnings),
    undone_at: null,
  });
  return { ...row, duplicates: totals.duplicates };
}

/** Records an import that could not run (watched folder), with its reason; stores no reading. */
export async function recordFailedImport(w: Writer, cycle: CycleTable, meta: Omit<ImportMeta, 'rowsRead'>, reason: string): Promise<ClimateImportTable> {
  return w.insert<ClimateImportTable>('climate_imports', {
    organization_id: cycle.organization_id,
    cycle_id: cycle.id,
    greenhouse_id: cycle.greenhouse_id,
    file_name: meta.fileName,
    content_hash: meta.contentHash,
    size_bytes: meta.sizeBytes,
    kind: meta.kind,
    actor: meta.actor,
    rows_read: 0,
    readings_added: 0,
    readings_updated: 0,
    readings_skipped: 0,
    from_utc: null,
    to_utc: null,
    metrics: '[]',
    status: 'failed',
    failure_reason: reason,
    mapping: meta.mapping === undefined || meta.mapping === null ? null : JSON.stringify(meta.mapping),
    warnings: JSON.stringify(typeof meta.warnings === 'function' ? meta.warnings() : meta.warnings),
    undone_at: null,
  });
}
