import { Forbidden } from '../../errors.js';
import type { RawSql } from '../../db/raw.js';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { climateMetric } from '../../climate/metrics.js';
import { pointId } from '../../climate/readings/point-id.js';
import { ensureCycleKey, ensureMetricCode } from '../../climate/readings/points.js';
import { packFloats, unpackFloats } from '../../climate/imports/engine.js';
import { checkFields, fieldInvalid, invalid, rowSchema } from '../refusal.js';
import { SYNCED, Superseded, checkParents, findRow, logApplied, rowKind, wasDeleted, type ParentSpec } from './rows.js';
import { newer, parse, pick, type ApplyContext, type LoggedChange, type SerializeContext, type SyncKind, type WireBody } from './kind.js';
import type { WireChange } from '../wire.js';

/**
 * Climate (docs/sync.md, "Climate readings and imports"). A reading is one metric at one
 * instant in one crop cycle, and its id is made from exactly that, so a reading deleted and
 * typed again is the same id: readings are merged by version with tombstones that carry the
 * version of the delete (sync_tombstones). Imports travel as units, the import's record with
 * the readings it set, and an undone import as its record with what the undo did; never one
 * change per reading (docs/architecture.md).
 */

type Row = Record<string, unknown>;
const READINGS = 'climate_readings';
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(2200, 0, 1);

const CYCLE: ParentSpec[] = [{ column: 'cycle_id', table: 'cycles', kind: 'cycles', what: 'crop cycle' }];

/** A value and instant a climate reading may hold, as the API's checks would have it. */
function checkReading(metric: unknown, atMs: unknown, value: unknown, where: string): void {
  const m = typeof metric === 'string' ? climateMetric(metric) : null;
  if (!m) throw fieldInvalid(`${where}.metric`, 'is not a known climate metric');
  if (typeof atMs !== 'number' || !Number.isInteger(atMs) || !(atMs >= EARLIEST && atMs < LATEST))
    throw fieldInvalid(`${where}.at`, 'must be an instant between 1970 and 2200');
  if (value === null) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < m.range[0] || value > m.range[1])
    throw fieldInvalid(`${where}.value`, `must be a number in the plausible range of ${m.name}, ${m.range[0]} to ${m.range[1]} ${m.unit}`);
}

// ---- Local state of readings: points, their effective versions, tombstones.

interface CycleRef {
  id: string;
  key: number;
}

type HeldPoint = { value: number; import_seq: number | null; version: string | null; fixed_id: string | null };

class ReadingState {
  private readonly importVersions = new Map<number, string | null>();
  private readonly importIds = new Map<string, number | null>();

  constructor(
    private readonly db: RawSql,
    private readonly org: string,
  ) {}

  async importVersion(seq: number): Promise<string | null> {
    if (!this.importVersions.has(seq)) {
      const r = await this.db.get<{ version: string }>('SELECT version FROM climate_imports WHERE seq = ?', seq);
      this.importVersions.set(seq, r?.version ?? null);
    }
    return this.importVersions.get(seq)!;
  }

  async seqOf(importId: string): Promise<number | null> {
    if (!this.importIds.has(importId)) {
      const r = await this.db.get<{ seq: number }>('SELECT seq FROM climate_imports WHERE id = ?', importId);
      this.importIds.set(importId, r?.seq ?? null);
    }
    return this.importIds.get(importId)!;
  }

  /** The version an import had before this transaction changed it. */
  prime(seq: number, version: string): void {
    this.importVersions.set(seq, version);
  }

  get(cycle: CycleRef, code: number, atMs: number): Promise<HeldPoint | undefined> {
    return this.db.get<HeldPoint>(
      'SELECT value, import_seq, version, fixed_id FROM climate_points WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?',
      cycle.key,
      atMs,
      code,
    );
  }

  /** Every metric's points from `from` to `to` (ms) in one query, by `code:instant`. */
  async rangeAll(cycle: CycleRef, from: number, to: number): Promise<Map<string, HeldPoint>> {
    const rows = await this.db.all<HeldPoint & { at_ms: number; metric_code: number }>(
      'SELECT metric_code, at_ms, value, import_seq, version, fixed_id FROM climate_points WHERE cycle_key = ? AND at_ms >= ? AND at_ms <= ?',
      cycle.key,
      from,
      to,
    );
    return new Map(rows.map((r) => [`${r.metric_code}:${Number(r.at_ms)}`, r]));
  }

