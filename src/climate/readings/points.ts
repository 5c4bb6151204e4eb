import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Writer } from '../../db/store.js';
import { pgOnlyOrganization } from '../../db/engine.js';
import { pointId, pointInstant } from './point-id.js';
import type { ClimatePointTable, ClimateReading } from './tables.js';
import './tables.js';
import '../imports/tables.js';

/**
 * Where climate readings are stored and how a stored row becomes the reading
 * the API shows. The import engine writes rows with prepared statements of its
 * own (imports/engine.ts); everything else goes through here.
 */

type Q = Kysely<Database> | Transaction<Database>;

/** The cycle a reading belongs to: enough to present it and to find its rows. */
export interface PointOwner {
  id: string;
  organization_id: string;
}

/** The stored key of a reading. */
export interface PointKey {
  cycle_key: number;
  at_ms: number;
  metric_code: number;
}

/** The small integer standing for the cycle in the readings' key; undefined while the cycle has never held a reading. */
export async function cycleKeyOf(db: Q, cycleId: string): Promise<number | undefined> {
  return (await db.selectFrom('climate_cycle_keys').select('key').where('cycle_id', '=', cycleId).executeTakeFirst())?.key;
}

export async function ensureCycleKey(w: Writer, cycle: PointOwner): Promise<number> {
  const known = await cycleKeyOf(w.trx, cycle.id);
  if (known !== undefined) return known;
  await w.trx
    .insertInto('climate_cycle_keys')
    .values({ cycle_id: cycle.id, ...pgOnlyOrganization(w.engine, cycle.organization_id) } as never)
    .execute();
  return (await cycleKeyOf(w.trx, cycle.id))!;
}

/** The small integer standing for a metric name in the readings' key; undefined while no reading of it was ever stored. */
export async function metricCodeOf(db: Q, metric: string): Promise<number | undefined> {
  return (await db.selectFrom('climate_metric_codes').select('code').where('metric', '=', metric).executeTakeFirst())?.code;
}

export async function ensureMetricCode(trx: Transaction<Database>, metric: string): Promise<number> {
  const known = await metricCodeOf(trx, metric);
  if (known !== undefined) return known;
  await trx
    .insertInto('climate_metric_codes')
    .values({ metric } as never)
    .execute();
  return (await metricCodeOf(trx, metric))!;
}

const iso = (ms: number) => new Date(ms).toISOString();

type StoredRow = ClimatePointTable & { metric: string; import_id: string | null; import_version: string | null; import_at: string | null };

function rows(db: Q) {
  return db
    .selectFrom('climate_points as p')
    .innerJoin('climate_metric_codes as m', 'm.code', 'p.metric_code')
    .leftJoin('climate_imports as i', 'i.seq', 'p.import_seq')
    .select([
      'p.cycle_key',
      'p.at_ms',
      'p.metric_code',
      'm.metric',
      'p.value',
      'p.import_seq',
      'p.created_ms',
      'p.changed_ms',
      'p.version',
      'p.fixed_id',
      'i.id as import_id',
      'i.version as import_version',
      'i.created_at as import_at',
    ]);
}

/** The reading a stored row is. A value an import set carries that import's time and version. */
export function toReading(owner: PointOwner, r: StoredRow): ClimateReading {
  const byImport = r.version === null;
  return {
    id: r.fixed_id ?? pointId(owner.id, r.metric, r.at_ms),
    organization_id: owner.organization_id,
    cycle_id: owner.id,
    metric: r.metric,
    at_utc: iso(r.at_ms),
    value: r.value,
    import_id: r.import_id,
    created_at: iso(r.created_ms),
    updated_at: byImport ? (r.import_at ?? iso(r.created_ms)) : iso(r.changed_ms ?? r.created_ms),
    version: byImport ? (r.import_version ?? '') : r.version!,
  };
}

export interface ListQuery {
  metric?: string;
  fromUtc?: string;
  toUtc?: string;
  limit: number;
  offset: number;
}

