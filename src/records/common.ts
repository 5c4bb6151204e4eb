import type { CycleScope } from '../registry/scope.js';
import { fieldError, type ProblemLocation } from '../http/problem.js';
import { parseWeek, WEEK_FORMS, type IsoWeek } from '../time/weeks.js';
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

/**
 * A week label or date that the schema's pattern let through can still be
 * impossible (week 53 of a 52-week year, 2026-02-31): that is a 422 too.
 */
export function requireWeek(text: string, name: string, where: ProblemLocation = 'body'): IsoWeek {
  const week = parseWeek(text);
  if (!week) throw fieldError(where, name, `must be ${WEEK_FORMS}, and an existing week or date`);
  return week;
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
