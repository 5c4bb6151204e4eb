import type { Writer } from '../db/store.js';
import { Invalid, NotFound } from '../errors.js';
import type { ScaleService, ScaleStatus } from './service.js';
import './tables.js';

/**
 * Sets the crop cycle a scale records into (null: none), overriding SCALE_CYCLE_ID, and answers
 * the scale as it is now. The assignment is the box's own setting, not a synced record, so it is
 * written in the route's transaction without a change-log entry. `scales` is undefined when no
 * SCALE_PORT is set: then no port is a scale.
 */
export async function assignScale(w: Writer, scales: ScaleService | undefined, port: string, cycleId: string | null): Promise<ScaleStatus> {
  if (!scales?.has(port)) throw new NotFound('scale');
  if (cycleId !== null) {
    const cycle = await w.trx.selectFrom('cycles').select('id').where('id', '=', cycleId).executeTakeFirst();
    if (!cycle) throw Invalid.field('cycle_id', 'no crop cycle has this id');
  }
  await w.trx
    .insertInto('scale_assignments')
    .values({ port, cycle_id: cycleId, assigned_at: w.now })
    .onConflict((oc) => oc.column('port').doUpdateSet({ cycle_id: cycleId, assigned_at: w.now }))
    .execute();
  return (await scales.status(port, w.trx))!;
}
