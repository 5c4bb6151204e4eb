import type { CycleTable, RowTable } from '../db/schema.js';

/**
 * The growing area a crop cycle's records cover, which every figure per m² divides
 * by: the cycle's own `area_m2`, else the row's plant count over the cycle's plant
 * density. Without either, figures per m² are null and say why.
 */
export interface CycleArea {
  area_m2: number | null;
  basis: 'cycle_area_m2' | 'row_plant_count_over_plants_per_m2' | null;
  /** Why there is no area; null when there is one. */
  reason: string | null;
}

export function cycleArea(cycle: Pick<CycleTable, 'area_m2' | 'plants_per_m2'>, row: Pick<RowTable, 'plant_count'> | null): CycleArea {
  if (cycle.area_m2) return { area_m2: cycle.area_m2, basis: 'cycle_area_m2', reason: null };
  const plants = row?.plant_count ?? null;
  if (plants && cycle.plants_per_m2)
    return { area_m2: plants / cycle.plants_per_m2, basis: 'row_plant_count_over_plants_per_m2', reason: null };
  const missing = [!plants && "the row's plant_count", !cycle.plants_per_m2 && "the cycle's plants_per_m2"].filter(Boolean).join(' and ');
  return {
    area_m2: null,
    basis: null,
    reason: `no growing area: set area_m2 on the crop cycle, or ${missing} (the area is then plant_count / plants_per_m2)`,
  };
}

/** A figure per m² with the area it used, or null with the reason. */
export function perM2(value: number | null, area: CycleArea): number | null {
  return value === null || area.area_m2 === null ? null : value / area.area_m2;
}
