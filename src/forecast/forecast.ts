import type { Db } from '../db/database.js';
import { Invalid } from '../errors.js';
import { dayNumber } from '../time/days.js';
import { parseWeek, weekOfInstant, type IsoWeek } from '../time/weeks.js';
import { MODEL_CONSTANTS } from './model/constants.js';
import { backtestStats, replay, type Replay, type WeekRun } from './model/replay.js';
import { loadCycleHistory, weekDay, type CycleContext, type LoadedCycle } from './queries.js';
import { ALL_PARTS, REACH_ALL, reachOf, type Reach } from './reach.js';
import { kg3, perArea, presentArea, presentForecastWeek, presentInputs, r4, weekLabel } from './presenters.js';

/** The model's name and version, kept with every stored forecast (docs/forecast.md). */
export const MODEL_NAME = 'truss-cohorts/1';

/** What "as of a week" means, said in every answer. */
export const AS_OF_RULE =
  'Made from what was known when the week began: records dated before its Monday (greenhouse zone), plus the walks and truss counts saved to the week itself; never a harvest of the week or later.';

/** The week the greenhouse is in at `nowMs`. */
export function currentWeek(nowMs: number, zone: string): IsoWeek {
  return weekOfInstant(new Date(nowMs).toISOString(), zone);
}

/** The default week of a forecast: the latest week with a scored walk; without walks, the current week. */
export async function defaultForecastWeek(db: Db, ctx: CycleContext, nowMs: number): Promise<IsoWeek> {
  const latest = await db
    .selectFrom('walks')
    .select('week')
    .where('cycle_id', '=', ctx.cycle.id)
    .where('status', '=', 'done')
    .where('week', 'is not', null)
    .orderBy('week', 'desc')
    .limit(1)
    .executeTakeFirst();
  return latest?.week ? parseWeek(latest.week)! : currentWeek(nowMs, ctx.zone);
}

/** A week a forecast can be made as of: inside the cycle, and begun. */
export function checkForecastWeek(ctx: CycleContext, week: IsoWeek, nowMs: number, name = 'week'): void {
  const start = parseWeek(ctx.cycle.started_on)!;
  const now = currentWeek(nowMs, ctx.zone);
  const end = ctx.cycle.ended_on ? parseWeek(ctx.cycle.ended_on)! : null;
  const refuse = (message: string) => {
    throw new Invalid([{ in: 'query', name, message }], `${name}: ${message}`);
  };
  if (week.start < start.start) refuse(`${week.label} is before the crop cycle started (${start.label})`);
  if (week.start > now.start)
    refuse(
      `${week.label} has not begun (the greenhouse is in ${now.label}); a forecast as of ${now.label} covers the seven weeks after it`,
    );
  if (end && week.start > end.start) refuse(`${week.label} is after the crop cycle ended (${end.label})`);
}

export interface LiveForecast {
  run: WeekRun;
  loaded: LoadedCycle;
  week: IsoWeek;
}

/**
 * The cycle replayed from its first week to the last a forecast can be made as of now (the current
 * week, or the cycle's last): a week's forecast depends only on the weeks before it, so every
 * forecast as of a week up to then is one of these runs, and the backtest is all of them.
 *
 * Kept per cycle until the organization's change log moves on (every write of a record the model
 * reads is in it: harvests, truss counts, walks, fruit mass, climate readings and imports, weather,
 * the registry) or the clock enters another week; a week read, a forecast and the backtest after the
 * same write then share one replay. When it has moved on, the records are read again and only the
 * weeks from the first one they differ in are replayed again.
 */
export interface CycleReplay {
  loaded: LoadedCycle;
  replay: Replay;
  /** Monday of the last week replayed; null when the cycle has not begun. */
  lastAsOf: number | null;
}

interface CachedReplay extends CycleReplay {
  seq: number;
  now: number;
}

const MAX_CACHED = 64;
/** More writes than this since the replay was made: read everything again rather than judge each. */
const MAX_CHANGES_JUDGED = 2000;
const replays = new WeakMap<object, Map<string, CachedReplay>>();

