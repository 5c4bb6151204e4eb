import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { CycleScope } from '../../registry/scope.js';
import { cycleColumns } from '../common.js';
import { requireWeek, weekOfDate, type IsoWeek } from '../../time/weeks.js';
import type { HarvestTable } from '../tables.js';
import { parseHarvestCsv, type HarvestLine } from './csv.js';
import { readFile } from 'node:fs/promises';
import { Invalid, NotFound } from '../../errors.js';

export interface HarvestInput {
  week?: string;
  kg: number;
  note?: string;
  harvested_on?: string;
}

export interface HarvestPatch {
  week?: string;
  kg?: number;
  note?: string | null;
  harvested_on?: string | null;
}

/**
 * The week a harvest counts for, from `week`, `harvested_on` or both. The date
 * is a local calendar day in the greenhouse zone, so its week is the calendar
 * week of that date whatever the process clock says.
 */
export function harvestWeek(week: string | undefined, harvestedOn: string | null | undefined): IsoWeek {
  if (week === undefined && !harvestedOn)
    throw Invalid.field('week', 'is required (or send harvested_on, from which the week is derived)', 'body');
  const fromDate = harvestedOn ? weekOfDate(harvestedOn) : null;
  if (harvestedOn && !fromDate) throw Invalid.field('harvested_on', 'must be an existing date YYYY-MM-DD', 'body');
  if (week === undefined) return fromDate!;
  const w = requireWeek(week, 'week');
  if (fromDate && fromDate.label !== w.label) {
    throw Invalid.field(
      'harvested_on',
      `must fall in week ${w.label} (${w.start} to ${w.end}); ${harvestedOn} is in ${fromDate.label}`,
      'body',
    );
  }
  return w;
}

export async function createHarvest(w: Writer, scope: CycleScope, input: HarvestInput): Promise<HarvestTable> {
  const week = harvestWeek(input.week, input.harvested_on);
  return w.insert<HarvestTable>('harvests', {
    ...cycleColumns(scope),
    week: week.label,
    kg: input.kg,
    note: input.note ?? null,
    harvested_on: input.harvested_on ?? null,
  });
}

export async function loadHarvest(db: Db, cycleId: string, harvestId: string): Promise<HarvestTable> {
  const row = await db.selectFrom('harvests').selectAll().where('id', '=', harvestId).where('cycle_id', '=', cycleId).executeTakeFirst();
  if (!row) throw new NotFound('harvest');
  return row;
}

/** Fields left out keep their value; the week/date rule is checked on the merged harvest. */
export async function updateHarvest(w: Writer, scope: CycleScope, harvestId: string, patch: HarvestPatch): Promise<HarvestTable> {
  const current = await loadHarvest(w.trx, scope.cycle.id, harvestId);
  const harvestedOn = patch.harvested_on === undefined ? current.harvested_on : patch.harvested_on;
  const week = harvestWeek(patch.week ?? current.week, harvestedOn);
  const { after } = await w.update<HarvestTable>('harvests', current.id, {
    week: week.label,
    kg: patch.kg ?? current.kg,
    note: patch.note === undefined ? current.note : patch.note,
    harvested_on: harvestedOn,
  });
  return after;
}

export async function deleteHarvest(w: Writer, scope: CycleScope, harvestId: string): Promise<void> {
  const current = await loadHarvest(w.trx, scope.cycle.id, harvestId);
  await w.remove('harvests', current.id);
}

/**
 * Reads a harvest CSV from disk and stores every line in the caller's one transaction: all of
 * them or, on any bad line, none. The file is at most the upload cap (checked while it streamed
 * in), so reading it whole is bounded.
 */
export async function importHarvestFile(w: Writer, scope: CycleScope, file: string): Promise<HarvestTable[]> {
  return importHarvests(w, scope, parseHarvestCsv(await readFile(file)));
}

/** Stores every parsed line in the caller's one transaction: all of them or, on any failure, none. */
export async function importHarvests(w: Writer, scope: CycleScope, lines: HarvestLine[]): Promise<HarvestTable[]> {
  const parents = cycleColumns(scope);
  return w.insertMany<HarvestTable>(
    'harvests',
    lines.map((l) => ({ ...parents, week: l.week.label, kg: l.kg, note: l.note, harvested_on: null })),
  );
}

export async function listHarvests(
  db: Db,
  scope: CycleScope,
  filter: { week?: string; limit: number; offset: number },
): Promise<{ items: HarvestTable[]; total: number; limit: number; offset: number }> {
  const { limit, offset } = filter;
  const week = filter.week === undefined ? undefined : requireWeek(filter.week, 'week', 'query');
  let q = db.selectFrom('harvests').where('cycle_id', '=', scope.cycle.id);
  if (week) q = q.where('week', '=', week.label);
  // Week labels sort chronologically as text; UUIDv7 ids sort by creation.
  const items = await q.selectAll().orderBy('week').orderBy('id').limit(limit).offset(offset).execute();
  const count = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { items, total: Number(count.n), limit, offset };
}
