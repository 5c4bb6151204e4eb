import { presentParents } from '../common.js';
import { presentInstant } from '../../time/instants.js';
import type { IrrigationTable } from '../tables.js';

export function presentIrrigation(e: IrrigationTable, zone: string) {
  return {
    entry_id: e.id,
    ...presentParents(e),
    at: presentInstant(e.at, zone),
    volume_l: e.volume_l,
    drain_l: e.drain_l,
    ec_in: e.ec_in,
    ec_drain: e.ec_drain,
    ph_in: e.ph_in,
    ph_drain: e.ph_drain,
    duration_min: e.duration_min,
    note: e.note,
    created_at: e.created_at,
    updated_at: e.updated_at,
    version: e.version,
  };
}
