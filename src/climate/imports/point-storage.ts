import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import { sql } from 'kysely';
import type { Writer } from '../../db/store.js';
import { copyInto } from '../../db/postgres.js';
import '../readings/tables.js';
import './tables.js';

/**
 * Where the import engine (engine.ts) writes readings, on each engine. The engine decides what
 * each reading is (new, the same, changed) and keeps the undo record; a port stores rows:
 *
 * - SQLite: prepared statements of many rows each on the one connection, synchronous, as
 *   migration 0005's storage was measured to want (docs/climate-exports.md).
 * - PostgreSQL: rows gathered in memory and written by COPY on the transaction's own
 *   connection, changed values by one UPDATE ... FROM unnest(...) per flush; what a lookup
 *   asks of the database is flushed first, and a batch whose time span no stored reading can be
 *   in (the cycle's readings' span at the start, and what this import wrote) is not looked up
 *   at all. The organization's lock (src/db/store.ts) keeps other writers of the cycle out
 *   meanwhile, so that span holds for the whole import.
 *
 * A row in the buffer is three values from `o = next()`: instant (ms), metric code, value.
 */
export interface PointPort {
  readonly values: unknown[];
  /** Rows in the buffer, not yet written. */
  rows: number;
  /** Rows written before the buffer's first. */
  flushed: number;
  /** Offset of a new row's first value in `values`. */
  next(): number;
  /** The stored readings in [lo, hi], at most `limit + 1` of them. */
  inRange(lo: number, hi: number, limit: number): Existing[] | Promise<Existing[]>;
  /** The stored reading of `code` at `ms`. */
  find(ms: number, code: number): Stored | undefined | Promise<Stored | undefined>;
  /** Sets a stored reading's value as this import's. */
  update(value: number, ms: number, code: number): void;
  /** The code of a metric name; on PostgreSQL only after `prepare` saw the name. */
  codeOf(metric: string): number;
  /** Metric names asked for so far (the import's metrics). */
  names(): string[];
  /** Called before a batch of `n` readings is walked: PostgreSQL gives codes to the names it has not seen. */
  prepare?(metrics: ArrayLike<string>, n: number): Promise<void>;
  /** Called after a batch that spanned [lo, hi]: SQLite writes it, PostgreSQL when enough has gathered. */
  endBatch(lo: number, hi: number): void | Promise<void>;
  /** Writes what is left and the undo record, one row per metric. */
  finish(undo: Map<string, { added: number[]; updated: number[] }>): Promise<void>;
}

export interface Stored {
  value: number;
  import_seq: number | null;
}

export interface Existing extends Stored {
  metric_code: number;
  at_ms: number;
}

export const POINT_WIDTH = 3;
export const VALUE_AT = 2;

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

export function pointPort(w: Writer, owner: { organization_id: string }, cycleKey: number, importSeq: number): PointPort {
  const created = Date.parse(w.now);
  if (w.engine.kind === 'postgres') return new PostgresPoints(w, w.engine.client, owner.organization_id, cycleKey, importSeq, created);
  if (!w.engine.sqlite) throw new Error('the climate import engine needs the SQLite connection (Store built without its engine)');
  return new SqlitePoints(w.engine.sqlite, cycleKey, importSeq, created);
}

/** The next import number (climate_imports.seq), taken inside the write transaction. */
export async function nextImportSeq(w: Writer): Promise<number> {
  if (w.engine.kind === 'postgres') {
    // A sequence: imports of other organizations run at the same time, and max() + 1 would collide.
    const r = await sql<{ seq: number }>`select nextval('climate_imports_seq_seq') as seq`.execute(w.trx);
    return Number(r.rows[0]!.seq);
  }
  // SQLite has one writer: nothing can take the same number between this and the insert.
  const r = await w.trx
    .selectFrom('climate_imports')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return Number(r?.seq ?? 0) + 1;
}

/** Rows per multi-row INSERT: the cost of an insert here is mostly the call, not SQLite's work. */
const ROWS = 500;
// What is the same for every row of an import is bound once per statement (named), so a row
// binds only its own values: instant, metric code, value.
const POINT_SQL = 'INSERT INTO climate_points (cycle_key, at_ms, metric_code, value, import_seq, created_ms) VALUES ';
const POINT_ROW = '(@cycle, ?, ?, ?, @seq, @created)';

