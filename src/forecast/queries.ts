import { sql } from 'kysely';
import { DateTime } from 'luxon';
import type { Db } from '../db/database.js';
import type { CycleTable, GreenhouseTable, RowTable } from '../db/schema.js';
import { cycleArea, type CycleArea } from '../registry/area.js';
import { cycleKeyOf } from '../climate/readings/points.js';
import { dayNumber, dayOfInstant, localDayCursor, localMidnights, weekStartDay } from '../time/days.js';
import { parseWeek } from '../time/weeks.js';
import type {
  CycleHistory,
  DayTemperature,
  FruitMassInput,
  HarvestInput,
  OutdoorForecastDay,
  TemperatureSource,
  TrussCountInput,
  WalkInput,
} from './model/inputs.js';
import '../records/tables.js';
import '../climate/weather/tables.js';

/**
 * Reads a crop cycle's records into the model's plain input (model/inputs.ts):
 * one query per kind of record, the whole cycle at once, so that every week of a
 * replay cuts the same arrays in memory instead of asking the database again.
 */
export interface CycleContext {
  cycle: CycleTable;
  greenhouse: GreenhouseTable;
  zone: string;
}

export interface LoadedCycle {
  history: CycleHistory;
  area: CycleArea;
  zone: string;
  /** The climate it read, for a later load that knows the climate has not changed since (src/forecast/forecast.ts). */
  climate: LoadedClimate;
}

/** The days of climate a load read: the dearest of its queries (a year of hourly readings grouped by local day). */
export interface LoadedClimate {
  fromDay: number;
  lastDay: number;
  zone: string;
  temperature: DayTemperature[];
  outdoorForecast: OutdoorForecastDay[];
}

/** Hours a day needs before its mean temperature stands for it. */
const MIN_HOURS_PER_DAY = 12;
const TEMPERATURE_METRICS: TemperatureSource[] = ['air_temperature', 'substrate_temperature'];

/** Monday (day number) of the week a label names. */
export function weekDay(label: string): number {
  return dayNumber(parseWeek(label)!.start);
}

export async function loadRow(db: Db, rowId: string): Promise<RowTable | null> {
  return (await db.selectFrom('rows').selectAll().where('id', '=', rowId).executeTakeFirst()) ?? null;
}

/** The parts of a load that a later one may keep when no write since reached them (src/forecast/reach.ts). */
export type RecordPart = 'harvests' | 'trussCounts' | 'walks' | 'fruitMass' | 'climate';

/** A previous load of the same cycle, and the parts of it that are still as stored. */
export interface KeptLoad {
  loaded: LoadedCycle;
  parts: ReadonlySet<RecordPart>;
}

/**
 * Everything the model reads of a cycle, from its start to `lastDay` (the day after
 * which nothing matters: the end of the cycle, or the last day of the furthest
 * week the caller forecasts). The parts `kept` names are taken from its load instead
 * of being read again.
 */
