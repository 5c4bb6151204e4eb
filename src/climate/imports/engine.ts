import type SQLite from 'better-sqlite3';
import type { Writer } from '../../db/store.js';
import type { HybridLogicalClock } from '../../db/hlc.js';
import type { CycleTable } from '../../db/schema.js';
import { newId } from '../../db/ids.js';
import { fastId } from './ids.js';
import type { ReadingColumns } from '../exports-reader/index.js';
import type { ClimateImportTable, ImportKind } from './tables.js';
import './tables.js';
import '../readings/tables.js';

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
  contentHash: string;
  sizeBytes: number;
  /** `key:<id>`, `admin-token` or `watcher`. */
  actor: string;
  /** The mapping used; a function when it is settled only once the file is read (detection). */
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

/** Rows per multi-row INSERT: the cost of an insert here is mostly the call, not SQLite's work. */
const ROWS = 500;
// What is the same for every row of an import is bound once per statement (named), so a row
// binds only its own values: 5 for a reading, 1 for an `added` effect.
const READING_SQL = 'INSERT INTO climate_readings (id, organization_id, created_at, updated_at, version, cycle_id, metric, at_utc, value, import_id) VALUES ';
const READING_ROW = '(?, @org, @now, @now, ?, @cycle, ?, ?, ?, @import)';
const READING_WIDTH = 5;
const VALUE_AT = 4;
const ADDED_SQL = 'INSERT INTO climate_import_effects (organization_id, cycle_id, import_id, point_id, action, previous_value, previous_import_id) VALUES ';
const ADDED_ROW = "(@org, @cycle, @import, ?, 'added', NULL, NULL)";

/**
 * Rows for one table, written ROWS at a time from one reused array of bound values.
 * Every row gets a sequence number; a row still here (seq >= flushed) can be changed
 * before it is written.
 */
class RowBuffer {
  readonly values: unknown[];
  rows = 0;
  flushed = 0;
  private readonly full: SQLite.Statement;
  private readonly partial = new Map<number, SQLite.Statement>();

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly sqlHead: string,
    private readonly rowSql: string,
    private readonly width: number,
    private readonly named: Record<string, unknown>,
  ) {
    this.values = new Array(ROWS * width);
    this.full = sqlite.prepare(sqlHead + Array(ROWS).fill(rowSql).join(', '));
  }

  /** Offset of a new row's first value in `values`; its sequence number is flushed + rows before the call. */
  next(): number {
    if (this.rows === ROWS) this.flush();
    return this.rows++ * this.width;
  }

  flush(): void {
    if (this.rows === ROWS) {
      this.full.run(this.values, this.named);
    } else if (this.rows > 0) {
      let st = this.partial.get(this.rows);
      if (!st) this.partial.set(this.rows, (st = this.sqlite.prepare(this.sqlHead + Array(this.rows).fill(this.rowSql).join(', '))));
      st.run(this.values.slice(0, this.rows * this.width), this.named);
    }
    this.flushed += this.rows;
    this.rows = 0;
  }
}

