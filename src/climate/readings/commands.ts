import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { CycleScope } from '../../registry/scope.js';
import { climateMetric, toCanonical } from '../metrics.js';
import { conversion, parseUnit, unitBySymbol } from '../../units/units.js';
import { conflict, validationFailed, type FieldError } from '../../http/problem.js';
import { readInstant } from './time.js';
import type { ClimateReadingTable } from './tables.js';
import './tables.js';

export interface PointInput {
  metric: string;
  value: number;
  at: string;
  unit?: string;
}

export interface CanonicalPoint {
  metric: string;
  value: number;
  at_utc: string;
}

type Checked = { ok: true; value: number } | { ok: false; field: 'unit' | 'value' | 'metric'; message: string };

/**
 * Brings one value to its metric's canonical unit, naming the field at fault:
 * the unit when it cannot be read or converted, the value when it is outside
 * the metric's plausible range.
 */
export function canonicalValue(metric: string, value: number, unit: string | undefined): Checked {
  const m = climateMetric(metric);
  if (!m) return { ok: false, field: 'metric', message: `is not a known climate metric` };
  if (unit !== undefined && unit !== '') {
    const from = unitBySymbol(unit) ?? parseUnit(unit);
    if (!from) return { ok: false, field: 'unit', message: `'${unit}' is not a unit this box knows (canonical unit of ${metric}: ${m.unit})` };
    if (!conversion(from, m.unit)) return { ok: false, field: 'unit', message: `'${unit}' cannot be converted to ${m.unit}, the unit of ${metric}` };
  }
  const r = toCanonical(metric, value, unit === '' ? undefined : unit);
  if (!r.ok) return { ok: false, field: 'value', message: r.message };
  return { ok: true, value: r.value };
}

/**
 * Checks every point before anything is written; one bad point refuses the
 * whole request (422) with one entry per bad field, e.g. `points.3.unit`.
 */
export function checkPoints(points: PointInput[], zone: string): CanonicalPoint[] {
  const errors: FieldError[] = [];
  const out: CanonicalPoint[] = [];
  points.forEach((p, i) => {
    const at = readInstant(p.at, zone);
    if (!at.ok) errors.push({ in: 'body', name: `points.${i}.at`, message: at.message });
    const v = canonicalValue(p.metric, p.value, p.unit);
    if (!v.ok) errors.push({ in: 'body', name: `points.${i}.${v.field}`, message: v.message });
    if (at.ok && v.ok) out.push({ metric: p.metric, value: v.value, at_utc: at.utc });
  });
  if (errors.length) throw validationFailed(errors, `${new Set(errors.map((e) => e.name.split('.')[1])).size} of ${points.length} points are invalid; nothing was stored.`);
  return out;
}

export interface AddResult {
  added: number;
  updated: number;
  unchanged: number;
  rows: ClimateReadingTable[];
}

/**
 * Stores typed points, all in the caller's transaction. One metric at one
 * instant is one reading: a point that exists is updated (and becomes a
 * manual reading), one with the same value is left as it is. Within one
 * request a later duplicate wins.
 */
export async function addPoints(w: Writer, scope: CycleScope, points: CanonicalPoint[]): Promise<AddResult> {
  const byKey = new Map<string, CanonicalPoint>();
  for (const p of points) byKey.set(`${p.metric}\u0000${p.at_utc}`, p);
  const result: AddResult = { added: 0, updated: 0, unchanged: 0, rows: [] };
  for (const p of byKey.values()) {
    const existing = await w.trx
      .selectFrom('climate_readings')
      .selectAll()
      .where('cycle_id', '=', scope.cycle.id)
      .where('metric', '=', p.metric)
      .where('at_utc', '=', p.at_utc)
      .executeTakeFirst();
    if (!existing) {
      result.rows.push(
        await w.insert<ClimateReadingTable>('climate_readings', { organization_id: scope.cycle.organization_id, cycle_id: scope.cycle.id, metric: p.metric, at_utc: p.at_utc, value: p.value, import_id: null }),
      );
      result.added++;
    } else if (existing.value === p.value && existing.import_id === null) {
      result.rows.push(existing);
      result.unchanged++;
    } else {
      result.rows.push((await w.update<ClimateReadingTable>('climate_readings', existing.id, { value: p.value, import_id: null })).after);
      result.updated++;
    }
  }
  return result;
}

export interface ListQuery {
  metric?: string;
  fromUtc?: string;
  toUtc?: string;
  limit: number;
  offset: number;
}

/** Readings newest first (then by metric), `from` and `to` inclusive. */
export async function listReadings(db: Db, cycleId: string, q: ListQuery): Promise<{ rows: ClimateReadingTable[]; total: number }> {
  let base = db.selectFrom('climate_readings').where('cycle_id', '=', cycleId);
  if (q.metric) base = base.where('metric', '=', q.metric);
  if (q.fromUtc) base = base.where('at_utc', '>=', q.fromUtc);
  if (q.toUtc) base = base.where('at_utc', '<=', q.toUtc);
  const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await base.selectAll().orderBy('at_utc', 'desc').orderBy('metric').limit(q.limit).offset(q.offset).execute();
  return { rows, total: Number(total.n) };
}

export async function findReading(db: Db, cycleId: string, pointId: string): Promise<ClimateReadingTable | undefined> {
  return db.selectFrom('climate_readings').selectAll().where('id', '=', pointId).where('cycle_id', '=', cycleId).executeTakeFirst();
}

export interface PointPatch {
  value?: number;
  unit?: string;
  at?: string;
}

/**
 * Edits one reading; it becomes a manual reading. A unit is the unit of the
 * value sent with it. Moving it onto an instant where the same metric already
 * has a reading is a 409 naming that reading: two readings never share a key.
 */
export async function updatePoint(w: Writer, scope: CycleScope, current: ClimateReadingTable, patch: PointPatch): Promise<ClimateReadingTable> {
  const errors: FieldError[] = [];
  let value = current.value;
  let atUtc = current.at_utc;
  if (patch.unit !== undefined && patch.value === undefined) errors.push({ in: 'body', name: 'unit', message: 'is the unit of value; send it with value' });
  if (patch.value !== undefined) {
    const v = canonicalValue(current.metric, patch.value, patch.unit);
    if (v.ok) value = v.value;
    else errors.push({ in: 'body', name: v.field, message: v.message });
  }
  if (patch.at !== undefined) {
    const at = readInstant(patch.at, scope.zone);
    if (at.ok) atUtc = at.utc;
    else errors.push({ in: 'body', name: 'at', message: at.message });
  }
  if (errors.length) throw validationFailed(errors);
  if (atUtc !== current.at_utc) {
    const clash = await w.trx
      .selectFrom('climate_readings')
      .select('id')
      .where('cycle_id', '=', current.cycle_id)
      .where('metric', '=', current.metric)
      .where('at_utc', '=', atUtc)
      .executeTakeFirst();
    if (clash) throw conflict(`${current.metric} already has a reading at that time; edit or delete that one instead.`, { point_id: clash.id });
  }
  const { after } = await w.update<ClimateReadingTable>('climate_readings', current.id, { value, at_utc: atUtc, import_id: null });
  return after;
}

export async function deletePoint(w: Writer, current: ClimateReadingTable): Promise<void> {
  await w.remove('climate_readings', current.id);
}
