import type { Db } from '../../db/database.js';
import type { ClimateImportTable } from './tables.js';
import './tables.js';

/** A cycle's imports, newest first. */
export async function listImports(
  db: Db,
  cycleId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: ClimateImportTable[]; total: number }> {
  const base = db.selectFrom('climate_imports').where('cycle_id', '=', cycleId);
  const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(total.n) };
}

/** One import of a cycle (an id of another cycle is not found). */
export async function findImport(db: Db, cycleId: string, importId: string): Promise<ClimateImportTable | undefined> {
  return db.selectFrom('climate_imports').selectAll().where('id', '=', importId).where('cycle_id', '=', cycleId).executeTakeFirst();
}