/** SQLite: rows written ROWS at a time from one reused array of bound values, by prepared statements. */
class SqlitePoints implements PointPort {
  readonly values: unknown[] = new Array(ROWS * POINT_WIDTH);
  rows = 0;
  flushed = 0;
  private readonly full: SQLite.Statement;
  private readonly partial = new Map<number, SQLite.Statement>();
  private readonly named: Record<string, unknown>;
  private readonly updateStmt: SQLite.Statement;
  private readonly findStmt: SQLite.Statement;
  private readonly inRangeStmt = new Map<number, SQLite.Statement>();
  private readonly addCode: SQLite.Statement;
  private readonly getCode: SQLite.Statement;
  private readonly codes = new Map<string, number>();

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly cycleKey: number,
    private readonly importSeq: number,
    created: number,
  ) {
    this.named = { cycle: cycleKey, seq: importSeq, created };
    this.full = sqlite.prepare(POINT_SQL + Array(ROWS).fill(POINT_ROW).join(', '));
    this.updateStmt = sqlite.prepare(
      'UPDATE climate_points SET value = ?, import_seq = ?, changed_ms = NULL, version = NULL WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?',
    );
    this.findStmt = sqlite.prepare('SELECT value, import_seq FROM climate_points WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?');
    this.addCode = sqlite.prepare('INSERT INTO climate_metric_codes (metric) VALUES (?) ON CONFLICT (metric) DO NOTHING');
    this.getCode = sqlite.prepare('SELECT code FROM climate_metric_codes WHERE metric = ?');
  }

  next(): number {
    if (this.rows === ROWS) this.flush();
    return this.rows++ * POINT_WIDTH;
  }

  private flush(): void {
    if (this.rows === ROWS) {
      this.full.run(this.values, this.named);
    } else if (this.rows > 0) {
      let st = this.partial.get(this.rows);
      if (!st) this.partial.set(this.rows, (st = this.sqlite.prepare(POINT_SQL + Array(this.rows).fill(POINT_ROW).join(', '))));
      st.run(this.values.slice(0, this.rows * POINT_WIDTH), this.named);
    }
    this.flushed += this.rows;
    this.rows = 0;
  }

  inRange(lo: number, hi: number, limit: number): Existing[] {
    let st = this.inRangeStmt.get(limit);
    if (!st)
      this.inRangeStmt.set(
        limit,
        (st = this.sqlite.prepare(
          `SELECT at_ms, metric_code, value, import_seq FROM climate_points WHERE cycle_key = ? AND at_ms >= ? AND at_ms <= ? LIMIT ${limit + 1}`,
        )),
      );
    return st.all(this.cycleKey, lo, hi) as Existing[];
  }

  find(ms: number, code: number): Stored | undefined {
    return this.findStmt.get(this.cycleKey, ms, code) as Stored | undefined;
  }

  update(value: number, ms: number, code: number): void {
    this.updateStmt.run(value, this.importSeq, this.cycleKey, ms, code);
  }

  // Synchronous and cached, unlike points.ts's ensureMetricCode, since it is asked once per reading.
  codeOf(metric: string): number {
    let code = this.codes.get(metric);
    if (code === undefined) {
      this.addCode.run(metric);
      code = (this.getCode.get(metric) as { code: number }).code;
      this.codes.set(metric, code);
    }
    return code;
  }

  names(): string[] {
    return [...this.codes.keys()];
  }

  // Every batch is written before the next is looked up, so a later batch sees it.
  endBatch(): void {
    this.flush();
  }

  async finish(undo: Map<string, { added: number[]; updated: number[] }>): Promise<void> {
    this.flush();
    const insert = this.sqlite.prepare('INSERT INTO climate_import_undo (import_seq, metric, added, updated) VALUES (?, ?, ?, ?)');
    for (const [metric, e] of undo) insert.run(this.importSeq, metric, packFloats(e.added), packFloats(e.updated));
  }
}

/** A COPY row of one import: its bytes with what is the same for every row, and the offsets of instant, metric code and value. */
interface RowTemplate {
  row: Buffer;
  at: number;
  code: number;
  value: number;
}

/** Rows a PostgreSQL import gathers before a COPY, when no lookup asks for them sooner. */
const PG_FLUSH_ROWS = 5_000;
const COPY_COLUMNS = ['organization_id', 'cycle_key', 'at_ms', 'metric_code', 'value', 'import_seq', 'created_ms'] as const;

