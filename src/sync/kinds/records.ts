import { Forbidden, Invalid } from '../../errors.js';
import { dateSchema, weekLabelSchema } from '../../http/schemas.js';
import { requireWeek } from '../../time/weeks.js';
import { harvestWeek } from '../../records/harvests/commands.js';
import { createHarvestBody, patchHarvestBody } from '../../records/harvests/schemas.js';
import { MEASUREMENTS } from '../../records/irrigation/schemas.js';
import { patchIrrigationBody } from '../../records/irrigation/schemas.js';
import { saveFruitMassBody } from '../../records/fruit-mass/schemas.js';
import { checkWeekNote } from '../../records/week-notes/commands.js';
import { duplicateRows } from '../../records/truss-counts/commands.js';
import { saveTrussCountBody } from '../../records/truss-counts/schemas.js';
import type { JsonSchema } from '../../http/route.js';
import { checkedAhead, checkFields, fieldInvalid, invalid, rowSchema } from '../refusal.js';
import {
  SYNCED,
  Superseded,
  checkParents,
  findRow,
  logApplied,
  logLoss,
  removeRow,
  rowKind,
  wasDeleted,
  wins,
  type ParentSpec,
} from './rows.js';
import { newer, parse, pick, type ApplyContext, type SyncKind } from './kind.js';

/**
 * Records kept on a crop cycle: facts. Each record is its own; an edit of the same record is
 * last writer wins on the version; a delete is final (docs/sync.md, "Facts").
 */

const CYCLE_PARENTS = ['farm_id', 'greenhouse_id', 'row_id', 'cycle_id'] as const;
const ON_CYCLE: ParentSpec[] = [
  { column: 'cycle_id', table: 'cycles', kind: 'cycles', what: 'crop cycle', same: ['farm_id', 'greenhouse_id', 'row_id'] },
];
const parentSchemas: Record<string, JsonSchema> = Object.fromEntries(CYCLE_PARENTS.map((c) => [c, { type: 'string' }]));

/** A week label must name a week that exists (2026-W53 does not), as the API checks. */
function checkWeek(label: unknown, name = 'week'): void {
  const week = requireWeek(String(label), name);
  if (week.label !== label) throw fieldInvalid(name, `must be a week label such as ${week.label}`);
}

export const harvestsKind: SyncKind = rowKind({
  kind: 'harvests',
  // Its check reads nothing stored: a batch applies it from reads gathered once (src/sync/batch.ts).
  batched: true,
  table: 'harvests',
  what: 'harvest',
  columns: [...SYNCED, ...CYCLE_PARENTS, 'week', 'kg', 'note', 'harvested_on'],
  immutable: CYCLE_PARENTS,
  merge: 'record',
  schema: rowSchema(
    {
      ...parentSchemas,
      week: weekLabelSchema,
      kg: createHarvestBody.properties.kg!,
      note: patchHarvestBody.properties.note!,
      harvested_on: patchHarvestBody.properties.harvested_on!,
    },
    ['week', 'kg'],
  ),
  parents: ON_CYCLE,
  check(_ctx, row) {
    checkWeek(row.week);
    harvestWeek(row.week as string, row.harvested_on as string | null);
  },
});

export const irrigationKind: SyncKind = rowKind({
  kind: 'irrigation_entries',
  // Its check reads nothing stored: a batch applies it from reads gathered once (src/sync/batch.ts).
  batched: true,
  table: 'irrigation_entries',
  what: 'irrigation entry',
  columns: [...SYNCED, ...CYCLE_PARENTS, 'at', ...MEASUREMENTS, 'note'],
  immutable: CYCLE_PARENTS,
  merge: 'record',
  schema: rowSchema(
    {
      ...parentSchemas,
      at: { type: 'string', format: 'date-time' },
      ...Object.fromEntries(MEASUREMENTS.map((m) => [m, patchIrrigationBody.properties[m]!])),
      note: patchIrrigationBody.properties.note!,
    },
    ['at'],
  ),
  parents: ON_CYCLE,
  check(_ctx, row) {
    // Stored instants are UTC text of one width: text order is time order (irrigation/commands.ts).
    if (new Date(Date.parse(row.at as string)).toISOString() !== row.at)
      throw fieldInvalid('at', 'must be a UTC instant as the box stores it');
    if (!MEASUREMENTS.some((m) => row[m] !== null && row[m] !== undefined))
      throw invalid(`An irrigation entry must keep at least one measurement (${MEASUREMENTS.join(', ')}).`, [
        { in: 'body', name: MEASUREMENTS.join('|'), message: 'an entry must keep at least one measurement' },
      ]);
  },
});

export const fruitMassKind: SyncKind = rowKind({
  kind: 'fruit_masses',
  table: 'fruit_masses',
  what: 'fruit mass',
  columns: [...SYNCED, ...CYCLE_PARENTS, 'week', 'green_g', 'turning_g', 'red_g'],
  immutable: [...CYCLE_PARENTS, 'week'],
  merge: 'record',
  naturalKey: ['cycle_id', 'week'],
  schema: rowSchema(
    {
      ...parentSchemas,
      week: weekLabelSchema,
      green_g: saveFruitMassBody.properties.green_g!,
      turning_g: saveFruitMassBody.properties.turning_g!,
      red_g: saveFruitMassBody.properties.red_g!,
    },
    ['week', 'green_g', 'turning_g', 'red_g'],
  ),
  parents: ON_CYCLE,
  check(_ctx, row) {
    checkWeek(row.week);
  },
});