/** Readings newest first (then by metric), `from` and `to` inclusive. */
export async function listPoints(db: Q, owner: PointOwner, q: ListQuery): Promise<{ rows: ClimateReading[]; total: number }> {
  const key = await cycleKeyOf(db, owner.id);
  if (key === undefined) return { rows: [], total: 0 };
  let code: number | undefined;
  if (q.metric) {
    code = await metricCodeOf(db, q.metric);
    if (code === undefined) return { rows: [], total: 0 };
  }
  let matching = rows(db).where('p.cycle_key', '=', key);
  if (code !== undefined) matching = matching.where('p.metric_code', '=', code);
  if (q.fromUtc) matching = matching.where('p.at_ms', '>=', Date.parse(q.fromUtc));
  if (q.toUtc) matching = matching.where('p.at_ms', '<=', Date.parse(q.toUtc));
  const total = await matching
    .clearSelect()
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const found = (await matching.orderBy('p.at_ms', 'desc').orderBy('m.metric').limit(q.limit).offset(q.offset).execute()) as StoredRow[];
  return { rows: found.map((r) => toReading(owner, r)), total: Number(total.n) };
}

export interface FoundPoint {
  reading: ClimateReading;
  key: PointKey;
}

function found(owner: PointOwner, r: StoredRow): FoundPoint {
  return { reading: toReading(owner, r), key: { cycle_key: r.cycle_key, at_ms: r.at_ms, metric_code: r.metric_code } };
}

/** The reading with this point_id in the cycle: a stored id first, else the readings at the instant the id names. */
export async function findPoint(db: Q, owner: PointOwner, id: string): Promise<FoundPoint | undefined> {
  const at = pointInstant(id);
  if (at === null) return undefined;
  const key = await cycleKeyOf(db, owner.id);
  if (key === undefined) return undefined;
  const lower = id.toLowerCase();
  const fixed = (await rows(db).where('p.cycle_key', '=', key).where('p.fixed_id', '=', lower).executeTakeFirst()) as StoredRow | undefined;
  if (fixed) return found(owner, fixed);
  const atInstant = (await rows(db)
    .where('p.cycle_key', '=', key)
    .where('p.at_ms', '=', at)
    .where('p.fixed_id', 'is', null)
    .execute()) as StoredRow[];
  const hit = atInstant.find((r) => pointId(owner.id, r.metric, r.at_ms) === lower);
  return hit ? found(owner, hit) : undefined;
}

/** The reading of `metric` at an instant, if any. */
export async function pointAt(db: Q, owner: PointOwner, metric: string, atMs: number): Promise<FoundPoint | undefined> {
  const key = await cycleKeyOf(db, owner.id);
  const code = await metricCodeOf(db, metric);
  if (key === undefined || code === undefined) return undefined;
  const r = (await rows(db)
    .where('p.cycle_key', '=', key)
    .where('p.at_ms', '=', atMs)
    .where('p.metric_code', '=', code)
    .executeTakeFirst()) as StoredRow | undefined;
  return r ? found(owner, r) : undefined;
}

async function reread(w: Writer, owner: PointOwner, k: PointKey): Promise<ClimateReading> {
  const r = (await rows(w.trx)
    .where('p.cycle_key', '=', k.cycle_key)
    .where('p.at_ms', '=', k.at_ms)
    .where('p.metric_code', '=', k.metric_code)
    .executeTakeFirstOrThrow()) as StoredRow;
  return toReading(owner, r);
}

const ENTITY = 'climate_readings';

/** Stores a typed reading where none is (the caller checked), logged as an insert. */
export async function insertManualPoint(
  w: Writer,
  owner: PointOwner,
  metric: string,
  atMs: number,
  value: number,
): Promise<ClimateReading> {
  const cycle_key = await ensureCycleKey(w, owner);
  const metric_code = await ensureMetricCode(w.trx, metric);
  const now = Date.parse(w.now);
  await w.trx
    .insertInto('climate_points')
    .values({
      ...pgOnlyOrganization(w.engine, owner.organization_id),
      cycle_key,
      at_ms: atMs,
      metric_code,
      value,
      import_seq: null,
      created_ms: now,
      changed_ms: now,
      version: w.stamp(),
      fixed_id: null,
    })
    .execute();
  const after = await reread(w, owner, { cycle_key, at_ms: atMs, metric_code });
  await w.log({ organization_id: owner.organization_id, entity: ENTITY, entity_id: after.id, op: 'insert', after });
  return after;
}