  /** The version a point holds: its own, or the import's that set it. */
  async effective(p: { import_seq: number | null; version: string | null }): Promise<string> {
    if (p.version !== null) return p.version;
    return p.import_seq === null ? '' : ((await this.importVersion(p.import_seq)) ?? '');
  }

  async tombstone(id: string): Promise<string | null> {
    return (await this.db.get<{ version: string }>(TOMB_SQL, READINGS, id))?.version ?? null;
  }

  /** The tombstones of these reading ids, in one query on PostgreSQL (one lookup each on SQLite, where that is cheapest). */
  async tombstones(ids: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (this.db.kind === 'postgres') {
      const rows = await this.db.all<{ entity_id: string; version: string }>(
        'SELECT entity_id, version FROM sync_tombstones WHERE entity = ? AND organization_id = ? AND entity_id = ANY(?::text[])',
        READINGS,
        this.org,
        ids,
      );
      for (const r of rows) out.set(r.entity_id, r.version);
      return out;
    }
    for (const id of ids) {
      const v = await this.tombstone(id);
      if (v !== null) out.set(id, v);
    }
    return out;
  }
}

const TOMB_SQL = 'SELECT version FROM sync_tombstones WHERE entity = ? AND entity_id = ?';

function setTombstone(db: RawSql, org: string, id: string, version: string): Promise<void> {
  return db.run(
    `INSERT INTO sync_tombstones (entity, entity_id, organization_id, version) VALUES (?, ?, ?, ?)
     ON CONFLICT (${db.kind === 'postgres' ? 'entity, entity_id, organization_id' : 'entity, entity_id'}) DO UPDATE SET version = excluded.version WHERE excluded.version > sync_tombstones.version`,
    READINGS,
    id,
    org,
    version,
  );
}

/**
 * The deletes made on this instance, as tombstones: a reading deleted by hand (its change-log
 * entry) and the readings an undo removed (the import's undo record, at the version of the
 * undo). Kept up as the log grows, inside every transaction that applies received changes, so
 * a received write older than a delete made here never brings the reading back.
 *
 * On SQLite (one writer) by the log's own sequence, for every organization at once. On
 * PostgreSQL, where log entries of concurrent transactions commit out of their sequence's
 * order, per organization by its feed number (taken under the organization's lock, so in commit
 * order), and only for the organization of the batch: its tombstones are all the batch reads.
 */