export const weekNotesKind: SyncKind = rowKind({
  kind: 'week_notes',
  table: 'week_notes',
  what: 'week note',
  columns: [...SYNCED, ...CYCLE_PARENTS, 'week', 'body'],
  immutable: [...CYCLE_PARENTS, 'week'],
  merge: 'record',
  naturalKey: ['cycle_id', 'week'],
  schema: rowSchema({ ...parentSchemas, week: weekLabelSchema, body: { type: 'string' } }, ['week', 'body']),
  parents: ON_CYCLE,
  check(_ctx, row) {
    checkWeek(row.week);
    let note: unknown;
    try {
      note = JSON.parse(row.body as string);
    } catch {
      throw fieldInvalid('body', 'must be a JSON object');
    }
    // The same caps as POST {cycle}/weeks/{week}: 413 above the size, 422 too deep or too many keys.
    checkWeekNote(note);
  },
});

// ---- Truss counts: a count date travels with its rows, as one record (interface.md: a count date owns its rows).

const COUNT_COLUMNS = [...SYNCED, ...CYCLE_PARENTS, 'counted_on', 'stems_per_m2'];
const COUNT_ROW_COLUMNS = [...SYNCED, ...CYCLE_PARENTS, 'count_id', 'counted_on', 'position', 'plant', 'truss', 'fruits', 'flowers'];
const countSchema = rowSchema(
  { ...parentSchemas, counted_on: dateSchema, stems_per_m2: { ...saveTrussCountBody.properties.stems_per_m2!, type: ['number', 'null'] } },
  ['counted_on'],
);
const countRowSchema: JsonSchema = checkedAhead({
  ...(saveTrussCountBody.properties.rows!.items as JsonSchema),
  additionalProperties: true,
  properties: {
    ...((saveTrussCountBody.properties.rows!.items as { properties: Record<string, JsonSchema> }).properties ?? {}),
    flowers: { type: ['integer', 'null'], minimum: 0, maximum: 1000 },
    position: { type: 'integer', minimum: 0 },
  },
});
const MAX_ROWS = (saveTrussCountBody.properties.rows as { maxItems: number }).maxItems;

type Row = Record<string, unknown>;

/** Removes a count date with its rows: deleted (final), or given way to another count of the same date (`winner`). */
async function removeCount(ctx: ApplyContext, count: Row, version?: string, winner?: string): Promise<void> {
  const rows = (await ctx.trx
    .selectFrom('truss_count_rows')
    .selectAll()
    .where('count_id', '=', count.id as string)
    .execute()) as unknown as Row[];
  for (const r of rows) await removeRow(ctx, 'truss_count_rows', r);
  if (winner) {
    await ctx.trx
      .deleteFrom('truss_counts')
      .where('id', '=', count.id as string)
      .execute();
    await logLoss(ctx, 'truss_counts', count, winner, version);
  } else await removeRow(ctx, 'truss_counts', count, version);
}

async function writeRows(ctx: ApplyContext, count: Row, rows: Row[]): Promise<void> {
  const held = (await ctx.trx
    .selectFrom('truss_count_rows')
    .selectAll()
    .where('count_id', '=', count.id as string)
    .execute()) as unknown as Row[];
  for (const r of held) await removeRow(ctx, 'truss_count_rows', r);
  for (const r of rows) {
    await ctx.trx
      .insertInto('truss_count_rows')
      .values(r as never)
      .execute();
    await ctx.w.log({
      organization_id: ctx.org,
      entity: 'truss_count_rows',
      entity_id: r.id as string,
      op: 'insert',
      after: r,
      version: r.version as string,
    });
  }
}

