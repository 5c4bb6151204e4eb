import type { Db } from '../db/database.js';
import type { CycleTable, FarmTable, GreenhouseTable, OrganizationTable, RowTable } from '../db/schema.js';
import type { ScopeResolvers } from '../http/scope.js';
import { NotFound } from '../errors.js';
import { LEVELS, type Level } from './levels.js';

/**
 * Resolves a registry path to its record, checking every id on the way, so a path that mixes
 * levels of different parents (or organizations) is a 404. The pipeline does this for every
 * route that declares `scope: 'farm' | 'greenhouse' | 'row' | 'cycle' | 'organization'`.
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

declare module '../http/scope.js' {
  interface Scopes {
    organization: OrganizationTable;
    farm: FarmTable;
    greenhouse: GreenhouseTable;
    row: RowTable;
    cycle: CycleScope;
  }
}

/** A level's record by the full path of ids: every parent id must be the record's own. */
export async function loadLevel<T>(db: Db, level: Level, params: Record<string, string | undefined>): Promise<T> {
  let q = (db as any)
    .selectFrom(level.table)
    .selectAll()
    .where('id', '=', params[level.idName])
    .where('organization_id', '=', params.organization_id);
  for (const p of level.parentIds) q = q.where(p, '=', params[p]);
  const row = await q.executeTakeFirst();
  if (!row) throw new NotFound(level.label);
  return row as T;
}

export async function resolveOrganization(db: Db, p: { organization_id: string }): Promise<OrganizationTable> {
  const org = await db.selectFrom('organizations').selectAll().where('id', '=', p.organization_id).executeTakeFirst();
  if (!org) throw new NotFound('organization');
  return org;
}

export function resolveGreenhouse(db: Db, p: GreenhousePath): Promise<GreenhouseTable> {
  return loadLevel<GreenhouseTable>(db, LEVELS.greenhouse, p as unknown as Record<string, string>);
}

export async function resolveCycle(db: Db, p: CyclePath): Promise<CycleScope> {
  const cycle = await loadLevel<CycleTable>(db, LEVELS.cycle, p as unknown as Record<string, string>);
  const greenhouse = await db.selectFrom('greenhouses').selectAll().where('id', '=', cycle.greenhouse_id).executeTakeFirstOrThrow();
  return { cycle, greenhouse, zone: greenhouse.time_zone };
}

export const registryScopes: ScopeResolvers = {
  organization: (db, params) => resolveOrganization(db, params as unknown as { organization_id: string }),
  farm: (db, params) => loadLevel<FarmTable>(db, LEVELS.farm, params),
  greenhouse: (db, params) => resolveGreenhouse(db, params as unknown as GreenhousePath),
  row: (db, params) => loadLevel<RowTable>(db, LEVELS.row, params),
  cycle: (db, params) => resolveCycle(db, params as unknown as CyclePath),
};
