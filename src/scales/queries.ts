import type { Db } from '../db/database.js';
import type { ScaleService, ScaleStatus } from './service.js';

/** Every scale on SCALE_PORT with its state; none when SCALE_PORT is unset (`scales` undefined). */
export async function listScales(db: Db, scales: ScaleService | undefined): Promise<ScaleStatus[]> {
  return scales ? scales.statuses(db) : [];
}