export async function loadCycleHistory(db: Db, ctx: CycleContext, lastDay: number, kept?: KeptLoad): Promise<LoadedCycle> {
  const { cycle, greenhouse, zone } = ctx;
  const row = await loadRow(db, cycle.row_id);
  const area = cycleArea(cycle, row);
  const startDay = dayNumber(cycle.started_on);
  const endDay = cycle.ended_on ? dayNumber(cycle.ended_on) : null;
  const before = kept?.loaded.history;
  const keep = (part: RecordPart) => before !== undefined && kept!.parts.has(part);

  const harvests = keep('harvests') ? before!.harvests : await loadHarvests(db, cycle.id);
  const trussCounts = keep('trussCounts') ? before!.trussCounts : await loadTrussCounts(db, cycle.id);
  const walks = keep('walks') ? before!.walks : await loadWalks(db, cycle.id);
  const fruitMass = keep('fruitMass') ? before!.fruitMass : await loadFruitMass(db, cycle.id);

  const fromDay = Math.min(startDay, ...trussCounts.map((c) => c.day)) - 28;
  const climate = kept?.loaded.climate;
  const same = keep('climate') && climate!.fromDay === fromDay && climate!.lastDay === lastDay && climate!.zone === zone;
  const temperature = same ? climate!.temperature : await dailyTemperatures(db, cycle.id, zone, fromDay, lastDay);
  const outdoorForecast = same ? climate!.outdoorForecast : await outdoorForecastDays(db, greenhouse.id, zone, fromDay, lastDay);

  return {
    area,
    zone,
    climate: { fromDay, lastDay, zone, temperature, outdoorForecast },
    history: {
      startWeek: weekStartDay(startDay),
      startDay,
      endWeek: endDay === null ? null : weekStartDay(endDay),
      endDay,
      areaM2: area.area_m2,
      stemsPerM2: cycle.stems_per_m2 ?? cycle.plants_per_m2,
      harvests,
      trussCounts,
      walks,
      fruitMass,
      temperature,
      outdoorForecast,
    },
  };
}

async function loadHarvests(db: Db, cycleId: string): Promise<HarvestInput[]> {
  // In id order: the model sums the kilos, and a floating-point sum depends on the order (the same on both engines).
  const rows = await db
    .selectFrom('harvests')
    .select(['week', 'harvested_on', 'kg'])
    .where('cycle_id', '=', cycleId)
    .orderBy('id')
    .execute();
  return rows.map((x) => ({ day: x.harvested_on ? dayNumber(x.harvested_on) : null, week: weekDay(x.week), kg: x.kg }));
}

async function loadTrussCounts(db: Db, cycleId: string): Promise<TrussCountInput[]> {
  const counts = await db
    .selectFrom('truss_counts')
    .select(['id', 'counted_on', 'stems_per_m2'])
    .where('cycle_id', '=', cycleId)
    .orderBy('counted_on')
    .execute();
  // Per count date and plant: the top truss, and the fruit on its trusses that set some. Aggregated in SQL, in one
  // pass: a season of counts is thousands of rows, the model needs a few numbers per date.
  const perPlant = await db
    .selectFrom('truss_count_rows')
    .select([
      'count_id',
      sql<number>`max(truss)`.as('top'),
      sql<number>`sum(CASE WHEN fruits > 0 THEN fruits ELSE 0 END)`.as('fruits'),
      sql<number>`sum(CASE WHEN fruits > 0 THEN 1 ELSE 0 END)`.as('set_trusses'),
    ])
    .where('cycle_id', '=', cycleId)
    .groupBy(['count_id', 'plant'])
    .execute();
  return trussInputs(counts, perPlant);
}

async function loadWalks(db: Db, cycleId: string): Promise<WalkInput[]> {
  const walks = await db
    .selectFrom('walks')
    .select(['id', 'week', 'count_green', 'count_turning', 'count_red', 'corrected_green', 'corrected_turning', 'corrected_red'])
    .where('cycle_id', '=', cycleId)
    .where('status', '=', 'done')
    .where('week', 'is not', null)
    .orderBy('id')
    .execute();
  // The latest walk of each week speaks for it (two walks of one row in a week are the same fruit twice).
  const walkByWeek = new Map<number, WalkInput>();
  for (const w of walks) {
    const corrected = w.corrected_green !== null && w.corrected_turning !== null && w.corrected_red !== null;
    walkByWeek.set(weekDay(w.week!), {
      week: weekDay(w.week!),
      green: (corrected ? w.corrected_green : w.count_green) ?? 0,
      turning: (corrected ? w.corrected_turning : w.count_turning) ?? 0,
      red: (corrected ? w.corrected_red : w.count_red) ?? 0,
      corrected:
        corrected && (w.corrected_green !== w.count_green || w.corrected_turning !== w.count_turning || w.corrected_red !== w.count_red),
    });
  }
  return [...walkByWeek.values()].sort((a, b) => a.week - b.week);
}

