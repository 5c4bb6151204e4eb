import { presentParents } from '../common.js';
import type { FruitMassTable } from '../tables.js';

export function presentFruitMass(f: FruitMassTable) {
  return {
    ...presentParents(f),
    week: f.week,
    green_g: f.green_g,
    turning_g: f.turning_g,
    red_g: f.red_g,
    created_at: f.created_at,
    updated_at: f.updated_at,
    version: f.version,
  };
}