export async function cycleReplay(db: Db, ctx: CycleContext, nowMs: number): Promise<CycleReplay> {
  const now = dayNumber(currentWeek(nowMs, ctx.zone).start);
  const seqRow = await db
    .selectFrom('change_log')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('organization_id', '=', ctx.cycle.organization_id)
    .executeTakeFirst();
  const seq = Number(seqRow?.seq ?? 0);
  let cache = replays.get(db);
  if (!cache) replays.set(db, (cache = new Map()));
  const hit = cache.get(ctx.cycle.id);
  if (hit && hit.seq === seq && hit.now === now) return hit;

  // What the writes since can have changed: nothing of this cycle (a week note, another row's harvest) keeps the
  // replay; a write of some of its records reads those again and keeps the rest (the climate days above all, the
  // dearest query).
  let reach: Reach = REACH_ALL;
  if (hit && hit.now === now && seq > hit.seq) {
    const changes = await db
      .selectFrom('change_log')
      .select(['entity', 'before', 'after'])
      .where('organization_id', '=', ctx.cycle.organization_id)
      .where('seq', '>', hit.seq)
      .where('seq', '<=', seq)
      .orderBy('seq')
      .limit(MAX_CHANGES_JUDGED + 1)
      .execute();
    if (changes.length <= MAX_CHANGES_JUDGED) reach = reachOf(changes, ctx.cycle.id);
  }
  if (hit && !reach.cycle) {
    hit.seq = seq;
    return hit;
  }

  const endWeek = ctx.cycle.ended_on ? weekDay(ctx.cycle.ended_on) : null;
  const lastAsOf = endWeek !== null && endWeek < now ? endWeek : now;
  const loaded = await loadCycleHistory(
    db,
    ctx,
    lastAsOf + 7 * MODEL_CONSTANTS.horizons + 7,
    hit ? { loaded: hit.loaded, parts: new Set(ALL_PARTS.filter((p) => !reach.parts.has(p))) } : undefined,
  );
  const started = lastAsOf >= loaded.history.startWeek;
  // The runs before the first week the records changed in are the previous replay's (replay(), "previous").
  // The history is loaded up to a day that moves with the current week: a new week reloads it all, the
  // days it adds count as changed from their own weeks on, and the weeks before stay kept.
  const previous = hit && hit.lastAsOf !== null ? { history: hit.loaded.history, replay: hit.replay } : undefined;
  const entry: CachedReplay = {
    loaded,
    replay: started ? replay(loaded.history, lastAsOf, MODEL_CONSTANTS, previous) : { runs: [], actuals: new Map() },
    lastAsOf: started ? lastAsOf : null,
    seq,
    now,
  };
  cache.delete(ctx.cycle.id);
  cache.set(ctx.cycle.id, entry);
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
  return entry;
}

/** The forecast as of `week` (begun, inside the cycle: checkForecastWeek): a run of the cycle's replay. */
export async function forecastAsOf(db: Db, ctx: CycleContext, week: IsoWeek, nowMs: number): Promise<LiveForecast> {
  const r = await cycleReplay(db, ctx, nowMs);
  const run = r.replay.runs[(dayNumber(week.start) - r.loaded.history.startWeek) / 7];
  if (!run) throw new Error(`no forecast run as of ${week.label} (replayed up to day ${r.lastAsOf})`);
  return { run, loaded: r.loaded, week };
}

