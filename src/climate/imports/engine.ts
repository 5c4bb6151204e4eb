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
 * Readings go through prepared statements (many rows per statement) on the
 * same connection as the Kysely transaction (better-sqlite3 has one), and the
 * readings already stored in a batch's time span are fetched in one query.
 * The change log gets one entry for the whole import (its record, with
 * counts, time range and mapping) rather than one per reading: an import is
 * audited and undone as one unit, and a row per reading would double the
 * writes of a year of five-minute data.
 */
export async function storeImport(
  w: Writer,
  sqlite: SQLite.Database,
  clock: HybridLogicalClock,
  cycle: CycleTable,
  meta: ImportMeta,
  batches: AsyncIterable<IncomingReading[]> | Iterable<IncomingReading[]>,
  /** Most existing readings fetched at once for a batch's time span; above it, one lookup per reading. */
  prefetchMax = 50_000,
): Promise<ClimateImportTable & { duplicates: number }> {
  const importId = newId();
  const org = cycle.organization_id;
  const cycleId = cycle.id;
  const now = w.now;
  const ROWS = 100;
  const readingCols = '(id, organization_id, created_at, updated_at, version, cycle_id, metric, at_utc, value, import_id)';
  const effectCols = '(organization_id, cycle_id, import_id, point_id, action, previous_value, previous_import_id)';
  const multi = (n: number, width: number) => Array.from({ length: n }, () => `(${Array(width).fill('?').join(', ')})`).join(', ');
  // Many rows per statement: the cost of an insert here is mostly the call, not SQLite's work.
  const insertMany = sqlite.prepare(`INSERT INTO climate_readings ${readingCols} VALUES ${multi(ROWS, 10)}`);
  const insertOne = sqlite.prepare(`INSERT INTO climate_readings ${readingCols} VALUES ${multi(1, 10)}`);
  const effectMany = sqlite.prepare(`INSERT INTO climate_import_effects ${effectCols} VALUES ${multi(ROWS, 7)}`);
  const effectOne = sqlite.prepare(`INSERT INTO climate_import_effects ${effectCols} VALUES ${multi(1, 7)}`);
  const update = sqlite.prepare('UPDATE climate_readings SET value = ?, import_id = ?, updated_at = ?, version = ? WHERE id = ?');
  const find = sqlite.prepare('SELECT id, value, import_id FROM climate_readings WHERE cycle_id = ? AND metric = ? AND at_utc = ?');
  const inRange = sqlite.prepare(`SELECT id, metric, at_utc, value, import_id FROM climate_readings WHERE cycle_id = ? AND at_utc >= ? AND at_utc <= ? LIMIT ${prefetchMax + 1}`);

  const totals: ImportTotals = { added: 0, updated: 0, skipped: 0, duplicates: 0 };
  const metrics = new Set<string>();
  let from: string | null = null;
  let to: string | null = null;
  let instants = 0;
  let lastAt: string | number | null = null;

  interface Known { id: string; value: number; import_id: string | null; pending?: unknown[] }
  let pending: unknown[][] = [];
  let effects: unknown[][] = [];
  const flush = () => {
    let i = 0;
    for (; i + ROWS <= pending.length; i += ROWS) insertMany.run(pending.slice(i, i + ROWS).flat());
    for (; i < pending.length; i++) insertOne.run(pending[i]);
    let j = 0;
    for (; j + ROWS <= effects.length; j += ROWS) effectMany.run(effects.slice(j, j + ROWS).flat());
    for (; j < effects.length; j++) effectOne.run(effects[j]);
    pending = [];
    effects = [];
  };

  for await (const batch of batches) {
    const ats: string[] = new Array(batch.length);
    let lo: string | null = null;
    let hi: string | null = null;
    for (let i = 0; i < batch.length; i++) {
      const r = batch[i]!;
      const ms = typeof r.at === 'number' ? r.at : Date.parse(r.at);
      if (!Number.isFinite(ms)) throw new Error(`reading without a valid instant: ${String(r.at)}`);
      const at = new Date(ms).toISOString();
      ats[i] = at;
      if (lo === null || at < lo) lo = at;
      if (hi === null || at > hi) hi = at;
    }
    if (lo === null || hi === null) continue;
    if (from === null || lo < from) from = lo;
    if (to === null || hi > to) to = hi;
    // What the batch's time span already holds, in one query; a batch that spans
    // more than that (an export not in time order) looks readings up one by one.
    const existing = inRange.all(cycleId, lo, hi) as (Known & { metric: string; at_utc: string })[];
    const known = existing.length <= prefetchMax ? new Map<string, Known>(existing.map((e) => [`${e.metric}|${e.at_utc}`, e])) : null;
    // Readings of this batch not yet inserted, when `known` does not hold them.
    const batchKnown = new Map<string, Known>();
    for (let i = 0; i < batch.length; i++) {
      const r = batch[i]!;
      const at = ats[i]!;
      if (r.at !== lastAt) {
        lastAt = r.at;
        instants++;
      }
      metrics.add(r.metric);
      const key = `${r.metric}|${at}`;
      const seen = known ? known.get(key) : batchKnown.get(key) ?? (find.get(cycleId, r.metric, at) as Known | undefined);
      if (!seen) {
        const id = newId();
        const values = [id, org, now, now, clock.now(), cycleId, r.metric, at, r.value, importId];
        pending.push(values);
        effects.push([org, cycleId, importId, id, 'added', null, null]);
        (known ?? batchKnown).set(key, { id, value: r.value, import_id: importId, pending: values });
        totals.added++;
      } else if (seen.import_id === importId) {
        // Written earlier by this same import: its effect already says how to undo it.
        if (seen.value !== r.value) {
          if (seen.pending) seen.pending[8] = r.value;
          else update.run(r.value, importId, now, clock.now(), seen.id);
          seen.value = r.value;
        }
        totals.duplicates++;
      } else if (seen.value === r.value) {
        totals.skipped++;
      } else {
        update.run(r.value, importId, now, clock.now(), seen.id);
        effects.push([org, cycleId, importId, seen.id, 'updated', seen.value, seen.import_id]);
        seen.import_id = importId;
        seen.value = r.value;
        totals.updated++;
      }
    }
    // Every batch is written before the next is looked up, so a later batch sees it.
    flush();
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
