import { DateTime } from 'luxon';
import type { Db } from '../../db/database.js';
import type { IsoWeek } from '../../time/weeks.js';
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

/**
 * The week as an instant range [from, to) on the greenhouse clock: Monday
 * 00:00 local to the next Monday 00:00 local. A week with a clock change is
 * 167 or 169 hours long, which a fixed UTC window would get wrong.
 */
export function weekWindowUtc(week: IsoWeek, zone: string): { from: string; to: string } {
  const start = DateTime.fromISO(week.start, { zone }).startOf('day');
  return { from: start.toUTC().toISO()!, to: start.plus({ weeks: 1 }).toUTC().toISO()! };
}

export async function readWeekRecords(db: Db, cycleId: string, week: IsoWeek, zone: string): Promise<WeekRecords> {
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
