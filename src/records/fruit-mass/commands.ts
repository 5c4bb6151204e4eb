import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { CycleScope } from '../../registry/scope.js';
import type { ProblemLocation } from '../../http/problem.js';
import { weekOfInstant, type IsoWeek } from '../../time/weeks.js';
import { cycleColumns, requireWeek } from '../common.js';
import type { FruitMassTable } from '../tables.js';
import type { FruitMassValues } from './history.js';

/** The week the greenhouse is in at `now`: the default for values typed without a week. */
export function currentWeek(zone: string, now: string = new Date().toISOString()): IsoWeek {
  return weekOfInstant(now, zone);
}

export function fruitMassWeek(week: string | undefined, zone: string, where: ProblemLocation = 'body', now?: string): IsoWeek {
  return week === undefined ? currentWeek(zone, now) : requireWeek(week, 'week', where);
}

/** One entry per week: saving a week again replaces its values, another week adds to the history. */
export async function saveFruitMass(w: Writer, scope: CycleScope, week: IsoWeek, values: FruitMassValues): Promise<FruitMassTable> {
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
