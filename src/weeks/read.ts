import type { Db } from '../db/database.js';
import { presentInstant } from '../time/instants.js';
import { dateOfDay, dayNumber, localMidnights } from '../time/days.js';
import { addWeeks, type IsoWeek } from '../time/weeks.js';
import { cycleArea } from '../registry/area.js';
import { hourlySeries } from '../climate/readings/hourly.js';
import { weatherHours } from '../climate/weather/commands.js';
import type { WeatherHourTable } from '../climate/weather/tables.js';
import { fruitMassForWeek } from '../records/fruit-mass/history.js';
import { forecastAsOf, liveAsOf, presentForecast } from '../forecast/forecast.js';
import { loadRow, type CycleContext } from '../forecast/queries.js';
import { kg3, perArea, presentArea, r4 } from '../forecast/presenters.js';
import type { StoredWeek } from '../forecast/tables.js';
import { CLIMATE_SUMMARY_METRICS, summariseClimate } from './climate.js';
import '../records/tables.js';

/**
 * The week read: everything the box knows of one ISO week of a crop cycle, in
 * the greenhouse's zone: walks and their counts, the harvest, irrigation, the
 * climate from the stored readings, the outdoor weather, water productivity,
 * the week's note, and the forecast for it (live, and the latest stored one).
 */
