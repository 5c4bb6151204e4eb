import type { Db } from '../db/database.js';
import type { CycleTable, GreenhouseTable, RowTable } from '../db/schema.js';
import { cycleArea, type CycleArea } from '../registry/area.js';
import { hourlySeries } from '../climate/readings/hourly.js';
import { dayNumber, dayOfInstant, localDayCursor, weekStartDay } from '../time/days.js';
import { parseWeek } from '../time/weeks.js';
import type { CycleHistory, DayTemperature, OutdoorForecastDay, TemperatureSource, TrussCountInput, WalkInput } from './model/inputs.js';
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

/**
 * Everything the model reads of a cycle, from its start to `lastDay` (the day after
 * which nothing matters: the end of the cycle, or the last day of the furthest
 * week the caller forecasts).
 */
export async function loadCycleHistory(db: Db, ctx: CycleContext, lastDay: number): Promise<LoadedCycle> {
  const { cycle, greenhouse, zone } = ctx;
  const row = await loadRow(db, cycle.row_id);
  const area = cycleArea(cycle, row);
  const startDay = dayNumber(cycle.started_on);
  const endDay = cycle.ended_on ? dayNumber(cycle.ended_on) : null;

  const harvests = await db.selectFrom('harvests').select(['week', 'harvested_on', 'kg']).where('cycle_id', '=', cycle.id).execute();
  const counts = await db
    .selectFrom('truss_counts')
    .select(['id', 'counted_on', 'stems_per_m2'])
    .where('cycle_id', '=', cycle.id)
    .orderBy('counted_on')
    .execute();
  const countRows = await db
    .selectFrom('truss_count_rows')
    .select(['count_id', 'plant', 'truss', 'fruits'])
    .where('cycle_id', '=', cycle.id)
    .execute();
  const walks = await db
    .selectFrom('walks')
    .select(['id', 'week', 'count_green', 'count_turning', 'count_red', 'corrected_green', 'corrected_turning', 'corrected_red'])
    .where('cycle_id', '=', cycle.id)
    .where('status', '=', 'done')
    .where('week', 'is not', null)
    .orderBy('id')
    .execute();
  const masses = await db
    .selectFrom('fruit_masses')
    .select(['week', 'green_g', 'turning_g', 'red_g'])
    .where('cycle_id', '=', cycle.id)
    .execute();

  const trussCounts = trussInputs(counts, countRows);

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

  const fromDay = Math.min(startDay, ...trussCounts.map((c) => c.day)) - 28;
  const temperature = await dailyTemperatures(db, cycle.id, zone, fromDay, lastDay);
  const outdoorForecast = await outdoorForecastDays(db, greenhouse.id, zone, fromDay, lastDay);

  return {
    area,
    zone,
    history: {
      startWeek: weekStartDay(startDay),
      endWeek: endDay === null ? null : weekStartDay(endDay),
      endDay,
      areaM2: area.area_m2,
      stemsPerM2: cycle.stems_per_m2 ?? cycle.plants_per_m2,
      harvests: harvests.map((x) => ({ day: x.harvested_on ? dayNumber(x.harvested_on) : null, week: weekDay(x.week), kg: x.kg })),
      trussCounts,
      walks: [...walkByWeek.values()].sort((a, b) => a.week - b.week),
      fruitMass: masses.map((m) => ({ week: weekDay(m.week), green_g: m.green_g, turning_g: m.turning_g, red_g: m.red_g })),
      temperature,
      outdoorForecast,
    },
  };
}

/**
 * A count date as the model reads it: trusses per stem so far is the mean over the
 * counted plants of the highest truss number (growers count the top trusses only; the
 * number says how many came before), fruit per truss the mean over trusses that set fruit.
 */
export function trussInputs(
  counts: readonly { id: string; counted_on: string; stems_per_m2: number | null }[],
  rows: readonly { count_id: string; plant: string; truss: number; fruits: number }[],
): TrussCountInput[] {
  const byCount = new Map<string, { top: Map<string, number>; fruits: number; set: number }>();
  for (const r of rows) {
    let c = byCount.get(r.count_id);
    if (!c) byCount.set(r.count_id, (c = { top: new Map(), fruits: 0, set: 0 }));
    c.top.set(r.plant, Math.max(c.top.get(r.plant) ?? 0, r.truss));
    if (r.fruits > 0) {
      c.fruits += r.fruits;
      c.set++;
    }
  }
  return counts.flatMap((c) => {
    const x = byCount.get(c.id);
    if (!x || !x.top.size) return [];
    const tops = [...x.top.values()];
    return [
      {
        day: dayNumber(c.counted_on),
        trussesPerStem: tops.reduce((s, v) => s + v, 0) / tops.length,
        fruitPerTruss: x.set ? x.fruits / x.set : null,
        stemsPerM2: c.stems_per_m2,
      },
    ];
  });
}

/**
 * Daily mean greenhouse temperature on the greenhouse's local days: air temperature
 * where a day has enough hours of it, else substrate (slab) temperature.
 */
export async function dailyTemperatures(db: Db, cycleId: string, zone: string, fromDay: number, toDay: number): Promise<DayTemperature[]> {
  const fromMs = Date.UTC(1970, 0, 1 + fromDay) - 14 * 3_600_000;
  const toMs = Date.UTC(1970, 0, 2 + toDay) + 14 * 3_600_000;
  const series = await hourlySeries(db, cycleId, TEMPERATURE_METRICS, fromMs, toMs);
  const perSource = new Map<TemperatureSource, Map<number, { sum: number; n: number }>>();
  for (const source of TEMPERATURE_METRICS) {
    const s = series.get(source)!;
    const days = new Map<number, { sum: number; n: number }>();
    const dayOf = localDayCursor(fromDay, toDay, zone);
    for (let i = 0; i < s.at.length; i++) {
      const day = dayOf(s.at[i]!);
      if (Number.isNaN(day)) continue;
      const d = days.get(day);
      if (d) {
        d.sum += s.values[i]!;
        d.n++;
      } else days.set(day, { sum: s.values[i]!, n: 1 });
    }
    perSource.set(source, days);
  }
  const out: DayTemperature[] = [];
  const allDays = new Set<number>();
  for (const m of perSource.values()) for (const d of m.keys()) allDays.add(d);
  for (const day of [...allDays].sort((a, b) => a - b)) {
    for (const source of TEMPERATURE_METRICS) {
      const d = perSource.get(source)!.get(day);
      if (d && d.n >= MIN_HOURS_PER_DAY) {
        out.push({ day, meanC: d.sum / d.n, hours: d.n, source });
        break;
      }
    }
  }
  return out;
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
  const dayOf = localDayCursor(fromDay, toDay, zone);
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