export async function indexLocalTombstones(db: RawSql, org: string): Promise<void> {
  const pg = db.kind === 'postgres';
  const mark = pg ? `sync_tombstones_seq:${org}` : 'sync_tombstones_seq';
  const done = Number((await db.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', mark))?.value ?? 0);
  const entries = pg
    ? await db.all<LoggedChange & { n: number }>(
        `SELECT org_seq AS n, organization_id, entity, entity_id, op, before, after, version FROM change_log
          WHERE organization_id = ? AND org_seq > ? AND origin IS NULL AND entity IN ('climate_readings', 'climate_imports') ORDER BY org_seq`,
        org,
        done,
      )
    : await db.all<LoggedChange & { n: number }>(
        `SELECT seq AS n, organization_id, entity, entity_id, op, before, after, version FROM change_log
          WHERE seq > ? AND origin IS NULL AND entity IN ('climate_readings', 'climate_imports') ORDER BY seq`,
        done,
      );
  let last = done;
  for (const e of entries) {
    last = Number(e.n);
    if (e.organization_id === null) continue;
    if (e.entity === READINGS && e.op === 'delete') {
      const before = parse(e.before);
      if (before && typeof before.metric === 'string') await setTombstone(db, e.organization_id, e.entity_id, e.version);
    } else if (e.entity === 'climate_imports' && e.op === 'update') {
      const before = parse(e.before);
      const after = parse(e.after);
      if (!after || after.status !== 'undone' || before?.status === 'undone') continue;
      const version = typeof after.version === 'string' ? after.version : e.version;
      const undo = await db.all<{ metric: string; added: Buffer }>(
        'SELECT metric, added FROM climate_import_undo WHERE import_seq = ?',
        after.seq,
      );
      for (const u of undo)
        for (const ms of unpackFloats(u.added))
          await setTombstone(db, e.organization_id, pointId(after.cycle_id as string, u.metric, ms), version);
    }
  }
  if (last > done)
    await db.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', mark, String(last));
}

async function cycleRef(ctx: ApplyContext, cycleId: string): Promise<CycleRef> {
  return { id: cycleId, key: await ensureCycleKey(ctx.w, { id: cycleId, organization_id: ctx.org }) };
}

// ---- Readings typed or edited by hand: one change each.

const READING_COLUMNS = [...SYNCED, 'cycle_id', 'metric', 'at_utc', 'value', 'import_id'];

export const climateReadingsKind: SyncKind = {
  kind: READINGS,
  digest: [
    {
      name: READINGS,
      rows: async (db, org) =>
        (
          await sql<Row>`SELECT k.cycle_id AS cycle_id, m.metric AS metric, p.at_ms AS at_ms, p.value AS value, i.id AS import_id,
                      coalesce(p.version, i.version) AS version
                 FROM climate_points p
                 JOIN climate_cycle_keys k ON k.key = p.cycle_key
                 JOIN cycles c ON c.id = k.cycle_id
                 JOIN climate_metric_codes m ON m.code = p.metric_code
                 LEFT JOIN climate_imports i ON i.seq = p.import_seq
                WHERE c.organization_id = ${org}
                ORDER BY k.cycle_id, m.metric, p.at_ms`.execute(db)
        ).rows.map((r) => [r.cycle_id, r.metric, r.at_ms, r.value, r.import_id, r.version]),
    },
  ],
  async serialize(_ctx, entry) {
    const img = parse(entry.op === 'delete' ? entry.before : entry.after);
    // A cascade logs one entry for a cycle's readings: the cycle's own delete carries it.
    if (!img || typeof img.metric !== 'string') return null;
    if (entry.op === 'delete') return { op: 'delete', eid: entry.entity_id, v: entry.version, row: pick(img, READING_COLUMNS) };
    return {
      op: 'upsert',
      eid: entry.entity_id,
      v: typeof img.version === 'string' ? img.version : entry.version,
      row: pick(img, READING_COLUMNS),
    };
  },
  async apply(ctx, change) {
    const row = change.row;
    if (!row) throw invalid('A reading change carries the reading (row).');
    if (row.organization_id !== ctx.org) throw new Forbidden('The reading belongs to another organization.');
    const atMs = Date.parse(String(row.at_utc));
    checkReading(row.metric, atMs, change.op === 'delete' ? null : row.value, 'row');
    if (row.import_id !== null && row.import_id !== undefined && change.op === 'upsert')
      throw fieldInvalid('row.import_id', 'is null for a reading typed or edited by hand');
    try {
      await checkParents(ctx, row, CYCLE);
    } catch (err) {
      if (err instanceof Superseded) return 'superseded';
      throw err;
    }
    const cycleId = row.cycle_id as string;
    const metric = row.metric as string;
    const cycle = await cycleRef(ctx, cycleId);
    const code = await ensureMetricCode(ctx.trx, metric);
    const state = new ReadingState(ctx.db, ctx.org);
    const held = await state.get(cycle, code, atMs);
    const id = held?.fixed_id ?? pointId(cycleId, metric, atMs);
    const local = [held ? await state.effective(held) : '', (await state.tombstone(id)) ?? ''].reduce((a, b) => (a > b ? a : b));
    if (!newer(change.v, local)) return 'superseded';
    if (change.op === 'delete') {
      if (held) await ctx.db.run('DELETE FROM climate_points WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?', cycle.key, atMs, code);
      await setTombstone(ctx.db, ctx.org, id, change.v);
      await logApplied(ctx, change, 'delete', pick(row, READING_COLUMNS), undefined);
      return 'applied';
    }
    const created = Date.parse(String(row.created_at));
    const updated = Date.parse(String(row.updated_at));
    if (!Number.isFinite(created) || !Number.isFinite(updated)) throw invalid('created_at and updated_at must be instants.');
    if (held) {
      await ctx.db.run(
        'UPDATE climate_points SET value = ?, import_seq = NULL, changed_ms = ?, version = ? WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?',
        row.value,
        updated,
        change.v,
        cycle.key,
        atMs,
        code,
      );
    } else {
      const fixed = change.eid === pointId(cycleId, metric, atMs) ? null : change.eid;
      if (ctx.db.kind === 'postgres')
        await ctx.db.run(
          'INSERT INTO climate_points (cycle_key, at_ms, metric_code, value, import_seq, created_ms, changed_ms, version, fixed_id, organization_id) VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)',
          cycle.key,
          atMs,
          code,
          row.value,
          created,
          updated,
          change.v,
          fixed,
          ctx.org,
        );
      else
        await ctx.db.run(
          'INSERT INTO climate_points (cycle_key, at_ms, metric_code, value, import_seq, created_ms, changed_ms, version, fixed_id) VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?)',
          cycle.key,
          atMs,
          code,
          row.value,
          created,
          updated,
          change.v,
          fixed,
        );
    }
    await logApplied(ctx, change, held ? 'update' : 'insert', undefined, pick(row, READING_COLUMNS));
    return 'applied';
  },
};

// ---- Imports: the record and its readings as one unit.

const IMPORT_COLUMNS = [
  ...SYNCED,
  'cycle_id',
  'greenhouse_id',
  'file_name',
  'content_hash',
  'size_bytes',
  'kind',
  'actor',
  'rows_read',
  'readings_added',
  'readings_updated',
  'readings_skipped',
  'from_utc',
  'to_utc',
  'metrics',
  'status',
  'failure_reason',
  'mapping',
  'warnings',
  'undone_at',
];
const count = { type: 'integer', minimum: 0 };
const importSchema = rowSchema(
  {
    cycle_id: { type: 'string' },
    greenhouse_id: { type: 'string' },
    file_name: { type: 'string', maxLength: 1024 },
    content_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    size_bytes: count,
    kind: { enum: ['csv', 'file', 'ingest', 'watch'] },
    actor: { type: 'string', maxLength: 200 },
    rows_read: count,
    readings_added: count,
    readings_updated: count,
    readings_skipped: count,
    from_utc: { type: ['string', 'null'], format: 'date-time' },
    to_utc: { type: ['string', 'null'], format: 'date-time' },
    metrics: { type: 'string' },
    status: { enum: ['done', 'failed', 'undone'] },
    failure_reason: { type: ['string', 'null'] },
    mapping: { type: ['string', 'null'] },
    warnings: { type: 'string' },
    undone_at: { type: ['string', 'null'], format: 'date-time' },
  },
  ['cycle_id', 'greenhouse_id', 'file_name', 'content_hash', 'size_bytes', 'kind', 'actor', 'metrics', 'status', 'warnings'],
);

/** One metric's reading states in a unit: instants, values (null: removed), and where not the import's own, source and version. */
interface PackedReadings {
  metric: string;
  at: number[];
  value: (number | null)[];
  src?: (string | null)[];
  ver?: (string | null)[];
}

/** The readings an import's unit carries, from what its undo record says it touched (docs/sync.md). */
async function importReadings(db: Kysely<Database>, imp: Row): Promise<PackedReadings[]> {
  const out: PackedReadings[] = [];
  if (imp.status === 'failed' || imp.from_utc === null) return out;
  const key = (
    await db
      .selectFrom('climate_cycle_keys')
      .select('key')
      .where('cycle_id', '=', imp.cycle_id as string)
      .executeTakeFirst()
  )?.key;
  if (imp.status === 'done') {
    if (key === undefined) return out;
    // Every reading that names the import now: exactly what it set and nothing since replaced.
    const rows = (
      await sql<{ metric: string; at_ms: number; value: number }>`
        SELECT m.metric AS metric, p.at_ms AS at_ms, p.value AS value FROM climate_points p JOIN climate_metric_codes m ON m.code = p.metric_code
         WHERE p.cycle_key = ${key} AND p.at_ms >= ${Date.parse(imp.from_utc as string)} AND p.at_ms <= ${Date.parse(imp.to_utc as string)}
           AND p.import_seq = ${imp.seq as number} AND p.version IS NULL
         ORDER BY m.metric, p.at_ms`.execute(db)
    ).rows;
    let cur: PackedReadings | undefined;
    for (const r of rows) {
      if (cur?.metric !== r.metric) out.push((cur = { metric: r.metric, at: [], value: [] }));
      cur.at.push(r.at_ms);
      cur.value.push(r.value);
    }
    return out;
  }
  // Undone: what it added is gone (a tombstone at the undo's version), what it replaced is back.
  const undo = await db
    .selectFrom('climate_import_undo')
    .select(['metric', 'added', 'updated'])
    .where('import_seq', '=', imp.seq as number)
    .execute();
  for (const u of undo) {
    const code = (await db.selectFrom('climate_metric_codes').select('code').where('metric', '=', u.metric).executeTakeFirst())?.code;
    const held = new Map<number, { value: number; import_seq: number | null; version: string | null; import_id: string | null }>();
    if (key !== undefined && code !== undefined) {
      const rows = (
        await sql<{ at_ms: number; value: number; import_seq: number | null; version: string | null; import_id: string | null }>`
          SELECT p.at_ms AS at_ms, p.value AS value, p.import_seq AS import_seq, p.version AS version, i.id AS import_id
            FROM climate_points p LEFT JOIN climate_imports i ON i.seq = p.import_seq
           WHERE p.cycle_key = ${key} AND p.metric_code = ${code} AND p.at_ms >= ${Date.parse(imp.from_utc as string)} AND p.at_ms <= ${Date.parse(imp.to_utc as string)}`.execute(
          db,
        )
      ).rows;
      for (const r of rows) held.set(r.at_ms, r);
    }
    const src: (string | null)[] = [];
    const ver: (string | null)[] = [];
    const p: PackedReadings = { metric: u.metric, at: [], value: [], src, ver };
    for (const ms of unpackFloats(u.added)) {
      if (held.has(ms)) continue;
      p.at.push(ms);
      p.value.push(null);
      src.push(null);
      ver.push(null);
    }
    const updated = unpackFloats(u.updated);
    for (let i = 0; i < updated.length; i += 3) {
      const ms = updated[i]!;
      const previousSeq = Number.isNaN(updated[i + 2]!) ? null : updated[i + 2]!;
      const h = held.get(ms);
      if (!h || h.import_seq !== previousSeq || h.version === null) continue;
      if (h.import_seq !== null && h.import_id === null) continue;
      p.at.push(ms);
      p.value.push(h.value);
      src.push(h.import_id);
      ver.push(h.version);
    }
    if (p.at.length) out.push(p);
  }
  return out;
}

/** Appends what applying a unit did to the import's undo record here, so an undo made here undoes it. */
async function recordUndo(
  db: RawSql,
  org: string,
  seq: number,
  metrics: { metric: string; added: number[]; updated: number[] }[],
): Promise<void> {
  const touched = metrics.filter((m) => m.added.length || m.updated.length);
  if (!touched.length) return;
  const held = new Map(
    (
      await db.all<{ metric: string; added: Buffer; updated: Buffer }>(
        'SELECT metric, added, updated FROM climate_import_undo WHERE import_seq = ?',
        seq,
      )
    ).map((r) => [r.metric, r]),
  );
  const rows = touched.map((m) => {
    const h = held.get(m.metric);
    return {
      metric: m.metric,
      added: packFloats(h ? [...unpackFloats(h.added), ...m.added] : m.added),
      updated: packFloats(h ? [...unpackFloats(h.updated), ...m.updated] : m.updated),
    };
  });
  if (db.kind === 'postgres') {
    await db.run(
      `INSERT INTO climate_import_undo (import_seq, metric, added, updated, organization_id)
       SELECT ?, u.metric, u.added, u.updated, ? FROM unnest(?::text[], ?::bytea[], ?::bytea[]) AS u(metric, added, updated)
       ON CONFLICT (import_seq, metric, organization_id) DO UPDATE SET added = excluded.added, updated = excluded.updated`,
      seq,
      org,
      rows.map((r) => r.metric),
      rows.map((r) => r.added),
      rows.map((r) => r.updated),
    );
    return;
  }
  for (const r of rows)
    await db.run(
      'INSERT INTO climate_import_undo (import_seq, metric, added, updated) VALUES (?, ?, ?, ?) ON CONFLICT (import_seq, metric) DO UPDATE SET added = excluded.added, updated = excluded.updated',
      seq,
      r.metric,
      r.added,
      r.updated,
    );
}

/** The small numbers of these metrics' names, made for those that have none yet. */
async function metricCodes(ctx: ApplyContext, metrics: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!metrics.length) return out;
  const rows = await ctx.trx.selectFrom('climate_metric_codes').select(['metric', 'code']).where('metric', 'in', metrics).execute();
  for (const r of rows) out.set(r.metric, Number(r.code));
  for (const m of metrics) if (!out.has(m)) out.set(m, await ensureMetricCode(ctx.trx, m));
  return out;
}

/**
 * A unit's writes to one cycle's points: on SQLite a prepared statement per point (in process,
 * nothing to gain by gathering); on PostgreSQL gathered and sent as one statement per kind of
 * write (unnest), so that a unit of thousands of readings is a handful of round trips.
 */
class PointWriter {
  private ins: unknown[][] = [[], [], [], [], [], [], []];
  private upd: unknown[][] = [[], [], [], [], [], []];
  private del: unknown[][] = [[], []];

  constructor(
    private readonly db: RawSql,
    private readonly org: string,
    private readonly cycleKey: number,
  ) {}

  async insert(code: number, ms: number, value: number, src: number | null, created: number, changed: number | null, ver: string | null) {
    if (this.db.kind === 'sqlite')
      return this.db.run(
        'INSERT INTO climate_points (cycle_key, at_ms, metric_code, value, import_seq, created_ms, changed_ms, version, fixed_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)',
        this.cycleKey,
        ms,
        code,
        value,
        src,
        created,
        changed,
        ver,
      );
    [code, ms, value, src, created, changed, ver].forEach((v, i) => this.ins[i]!.push(v));
  }

  async update(code: number, ms: number, value: number, src: number | null, changed: number | null, ver: string | null) {
    if (this.db.kind === 'sqlite')
      return this.db.run(
        'UPDATE climate_points SET value = ?, import_seq = ?, changed_ms = ?, version = ? WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?',
        value,
        src,
        changed,
        ver,
        this.cycleKey,
        ms,
        code,
      );
    [code, ms, value, src, changed, ver].forEach((v, i) => this.upd[i]!.push(v));
  }

  async remove(code: number, ms: number) {
    if (this.db.kind === 'sqlite')
      return this.db.run('DELETE FROM climate_points WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?', this.cycleKey, ms, code);
    [code, ms].forEach((v, i) => this.del[i]!.push(v));
  }

  async flush(): Promise<void> {
    if (this.db.kind === 'sqlite') return;
    if (this.del[0]!.length)
      await this.db.run(
        `DELETE FROM climate_points p USING unnest(?::int[], ?::bigint[]) AS d(code, at_ms)
          WHERE p.cycle_key = ? AND p.organization_id = ? AND p.metric_code = d.code AND p.at_ms = d.at_ms`,
        ...this.del,
        this.cycleKey,
        this.org,
      );
    if (this.upd[0]!.length)
      await this.db.run(
        `UPDATE climate_points p SET value = u.value, import_seq = u.src, changed_ms = u.changed, version = u.ver
           FROM unnest(?::int[], ?::bigint[], ?::float8[], ?::bigint[], ?::bigint[], ?::text[]) AS u(code, at_ms, value, src, changed, ver)
          WHERE p.cycle_key = ? AND p.organization_id = ? AND p.metric_code = u.code AND p.at_ms = u.at_ms`,
        ...this.upd,
        this.cycleKey,
        this.org,
      );
    if (this.ins[0]!.length)
      await this.db.run(
        `INSERT INTO climate_points (cycle_key, at_ms, metric_code, value, import_seq, created_ms, changed_ms, version, fixed_id, organization_id)
         SELECT ?, i.at_ms, i.code, i.value, i.src, i.created, i.changed, i.ver, NULL, ?
           FROM unnest(?::int[], ?::bigint[], ?::float8[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[]) AS i(code, at_ms, value, src, created, changed, ver)`,
        this.cycleKey,
        this.org,
        ...this.ins,
      );
    this.ins = [[], [], [], [], [], [], []];
    this.upd = [[], [], [], [], [], []];
    this.del = [[], []];
  }
}

async function applyImport(ctx: ApplyContext, change: WireChange): Promise<'applied' | 'superseded'> {
  const existing = await findRow(ctx.trx, 'climate_imports', change.eid);
  if (existing && existing.organization_id !== ctx.org) throw new Forbidden('The import belongs to another organization.');
  if (change.op === 'delete') {
    if (!existing) {
      if (await wasDeleted(ctx.trx, 'climate_imports', change.eid)) return 'superseded';
      await logApplied(ctx, change, 'delete', change.row ?? { id: change.eid }, undefined);
      return 'applied';
    }
    await ctx.db.run('DELETE FROM climate_import_undo WHERE import_seq = ?', existing.seq);
    await ctx.trx.deleteFrom('climate_imports').where('id', '=', change.eid).execute();
    await logApplied(ctx, change, 'delete', existing, undefined);
    return 'applied';
  }
  const row = pick(change.row ?? {}, IMPORT_COLUMNS);
  if (row.id !== change.eid || row.version !== change.v) throw invalid('row must carry the change’s id and version.');
  if (row.organization_id !== ctx.org) throw new Forbidden('The import belongs to another organization.');
  checkFields(importSchema, row, 'climate import');
  for (const c of ['metrics', 'warnings', 'mapping']) {
    if (row[c] === null) continue;
    try {
      JSON.parse(row[c] as string);
    } catch {
      throw fieldInvalid(c, 'must be JSON');
    }
  }
  if (existing) {
    for (const c of ['cycle_id', 'greenhouse_id', 'content_hash', 'kind'])
      if (row[c] !== existing[c]) throw fieldInvalid(c, 'cannot change');
    if (!newer(change.v, existing.version as string)) return 'superseded';
  } else if (await wasDeleted(ctx.trx, 'climate_imports', change.eid)) return 'superseded';
  try {
    await checkParents(ctx, row, CYCLE);
  } catch (err) {
    if (err instanceof Superseded) return 'superseded';
    throw err;
  }
  const cycleRow = await findRow(ctx.trx, 'cycles', row.cycle_id as string);
  if (cycleRow && cycleRow.greenhouse_id !== row.greenhouse_id) throw fieldInvalid('greenhouse_id', "must be the crop cycle's");

  const packed = (change.unit?.readings ?? []) as PackedReadings[];
  if (!Array.isArray(packed)) throw fieldInvalid('readings', 'must be a list');
  // Every reading is checked before anything is written: one bad one refuses the unit.
  packed.forEach((p, i) => {
    if (!p || !Array.isArray(p.at) || !Array.isArray(p.value) || p.at.length !== p.value.length)
      throw fieldInvalid(`readings.${i}`, 'must hold at and value of one length');
    if ((p.src && p.src.length !== p.at.length) || (p.ver && p.ver.length !== p.at.length))
      throw fieldInvalid(`readings.${i}`, 'src and ver must be as long as at');
    for (let j = 0; j < p.at.length; j++) checkReading(p.metric, p.at[j], p.value[j], `readings.${i}`);
  });

  // Versions are compared with what the readings held before this unit: an import's own
  // readings have its version, read before its record is updated below.
  const state = new ReadingState(ctx.db, ctx.org);
  let seq: number;
  if (existing) {
    seq = existing.seq as number;
    state.prime(seq, existing.version as string);
    const values = pick(
      row,
      IMPORT_COLUMNS.filter((c) => !['id', 'organization_id', 'created_at'].includes(c)),
    );
    await ctx.trx.updateTable('climate_imports').set(values).where('id', '=', change.eid).execute();
    await logApplied(ctx, change, 'update', existing, { ...existing, ...values });
  } else {
    // SQLite's one writer numbers imports by max() + 1; PostgreSQL's concurrent ones by a sequence (migration 0005).
    const next = await ctx.db.get<{ s: number | null }>(
      ctx.db.kind === 'postgres' ? "SELECT nextval('climate_imports_seq_seq') AS s" : 'SELECT max(seq) + 1 AS s FROM climate_imports',
    );
    seq = Number(next?.s ?? 1);
    await ctx.trx
      .insertInto('climate_imports')
      .values({ ...row, seq } as never)
      .execute();
    await logApplied(ctx, change, 'insert', undefined, { ...row, seq });
  }

  const cycle = await cycleRef(ctx, row.cycle_id as string);
  const created = Date.parse(row.created_at as string);
  const changed = Date.parse(row.updated_at as string);
  const points = new PointWriter(ctx.db, ctx.org, cycle.key);
  // What the cycle holds over the unit's span and the tombstones of its instants, read once for
  // the whole unit (a handful of statements, not a few per metric: PostgreSQL's round trips).
  const codes = await metricCodes(ctx, [...new Set(packed.map((p) => p.metric))]);
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of packed)
    for (const ms of p.at) {
      lo = Math.min(lo, ms);
      hi = Math.max(hi, ms);
    }
  const load = async (metrics: PackedReadings[]) => {
    const span = lo <= hi ? await state.rangeAll(cycle, lo, hi) : new Map<string, HeldPoint>();
    const ids = metrics.map((p) => p.at.map((ms) => span.get(`${codes.get(p.metric)}:${ms}`)?.fixed_id ?? pointId(cycle.id, p.metric, ms)));
    return { span, ids, tombs: await state.tombstones(ids.flat()) };
  };
  let held0 = await load(packed);
  const undo: { metric: string; added: number[]; updated: number[] }[] = [];
  const seen = new Set<string>();
  for (let k = 0; k < packed.length; k++) {
    const p = packed[k]!;
    const code = codes.get(p.metric)!;
    let ids = held0.ids[k]!;
    if (seen.has(p.metric)) {
      // The same metric twice in one unit: what the first wrote is read back before the second.
      await points.flush();
      const again = await load([p]);
      held0 = { span: again.span, ids: held0.ids, tombs: again.tombs };
      ids = again.ids[0]!;
    }
    seen.add(p.metric);
    const { span, tombs } = held0;
    const added: number[] = [];
    const updatedEffects: number[] = [];
    for (let j = 0; j < p.at.length; j++) {
      const ms = p.at[j]!;
      const value = p.value[j]!;
      const ver = p.ver?.[j] ?? change.v;
      const src = p.src ? p.src[j]! : value === null ? null : change.eid;
      const held = span.get(`${code}:${ms}`);
      const id = ids[j]!;
      const local = [held ? await state.effective(held) : '', tombs.get(id) ?? ''].reduce((a, b) => (a > b ? a : b));
      if (!newer(ver, local)) continue;
      if (value === null) {
        if (held) await points.remove(code, ms);
        await setTombstone(ctx.db, ctx.org, id, ver);
        continue;
      }
      const srcSeq = src === null ? null : src === change.eid ? seq : await state.seqOf(src);
      if (src !== null && srcSeq === null) continue;
      // A value as the import set it keeps no version of its own: it has the import's (points.ts).
      const own = srcSeq === seq && ver === change.v && row.status === 'done';
      if (held) {
        await points.update(code, ms, value, srcSeq, own ? null : changed, own ? null : ver);
        if (own) updatedEffects.push(ms, held.value, held.import_seq ?? Number.NaN);
      } else {
        await points.insert(code, ms, value, srcSeq, created, own ? null : changed, own ? null : ver);
        if (own) added.push(ms);
      }
    }
    undo.push({ metric: p.metric, added, updated: updatedEffects });
  }
  await points.flush();
  await recordUndo(ctx.db, ctx.org, seq, undo);
  return 'applied';
}

