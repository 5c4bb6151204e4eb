import type SQLite from 'better-sqlite3';
import type { Writer } from '../../db/store.js';
import type { HybridLogicalClock } from '../../db/hlc.js';
import { HttpProblem } from '../../http/problem.js';
import type { ClimateImportTable } from './tables.js';

export interface LaterChanges {
  /** Imports after this one whose values now stand in readings this import wrote. */
  later_imports: string[];
  /** Readings this import wrote that were edited by hand since. */
  manual_edits: number;
}

/**
 * Which readings this import wrote have been changed since. A reading holds
 * the id of whatever last set its value, so a reading this import touched that
 * no longer names it was changed after it (by a later import, or by hand); an
 * undo of that later import puts the name back, and the conflict goes with it.
 */
export function laterChanges(sqlite: SQLite.Database, imp: ClimateImportTable): LaterChanges {
  const rows = sqlite
    .prepare(
      `SELECT r.import_id AS import_id, count(*) AS n
         FROM climate_import_effects e JOIN climate_readings r ON r.id = e.point_id
        WHERE e.cycle_id = ? AND e.import_id = ? AND (r.import_id IS NULL OR r.import_id <> ?)
        GROUP BY r.import_id`,
    )
    .all(imp.cycle_id, imp.id, imp.id) as { import_id: string | null; n: number }[];
  return {
    later_imports: rows.filter((r) => r.import_id !== null).map((r) => r.import_id!).sort(),
    manual_edits: rows.find((r) => r.import_id === null)?.n ?? 0,
  };
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
export async function undoImport(w: Writer, sqlite: SQLite.Database, clock: HybridLogicalClock, imp: ClimateImportTable, confirm: boolean): Promise<UndoResult> {
  if (imp.status === 'undone') throw new HttpProblem(409, 'conflict', `This import was undone already (${imp.undone_at}).`, { import_id: imp.id, later_imports: [] });
  if (imp.status === 'failed') throw new HttpProblem(409, 'conflict', 'This import failed and stored nothing; there is nothing to undo.', { import_id: imp.id, later_imports: [] });
  const later = laterChanges(sqlite, imp);
  if (!confirm && (later.later_imports.length > 0 || later.manual_edits > 0)) {
    const parts = [
      later.later_imports.length ? `${later.later_imports.length} later import(s) changed readings it wrote` : '',
      later.manual_edits ? `${later.manual_edits} of its readings were edited by hand since` : '',
    ].filter(Boolean);
    throw new HttpProblem(409, 'conflict', `Undoing this import would also throw away later changes: ${parts.join('; ')}. Send {"confirm": true} to undo it anyway.`, {
      import_id: imp.id,
      ...later,
    });
  }
  const version = clock.now();
  const counts = sqlite
    .prepare(
      `SELECT sum(e.action = 'added' AND r.id IS NOT NULL) AS removed, sum(e.action = 'updated' AND r.id IS NOT NULL) AS restored, sum(r.id IS NULL) AS missing
         FROM climate_import_effects e LEFT JOIN climate_readings r ON r.id = e.point_id
        WHERE e.cycle_id = ? AND e.import_id = ?`,
    )
    .get(imp.cycle_id, imp.id) as { removed: number | null; restored: number | null; missing: number | null };
  sqlite
    .prepare(
      `DELETE FROM climate_readings WHERE id IN
         (SELECT point_id FROM climate_import_effects WHERE cycle_id = ? AND import_id = ? AND action = 'added')`,
    )
    .run(imp.cycle_id, imp.id);
  sqlite
    .prepare(
      `UPDATE climate_readings SET value = e.previous_value, import_id = e.previous_import_id, updated_at = ?, version = ?
         FROM climate_import_effects e
        WHERE e.cycle_id = ? AND e.import_id = ? AND e.action = 'updated' AND climate_readings.id = e.point_id`,
    )
    .run(w.now, version, imp.cycle_id, imp.id);
  const { after } = await w.update<ClimateImportTable>('climate_imports', imp.id, { status: 'undone', undone_at: w.now });
  return { import: after, removed: counts.removed ?? 0, restored: counts.restored ?? 0, missing: counts.missing ?? 0, overridden: later };
}