export const trussCountsKind: SyncKind = {
  kind: 'truss_counts',
  digest: [
    {
      name: 'truss_counts',
      rows: async (db, org) =>
        (
          (await db
            .selectFrom('truss_counts')
            .select(COUNT_COLUMNS as never[])
            .where('organization_id', '=', org)
            .orderBy('id')
            .execute()) as Row[]
        ).map((r) => COUNT_COLUMNS.map((c) => r[c] ?? null)),
    },
    {
      name: 'truss_count_rows',
      rows: async (db, org) =>
        (
          (await db
            .selectFrom('truss_count_rows')
            .select(COUNT_ROW_COLUMNS as never[])
            .where('organization_id', '=', org)
            .orderBy('id')
            .execute()) as Row[]
        ).map((r) => COUNT_ROW_COLUMNS.map((c) => r[c] ?? null)),
    },
  ],
  // What travels is the count date as it is when sent, with the rows it has then: a later save
  // sends it again, and versions make an early copy of a later state harmless.
  async serialize(ctx, entry) {
    if (entry.op === 'delete') {
      if (entry.after !== null) return null;
      const before = parse(entry.before);
      return { op: 'delete', eid: entry.entity_id, v: entry.version, ...(before ? { row: pick(before, COUNT_COLUMNS) } : {}) };
    }
    const count = (await ctx.db.selectFrom('truss_counts').selectAll().where('id', '=', entry.entity_id).executeTakeFirst()) as
      Row | undefined;
    if (!count) return null;
    const rows = (await ctx.db
      .selectFrom('truss_count_rows')
      .selectAll()
      .where('count_id', '=', entry.entity_id)
      .orderBy('position')
      .execute()) as unknown as Row[];
    return {
      op: 'upsert',
      eid: entry.entity_id,
      v: count.version as string,
      row: pick(count, COUNT_COLUMNS),
      unit: { rows: rows.map((r) => pick(r, COUNT_ROW_COLUMNS)) },
    };
  },
  async apply(ctx, change) {
    const existing = await findRow(ctx.trx, 'truss_counts', change.eid);
    if (existing && existing.organization_id !== ctx.org) throw new Forbidden('This count belongs to another organization.');
    if (change.op === 'delete') {
      if (!existing) {
        if (await wasDeleted(ctx.trx, 'truss_counts', change.eid)) return 'superseded';
        await logApplied(ctx, change, 'delete', change.row ?? { id: change.eid }, undefined);
        return 'applied';
      }
      await removeCount(ctx, existing, change.v);
      return 'applied';
    }
    const row = pick(change.row ?? {}, COUNT_COLUMNS);
    if (row.id !== change.eid || row.version !== change.v) throw invalid('row must carry the change’s id and version.');
    if (row.organization_id !== ctx.org) throw new Forbidden('The count belongs to another organization.');
    if (existing) {
      for (const c of [...CYCLE_PARENTS, 'counted_on'])
        if (row[c] !== existing[c]) throw fieldInvalid(c, 'cannot change once the count is made');
      if (!newer(change.v, existing.version as string)) return 'superseded';
    } else if (await wasDeleted(ctx.trx, 'truss_counts', change.eid)) return 'superseded';

    checkFields(countSchema, row, 'truss count');
    const rows = (change.unit?.rows ?? []) as Row[];
    if (!Array.isArray(rows) || rows.length < 1 || rows.length > MAX_ROWS) throw fieldInvalid('rows', `must hold 1 to ${MAX_ROWS} rows`);
    const clean = rows.map((r, i) => {
      if (!r || typeof r !== 'object') throw fieldInvalid(`rows.${i}`, 'must be an object');
      checkFields(countRowSchema, r, `row ${i} of the truss count`);
      const stored = pick(r, COUNT_ROW_COLUMNS);
      for (const c of [...CYCLE_PARENTS, 'counted_on', 'organization_id'])
        if (stored[c] !== row[c]) throw fieldInvalid(`rows.${i}.${c}`, "must be the count's");
      if (stored.count_id !== row.id) throw fieldInvalid(`rows.${i}.count_id`, 'must be the count id');
      if (typeof stored.id !== 'string' || typeof stored.version !== 'string') throw fieldInvalid(`rows.${i}.id`, 'is required');
      return stored;
    });
    const dups = duplicateRows(clean.map((r) => ({ plant: r.plant as string, truss: r.truss as number, fruits: r.fruits as number })));
    if (dups.length) throw invalid(`${dups.length} rows repeat a (plant, truss).`, dups);
    try {
      await checkParents(ctx, row, ON_CYCLE);
    } catch (err) {
      if (err instanceof Superseded) return 'superseded';
      throw err;
    }

    if (existing) {
      await ctx.trx
        .updateTable('truss_counts')
        .set({ updated_at: row.updated_at as string, version: change.v, stems_per_m2: (row.stems_per_m2 as number | null) ?? null })
        .where('id', '=', change.eid)
        .execute();
      await logApplied(ctx, change, 'update', existing, row);
    } else {
      const clash = (await ctx.trx
        .selectFrom('truss_counts')
        .selectAll()
        .where('cycle_id', '=', row.cycle_id as string)
        .where('counted_on', '=', row.counted_on as string)
        .executeTakeFirst()) as Row | undefined;
      if (clash) {
        // One count per date: the later of the two counts stands, the other goes with its rows.
        if (!wins(row, clash)) {
          await logLoss(ctx, 'truss_counts', row, clash.id as string, change.v);
          return 'superseded';
        }
        await removeCount(ctx, clash, undefined, change.eid);
      }
      await ctx.trx
        .insertInto('truss_counts')
        .values(row as never)
        .execute();
      await logApplied(ctx, change, 'insert', undefined, row);
    }
    await writeRows(ctx, row, clean);
    return 'applied';
  },
};

/** Rows travel inside their count date (trussCountsKind): a row's own change does not travel. */
export const trussCountRowsKind: SyncKind = {
  kind: 'truss_count_rows',
  digest: [],
  async serialize() {
    return null;
  },
  async apply() {
    throw new Invalid([], 'Truss-count rows travel inside their count date.');
  },
};
