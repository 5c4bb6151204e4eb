import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { CycleScope } from '../../registry/scope.js';
import type { FieldIssue as FieldError } from '../../errors.js';
import { cycleColumns } from '../common.js';
import type { TrussCountRowTable, TrussCountTable } from '../tables.js';
import type { CountedRow } from './figures.js';
import { Invalid, NotFound } from '../../errors.js';

export interface TrussCountInput {
  counted_on: string;
  /** Stem density from this date on (stems/m²), when extra stems were kept or taken out; null or left out carries none. */
  stems_per_m2?: number | null;
  rows: CountedRow[];
}

/** Each (plant, truss) at most once in a date; every repeat is named by its index. */
export function duplicateRows(rows: readonly CountedRow[]): FieldError[] {
  const first = new Map<string, number>();
  const errors: FieldError[] = [];
  rows.forEach((r, i) => {
    const key = JSON.stringify([r.plant, r.truss]);
    const seen = first.get(key);
    if (seen === undefined) first.set(key, i);
    else
      errors.push({
        in: 'body',
        name: `rows.${i}`,
        message: `plant "${r.plant}" truss ${r.truss} is already counted in rows.${seen}; each (plant, truss) once per date`,
      });
  });
  return errors;
}

/**
 * Saves one count date, replacing every row it had, inside the caller's one transaction, and
 * answers every stored date: a date's figures compare it with the one before it.
 */
export async function saveTrussCount(w: Writer, scope: CycleScope, input: TrussCountInput): Promise<StoredCount[]> {
  const dups = duplicateRows(input.rows);
  if (dups.length)
    throw new Invalid(
      dups,
      `${dups.length} row${dups.length === 1 ? '' : 's'} repeat a (plant, truss) already counted on ${input.counted_on}.`,
    );
  const existing = await w.trx
    .selectFrom('truss_counts')
    .selectAll()
    .where('cycle_id', '=', scope.cycle.id)
    .where('counted_on', '=', input.counted_on)
    .executeTakeFirst();
  let count: TrussCountTable;
  if (existing) {
    await w.removeWhereIn('truss_count_rows', 'count_id', [existing.id]);
    count = (
      await w.update<TrussCountTable>('truss_counts', existing.id, {
        counted_on: input.counted_on,
        stems_per_m2: input.stems_per_m2 ?? null,
      })
    ).after;
  } else {
    count = await w.insert<TrussCountTable>('truss_counts', {
      ...cycleColumns(scope),
      counted_on: input.counted_on,
      stems_per_m2: input.stems_per_m2 ?? null,
    });
  }
  const parents = cycleColumns(scope);
  for (const [position, r] of input.rows.entries()) {
    await w.insert<TrussCountRowTable>('truss_count_rows', {
      ...parents,
      count_id: count.id,
      counted_on: input.counted_on,
      position,
      plant: r.plant,
      truss: r.truss,
      fruits: r.fruits,
      flowers: r.flowers ?? null,
    });
  }
  return listTrussCounts(w.trx, scope.cycle.id);
}

/** Deletes a count date with its rows; returns how many rows went. */
export async function deleteTrussCount(w: Writer, scope: CycleScope, countedOn: string): Promise<number> {
  const cycleId = scope.cycle.id;
  const existing = await w.trx
    .selectFrom('truss_counts')
    .selectAll()
    .where('cycle_id', '=', cycleId)
    .where('counted_on', '=', countedOn)
    .executeTakeFirst();
  if (!existing) throw new NotFound(`truss count on ${countedOn}`);
  const rows = await w.removeWhereIn('truss_count_rows', 'count_id', [existing.id]);
  await w.remove('truss_counts', existing.id);
  return rows;
}

export interface StoredCount extends TrussCountTable {
  rows: TrussCountRowTable[];
}

export async function listTrussCounts(db: Db, cycleId: string): Promise<StoredCount[]> {
  const counts = await db.selectFrom('truss_counts').selectAll().where('cycle_id', '=', cycleId).orderBy('counted_on', 'desc').execute();
  const rows = await db
    .selectFrom('truss_count_rows')
    .selectAll()
    .where('cycle_id', '=', cycleId)
    .orderBy('count_id')
    .orderBy('position')
    .execute();
  const byCount = new Map<string, TrussCountRowTable[]>();
  for (const r of rows) {
    const list = byCount.get(r.count_id);
    if (list) list.push(r);
    else byCount.set(r.count_id, [r]);
  }
  return counts.map((c) => ({ ...c, rows: byCount.get(c.id) ?? [] }));
}
