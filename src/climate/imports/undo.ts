import type SQLite from 'better-sqlite3';
import type { Writer } from '../../db/store.js';
import type { ClimateImportTable } from './tables.js';
import { unpackFloats } from './engine.js';
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

function undoRecords(sqlite: SQLite.Database, imp: ClimateImportTable): UndoRecord[] {
  const rows = sqlite.prepare('SELECT metric, added, updated FROM climate_import_undo WHERE import_seq = ?').all(imp.seq) as {
    metric: string;
    added: Buffer;
    updated: Buffer;
  }[];
  return rows.map((r) => ({ metric: r.metric, added: unpackFloats(r.added), updated: unpackFloats(r.updated) }));
}

function cycleKey(sqlite: SQLite.Database, cycleId: string): number | undefined {
  return (sqlite.prepare('SELECT key FROM climate_cycle_keys WHERE cycle_id = ?').get(cycleId) as { key: number } | undefined)?.key;
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
export function laterChanges(sqlite: SQLite.Database, imp: ClimateImportTable, records = undoRecords(sqlite, imp)): LaterChanges {
  const key = cycleKey(sqlite, imp.cycle_id);
  const none = { later_imports: [], manual_edits: 0 };
  if (key === undefined || imp.from_utc === null || imp.to_utc === null || records.length === 0) return none;
  const touched = touchedKeys(records);
  // Readings in the import's time span that something else set; only those it touched count.
  const others = sqlite
    .prepare(
      'SELECT p.at_ms AS at_ms, m.metric AS metric, i.id AS import_id FROM climate_points p JOIN climate_metric_codes m ON m.code = p.metric_code LEFT JOIN climate_imports i ON i.seq = p.import_seq WHERE p.cycle_key = ? AND p.at_ms >= ? AND p.at_ms <= ? AND p.import_seq IS NOT ?',
    )
    .all(key, Date.parse(imp.from_utc), Date.parse(imp.to_utc), imp.seq) as { at_ms: number; metric: string; import_id: string | null }[];
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
export async function undoImportOf(
  w: Writer,
  sqlite: SQLite.Database,
  scope: CycleScope,
  importId: string,
  confirm: boolean,
): Promise<UndoResult> {
  const imp = await findImport(w.trx, scope.cycle.id, importId);
  if (!imp) throw new NotFound('climate import');
  return undoImport(w, sqlite, imp, confirm);
}

export async function undoImport(w: Writer, sqlite: SQLite.Database, imp: ClimateImportTable, confirm: boolean): Promise<UndoResult> {
  if (imp.status === 'undone')
    throw new Conflict(`This import was undone already (${imp.undone_at}).`, { import_id: imp.id, later_imports: [] });
  if (imp.status === 'failed')
    throw new Conflict('This import failed and stored nothing; there is nothing to undo.', {
      import_id: imp.id,
      later_imports: [],
    });
  const records = undoRecords(sqlite, imp);
  const later = laterChanges(sqlite, imp, records);
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
  const key = cycleKey(sqlite, imp.cycle_id);
  let removed = 0;
  let restored = 0;
  let missing = 0;
  if (key !== undefined) {
    const version = w.stamp();
    const changed = Date.parse(w.now);
    const remove = sqlite.prepare('DELETE FROM climate_points WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?');
    const restore = sqlite.prepare(
      'UPDATE climate_points SET value = ?, import_seq = ?, changed_ms = ?, version = ? WHERE cycle_key = ? AND at_ms = ? AND metric_code = ?',
    );
    const codeOf = sqlite.prepare('SELECT code FROM climate_metric_codes WHERE metric = ?');
    for (const r of records) {
      const code = (codeOf.get(r.metric) as { code: number } | undefined)?.code;
      if (code === undefined) {
        missing += r.added.length + r.updated.length / 3;
        continue;
      }
      for (const ms of r.added) {
        if (remove.run(key, ms, code).changes) removed++;
        else missing++;
      }
      for (let i = 0; i < r.updated.length; i += 3) {
        const seq = r.updated[i + 2]!;
        if (restore.run(r.updated[i + 1]!, Number.isNaN(seq) ? null : seq, changed, version, key, r.updated[i]!, code).changes) restored++;
        else missing++;
      }
    }
  }
  const { after } = await w.update<ClimateImportTable>('climate_imports', imp.id, { status: 'undone', undone_at: w.now });
  return { import: after, removed, restored, missing, overridden: later };
}
