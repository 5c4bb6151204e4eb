import { presentParents } from '../common.js';
import type { HarvestTable } from '../tables.js';

export function presentHarvest(h: HarvestTable) {
  return {
    harvest_id: h.id,
    ...presentParents(h),
    week: h.week,
    kg: h.kg,
    note: h.note,
    harvested_on: h.harvested_on,
    created_at: h.created_at,
    updated_at: h.updated_at,
    version: h.version,
  };
}
