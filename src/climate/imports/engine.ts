import type SQLite from 'better-sqlite3';
import type { Writer } from '../../db/store.js';
import type { CycleTable } from '../../db/schema.js';
import { newId } from '../../db/ids.js';
import type { ReadingColumns } from '../exports-reader/index.js';
import type { ClimateImportTable, ImportKind } from './tables.js';
import './tables.js';
import { ensureCycleKey } from '../readings/points.js';
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

/** Rows per multi-row INSERT: the cost of an insert here is mostly the call, not SQLite's work. */
const ROWS = 500;
// What is the same for every row of an import is bound once per statement (named), so a row
// binds only its own values: instant, metric code, value.
const POINT_SQL = 'INSERT INTO climate_points (cycle_key, at_ms, metric_code, value, import_seq, created_ms) VALUES ';
const POINT_ROW = '(@cycle, ?, ?, ?, @seq, @created)';
const POINT_WIDTH = 3;
const VALUE_AT = 2;

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

  write(sqlite: SQLite.Database, importSeq: number): void {
    const insert = sqlite.prepare('INSERT INTO climate_import_undo (import_seq, metric, added, updated) VALUES (?, ?, ?, ?)');
    for (const [metric, e] of this.byMetric) insert.run(importSeq, metric, packFloats(e.added), packFloats(e.updated));
  }
}

/** Float64 little-endian, the layout of climate_import_undo's blobs. */
export function packFloats(xs: number[]): Buffer {
  const b = Buffer.allocUnsafe(xs.length * 8);
  for (let i = 0; i < xs.length; i++) b.writeDoubleLE(xs[i]!, i * 8);
  return b;
}

export function unpackFloats(b: Uint8Array): Float64Array {
  const out = new Float64Array(b.byteLength / 8);
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat64(i * 8, true);
  return out;
}

/**
 * Metric name → climate_metric_codes.code, adding names not seen before; `names()` are the
 * metrics asked for so far (the import's metrics). Synchronous and cached, unlike
 * points.ts's ensureMetricCode, since it is asked once per reading inside the write loop.
 */
function metricCodes(sqlite: SQLite.Database): ((metric: string) => number) & { names(): string[] } {
  const add = sqlite.prepare('INSERT INTO climate_metric_codes (metric) VALUES (?) ON CONFLICT (metric) DO NOTHING');
  const get = sqlite.prepare('SELECT code FROM climate_metric_codes WHERE metric = ?');
  const codes = new Map<string, number>();
  const codeOf = (metric: string): number => {
    let code = codes.get(metric);
    if (code === undefined) {
      add.run(metric);
      code = (get.get(metric) as { code: number }).code;
      codes.set(metric, code);
    }
    return code;
  };
  return Object.assign(codeOf, { names: () => [...codes.keys()] });
}

/** The next import number (climate_imports.seq); called inside the write transaction, so two imports cannot take the same. */
async function nextImportSeq(w: Writer): Promise<number> {
  const r = await w.trx
    .selectFrom('climate_imports')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return Number(r?.seq ?? 0) + 1;
}

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
 * Readings go through prepared statements (many rows per statement) on the
 * same connection as the Kysely transaction (better-sqlite3 has one), and the
 * readings already stored in a batch's time span are fetched in one query.
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
  sqlite: SQLite.Database,
  cycle: CycleTable,
  meta: ImportMeta,
  batches: AsyncIterable<ReadingBatch> | Iterable<ReadingBatch>,
  /** Most existing readings fetched at once for a batch's time span; above it, one lookup per reading. */
  prefetchMax = 50_000,
): Promise<ClimateImportTable & { duplicates: number }> {
  const importId = newId();
  const importSeq = await nextImportSeq(w);
  const cycleKey = await ensureCycleKey(w.trx, cycle.id);
  const points = new RowBuffer(sqlite, POINT_SQL, POINT_ROW, POINT_WIDTH, { cycle: cycleKey, seq: importSeq, created: Date.parse(w.now) });
  const undo = new UndoLog();
  const update = sqlite.prepare(
    'UPDATE climate_points SET value = ?, import_seq = ?, changed_ms = NULL, version = NULL WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?',
  );
  const find = sqlite.prepare('SELECT value, import_seq FROM climate_points WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?');
  const inRange = sqlite.prepare(
    `SELECT at_ms, metric_code, value, import_seq FROM climate_points WHERE cycle_key = ? AND at_ms >= ? AND at_ms <= ? LIMIT ${prefetchMax + 1}`,
  );
  const codeOf = metricCodes(sqlite);

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
  /** A reading this import already added at the same instant: the later value wins. */
  const repeat = (seq: number, code: number, ms: number, value: number): void => {
    totals.duplicates++;
    if (seq >= points.flushed) {
      const o = (seq - points.flushed) * POINT_WIDTH + VALUE_AT;
      if (points.values[o] !== value) points.values[o] = value;
      return;
    }
    const row = find.get(cycleKey, ms, code) as { value: number };
    // Written earlier by this same import: its undo record already says how to undo it.
    if (row.value !== value) update.run(value, importSeq, cycleKey, ms, code);
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
    const existing = inRange.all(cycleKey, lo, hi) as (Omit<Known, 'seq'> & { metric_code: number; at_ms: number })[];

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
        else repeat(seq, code, ms, value);
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
          const row = find.get(cycleKey, ms, code) as Omit<Known, 'seq'> | undefined;
          if (row) seen = { ...row, seq: -1 };
        }
        if (!seen) {
          const seq = add(metric, code, ms, value);
          (known ?? batchKnown).set(key, { value, import_seq: importSeq, seq });
        } else if (seen.import_seq === importSeq) {
          if (seen.seq >= 0) repeat(seen.seq, code, ms, value);
          else {
            // Written by an earlier batch of this import.
            totals.duplicates++;
            if (seen.value !== value) update.run(value, importSeq, cycleKey, ms, code);
            seen.value = value;
          }
        } else if (seen.value === value) {
          totals.skipped++;
        } else {
          update.run(value, importSeq, cycleKey, ms, code);
          undo.updated(metric, ms, seen.value, seen.import_seq);
          seen.import_seq = importSeq;
          seen.value = value;
          totals.updated++;
        }
      }
    }
    // Every batch is written before the next is looked up, so a later batch sees it.
    points.flush();
  }
  undo.write(sqlite, importSeq);

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
    metrics: JSON.stringify(codeOf.names().sort()),
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
