import { cycleColumns } from '../common.js';
import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { CycleScope } from '../../registry/scope.js';
import { parseInstant } from '../../time/instants.js';
import type { IrrigationTable } from '../tables.js';
import { MEASUREMENTS, type Measurement } from './schemas.js';
import { Invalid, NotFound } from '../../errors.js';

export type IrrigationInput = { at: string; note?: string } & Partial<Record<Measurement, number>>;
export type IrrigationPatch = { at?: string; note?: string | null } & Partial<Record<Measurement, number | null>>;

/** Reads `at`: with an offset as given, without one on the greenhouse's clock. Stored as UTC. */
export function irrigationInstant(at: string, zone: string): string {
  const parsed = parseInstant(at, zone);
  if (!parsed.ok) throw Invalid.field('at', parsed.message, 'body');
  return parsed.utc;
}

function requireMeasurement(values: Partial<Record<Measurement, number | null>>, verb: string): void {
  if (MEASUREMENTS.some((m) => values[m] !== undefined && values[m] !== null)) return;
  throw new Invalid(
    [
      {
        in: 'body',
        name: MEASUREMENTS.join('|'),
        message: `an entry must keep at least one measurement (${MEASUREMENTS.join(', ')}); ${verb}`,
      },
    ],
    `An irrigation entry must keep at least one measurement; ${verb}.`,
  );
}

const measurementsOf = (v: Partial<Record<Measurement, number | null>>) =>
  Object.fromEntries(MEASUREMENTS.map((m) => [m, v[m] ?? null])) as Record<Measurement, number | null>;

export async function createIrrigation(w: Writer, scope: CycleScope, input: IrrigationInput): Promise<IrrigationTable> {
  requireMeasurement(input, 'this one has none');
  const at = irrigationInstant(input.at, scope.zone);
  return w.insert<IrrigationTable>('irrigation_entries', {
    ...cycleColumns(scope),
    at,
    ...measurementsOf(input),
    note: input.note ?? null,
  });
}

export async function loadIrrigation(db: Db, cycleId: string, entryId: string): Promise<IrrigationTable> {
  const row = await db
    .selectFrom('irrigation_entries')
    .selectAll()
    .where('id', '=', entryId)
    .where('cycle_id', '=', cycleId)
    .executeTakeFirst();
  if (!row) throw new NotFound('irrigation entry');
  return row;
}

/** Left out keeps, null clears; the merged entry must keep a measurement, else nothing changes. */
export async function updateIrrigation(w: Writer, scope: CycleScope, entryId: string, patch: IrrigationPatch): Promise<IrrigationTable> {
  const current = await loadIrrigation(w.trx, scope.cycle.id, entryId);
  const merged: Record<Measurement, number | null> = measurementsOf(current);
  for (const m of MEASUREMENTS) if (patch[m] !== undefined) merged[m] = patch[m]!;
  requireMeasurement(merged, 'this change would clear the last one');
  const at = patch.at === undefined ? current.at : irrigationInstant(patch.at, scope.zone);
  const { after } = await w.update<IrrigationTable>('irrigation_entries', current.id, {
    at,
    ...merged,
    note: patch.note === undefined ? current.note : patch.note,
  });
  return after;
}

export async function deleteIrrigation(w: Writer, scope: CycleScope, entryId: string): Promise<void> {
  const current = await loadIrrigation(w.trx, scope.cycle.id, entryId);
  await w.remove('irrigation_entries', current.id);
}

export async function listIrrigation(
  db: Db,
  scope: CycleScope,
  { limit, offset }: { limit: number; offset: number },
): Promise<{ items: IrrigationTable[]; total: number; limit: number; offset: number }> {
  const cycleId = scope.cycle.id;
  const items = await db
    .selectFrom('irrigation_entries')
    .selectAll()
    .where('cycle_id', '=', cycleId)
    // Stored instants are all UTC ISO strings of one width, so text order is time order.
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  const count = await db
    .selectFrom('irrigation_entries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('cycle_id', '=', cycleId)
    .executeTakeFirstOrThrow();
  return { items, total: Number(count.n), limit, offset };
}
