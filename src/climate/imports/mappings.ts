import { NotFound } from '../../errors.js';
import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { ClimateFileMappingTable } from './tables.js';
import './tables.js';

/** The column choices saved for a greenhouse, used by ingest and the watched folder. */
export async function savedMapping(db: Db, greenhouseId: string): Promise<ClimateFileMappingTable | undefined> {
  return db.selectFrom('climate_file_mappings').selectAll().where('greenhouse_id', '=', greenhouseId).executeTakeFirst();
}

/** Saves (or replaces) a greenhouse's column choices; one per greenhouse. */
export async function saveMapping(
  w: Writer,
  greenhouse: { id: string; organization_id: string },
  mapping: unknown,
  sourceFileName: string,
): Promise<ClimateFileMappingTable> {
  const existing = await savedMapping(w.trx as unknown as Db, greenhouse.id);
  const values = { mapping: JSON.stringify(mapping), source_file_name: sourceFileName };
  if (existing) return (await w.update<ClimateFileMappingTable>('climate_file_mappings', existing.id, values)).after;
  return w.insert<ClimateFileMappingTable>('climate_file_mappings', {
    organization_id: greenhouse.organization_id,
    greenhouse_id: greenhouse.id,
    ...values,
  });
}

/** Forgets them; answers what was forgotten, or undefined when nothing was saved. */
export async function forgetMapping(w: Writer, greenhouseId: string): Promise<ClimateFileMappingTable | undefined> {
  const existing = await savedMapping(w.trx as unknown as Db, greenhouseId);
  if (!existing) return undefined;
  await w.remove('climate_file_mappings', existing.id);
  return existing;
}

/** The greenhouse's saved column choices, or NotFound. */
export async function requireMappingRecord(db: Db, greenhouseId: string): Promise<ClimateFileMappingTable> {
  const saved = await savedMapping(db, greenhouseId);
  if (!saved) throw new NotFound('saved column choices for this greenhouse');
  return saved;
}
