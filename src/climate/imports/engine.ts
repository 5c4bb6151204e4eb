import type { Writer } from '../../db/store.js';
import type { CycleTable } from '../../db/schema.js';
import { newId } from '../../db/ids.js';
import type { ReadingColumns } from '../exports-reader/index.js';
import type { ClimateImportTable, ImportKind } from './tables.js';
import './tables.js';
import { ensureCycleKey } from '../readings/points.js';
import { nextImportSeq, pointPort, POINT_WIDTH, VALUE_AT } from './point-storage.js';
import { STORED_FROM_MS, STORED_UNTIL_MS } from '../../time/instants.js';

/** One reading as an export reader yields it: an instant (ISO with offset, or epoch ms), a metric, a canonical value. */
export interface IncomingReading {
  at: string | number;
  metric: string;
  value: number;
}

/** Readings as an export reader yields them without an object per reading, or typed ones. */
export type ReadingBatch = IncomingReading[] | ReadingColumns;

export interface ImportMeta {
  kind: ImportKind;
  fileName: string;
  /** sha256 of the file; a promise when it is computed while the file is read. */
  contentHash: string | Promise<string>;
  sizeBytes: number;
  /** `key:<id>`, `admin-token` or `watcher`. */
  actor: string;
  /** The mapping used; a function when it is settled only once the file is read (detection). */
  mapping: unknown;
  /** Warning texts; a function when they are known only once the file is read. */
  /** As a function: given the instants the import stored, first and last (epoch ms), or null when none. */
  warnings: string[] | ((range: { from: number; to: number } | null) => string[]);
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

/** What is known of a reading while its batch is written: its value, who set it, and whether it is still in the buffer. */
interface Known {
  value: number;
  import_seq: number | null;
  /** Sequence number in the readings buffer when this import added it in this batch, else -1. */
  seq: number;
}

/**
 * Collects the import's own undo record per metric: the instants it added and, for
 * each value it replaced, the previous value and the import that had set it
 * (NaN: typed by hand). Written as one row per metric (climate_import_undo).
 */
class UndoLog {
  private readonly byMetric = new Map<string, { added: number[]; updated: number[] }>();

  private of(metric: string) {
    let e = this.byMetric.get(metric);
    if (!e) this.byMetric.set(metric, (e = { added: [], updated: [] }));
    return e;
  }

  added(metric: string, atMs: number): void {
    this.of(metric).added.push(atMs);
  }

  updated(metric: string, atMs: number, previous: number, previousSeq: number | null): void {
    this.of(metric).updated.push(atMs, previous, previousSeq ?? Number.NaN);
  }

