import type { Writer } from '../../db/store.js';
import type { CycleScope } from '../../registry/scope.js';
import { climateMetric, toCanonical } from '../metrics.js';
import { conversion, parseUnit, unitBySymbol } from '../../units/units.js';
import { readInstant } from '../../time/instants.js';
import type { ClimateReading } from './tables.js';
import { deleteStoredPoint, findPoint, insertManualPoint, listPoints, pointAt, setManualPoint, type FoundPoint } from './points.js';
import { Conflict, Invalid, NotFound, type FieldIssue } from '../../errors.js';
import type { Db } from '../../db/database.js';

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
    if (!from)
      return { ok: false, field: 'unit', message: `'${unit}' is not a unit this box knows (canonical unit of ${metric}: ${m.unit})` };
    if (!conversion(from, m.unit))
      return { ok: false, field: 'unit', message: `'${unit}' cannot be converted to ${m.unit}, the unit of ${metric}` };
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
  const errors: FieldIssue[] = [];
  const out: CanonicalPoint[] = [];
  points.forEach((p, i) => {
    const at = readInstant(p.at, zone);
    if (!at.ok) errors.push({ in: 'body', name: `points.${i}.at`, message: at.message });
    const v = canonicalValue(p.metric, p.value, p.unit);
    if (!v.ok) errors.push({ in: 'body', name: `points.${i}.${v.field}`, message: v.message });
    if (at.ok && v.ok) out.push({ metric: p.metric, value: v.value, at_utc: at.utc });
  });
  if (errors.length)
    throw new Invalid(
      errors,
      `${new Set(errors.map((e) => e.name.split('.')[1])).size} of ${points.length} points are invalid; nothing was stored.`,
    );
  return out;
}

export interface AddResult {
  added: number;
  updated: number;
  unchanged: number;
  rows: ClimateReading[];
}

/**
 * Stores typed points, all in the caller's transaction. One metric at one
 * instant is one reading: a point that exists is updated (and becomes a
 * manual reading), one with the same value is left as it is. Within one
 * request a later duplicate wins.
 */
/** Checks typed readings (every bad one named, nothing stored) and stores them in the caller's transaction. */
export function recordPoints(w: Writer, scope: CycleScope, points: PointInput[]): Promise<AddResult> {
  return addPoints(w, scope, checkPoints(points, scope.zone));
}

export async function addPoints(w: Writer, scope: CycleScope, points: CanonicalPoint[]): Promise<AddResult> {
  const byKey = new Map<string, CanonicalPoint>();
  for (const p of points) byKey.set(`${p.metric}\u0000${p.at_utc}`, p);
  const result: AddResult = { added: 0, updated: 0, unchanged: 0, rows: [] };
  for (const p of byKey.values()) {
    const atMs = Date.parse(p.at_utc);
    const existing = await pointAt(w.trx, scope.cycle, p.metric, atMs);
    if (!existing) {
      result.rows.push(await insertManualPoint(w, scope.cycle, p.metric, atMs, p.value));
      result.added++;
    } else if (existing.reading.value === p.value && existing.reading.import_id === null) {
      result.rows.push(existing.reading);
      result.unchanged++;
    } else {
      result.rows.push(await setManualPoint(w, scope.cycle, existing, p.value, atMs));
      result.updated++;
    }
  }
  return result;
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
/** A reading of the cycle by its point_id, or NotFound. */
export async function requirePoint(db: Db, scope: CycleScope, pointId: string): Promise<FoundPoint> {
  const current = await findPoint(db, scope.cycle, pointId);
  if (!current) throw new NotFound('climate reading');
  return current;
}

/** Reads a page of readings; `from` and `to` are instants read in the greenhouse zone (422 naming each bad one). */
export async function readingsPage(
  db: Db,
  scope: CycleScope,
  query: { metric?: string; from?: string; to?: string; limit: number; offset: number },
): Promise<{ rows: ClimateReading[]; total: number; limit: number; offset: number }> {
  const errors: FieldIssue[] = [];
  const bound = (name: 'from' | 'to') => {
    const text = query[name];
    if (text === undefined) return undefined;
    const r = readInstant(text, scope.zone);
    if (!r.ok) errors.push({ in: 'query', name, message: r.message });
    return r.ok ? r.utc : undefined;
  };
  const fromUtc = bound('from');
  const toUtc = bound('to');
  if (errors.length) throw new Invalid(errors);
  const { rows, total } = await listPoints(db, scope.cycle, {
    metric: query.metric,
    fromUtc,
    toUtc,
    limit: query.limit,
    offset: query.offset,
  });
  return { rows, total, limit: query.limit, offset: query.offset };
}

export async function updatePoint(w: Writer, scope: CycleScope, pointId: string, patch: PointPatch): Promise<ClimateReading> {
  const current = await requirePoint(w.trx, scope, pointId);
  const errors: FieldIssue[] = [];
  const reading = current.reading;
  let value = reading.value;
  let atUtc = reading.at_utc;
  if (patch.unit !== undefined && patch.value === undefined)
    errors.push({ in: 'body', name: 'unit', message: 'is the unit of value; send it with value' });
  if (patch.value !== undefined) {
    const v = canonicalValue(reading.metric, patch.value, patch.unit);
    if (v.ok) value = v.value;
    else errors.push({ in: 'body', name: v.field, message: v.message });
  }
  if (patch.at !== undefined) {
    const at = readInstant(patch.at, scope.zone);
    if (at.ok) atUtc = at.utc;
    else errors.push({ in: 'body', name: 'at', message: at.message });
  }
  if (errors.length) throw new Invalid(errors);
  const atMs = Date.parse(atUtc);
  if (atMs !== current.key.at_ms) {
    const clash = await pointAt(w.trx, scope.cycle, reading.metric, atMs);
    if (clash)
      throw new Conflict(`${reading.metric} already has a reading at that time; edit or delete that one instead.`, {
        point_id: clash.reading.id,
      });
  }
  return setManualPoint(w, scope.cycle, current, value, atMs);
}

/** Deletes a reading; answers it as it was. */
export async function deletePoint(w: Writer, scope: CycleScope, pointId: string): Promise<ClimateReading> {
  const current = await requirePoint(w.trx, scope, pointId);
  await deleteStoredPoint(w, scope.cycle, current);
  return current.reading;
}