const round = (x: number | null, places = 2) => (x === null ? null : Math.round(x * 10 ** places) / 10 ** places);
const sum = (xs: (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? v.reduce((s, x) => s + x, 0) : null;
};
const mean = (xs: (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? v.reduce((s, x) => s + x, 0) / v.length : null;
};

type Counts = { green: number; turning: number; red: number; total: number };
const counts = (g: number | null, t: number | null, r: number | null, total: number | null): Counts | null =>
  g === null || t === null || r === null ? null : { green: g, turning: t, red: r, total: total ?? g + t + r };
const addCounts = (a: Counts, b: Counts): Counts => ({
  green: a.green + b.green,
  turning: a.turning + b.turning,
  red: a.red + b.red,
  total: a.total + b.total,
});

export async function readWeek(db: Db, ctx: CycleContext, week: IsoWeek, nowMs: number) {
  const { cycle, greenhouse, zone } = ctx;
  const monday = dayNumber(week.start);
  const bounds = localMidnights(monday, monday + 6, zone);
  const fromMs = bounds[0]!;
  const toMs = bounds[7]!;
  const fromIso = new Date(fromMs).toISOString();
  const toIso = new Date(toMs).toISOString();
  const area = cycleArea(cycle, await loadRow(db, cycle.row_id));

  const [note, masses, harvests, irrigation, walks, series, weather] = await Promise.all([
    db.selectFrom('week_notes').selectAll().where('cycle_id', '=', cycle.id).where('week', '=', week.label).executeTakeFirst(),
    db.selectFrom('fruit_masses').selectAll().where('cycle_id', '=', cycle.id).execute(),
    // Rows that are summed come in id order: floating-point sums depend on the order, and without
    // one PostgreSQL hands rows back in the order they lie on disk, not SQLite's (docs/postgres.md).
    db
      .selectFrom('harvests')
      .select(['kg', 'harvested_on'])
      .where('cycle_id', '=', cycle.id)
      .where('week', '=', week.label)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('irrigation_entries')
      .selectAll()
      .where('cycle_id', '=', cycle.id)
      .where('at', '>=', fromIso)
      .where('at', '<', toIso)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('walks')
      .select([
        'id',
        'status',
        'created_at',
        'count_green',
        'count_turning',
        'count_red',
        'count_total',
        'corrected_green',
        'corrected_turning',
        'corrected_red',
        'corrected_total',
      ])
      .where('cycle_id', '=', cycle.id)
      .where('week', '=', week.label)
      .orderBy('id')
      .execute(),
    hourlySeries(db, cycle.id, CLIMATE_SUMMARY_METRICS, fromMs, toMs),
    weatherHours(db, greenhouse.id, fromMs, toMs),
  ]);

  // Walks: the corrected counts count; a walk still scoring has none yet.
  let model: Counts | null = null;
  let corrected: Counts | null = null;
  const walkItems = walks.map((w) => {
    const m = counts(w.count_green, w.count_turning, w.count_red, w.count_total);
    const c = counts(w.corrected_green, w.corrected_turning, w.corrected_red, w.corrected_total) ?? m;
    if (w.status === 'done' && m) model = model ? addCounts(model, m) : m;
    if (w.status === 'done' && c) corrected = corrected ? addCounts(corrected, c) : c;
    return { job_id: w.id, status: w.status, created_at: w.created_at, model_counts: m, corrected_counts: c };
  });
  const fruitPerM2 = (c: Counts | null) =>
    c === null || area.area_m2 === null
      ? null
      : {
          green: r4(c.green / area.area_m2),
          turning: r4(c.turning / area.area_m2),
          red: r4(c.red / area.area_m2),
          total: r4(c.total / area.area_m2),
        };

  // Harvest: a pick is a dated harvest day; an undated harvest is a pick of its own.
  const harvestKg = harvests.reduce((s, h) => s + h.kg, 0);
  const picks =
    new Set(harvests.filter((h) => h.harvested_on).map((h) => h.harvested_on)).size + harvests.filter((h) => !h.harvested_on).length;

  // Irrigation.
  const water = sum(irrigation.map((e) => e.volume_l));
  const drain = sum(irrigation.map((e) => e.drain_l));
  const both = irrigation.filter((e) => e.volume_l !== null && e.drain_l !== null);
  const bothWater = sum(both.map((e) => e.volume_l));
  const bothDrain = sum(both.map((e) => e.drain_l));

  // Water productivity: kilos harvested per m³ given, for the week and the cycle so far.
  // Summed here in id order rather than by SQL sum(): SQLite adds floating-point numbers with
  // compensation and PostgreSQL without, so the last digits could differ between the engines.
  const cycleHarvest = await db
    .selectFrom('harvests')
    .select('kg')
    .where('cycle_id', '=', cycle.id)
    .where('week', '<=', week.label)
    .orderBy('id')
    .execute();
  const cycleWater = await db
    .selectFrom('irrigation_entries')
    .select('volume_l')
    .where('cycle_id', '=', cycle.id)
    .where('at', '<', toIso)
    .orderBy('id')
    .execute();
  const productivity = (kg: number, litres: number | null) => {
    if (litres === null || litres <= 0) return { kg_per_m3: null, reason: 'no irrigation water logged (volume_l) in this span' };
    return { kg_per_m3: round(kg / (litres / 1000), 3), reason: null };
  };
  const cycleKg = sum(cycleHarvest.map((h) => h.kg)) ?? 0;
  const cycleLitres = sum(cycleWater.map((e) => e.volume_l));

  const climate = summariseClimate(series, {
    latitude: greenhouse.latitude,
    longitude: greenhouse.longitude,
    localHour: (ms) => {
      let day = 0;
      while (day < 7 && ms >= bounds[day + 1]!) day++;
      return Math.floor((ms - bounds[day]!) / 3_600_000);
    },
    outdoorRadiation: new Map(weather.filter((h) => h.shortwave_w_m2 !== null).map((h) => [h.at_ms, h.shortwave_w_m2!])),
  });

  const mass = fruitMassForWeek(masses, week.label);
  return {
    organization_id: cycle.organization_id,
    farm_id: cycle.farm_id,
    greenhouse_id: cycle.greenhouse_id,
    row_id: cycle.row_id,
    cycle_id: cycle.id,
    week: week.label,
    start: week.start,
    end: week.end,
    time_zone: zone,
    area: presentArea(area),
    note: note ? (JSON.parse(note.body) as Record<string, unknown>) : null,
    walks: {
      items: walkItems,
      model_counts: model,
      corrected_counts: corrected,
      fruit_per_m2: fruitPerM2(corrected),
      fruit_per_m2_reason: corrected === null ? 'no scored walk saved to this week' : area.reason,
    },
    harvest: {
      kg: kg3(harvestKg),
      harvests: harvests.length,
      picks,
      kg_per_m2: perArea(harvestKg, area),
      kg_per_m2_reason: area.reason,
    },
    irrigation: {
      entries: irrigation.length,
      volume_l: round(water, 3),
      water_m3: water === null ? null : round(water / 1000, 4),
      drain_l: round(drain, 3),
      drain_pct: bothWater && bothDrain !== null ? round((bothDrain / bothWater) * 100, 1) : null,
      ec_in_mean: round(mean(irrigation.map((e) => e.ec_in)), 3),
      ec_drain_mean: round(mean(irrigation.map((e) => e.ec_drain)), 3),
      ph_in_mean: round(mean(irrigation.map((e) => e.ph_in)), 3),
      ph_drain_mean: round(mean(irrigation.map((e) => e.ph_drain)), 3),
    },
    climate,
    outdoor_weather: summariseWeather(weather, bounds, monday, zone),
    water_productivity: {
      week: productivity(harvestKg, water),
      cycle_to_date: {
        ...productivity(cycleKg, cycleLitres),
        harvest_kg: kg3(cycleKg),
        water_m3: cycleLitres === null ? null : round(cycleLitres / 1000, 4),
      },
    },
    fruit_mass: mass && { week: mass.week, green_g: mass.green_g, turning_g: mass.turning_g, red_g: mass.red_g },
    forecast: await weekForecast(db, ctx, week, nowMs),
  };
}

function summariseWeather(hours: WeatherHourTable[], bounds: Float64Array, monday: number, zone: string) {
  const temps = hours.map((h) => h.temperature_c);
  const radiation = (hs: WeatherHourTable[]) =>
    round(sum(hs.map((h) => (h.shortwave_w_m2 === null ? null : Math.max(0, h.shortwave_w_m2) * 0.36))), 1);
  const days = Array.from({ length: 7 }, (_, i) => {
    const hs = hours.filter((h) => h.at_ms >= bounds[i]! && h.at_ms < bounds[i + 1]!);
    const t = hs.map((h) => h.temperature_c).filter((x): x is number => x !== null);
    return {
      date: dateOfDay(monday + i),
      hours_in_day: Math.round((bounds[i + 1]! - bounds[i]!) / 3_600_000),
      hours: hs.length,
      past_hours: hs.filter((h) => !h.forecast).length,
      forecast_hours: hs.filter((h) => h.forecast).length,
      mean_c: round(mean(t)),
      min_c: t.length ? Math.min(...t) : null,
      max_c: t.length ? Math.max(...t) : null,
      precipitation_mm: round(sum(hs.map((h) => h.precipitation_mm))),
      radiation_sum_j_cm2: radiation(hs),
    };
  });
  const t = temps.filter((x): x is number => x !== null);
  const fetched = hours.length ? Math.max(...hours.map((h) => h.fetched_ms)) : null;
  return {
    hours: hours.length,
    past_hours: hours.filter((h) => !h.forecast).length,
    forecast_hours: hours.filter((h) => h.forecast).length,
    last_fetched_at: fetched === null ? null : presentInstant(new Date(fetched).toISOString(), zone),
    temperature: { mean_c: round(mean(t)), min_c: t.length ? Math.min(...t) : null, max_c: t.length ? Math.max(...t) : null },
    relative_humidity_mean_pct: round(mean(hours.map((h) => h.relative_humidity)), 1),
    radiation_sum_j_cm2: radiation(hours),
    precipitation_mm: round(sum(hours.map((h) => h.precipitation_mm))),
    wind_speed_mean_m_s: round(mean(hours.map((h) => h.wind_speed_m_s))),
    days,
  };
}

/** The forecast for the week: live (as of the week, or of the current week when it is ahead), and the latest stored one that covered it. */
async function weekForecast(db: Db, ctx: CycleContext, week: IsoWeek, nowMs: number) {
  const at = liveAsOf(week, nowMs, ctx.zone);
  const start = ctx.cycle.started_on;
  let live: Record<string, unknown> | null = null;
  let liveReason: string | null = null;
  if (!at) liveReason = 'the week is more than seven weeks ahead of the current one';
  else if (at.asOf.end < start) liveReason = 'the week is before the crop cycle started';
  else {
    const f = presentForecast(ctx, await forecastAsOf(db, ctx, at.asOf, nowMs));
    const w = f.weeks[at.horizon]!;
    live = {
      as_of: f.week,
      horizon: w.horizon,
      kg: w.kg,
      kg_per_m2: w.kg_per_m2,
      p10_kg: w.p10_kg,
      p90_kg: w.p90_kg,
      method: w.method,
      reason: w.fallback.reason,
    };
  }
  // Stored forecasts name their weeks in JSON; the latest whose as-of week is within seven weeks before this one and covers it.
  const earliest = addWeeks(week, -7).label;
  const stored = await db
    .selectFrom('forecasts')
    .selectAll()
    .where('cycle_id', '=', ctx.cycle.id)
    .where('week', '<=', week.label)
    .where('week', '>=', earliest)
    .orderBy('id', 'desc')
    .limit(50)
    .execute();
  let latest: Record<string, unknown> | null = null;
  for (const f of stored) {
    const w = (JSON.parse(f.weeks) as StoredWeek[]).find((x) => x.week === week.label);
    if (!w) continue;
    latest = {
      forecast_id: f.id,
      as_of: f.week,
      made_at: f.created_at,
      made_by: f.made_by,
      horizon: w.horizon,
      kg: w.kg,
      kg_per_m2: w.kg_per_m2,
      p10_kg: w.p10_kg,
      p90_kg: w.p90_kg,
      method: w.method,
    };
    break;
  }
  return { live, live_reason: liveReason, stored: latest };
}
