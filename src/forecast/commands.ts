import type { Db } from '../db/database.js';
import { SYSTEM_ACTOR, type Actor, type Writer } from '../db/store.js';
import type { Services } from '../services.js';
import { NotFound } from '../errors.js';
import { dateOfDay, dayOfInstant } from '../time/days.js';
import { parseWeek, type IsoWeek } from '../time/weeks.js';
import { cycleArea } from '../registry/area.js';
import { checkForecastWeek, currentWeek, defaultForecastWeek, forecastAsOf, MODEL_NAME, presentForecast } from './forecast.js';
import { loadRow, type CycleContext } from './queries.js';
import { kg3, r4 } from './presenters.js';
import type { ForecastTable, StoredWeek } from './tables.js';

/**
 * Stored forecasts: a forecast issued and kept unchanged for ever, to be held
 * against the harvests that come. Issuing again for the same week keeps both.
 */
export async function storeForecast(w: Writer, ctx: CycleContext, week: IsoWeek | undefined, nowMs: number): Promise<ForecastTable> {
  const db = w.trx as unknown as Db;
  const asOf = week ?? (await defaultForecastWeek(db, ctx, nowMs));
  checkForecastWeek(ctx, asOf, nowMs);
  const answer = presentForecast(ctx, await forecastAsOf(db, ctx, asOf, nowMs));
  const weeks: StoredWeek[] = answer.weeks.map((x) => ({
    week: x.week,
    horizon: x.horizon,
    kg: x.kg,
    kg_per_m2: x.kg_per_m2,
    p10_kg: x.p10_kg,
    p90_kg: x.p90_kg,
    method: x.method,
  }));
  const c = ctx.cycle;
  return w.insert<ForecastTable>('forecasts', {
    organization_id: c.organization_id,
    farm_id: c.farm_id,
    greenhouse_id: c.greenhouse_id,
    row_id: c.row_id,
    cycle_id: c.id,
    week: asOf.label,
    made_by: w.actor.label,
    made_by_key_id: w.actor.keyId,
    weeks: JSON.stringify(weeks),
    inputs: JSON.stringify({ area: answer.area, ...answer.inputs }),
    model: MODEL_NAME,
  });
}

/**
 * Harvest kg per week label of a cycle, as stored now. Summed here in id order rather than by SQL
 * sum(): SQLite adds floating-point numbers with compensation and PostgreSQL without, so the last
 * digits could differ between the engines.
 */
export async function harvestByWeek(db: Db, cycleId: string): Promise<Map<string, number>> {
  const rows = await db.selectFrom('harvests').select(['week', 'kg']).where('cycle_id', '=', cycleId).orderBy('id').execute();
  const out = new Map<string, number>();
  for (const r of rows) out.set(r.week, (out.get(r.week) ?? 0) + r.kg);
  return out;
}

/**
 * A stored forecast with the harvest realized since for each of its weeks, and the
 * error once a week is complete (ended by the clock, inside the cycle).
 */
export function presentStoredForecast(
  f: ForecastTable,
  realized: ReadonlyMap<string, number>,
  ctx: CycleContext,
  nowMs: number,
  areaM2: number | null,
) {
  const now = currentWeek(nowMs, ctx.zone);
  const end = ctx.cycle.ended_on ? parseWeek(ctx.cycle.ended_on)! : null;
  const weeks = (JSON.parse(f.weeks) as StoredWeek[]).map((x) => {
    const complete = x.week < now.label || (end !== null && x.week > end.label);
    const actual = realized.get(x.week) ?? 0;
    const error = complete ? x.kg - actual : null;
    return {
      ...x,
      realized_kg: kg3(actual),
      realized_kg_per_m2: areaM2 === null ? null : r4(actual / areaM2),
      complete,
      error_kg: error === null ? null : kg3(error),
      abs_pct_error: error === null || actual <= 0 ? null : r4(Math.abs(error) / actual),
    };
  });
  return {
    forecast_id: f.id,
    organization_id: f.organization_id,
    farm_id: f.farm_id,
    greenhouse_id: f.greenhouse_id,
    row_id: f.row_id,
    cycle_id: f.cycle_id,
    week: f.week,
    made_at: f.created_at,
    made_by: f.made_by,
    made_by_key_id: f.made_by_key_id,
    model: f.model,
    weeks,
    inputs: JSON.parse(f.inputs) as Record<string, unknown>,
    version: f.version,
  };
}