export const climateImportsKind: SyncKind = {
  kind: 'climate_imports',
  digest: [
    {
      name: 'climate_imports',
      rows: async (db, org) =>
        (
          (await db
            .selectFrom('climate_imports')
            .select(IMPORT_COLUMNS as never[])
            .where('organization_id', '=', org)
            .orderBy('id')
            .execute()) as Row[]
        ).map((r) => IMPORT_COLUMNS.map((c) => r[c] ?? null)),
    },
  ],
  async serialize(ctx: SerializeContext, entry: LoggedChange): Promise<WireBody | null> {
    if (entry.op === 'delete') {
      const before = parse(entry.before);
      return { op: 'delete', eid: entry.entity_id, v: entry.version, ...(before ? { row: pick(before, IMPORT_COLUMNS) } : {}) };
    }
    const imp = (await ctx.db.selectFrom('climate_imports').selectAll().where('id', '=', entry.entity_id).executeTakeFirst()) as
      Row | undefined;
    if (!imp) return null;
    return {
      op: 'upsert',
      eid: entry.entity_id,
      v: imp.version as string,
      row: pick(imp, IMPORT_COLUMNS),
      unit: { readings: await importReadings(ctx.db, imp) },
    };
  },
  apply: applyImport,
};

export const climateFileMappingsKind: SyncKind = rowKind({
  kind: 'climate_file_mappings',
  table: 'climate_file_mappings',
  what: 'saved column choice',
  columns: [...SYNCED, 'greenhouse_id', 'mapping', 'source_file_name'],
  immutable: ['greenhouse_id'],
  // A mapping and the file it was read from are one setting.
  merge: { groups: [['mapping', 'source_file_name']] },
  naturalKey: ['greenhouse_id'],
  schema: rowSchema(
    { greenhouse_id: { type: 'string' }, mapping: { type: 'string' }, source_file_name: { type: 'string', maxLength: 1024 } },
    ['greenhouse_id', 'mapping', 'source_file_name'],
  ),
  parents: [{ column: 'greenhouse_id', table: 'greenhouses', kind: 'greenhouses', what: 'greenhouse' }],
  check(_ctx, row) {
    let m: unknown;
    try {
      m = JSON.parse(row.mapping as string);
    } catch {
      throw fieldInvalid('mapping', 'must be JSON');
    }
    if (m === null || typeof m !== 'object') throw fieldInvalid('mapping', 'must be a JSON object');
  },
});
