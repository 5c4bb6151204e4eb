import type { Db } from '../db/database.js';
import type { CycleTable, GreenhouseTable } from '../db/schema.js';
import { notFound } from '../http/problem.js';

/**
 * Resolves a registry path to its record, checking every id on the way, so a
 * path that mixes levels of different parents (or organizations) is a 404.
 * Every feature that hangs records under a cycle or greenhouse starts here.
 */
export interface CyclePath {
  organization_id: string;
  farm_id: string;
  greenhouse_id: string;
  row_id: string;
  cycle_id: string;
}

export interface GreenhousePath {
  organization_id: string;
  farm_id: string;
  greenhouse_id: string;
}

export interface CycleScope {
  cycle: CycleTable;
  greenhouse: GreenhouseTable;
  /** The greenhouse's IANA zone: how wall-clock times and local dates of this cycle are read. */
  zone: string;
}

export async function resolveGreenhouse(db: Db, p: GreenhousePath): Promise<GreenhouseTable> {
  const gh = await db
    .selectFrom('greenhouses')
    .selectAll()
    .where('id', '=', p.greenhouse_id)
    .where('farm_id', '=', p.farm_id)
    .where('organization_id', '=', p.organization_id)
    .executeTakeFirst();
  if (!gh) throw notFound('greenhouse');
  return gh;
}

export async function resolveCycle(db: Db, p: CyclePath): Promise<CycleScope> {
  const cycle = await db
    .selectFrom('cycles')
    .selectAll()
    .where('id', '=', p.cycle_id)
    .where('row_id', '=', p.row_id)
    .where('greenhouse_id', '=', p.greenhouse_id)
    .where('farm_id', '=', p.farm_id)
    .where('organization_id', '=', p.organization_id)
    .executeTakeFirst();
  if (!cycle) throw notFound('crop cycle');
  const greenhouse = await db.selectFrom('greenhouses').selectAll().where('id', '=', cycle.greenhouse_id).executeTakeFirstOrThrow();
  return { cycle, greenhouse, zone: greenhouse.time_zone };
}