/** PostgreSQL: rows gathered and written by COPY; changed values by one UPDATE per flush. */
class PostgresPoints implements PointPort {
  values: unknown[] = [];
  rows = 0;
  flushed = 0;
  private readonly codes = new Map<string, number>();
  private readonly asked = new Set<string>();
  private readonly updates = { value: [] as number[], ms: [] as number[], code: [] as number[] };
  /** The span of the cycle's stored readings when the import began; null: none stored. */
  private stored: { lo: number; hi: number } | null | undefined = undefined;
  /** The span of what this import wrote or holds to write. */
  private writtenLo = Infinity;
  private writtenHi = -Infinity;

  constructor(
    private readonly w: Writer,
    private readonly client: pg.PoolClient,
    private readonly org: string,
    private readonly cycleKey: number,
    private readonly importSeq: number,
    private readonly created: number,
  ) {}

  next(): number {
    return this.rows++ * POINT_WIDTH;
  }

  /**
   * Starts writing the gathered rows (COPY) without waiting for it: `pg` runs one statement after
   * another on a connection, so whatever this transaction asks next waits its turn, while the
   * import goes on reading and sorting the next rows meanwhile. `settle` waits for what is in flight.
   */
  private startCopy(): void {
    if (this.rows === 0) return;
    const copy = copyInto(this.client, 'climate_points', COPY_COLUMNS, this.binaryRows(), 'binary');
    const before = this.inflight;
    this.inflight = Promise.all([before, copy]).then(() => undefined);
    // Seen when settled; until then it must not count as unhandled.
    this.inflight.catch(() => undefined);
    this.flushed += this.rows;
    this.rows = 0;
    this.values = [];
  }

  /**
   * The gathered rows in COPY's binary format, in COPY_COLUMNS' order: the server parses no
   * text, and the numbers go as they are (a fifth less of the COPY's time than its text format,
   * measured with this table's key).
   */
  private binaryRows(): Buffer {
    const t = (this.rowTemplate ??= this.template());
    const size = t.row.length;
    const b = Buffer.allocUnsafe(19 + this.rows * size + 2);
    b.write('PGCOPY\n\xff\r\n\0', 0, 'latin1');
    b.writeInt32BE(0, 11);
    b.writeInt32BE(0, 15);
    // Every row is the template (one native fill), then its instant, metric and value in place.
    b.fill(t.row, 19, 19 + this.rows * size);
    const view = new DataView(b.buffer, b.byteOffset, b.length);
    const v = this.values;
    for (let r = 0, i = 0, o = 19; r < this.rows; r++, i += POINT_WIDTH, o += size) {
      // An instant is a whole number from 0 to 2^53: two 32-bit halves, no BigInt.
      const ms = v[i] as number;
      view.setUint32(o + t.at, Math.floor(ms / 4294967296));
      view.setUint32(o + t.at + 4, ms >>> 0);
      view.setInt32(o + t.code, v[i + 1] as number);
      view.setFloat64(o + t.value, v[i + 2] as number);
    }
    b.writeInt16BE(-1, 19 + this.rows * size);
    return b;
  }

  /** One row in COPY's binary format with what is the same for the whole import, and where the rest goes. */
  private template(): RowTemplate {
    const org = Buffer.from(this.org, 'utf8');
    const row = Buffer.alloc(2 + 4 + org.length + 6 * 4 + 5 * 8 + 4);
    let o = row.writeInt16BE(COPY_COLUMNS.length, 0);
    o = row.writeInt32BE(org.length, o);
    o += org.copy(row, o);
    const int8 = (x: number) => {
      o = row.writeInt32BE(8, o);
      o = row.writeUInt32BE(Math.floor(x / 4294967296), o);
      o = row.writeUInt32BE(x >>> 0, o);
    };
    int8(this.cycleKey);
    const at = o + 4;
    int8(0);
    o = row.writeInt32BE(4, o);
    const code = o;
    o = row.writeInt32BE(0, o);
    o = row.writeInt32BE(8, o);
    const value = o;
    o = row.writeDoubleBE(0, o);
    int8(this.importSeq);
    int8(this.created);
    return { row, at, code, value };
  }

  private rowTemplate: RowTemplate | null = null;

  private inflight: Promise<void> = Promise.resolve();

  private async settle(): Promise<void> {
    await this.inflight;
  }