/**
 * Sets a reading's value (and instant) by hand: it becomes a manual reading. A move to
 * another instant gives a derived id the id of the new instant, so it is logged as the
 * old reading deleted and the new one inserted.
 */
export async function setManualPoint(
  w: Writer,
  owner: PointOwner,
  current: FoundPoint,
  value: number,
  atMs: number,
): Promise<ClimateReading> {
  const before = current.reading;
  const now = Date.parse(w.now);
  await w.trx
    .updateTable('climate_points')
    .set({ value, at_ms: atMs, import_seq: null, changed_ms: now, version: w.stamp() })
    .where('cycle_key', '=', current.key.cycle_key)
    .where('at_ms', '=', current.key.at_ms)
    .where('metric_code', '=', current.key.metric_code)
    .execute();
  const after = await reread(w, owner, { ...current.key, at_ms: atMs });
  if (after.id === before.id) {
    await w.log({ organization_id: owner.organization_id, entity: ENTITY, entity_id: after.id, op: 'update', before, after });
  } else {
    await w.log({ organization_id: owner.organization_id, entity: ENTITY, entity_id: before.id, op: 'delete', before });
    await w.log({ organization_id: owner.organization_id, entity: ENTITY, entity_id: after.id, op: 'insert', after });
  }
  return after;
}

export async function deleteStoredPoint(w: Writer, owner: PointOwner, current: FoundPoint): Promise<void> {
  await w.trx
    .deleteFrom('climate_points')
    .where('cycle_key', '=', current.key.cycle_key)
    .where('at_ms', '=', current.key.at_ms)
    .where('metric_code', '=', current.key.metric_code)
    .execute();
  await w.log({
    organization_id: owner.organization_id,
    entity: ENTITY,
    entity_id: current.reading.id,
    op: 'delete',
    before: current.reading,
  });
}

/** Readings held by these cycles (the registry's contents and cascade). */
export async function countPointsOf(db: Q, cycleIds: readonly string[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < cycleIds.length; i += 500) {
    const r = await db
      .selectFrom('climate_points as p')
      .innerJoin('climate_cycle_keys as k', 'k.key', 'p.cycle_key')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('k.cycle_id', 'in', cycleIds.slice(i, i + 500))
      .executeTakeFirst();
    n += Number(r?.n ?? 0);
  }
  return n;
}

/**
 * Removes every reading of these cycles, and the undo records of their imports, in the
 * caller's transaction. The change log gets one entry per cycle (entity
 * `climate_readings`, entity_id the cycle, `before` the count) rather than a tombstone
 * per reading: a cycle's readings go as one, and a year of them is 245,000 rows.
 */
export async function removePointsOf(w: Writer, cycleIds: readonly string[]): Promise<number> {
  let removed = 0;
  for (const cycleId of cycleIds) {
    const key = await cycleKeyOf(w.trx, cycleId);
    await w.trx
      .deleteFrom('climate_import_undo')
      .where('import_seq', 'in', w.trx.selectFrom('climate_imports').select('seq').where('cycle_id', '=', cycleId))
      .execute();
    if (key === undefined) continue;
    const cycle = await w.trx.selectFrom('cycles').select('organization_id').where('id', '=', cycleId).executeTakeFirst();
    const r = await w.trx.deleteFrom('climate_points').where('cycle_key', '=', key).executeTakeFirst();
    const n = Number(r.numDeletedRows);
    await w.trx.deleteFrom('climate_cycle_keys').where('key', '=', key).execute();
    if (n > 0)
      await w.log({
        organization_id: cycle?.organization_id ?? null,
        entity: ENTITY,
        entity_id: cycleId,
        op: 'delete',
        before: { cycle_id: cycleId, readings: n },
      });
    removed += n;
  }
  return removed;
}
