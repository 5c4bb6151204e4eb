import type { Db } from '../../db/database.js';
import { requireWeek, weekWindowUtc, type IsoWeek } from '../../time/weeks.js';
import type { CycleScope } from '../../registry/scope.js';
import { fruitMassForWeek } from '../fruit-mass/history.js';
import { fruitMassHistory } from '../fruit-mass/commands.js';
import type { FruitMassTable, WeekNoteTable } from '../tables.js';
import { loadWeekNote } from './commands.js';

/**
 * The records part of the week read: the saved note, the week's harvest and
 * irrigation totals, and the fruit mass in force. Walk counts, climate and
 * the forecast belong to the full week read (a later issue).
 */
export interface WeekRecords {
  note: WeekNoteTable | undefined;
  harvest: { kg: number; harvests: number };
  irrigation: { entries: number; volume_l: number | null; drain_l: number | null };
  fruitMass: FruitMassTable | null;
}

export async function readWeekRecords(db: Db, scope: CycleScope, weekText: string): Promise<WeekRecords & { week: IsoWeek }> {
  const week = requireWeek(weekText, 'week', 'path');
  const cycleId = scope.cycle.id;
  const zone = scope.zone;
  const harvest = await db
    .selectFrom('harvests')
    .select((eb) => [eb.fn.sum<number | null>('kg').as('kg'), eb.fn.countAll<number>().as('n')])
    .where('cycle_id', '=', cycleId)
    .where('week', '=', week.label)
    .executeTakeFirstOrThrow();
  const { from, to } = weekWindowUtc(week, zone);
  const irrigation = await db
    .selectFrom('irrigation_entries')
    .select((eb) => [
      eb.fn.sum<number | null>('volume_l').as('volume_l'),
      eb.fn.sum<number | null>('drain_l').as('drain_l'),
      eb.fn.countAll<number>().as('n'),
    ])
    .where('cycle_id', '=', cycleId)
    .where('at', '>=', from)
    .where('at', '<', to)
    .executeTakeFirstOrThrow();
  return {
    week,
    note: await loadWeekNote(db, cycleId, week),
    harvest: { kg: Number(harvest.kg ?? 0), harvests: Number(harvest.n) },
    irrigation: {
      entries: Number(irrigation.n),
      volume_l: irrigation.volume_l === null ? null : Number(irrigation.volume_l),
      drain_l: irrigation.drain_l === null ? null : Number(irrigation.drain_l),
    },
    fruitMass: fruitMassForWeek(await fruitMassHistory(db, cycleId), week.label),
  };
}
