import { sql } from 'kysely';
import type { Writer } from '../../db/store.js';
import type { ClimateImportTable } from './tables.js';
import { unpackFloats } from './point-storage.js';
import { cycleKeyOf, metricCodeOf } from '../readings/points.js';
import { Conflict, NotFound } from '../../errors.js';
import type { CycleScope } from '../../registry/scope.js';
import { findImport } from './history.js';

export interface LaterChanges {
  /** Imports after this one whose values now stand in readings this import wrote. */
  later_imports: string[];
  /** Readings this import wrote that were edited by hand since. */
  manual_edits: number;
}

interface UndoRecord {
  metric: string;
  added: Float64Array;
  /** Triples: instant, previous value, previous import seq (NaN: typed by hand). */
  updated: Float64Array;
}

async function undoRecords(w: Writer, imp: ClimateImportTable): Promise<UndoRecord[]> {
  const rows = await w.trx
    .selectFrom('climate_import_undo')
    .select(['metric', 'added', 'updated'])
    .where('import_seq', '=', imp.seq)
    .execute();
  return rows.map((r) => ({ metric: r.metric, added: unpackFloats(r.added), updated: unpackFloats(r.updated) }));
}

/** The instants each metric's readings were written at by the import, as keys `metric|ms`. */
function touchedKeys(records: UndoRecord[]): Set<string> {
  const keys = new Set<string>();
  for (const r of records) {
    for (const ms of r.added) keys.add(`${r.metric}|${ms}`);
    for (let i = 0; i < r.updated.length; i += 3) keys.add(`${r.metric}|${r.updated[i]}`);
  }
  return keys;
}

/**
 * Which readings this import wrote have been changed since. A reading holds
 * the import that last set its value, so a reading this import touched that
 * no longer names it was changed after it (by a later import, or by hand); an
 * undo of that later import puts the name back, and the conflict goes with it.
 */
export async function laterChanges(w: Writer, imp: ClimateImportTable, records?: UndoRecord[]): Promise<LaterChanges> {
  records ??= await undoRecords(w, imp);
  const key = await cycleKeyOf(w.trx, imp.cycle_id);
  const none = { later_imports: [], manual_edits: 0 };
  if (key === undefined || imp.from_utc === null || imp.to_utc === null || records.length === 0) return none;
  const touched = touchedKeys(records);
  // Readings in the import's time span that something else set; only those it touched count.
  const others = await w.trx
    .selectFrom('climate_points as p')
    .innerJoin('climate_metric_codes as m', 'm.code', 'p.metric_code')
    .leftJoin('climate_imports as i', 'i.seq', 'p.import_seq')
    .select(['p.at_ms', 'm.metric', 'i.id as import_id'])
    .where('p.cycle_key', '=', key)
    .where('p.at_ms', '>=', Date.parse(imp.from_utc))
    .where('p.at_ms', '<=', Date.parse(imp.to_utc))
    .where('p.import_seq', 'is distinct from', imp.seq)
    .execute();
  const later = new Set<string>();
  let manual = 0;
  for (const o of others) {
    if (!touched.has(`${o.metric}|${o.at_ms}`)) continue;
    if (o.import_id === null) manual++;
    else later.add(o.import_id);
  }
  return { later_imports: [...later].sort(), manual_edits: manual };
}

export interface UndoResult {
  import: ClimateImportTable;
  removed: number;
  restored: number;
  /** Readings the import wrote that were deleted by hand since: nothing to undo there. */
  missing: number;
  overridden: LaterChanges;
}

/**
 * Reverses one import in the caller's transaction: removes the readings it
 * added and puts back the value and source of those it changed. Refused with
 * 409 when it was undone already (or never stored anything), and when later
 * imports or hand edits changed the same readings, unless `confirm`: then
 * those later values go too, as the caller asked.
 */
/** Undoes one import of the cycle (NotFound when the cycle has no such import). */
export async function undoImportOf(w: Writer, scope: CycleScope, importId: string, confirm: boolean): Promise<UndoResult> {
  const imp = await findImport(w.trx, scope.cycle.id, importId);
  if (!imp) throw new NotFound('climate import');
  return undoImport(w, imp, confirm);
}