async function loadFruitMass(db: Db, cycleId: string): Promise<FruitMassInput[]> {
  const masses = await db
    .selectFrom('fruit_masses')
    .select(['week', 'green_g', 'turning_g', 'red_g'])
    .where('cycle_id', '=', cycleId)
    .execute();
  return masses.map((m) => ({ week: weekDay(m.week), green_g: m.green_g, turning_g: m.turning_g, red_g: m.red_g }));
}

/**
 * A count date as the model reads it: trusses per stem so far is the mean over the
 * counted plants of the highest truss number (growers count the top trusses only; the
 * number says how many came before), fruit per truss the mean over trusses that set fruit.
 */
export function trussInputs(
  counts: readonly { id: string; counted_on: string; stems_per_m2: number | null }[],
  perPlant: readonly { count_id: string; top: number; fruits: number; set_trusses: number }[],
): TrussCountInput[] {
  const byCount = new Map<string, { tops: number; plants: number; fruits: number; set: number }>();
  for (const r of perPlant) {
    const c = byCount.get(r.count_id) ?? { tops: 0, plants: 0, fruits: 0, set: 0 };
    c.tops += Number(r.top);
    c.plants++;
    c.fruits += Number(r.fruits);
    c.set += Number(r.set_trusses);
    byCount.set(r.count_id, c);
  }
  return counts.flatMap((c) => {
    const x = byCount.get(c.id);
    if (!x?.plants) return [];
    return [
      {
        day: dayNumber(c.counted_on),
        trussesPerStem: x.tops / x.plants,
        fruitPerTruss: x.set > 0 ? x.fruits / x.set : null,
        stemsPerM2: c.stems_per_m2,
      },
    ];
  });
}

/**
 * Daily mean greenhouse temperature on the greenhouse's local days: air temperature
 * where a day has enough hours of it, else substrate (slab) temperature. Grouped by
 * local day in SQL (a year of hourly readings is a few hundred rows out), the day of
 * an instant being (instant + the zone's offset then) in whole days.
 */
export async function dailyTemperatures(db: Db, cycleId: string, zone: string, fromDay: number, toDay: number): Promise<DayTemperature[]> {
  const key = await cycleKeyOf(db, cycleId);
  if (key === undefined) return [];
  const codes = await db.selectFrom('climate_metric_codes').select(['code', 'metric']).where('metric', 'in', TEMPERATURE_METRICS).execute();
  if (!codes.length) return [];
  const fromMs = localMidnights(fromDay, fromDay, zone)[0]!;
  const toMs = localMidnights(toDay, toDay, zone)[1]!;
  const spans = offsetSpans(fromMs, toMs, zone);
  // CASE over the clock changes in the span: each branch the offset (ms) until the next change.
  const offset =
    spans.length === 1
      ? sql<number>`${spans[0]!.offsetMs}`
      : sql<number>`CASE ${sql.join(
          spans.slice(0, -1).map((sp) => sql`WHEN at_ms < ${sp.untilMs} THEN ${sp.offsetMs}`),
          sql` `,
        )} ELSE ${spans.at(-1)!.offsetMs} END`;
  const rows = await db
    .selectFrom('climate_points')
    .select([
      // Bound numbers may arrive as reals: the cast makes the day a whole number (and PostgreSQL reads the offset as a number).
      sql<number>`CAST((at_ms + CAST(${offset} AS BIGINT)) / 86400000 AS INTEGER)`.as('day'),
      'metric_code',
      sql<number>`avg(value)`.as('mean'),
      sql<number>`count(DISTINCT at_ms / 3600000)`.as('hours'),
    ])
    .where('cycle_key', '=', key)
    .where('at_ms', '>=', fromMs)
    .where('at_ms', '<', toMs)
    .where(
      'metric_code',
      'in',
      codes.map((c) => c.code),
    )
    .groupBy(['day', 'metric_code'])
    .execute();
  const metricOf = new Map(codes.map((c) => [c.code, c.metric as TemperatureSource]));
  const byDay = new Map<number, Partial<Record<TemperatureSource, { mean: number; hours: number }>>>();
  for (const r of rows) {
    const d = byDay.get(Number(r.day)) ?? {};
    d[metricOf.get(r.metric_code)!] = { mean: Number(r.mean), hours: Number(r.hours) };
    byDay.set(Number(r.day), d);
  }
  const out: DayTemperature[] = [];
  for (const day of [...byDay.keys()].sort((a, b) => a - b)) {
    const d = byDay.get(day)!;
    for (const source of TEMPERATURE_METRICS) {
      const x = d[source];
      if (x && x.hours >= MIN_HOURS_PER_DAY) {
        out.push({ day, meanC: x.mean, hours: x.hours, source });
        break;
      }
    }
  }
  return out;
}