/** One stored forecast with the harvest since. */
export async function storedForecastOf(db: Db, ctx: CycleContext, f: ForecastTable, nowMs: number) {
  const area = cycleArea(ctx.cycle, await loadRow(db, ctx.cycle.row_id));
  return presentStoredForecast(f, await harvestByWeek(db, ctx.cycle.id), ctx, nowMs, area.area_m2);
}

/** The cycle's stored forecasts, newest first, a page of them, with the harvest since. */
export async function listStoredForecasts(
  db: Db,
  ctx: CycleContext,
  page: { limit: number; offset: number; week?: IsoWeek },
  nowMs: number,
) {
  let q = db.selectFrom('forecasts').where('cycle_id', '=', ctx.cycle.id);
  if (page.week) q = q.where('week', '=', page.week.label);
  const total = Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const rows = await q.selectAll().orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  const realized = await harvestByWeek(db, ctx.cycle.id);
  const area = cycleArea(ctx.cycle, await loadRow(db, ctx.cycle.row_id));
  return {
    items: rows.map((f) => presentStoredForecast(f, realized, ctx, nowMs, area.area_m2)),
    total,
    limit: page.limit,
    offset: page.offset,
  };
}

/**
 * For a schedule (the appliance's weekly stored forecast): the crop cycles that run on the
 * greenhouse's current day — started, and not ended before it.
 */
export async function activeCycles(db: Db, nowMs: number): Promise<{ cycle_id: string; label: string; time_zone: string }[]> {
  const rows = await db
    .selectFrom('cycles')
    .innerJoin('greenhouses', 'greenhouses.id', 'cycles.greenhouse_id')
    .select([
      'cycles.id as cycle_id',
      'cycles.name as name',
      'greenhouses.name as greenhouse',
      'cycles.started_on',
      'cycles.ended_on',
      'greenhouses.time_zone',
    ])
    // One order on both engines (PostgreSQL has none without it): the schedule runs and lists its targets in it.
    .orderBy('cycles.id')
    .execute();
  return rows
    .filter((r) => {
      const today = dateOfDay(dayOfInstant(nowMs, r.time_zone));
      return r.started_on <= today && (r.ended_on === null || r.ended_on >= today);
    })
    .map((r) => ({ cycle_id: r.cycle_id, label: `${r.name} (${r.greenhouse})`, time_zone: r.time_zone }));
}

/**
 * Issues and stores the forecast of one crop cycle as of the current week (or `week`), in its own
 * write transaction, as `actor` (SYSTEM_ACTOR for a schedule). What `POST {cycle}/forecasts` does,
 * for code that runs outside a request. Throws NotFound for an unknown cycle and Invalid for a
 * week outside it.
 */
export async function storeForecastForCycle(
  services: Pick<Services, 'store' | 'clock'>,
  cycleId: string,
  options: { actor?: Actor; week?: IsoWeek } = {},
): Promise<ForecastTable> {
  const nowMs = services.clock.now();
  return services.store.write(options.actor ?? SYSTEM_ACTOR, async (w) => {
    const cycle = await w.trx.selectFrom('cycles').selectAll().where('id', '=', cycleId).executeTakeFirst();
    if (!cycle) throw new NotFound('crop cycle');
    const greenhouse = await w.trx.selectFrom('greenhouses').selectAll().where('id', '=', cycle.greenhouse_id).executeTakeFirstOrThrow();
    const ctx = { cycle, greenhouse, zone: greenhouse.time_zone };
    return storeForecast(w, ctx, options.week ?? currentWeek(nowMs, ctx.zone), nowMs);
  });
}