export async function undoImport(w: Writer, imp: ClimateImportTable, confirm: boolean): Promise<UndoResult> {
  if (imp.status === 'undone')
    throw new Conflict(`This import was undone already (${imp.undone_at}).`, { import_id: imp.id, later_imports: [] });
  if (imp.status === 'failed')
    throw new Conflict('This import failed and stored nothing; there is nothing to undo.', {
      import_id: imp.id,
      later_imports: [],
    });
  const records = await undoRecords(w, imp);
  const later = await laterChanges(w, imp, records);
  if (!confirm && (later.later_imports.length > 0 || later.manual_edits > 0)) {
    const parts = [
      later.later_imports.length ? `${later.later_imports.length} later import(s) changed readings it wrote` : '',
      later.manual_edits ? `${later.manual_edits} of its readings were edited by hand since` : '',
    ].filter(Boolean);
    throw new Conflict(
      `Undoing this import would also throw away later changes: ${parts.join('; ')}. Send {"confirm": true} to undo it anyway.`,
      {
        import_id: imp.id,
        ...later,
      },
    );
  }
  const key = await cycleKeyOf(w.trx, imp.cycle_id);
  let removed = 0;
  let restored = 0;
  let missing = 0;
  if (key !== undefined) {
    const version = w.stamp();
    const changed = Date.parse(w.now);
    for (const r of records) {
      const code = await metricCodeOf(w.trx, r.metric);
      if (code === undefined) {
        missing += r.added.length + r.updated.length / 3;
        continue;
      }
      const done = await reverse(w, imp.organization_id, key, code, r, changed, version);
      removed += done.removed;
      restored += done.restored;
      missing += r.added.length + r.updated.length / 3 - done.removed - done.restored;
    }
  }
  const { after } = await w.update<ClimateImportTable>('climate_imports', imp.id, { status: 'undone', undone_at: w.now });
  return { import: after, removed, restored, missing, overridden: later };
}

/**
 * Puts one metric's readings back as they were before the import: removes those it added,
 * restores the value and source of those it changed; says how many of each it found.
 * SQLite: a prepared statement per reading on its one connection (no call costs a round trip).
 * PostgreSQL: one statement for each of the two, over arrays of instants.
 */
async function reverse(
  w: Writer,
  org: string,
  key: number,
  code: number,
  r: UndoRecord,
  changed: number,
  version: string,
): Promise<{ removed: number; restored: number }> {
  let removed = 0;
  let restored = 0;
  if (w.engine.kind === 'sqlite') {
    const sqlite = w.engine.sqlite!;
    const remove = sqlite.prepare('DELETE FROM climate_points WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?');
    const restore = sqlite.prepare(
      'UPDATE climate_points SET value = ?, import_seq = ?, changed_ms = ?, version = ? WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?',
    );
    for (const ms of r.added) if (remove.run(key, ms, code).changes) removed++;
    for (let i = 0; i < r.updated.length; i += 3) {
      const seq = r.updated[i + 2]!;
      if (restore.run(r.updated[i + 1]!, Number.isNaN(seq) ? null : seq, changed, version, key, r.updated[i]!, code).changes) restored++;
    }
    return { removed, restored };
  }
  if (r.added.length > 0) {
    const res = await sql`
      DELETE FROM climate_points p USING unnest(${[...r.added]}::bigint[]) AS u(at_ms)
       WHERE p.cycle_key = ${key} AND p.metric_code = ${code} AND p.at_ms = u.at_ms AND p.organization_id = ${org}`.execute(w.trx);
    removed = Number(res.numAffectedRows ?? 0);
  }
  if (r.updated.length > 0) {
    const ms: number[] = [];
    const values: number[] = [];
    const seqs: (number | null)[] = [];
    for (let i = 0; i < r.updated.length; i += 3) {
      ms.push(r.updated[i]!);
      values.push(r.updated[i + 1]!);
      seqs.push(Number.isNaN(r.updated[i + 2]!) ? null : r.updated[i + 2]!);
    }
    const res = await sql`
      UPDATE climate_points p SET value = u.value, import_seq = u.seq, changed_ms = ${changed}, version = ${version}
        FROM unnest(${ms}::bigint[], ${values}::float8[], ${seqs}::bigint[]) AS u(at_ms, value, seq)
       WHERE p.cycle_key = ${key} AND p.metric_code = ${code} AND p.at_ms = u.at_ms AND p.organization_id = ${org}`.execute(w.trx);
    restored = Number(res.numAffectedRows ?? 0);
  }
  return { removed, restored };
}