/** The zone's offset from UTC over [fromMs, toMs), as spans that each end at a clock change (the last at toMs). */
export function offsetSpans(fromMs: number, toMs: number, zone: string): { untilMs: number; offsetMs: number }[] {
  const offsetAt = (ms: number) => DateTime.fromMillis(ms, { zone }).offset * 60_000;
  const spans: { untilMs: number; offsetMs: number }[] = [];
  // Clock changes are months apart: probe once a week, and find a change between two probes by halving (to 15 minutes).
  const STEP = 7 * 86_400_000;
  const QUARTER = 900_000;
  let current = offsetAt(fromMs);
  for (let at = fromMs; at < toMs; at += STEP) {
    const next = Math.min(toMs - 1, at + STEP);
    if (offsetAt(next) === current) continue;
    let lo = at;
    let hi = next;
    while (hi - lo > QUARTER) {
      const mid = lo + Math.max(QUARTER, Math.floor((hi - lo) / 2 / QUARTER) * QUARTER);
      if (offsetAt(mid) === current) lo = mid;
      else hi = mid;
    }
    spans.push({ untilMs: hi, offsetMs: current });
    current = offsetAt(hi);
    at = hi - STEP;
  }
  spans.push({ untilMs: toMs, offsetMs: current });
  return spans;
}

/** Daily means of the stored outdoor forecast hours (local days), each with the day it was fetched. */
export async function outdoorForecastDays(
  db: Db,
  greenhouseId: string,
  zone: string,
  fromDay: number,
  toDay: number,
): Promise<OutdoorForecastDay[]> {
  const rows = await db
    .selectFrom('weather_hours')
    .select(['at_ms', 'temperature_c', 'fetched_ms'])
    .where('greenhouse_id', '=', greenhouseId)
    .where('forecast', '=', 1)
    .where('at_ms', '>=', Date.UTC(1970, 0, 1 + fromDay) - 14 * 3_600_000)
    .where('at_ms', '<', Date.UTC(1970, 0, 2 + toDay) + 14 * 3_600_000)
    .orderBy('at_ms')
    .execute();
  if (!rows.length) return [];
  const dayOf = localDayCursor(dayOfInstant(rows[0]!.at_ms, zone), dayOfInstant(rows.at(-1)!.at_ms, zone), zone);
  const days = new Map<number, { sum: number; n: number; fetched: number }>();
  for (const r of rows) {
    if (r.temperature_c === null) continue;
    const day = dayOf(r.at_ms);
    if (Number.isNaN(day)) continue;
    const d = days.get(day) ?? { sum: 0, n: 0, fetched: 0 };
    d.sum += r.temperature_c;
    d.n++;
    d.fetched = Math.max(d.fetched, r.fetched_ms);
    days.set(day, d);
  }
  return [...days]
    .filter(([, d]) => d.n >= 20)
    .map(([day, d]) => ({ day, meanC: d.sum / d.n, fetchedDay: dayOfInstant(d.fetched, zone) }))
    .sort((a, b) => a.day - b.day);
}
