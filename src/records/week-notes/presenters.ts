import { presentParents } from '../common.js';
import type { WeekNoteTable } from '../tables.js';

export function presentWeekNote(n: WeekNoteTable) {
  return {
    ...presentParents(n),
    week: n.week,
    note: JSON.parse(n.body) as Record<string, unknown>,
    created_at: n.created_at,
    updated_at: n.updated_at,
    version: n.version,
  };
}