export function presentForecast(ctx: CycleContext, f: LiveForecast) {
  const { run, loaded } = f;
  const weeks = run.weeks.map((w, i) => presentForecastWeek(w, run.raw.weeks[i]!, loaded.area));
  const total = run.weeks.reduce((s, w) => s + w.kg, 0);
  // What a reader should know first: inputs left out, and the weeks a baseline answered, each reason once.
  const notes: string[] = [];
  if (!run.raw.trusses.used && run.raw.trusses.reason) notes.push(`Truss counts not used: ${run.raw.trusses.reason}.`);
  if (!run.raw.walk.used && run.raw.walk.reason && !run.raw.trusses.used) notes.push(`Walk not used: ${run.raw.walk.reason}.`);
  const byReason = new Map<string, string[]>();
  for (const w of run.weeks)
    if (w.method !== 'model') byReason.set(w.fallback.reason, [...(byReason.get(w.fallback.reason) ?? []), weekLabel(w.week)]);
  for (const [reason, weeks] of byReason) notes.push(`${weeks.join(', ')}: ${reason}.`);
  return {
    organization_id: ctx.cycle.organization_id,
    farm_id: ctx.cycle.farm_id,
    greenhouse_id: ctx.cycle.greenhouse_id,
    row_id: ctx.cycle.row_id,
    cycle_id: ctx.cycle.id,
    week: f.week.label,
    as_of: AS_OF_RULE,
    model: MODEL_NAME,
    area: presentArea(loaded.area),
    total_kg: kg3(total),
    total_kg_per_m2: perArea(total, loaded.area),
    notes,
    inputs: presentInputs(run),
    weeks,
  };
}

export type ForecastAnswer = ReturnType<typeof presentForecast>;

/**
 * The backtest: the forecast replayed as of every week of the cycle up to the current
 * one (or its last), each with only what was known then, and its misses per horizon
 * on every complete week against the two naive baselines on the same weeks. Harvests
 * are read as they are now, so an edited or deleted harvest changes the next backtest.
 */
export async function backtestOf(db: Db, ctx: CycleContext, nowMs: number) {
  const now = currentWeek(nowMs, ctx.zone);
  const { loaded, replay: r } = await cycleReplay(db, ctx, nowMs);
  const stats = backtestStats(r, dayNumber(now.start), loaded.history.endWeek, MODEL_CONSTANTS.horizons);
  const kgOrNull = (x: number | null) => (x === null ? null : kg3(x));
  return {
    organization_id: ctx.cycle.organization_id,
    farm_id: ctx.cycle.farm_id,
    greenhouse_id: ctx.cycle.greenhouse_id,
    row_id: ctx.cycle.row_id,
    cycle_id: ctx.cycle.id,
    model: MODEL_NAME,
    as_of: AS_OF_RULE,
    complete_before: now.label,
    area: presentArea(loaded.area),
    horizons: stats.horizons.map((h) => ({
      horizon: h.horizon,
      n: h.n,
      actual_kg: kg3(h.actual_kg),
      mae_kg: kgOrNull(h.mae_kg),
      wape: h.wape === null ? null : r4(h.wape),
      bias_kg: kgOrNull(h.bias_kg),
      baselines: {
        persistence: {
          mae_kg: kgOrNull(h.baselines.persistence.mae_kg),
          wape: h.baselines.persistence.wape === null ? null : r4(h.baselines.persistence.wape),
        },
        mean_3_weeks: {
          mae_kg: kgOrNull(h.baselines.mean_3_weeks.mae_kg),
          wape: h.baselines.mean_3_weeks.wape === null ? null : r4(h.baselines.mean_3_weeks.wape),
        },
      },
    })),
    weeks: stats.weeks.map((w) => ({
      week: weekLabel(w.asOf),
      forecasts: w.forecasts.map((f) => ({
        horizon: f.horizon,
        week: weekLabel(f.week),
        kg: kg3(f.kg),
        p10_kg: kg3(f.p10),
        p90_kg: kg3(f.p90),
        method: f.method,
        actual_kg: kgOrNull(f.actual_kg),
        baselines: { persistence_kg: kg3(f.baselines.persistence), mean_3_weeks_kg: kg3(f.baselines.mean_3_weeks) },
      })),
    })),
  };
}

/** Weeks a live forecast for a given week can be had in: as of that week, or of the current week when it is ahead. */
export function liveAsOf(week: IsoWeek, nowMs: number, zone: string): { asOf: IsoWeek; horizon: number } | null {
  const now = currentWeek(nowMs, zone);
  if (week.start <= now.start) return { asOf: week, horizon: 0 };
  const horizon = Math.round((dayNumber(week.start) - dayNumber(now.start)) / 7);
  return horizon < MODEL_CONSTANTS.horizons ? { asOf: now, horizon } : null;
}
