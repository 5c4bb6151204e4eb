import type { CycleScope } from '../registry/scope.js';
import type { JsonSchema } from '../http/route.js';
import './tables.js';

/** The parent columns of a record made under `scope`. */
export function cycleColumns(scope: CycleScope) {
  const c = scope.cycle;
  return { organization_id: c.organization_id, farm_id: c.farm_id, greenhouse_id: c.greenhouse_id, row_id: c.row_id, cycle_id: c.id };
}

/** The parent ids every record on a cycle answers with. */
export function presentParents(row: { organization_id: string; farm_id: string; greenhouse_id: string; row_id: string; cycle_id: string }) {
  return {
    organization_id: row.organization_id,
    farm_id: row.farm_id,
    greenhouse_id: row.greenhouse_id,
    row_id: row.row_id,
    cycle_id: row.cycle_id,
  };
}

export const NOTE_MAX = 500;

export const parentProperties: Record<string, JsonSchema> = {
  organization_id: { type: 'string', description: 'Organization id.' },
  farm_id: { type: 'string', description: 'Farm id.' },
  greenhouse_id: { type: 'string', description: 'Greenhouse id.' },
  row_id: { type: 'string', description: 'Row id.' },
  cycle_id: { type: 'string', description: 'Crop cycle id.' },
};
export const PARENT_FIELDS = Object.keys(parentProperties);
