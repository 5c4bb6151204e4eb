import { cycleColumns } from '../common.js';
import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { CycleScope } from '../../registry/scope.js';
import { requireWeek, weekOfInstant, type IsoWeek } from '../../time/weeks.js';
import type { FruitMassTable } from '../tables.js';
import { fruitMassForWeek, type FruitMassValues } from './history.js';
import type { FieldSource } from '../../errors.js';

/** The week a value applies from: the one named, or the week the greenhouse is in at `now` (ISO instant). */
export function fruitMassWeek(week: string | undefined, zone: string, now: string, where: FieldSource = 'body'): IsoWeek {
  return week === undefined ? weekOfInstant(now, zone) : requireWeek(week, 'week', where);
}

/** One entry per week: saving a week again replaces its values, another week adds to the history. */
export async function saveFruitMass(w: Writer, scope: CycleScope, values: FruitMassValues & { week?: string }): Promise<FruitMassTable> {
  // Without a week the values apply from this week: the transaction's instant, on the service clock.
  const week = fruitMassWeek(values.week, scope.zone, w.now);
  const existing = await w.trx
    .selectFrom('fruit_masses')
    .selectAll()
    .where('cycle_id', '=', scope.cycle.id)
    .where('week', '=', week.label)
    .executeTakeFirst();
  const v = { green_g: values.green_g, turning_g: values.turning_g, red_g: values.red_g };
  if (existing) return (await w.update<FruitMassTable>('fruit_masses', existing.id, v)).after;
  return w.insert<FruitMassTable>('fruit_masses', { ...cycleColumns(scope), week: week.label, ...v });
}

export async function fruitMassHistory(db: Db, cycleId: string): Promise<FruitMassTable[]> {
  return db.selectFrom('fruit_masses').selectAll().where('cycle_id', '=', cycleId).orderBy('week').execute();
}

/** The history, paged, and the values in force for `week` (default the week the greenhouse is in at `now`). */
export async function fruitMassPage(db: Db, scope: CycleScope, query: { week?: string; limit: number; offset: number }, now: string) {
  const week = fruitMassWeek(query.week, scope.zone, now, 'query');
  const history = await fruitMassHistory(db, scope.cycle.id);
  return {
    items: history.slice(query.offset, query.offset + query.limit),
    total: history.length,
    limit: query.limit,
    offset: query.offset,
    week: week.label,
    inForce: fruitMassForWeek(history, week.label),
  };
}