/** What is known of a reading while its batch is written: its row, and whether it is still in the buffer. */
interface Known {
  id: string;
  value: number;
  import_id: string | null;
  /** Sequence number in the readings buffer when this import added it in this batch, else -1. */
  seq: number;
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
 * A batch whose span holds nothing yet and whose instants are in order (every
 * export read front to back or back to front) needs no lookup per reading:
 * only readings at the same instant can repeat each other there.
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
  batches: AsyncIterable<ReadingBatch> | Iterable<ReadingBatch>,
  /** Most existing readings fetched at once for a batch's time span; above it, one lookup per reading. */
  prefetchMax = 50_000,
): Promise<ClimateImportTable & { duplicates: number }> {
  const importId = newId();
  const org = cycle.organization_id;
  const cycleId = cycle.id;
  const now = w.now;
  const named = { org, now, cycle: cycleId, import: importId };
  const readings = new RowBuffer(sqlite, READING_SQL, READING_ROW, READING_WIDTH, named);
  const added = new RowBuffer(sqlite, ADDED_SQL, ADDED_ROW, 1, { org, cycle: cycleId, import: importId });
  const updatedEffect = sqlite.prepare(
    "INSERT INTO climate_import_effects (organization_id, cycle_id, import_id, point_id, action, previous_value, previous_import_id) VALUES (?, ?, ?, ?, 'updated', ?, ?)",
  );
  const update = sqlite.prepare('UPDATE climate_readings SET value = ?, import_id = ?, updated_at = ?, version = ? WHERE id = ?');
  const find = sqlite.prepare('SELECT id, value, import_id FROM climate_readings WHERE cycle_id = ? AND metric = ? AND at_utc = ?');
  const inRange = sqlite.prepare(`SELECT id, metric, at_utc, value, import_id FROM climate_readings WHERE cycle_id = ? AND at_utc >= ? AND at_utc <= ? LIMIT ${prefetchMax + 1}`);

  const totals: ImportTotals = { added: 0, updated: 0, skipped: 0, duplicates: 0 };
  const metrics = new Set<string>();
  let fromMs = Infinity;
  let toMs = -Infinity;
  let instants = 0;
  let lastInstant = Number.NaN;
  // Readings of one instant come together: its text is made once.
  let isoMs = Number.NaN;
  let iso = '';
  const isoOf = (ms: number) => {
    if (ms !== isoMs) { isoMs = ms; iso = new Date(ms).toISOString(); }
    return iso;
  };

  const add = (metric: string, at: string, value: number): number => {
    const seq = readings.flushed + readings.rows;
    const o = readings.next();
    const v = readings.values;
    const id = fastId();
    v[o] = id;
    v[o + 1] = clock.now();
    v[o + 2] = metric;
    v[o + 3] = at;
    v[o + 4] = value;
    added.values[added.next()] = id;
    totals.added++;
    return seq;
  };
  /** A reading this import already added at the same instant: the later value wins. */
  const repeat = (seq: number, metric: string, at: string, value: number): void => {
    totals.duplicates++;
    if (seq >= readings.flushed) {
      const o = (seq - readings.flushed) * READING_WIDTH + VALUE_AT;
      if (readings.values[o] !== value) readings.values[o] = value;
      return;
    }
    const row = find.get(cycleId, metric, at) as { id: string; value: number };
    // Written earlier by this same import: its effect already says how to undo it.
    if (row.value !== value) update.run(value, importId, now, clock.now(), row.id);
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
    const existing = inRange.all(cycleId, isoOf(lo), isoOf(hi)) as (Known & { metric: string; at_utc: string })[];

    if (existing.length === 0 && (up || down)) {
      // Nothing stored in the span and instants in order: a reading can only repeat one of
      // its own instant, so those are all that need remembering.
      const sameInstant = new Map<string, number>();
      let groupMs = Number.NaN;
      for (let i = 0; i < n; i++) {
        const ms = cols.ms[i]!;
        const metric = cols.metric[i]!;
        const value = cols.value[i]!;
        if (ms !== lastInstant) { lastInstant = ms; instants++; }
        if (ms !== groupMs) { groupMs = ms; sameInstant.clear(); }
        metrics.add(metric);
        const at = isoOf(ms);
        const seq = sameInstant.get(metric);
        if (seq === undefined) sameInstant.set(metric, add(metric, at, value));
        else repeat(seq, metric, at, value);
      }
    } else {
      const known = existing.length <= prefetchMax ? new Map<string, Known>(existing.map((e) => [`${e.metric}|${e.at_utc}`, { ...e, seq: -1 }])) : null;
      // Readings of this batch not yet inserted, when `known` does not hold them.
      const batchKnown = new Map<string, Known>();
      for (let i = 0; i < n; i++) {
        const ms = cols.ms[i]!;
        const metric = cols.metric[i]!;
        const value = cols.value[i]!;
        if (ms !== lastInstant) { lastInstant = ms; instants++; }
        metrics.add(metric);
        const at = isoOf(ms);
        const key = `${metric}|${at}`;
        let seen = known ? known.get(key) : batchKnown.get(key);
        if (!seen && !known) {
          const row = find.get(cycleId, metric, at) as Omit<Known, 'seq'> | undefined;
          if (row) seen = { ...row, seq: -1 };
        }
        if (!seen) {
          const seq = add(metric, at, value);
          (known ?? batchKnown).set(key, { id: '', value, import_id: importId, seq });
        } else if (seen.import_id === importId) {
          if (seen.seq >= 0) repeat(seen.seq, metric, at, value);
          else {
            // Written by an earlier batch of this import.
            totals.duplicates++;
            if (seen.value !== value) update.run(value, importId, now, clock.now(), seen.id);
            seen.value = value;
          }
        } else if (seen.value === value) {
          totals.skipped++;
        } else {
          update.run(value, importId, now, clock.now(), seen.id);
          updatedEffect.run(org, cycleId, importId, seen.id, seen.value, seen.import_id);
          seen.import_id = importId;
          seen.value = value;
          totals.updated++;
        }
      }
    }
    // Every batch is written before the next is looked up, so a later batch sees it.
    readings.flush();
    added.flush();
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
    from_utc: fromMs === Infinity ? null : new Date(fromMs).toISOString(),
    to_utc: toMs === -Infinity ? null : new Date(toMs).toISOString(),
    metrics: JSON.stringify([...metrics].sort()),
    status: 'done',
    failure_reason: null,
    mapping: mappingJson(meta.mapping),
    warnings: JSON.stringify(typeof meta.warnings === 'function' ? meta.warnings() : meta.warnings),
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
    if (r.at !== lastAt) { lastAt = r.at; lastMs = typeof r.at === 'number' ? r.at : Date.parse(r.at); }
    ms[i] = lastMs;
    metric[i] = r.metric;
    value[i] = r.value;
  }
  return { length: batch.length, ms, metric, value };
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
    mapping: mappingJson(meta.mapping),
    warnings: JSON.stringify(typeof meta.warnings === 'function' ? meta.warnings() : meta.warnings),
    undone_at: null,
  });
}