  get records(): Map<string, { added: number[]; updated: number[] }> {
    return this.byMetric;
  }
}

export { packFloats, unpackFloats } from './point-storage.js';

// The stored form refuses instants outside these (the table's CHECK); a reading outside is a
// wrong date in the file, and failing the whole import names it instead of a constraint.

/**
 * Stores an import's readings and its record, in the caller's transaction
 * (`store.write`): a failure anywhere, a reading that breaks a CHECK included,
 * leaves nothing behind. For each reading:
 * - new (cycle, metric, instant): inserted, remembered as `added`;
 * - existing with the same value: left alone, counted as skipped;
 * - existing with another value: updated, remembered as `updated` with the
 *   previous value and source, so undo can put them back.
 *
 * Readings are written by the engine's port (point-storage.ts): prepared statements of many
 * rows each on SQLite's one connection, COPY on the transaction's own PostgreSQL connection.
 * The readings already stored in a batch's time span are fetched in one query.
 * A batch whose span holds nothing yet and whose instants are in order (every
 * export read front to back or back to front) needs no lookup per reading:
 * only readings at the same instant can repeat each other there.
 * A reading's row is its key and value (migration 0005): its id is derived from
 * the key and its time and version are the import's, so nothing per reading but
 * those is written. The change log gets one entry for the whole import (its
 * record, with counts, time range and mapping): an import is audited and undone
 * as one unit.
 */
export async function storeImport(
  w: Writer,
  cycle: CycleTable,
  meta: ImportMeta,
  batches: AsyncIterable<ReadingBatch> | Iterable<ReadingBatch>,
  /** Most existing readings fetched at once for a batch's time span; above it, one lookup per reading. */
  prefetchMax = 50_000,
): Promise<ClimateImportTable & { duplicates: number }> {
  const importId = newId();
  const importSeq = await nextImportSeq(w);
  const cycleKey = await ensureCycleKey(w, cycle);
  const points = pointPort(w, cycle, cycleKey, importSeq);
  const undo = new UndoLog();
  const codeOf = (metric: string) => points.codeOf(metric);

  const totals: ImportTotals = { added: 0, updated: 0, skipped: 0, duplicates: 0 };
  let fromMs = Infinity;
  let toMs = -Infinity;
  let instants = 0;
  let lastInstant = Number.NaN;

  const add = (metric: string, code: number, ms: number, value: number): number => {
    const seq = points.flushed + points.rows;
    const o = points.next();
    const v = points.values;
    v[o] = ms;
    v[o + 1] = code;
    v[o + 2] = value;
    undo.added(metric, ms);
    totals.added++;
    return seq;
  };
  /** A reading this import already added at the same instant: the later value wins. A promise only when PostgreSQL must be asked. */
  const repeat = (seq: number, code: number, ms: number, value: number): void | Promise<void> => {
    totals.duplicates++;
    if (seq >= points.flushed) {
      const o = (seq - points.flushed) * POINT_WIDTH + VALUE_AT;
      if (points.values[o] !== value) points.values[o] = value;
      return;
    }
    // Written earlier by this same import: its undo record already says how to undo it.
    const settle = (row: { value: number } | undefined) => {
      if (row!.value !== value) points.update(value, ms, code);
    };
    const found = points.find(ms, code);
    return found instanceof Promise ? found.then(settle) : settle(found);
  };

  for await (const batch of batches) {
    const cols = Array.isArray(batch) ? columnsOf(batch) : batch;
    const n = cols.length;
    if (n === 0) continue;
    let lo = Infinity;
    let hi = -Infinity;
    let up = true;
    let down = true;
    for (let i = 0; i < n; i++) {
      const ms = cols.ms[i]!;
      if (!Number.isFinite(ms)) throw new Error(`reading without a valid instant: ${Array.isArray(batch) ? String(batch[i]!.at) : ms}`);
      if (!(ms >= STORED_FROM_MS && ms < STORED_UNTIL_MS))
        throw new Error(`reading at ${new Date(ms).toISOString()}: instants before 1970 or after 2199 are not stored`);
      if (ms < lo) lo = ms;
      if (ms > hi) hi = ms;
      if (i > 0) {
        const prev = cols.ms[i - 1]!;
        if (ms < prev) up = false;
        else if (ms > prev) down = false;
      }
    }
    if (lo < fromMs) fromMs = lo;
    if (hi > toMs) toMs = hi;
    // What the batch's time span already holds, in one query; a batch that spans
    // more than that (an export not in time order) looks readings up one by one.
    if (points.prepare) await points.prepare(cols.metric, n);
    const inRange = points.inRange(lo, hi, prefetchMax);
    const existing = inRange instanceof Promise ? await inRange : inRange;

    if (existing.length === 0 && (up || down)) {
      // Nothing stored in the span and instants in order: a reading can only repeat one of
      // its own instant, so those are all that need remembering.
      const sameInstant = new Map<number, number>();
      let groupMs = Number.NaN;
      for (let i = 0; i < n; i++) {
        const ms = cols.ms[i]!;
        const metric = cols.metric[i]!;
        const code = codeOf(metric);
        const value = cols.value[i]!;
        if (ms !== lastInstant) {
          lastInstant = ms;
          instants++;
        }
        if (ms !== groupMs) {
          groupMs = ms;
          sameInstant.clear();
        }
        const seq = sameInstant.get(code);
        if (seq === undefined) sameInstant.set(code, add(metric, code, ms, value));
        else {
          const pending = repeat(seq, code, ms, value);
          if (pending) await pending;
        }
      }
    } else {
      const known =
        existing.length <= prefetchMax
          ? new Map<string, Known>(
              existing.map((e) => [`${e.metric_code}|${e.at_ms}`, { value: e.value, import_seq: e.import_seq, seq: -1 }]),
            )
          : null;
      // Readings of this batch not yet inserted, when `known` does not hold them.
      const batchKnown = new Map<string, Known>();
      for (let i = 0; i < n; i++) {
        const ms = cols.ms[i]!;
        const metric = cols.metric[i]!;
        const code = codeOf(metric);
        const value = cols.value[i]!;
        if (ms !== lastInstant) {
          lastInstant = ms;
          instants++;
        }
        const key = `${code}|${ms}`;
        let seen = known ? known.get(key) : batchKnown.get(key);
        if (!seen && !known) {
          const found = points.find(ms, code);
          const row = found instanceof Promise ? await found : found;
          if (row) seen = { ...row, seq: -1 };
        }
        if (!seen) {
          const seq = add(metric, code, ms, value);
          (known ?? batchKnown).set(key, { value, import_seq: importSeq, seq });
        } else if (seen.import_seq === importSeq) {
          if (seen.seq >= 0) {
            const pending = repeat(seen.seq, code, ms, value);
            if (pending) await pending;
          } else {
            // Written by an earlier batch of this import.
            totals.duplicates++;
            if (seen.value !== value) points.update(value, ms, code);
            seen.value = value;
          }
        } else if (seen.value === value) {
          totals.skipped++;
        } else {
          points.update(value, ms, code);
          undo.updated(metric, ms, seen.value, seen.import_seq);
          seen.import_seq = importSeq;
          seen.value = value;
          totals.updated++;
        }
      }
    }
    const ended = points.endBatch(lo, hi);
    if (ended) await ended;
  }
  await points.finish(undo.records);

  const row = await w.insert<ClimateImportTable>('climate_imports', {
    id: importId,
    seq: importSeq,
    organization_id: cycle.organization_id,
    cycle_id: cycle.id,
    greenhouse_id: cycle.greenhouse_id,
    file_name: meta.fileName,
    content_hash: await meta.contentHash,
    size_bytes: meta.sizeBytes,
    kind: meta.kind,
    actor: meta.actor,
    rows_read: meta.rowsRead ? meta.rowsRead() : instants,
    readings_added: totals.added,
    readings_updated: totals.updated,
    readings_skipped: totals.skipped + totals.duplicates,
    from_utc: fromMs === Infinity ? null : new Date(fromMs).toISOString(),
    to_utc: toMs === -Infinity ? null : new Date(toMs).toISOString(),
    metrics: JSON.stringify(points.names().sort()),
    status: 'done',
    failure_reason: null,
    mapping: mappingJson(meta.mapping),
    warnings: JSON.stringify(
      typeof meta.warnings === 'function' ? meta.warnings(fromMs === Infinity ? null : { from: fromMs, to: toMs }) : meta.warnings,
    ),
    undone_at: null,
  });
  return { ...row, duplicates: totals.duplicates };
}

function mappingJson(mapping: unknown): string | null {
  const m = typeof mapping === 'function' ? (mapping as () => unknown)() : mapping;
  return m === undefined || m === null ? null : JSON.stringify(m);
}

/** Typed readings (ISO text or epoch ms) as columns. */
function columnsOf(batch: IncomingReading[]): ReadingColumns {
  const ms = new Float64Array(batch.length);
  const metric = new Array<string>(batch.length);
  const value = new Float64Array(batch.length);
  let lastAt: string | number | null = null;
  let lastMs = Number.NaN;
  for (let i = 0; i < batch.length; i++) {
    const r = batch[i]!;
    if (r.at !== lastAt) {
      lastAt = r.at;
      lastMs = typeof r.at === 'number' ? r.at : Date.parse(r.at);
    }
    ms[i] = lastMs;
    metric[i] = r.metric;
    value[i] = r.value;
  }
  return { length: batch.length, ms, metric, value };
}

/** Records an import that could not run (watched folder), with its reason; stores no reading. */
export async function recordFailedImport(
  w: Writer,
  cycle: CycleTable,
  meta: Omit<ImportMeta, 'rowsRead'>,
  reason: string,
): Promise<ClimateImportTable> {
  return w.insert<ClimateImportTable>('climate_imports', {
    seq: await nextImportSeq(w),
    organization_id: cycle.organization_id,
    cycle_id: cycle.id,
    greenhouse_id: cycle.greenhouse_id,
    file_name: meta.fileName,
    content_hash: await meta.contentHash,
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
    mapping: mappingJson(meta.mapping),
    warnings: JSON.stringify(typeof meta.warnings === 'function' ? meta.warnings(null) : meta.warnings),
    undone_at: null,
  });
}