  /** Writes everything gathered (rows, then changed values) and waits for it: before any lookup. */
  private async flush(): Promise<void> {
    this.startCopy();
    await this.settle();
    const u = this.updates;
    if (u.ms.length > 0) {
      await this.client.query(
        `UPDATE climate_points p SET value = u.value, import_seq = $1, changed_ms = NULL, version = NULL
           FROM unnest($4::float8[], $5::bigint[], $6::integer[]) AS u(value, at_ms, metric_code)
          WHERE p.organization_id = $2 AND p.cycle_key = $3 AND p.at_ms = u.at_ms AND p.metric_code = u.metric_code`,
        [this.importSeq, this.org, this.cycleKey, u.value, u.ms, u.code],
      );
      u.value = [];
      u.ms = [];
      u.code = [];
    }
  }

  private async storedSpan(): Promise<{ lo: number; hi: number } | null> {
    if (this.stored === undefined) {
      const r = await this.client.query<{ lo: number | null; hi: number | null }>(
        'SELECT min(at_ms) AS lo, max(at_ms) AS hi FROM climate_points WHERE organization_id = $1 AND cycle_key = $2',
        [this.org, this.cycleKey],
      );
      const row = r.rows[0]!;
      this.stored = row.lo === null || row.hi === null ? null : { lo: row.lo, hi: row.hi };
    }
    return this.stored;
  }

  /** Whether a stored reading can be in [lo, hi]: what was there at the start, or what this import wrote or holds. */
  private async mayHold(lo: number, hi: number): Promise<boolean> {
    const s = await this.storedSpan();
    if (s && lo <= s.hi && hi >= s.lo) return true;
    return lo <= this.writtenHi && hi >= this.writtenLo;
  }

  async inRange(lo: number, hi: number, limit: number): Promise<Existing[]> {
    if (!(await this.mayHold(lo, hi))) return [];
    await this.flush();
    const r = await this.client.query<Existing>(
      `SELECT at_ms, metric_code, value, import_seq FROM climate_points
        WHERE organization_id = $1 AND cycle_key = $2 AND at_ms >= $3 AND at_ms <= $4 LIMIT ${limit + 1}`,
      [this.org, this.cycleKey, lo, hi],
    );
    return r.rows;
  }

  async find(ms: number, code: number): Promise<Stored | undefined> {
    await this.flush();
    const r = await this.client.query<Stored>(
      'SELECT value, import_seq FROM climate_points WHERE organization_id = $1 AND cycle_key = $2 AND at_ms = $3 AND metric_code = $4',
      [this.org, this.cycleKey, ms, code],
    );
    return r.rows[0];
  }

  update(value: number, ms: number, code: number): void {
    this.updates.value.push(value);
    this.updates.ms.push(ms);
    this.updates.code.push(code);
  }

  codeOf(metric: string): number {
    const code = this.codes.get(metric);
    if (code === undefined) throw new Error(`metric ${metric} was not prepared for this batch`);
    this.asked.add(metric);
    return code;
  }

  names(): string[] {
    return [...this.asked];
  }

  async prepare(metrics: ArrayLike<string>, n: number): Promise<void> {
    let fresh: Set<string> | null = null;
    // The columns may be longer than the batch (a reused buffer): only its first n count.
    for (let i = 0; i < n; i++) {
      const m = metrics[i]!;
      if (!this.codes.has(m)) (fresh ??= new Set()).add(m);
    }
    if (!fresh) return;
    const names = [...fresh];
    // A shared table (docs/citus.md): the code a name was given anywhere is its code everywhere.
    await this.client.query('INSERT INTO climate_metric_codes (metric) SELECT unnest($1::text[]) ON CONFLICT (metric) DO NOTHING', [names]);
    const r = await this.client.query<{ code: number; metric: string }>(
      'SELECT code, metric FROM climate_metric_codes WHERE metric = ANY($1::text[])',
      [names],
    );
    for (const row of r.rows) this.codes.set(row.metric, row.code);
  }

  async endBatch(lo: number, hi: number): Promise<void> {
    if (lo < this.writtenLo) this.writtenLo = lo;
    if (hi > this.writtenHi) this.writtenHi = hi;
    if (this.rows >= PG_FLUSH_ROWS) {
      // One COPY in flight at a time: memory stays at about two chunks of rows.
      await this.settle();
      this.startCopy();
    }
  }

  async finish(undo: Map<string, { added: number[]; updated: number[] }>): Promise<void> {
    await this.flush();
    const rows = [...undo].map(([metric, e]) => ({
      organization_id: this.org,
      import_seq: this.importSeq,
      metric,
      added: packFloats(e.added),
      updated: packFloats(e.updated),
    }));
    for (let i = 0; i < rows.length; i += 500)
      await this.w.trx
        .insertInto('climate_import_undo')
        .values(rows.slice(i, i + 500))
        .execute();
  }
}
