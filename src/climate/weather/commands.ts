import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { pgOnlyOrganization } from '../../db/engine.js';
import type { Actor, Store, Writer } from '../../db/store.js';
import type { GreenhouseTable } from '../../db/schema.js';
import { Invalid, Unavailable, UpstreamFailed } from '../../errors.js';
import { describeService, fetchWeather, WeatherFailure, type WeatherAnswer, type WeatherHour } from './client.js';
import type { WeatherHourTable, WeatherRefreshTable } from './tables.js';

export interface RefreshOptions {
  pastDays: number;
  forecastDays: number;
}

/** What a refresh needs from the services: where the service is, how long to wait, the write path and the clock. */
export interface WeatherDeps {
  store: Store;
  config: { weatherUrl: string; weatherTimeoutMs: number };
  clock: { now(): number };
}

/**
 * Refreshes a greenhouse's outdoor weather now (the service's clock): what `POST {cycle}/weather`
 * does, and what a schedule calls for every greenhouse with a location (actor SYSTEM_ACTOR).
 */
export async function refreshWeather(
  deps: WeatherDeps,
  greenhouse: GreenhouseTable,
  options: RefreshOptions,
  actor: Actor,
): Promise<WeatherRefreshTable> {
  return refreshWeatherAt(deps, greenhouse, options, deps.clock.now(), actor);
}

const FIELDS = ['temperature_c', 'relative_humidity', 'shortwave_w_m2', 'precipitation_mm', 'wind_speed_m_s'] as const;

/** The greenhouse's location, or a 422 that says how to give it one. */
export function requireLocation(gh: GreenhouseTable): { latitude: number; longitude: number } {
  if (gh.latitude === null || gh.longitude === null)
    throw new Invalid(
      [
        {
          in: 'path',
          name: 'greenhouse_id',
          message: 'the greenhouse has no latitude and longitude; PATCH the greenhouse with both to get its outdoor weather',
        },
      ],
      `Greenhouse "${gh.name}" has no location (latitude and longitude), so there is no outdoor weather to fetch for it.`,
      'greenhouse_location_missing',
    );
  return { latitude: gh.latitude, longitude: gh.longitude };
}

/**
 * Refreshes a greenhouse's outdoor weather now: asks the weather service for the
 * hours from `pastDays` back to `forecastDays` ahead (in UTC), then stores them in
 * one transaction: a new hour is added, a known one updated when its values or its
 * past/forecast side changed, never doubled. Hours before `nowMs` are past, the
 * rest forecast. The service is asked before the transaction opens (a slow service
 * must not hold the database); when it fails, nothing is written and the failure is
 * an Unavailable (503) or UpstreamFailed (502) with the service's code.
 */
export async function refreshWeatherAt(
  deps: WeatherDeps,
  greenhouse: GreenhouseTable,
  options: RefreshOptions,
  nowMs: number,
  actor: Actor,
): Promise<WeatherRefreshTable> {
  const place = requireLocation(greenhouse);
  let answer: WeatherAnswer;
  try {
    answer = await fetchWeather(deps.config.weatherUrl, { ...place, ...options }, { timeoutMs: deps.config.weatherTimeoutMs });
  } catch (err) {
    if (err instanceof WeatherFailure) {
      if (err.kind === 'unavailable') throw new Unavailable(err.code, err.message);
      throw new UpstreamFailed(err.code, err.message);
    }
    throw err;
  }
  return deps.store.write(actor, (w) =>
    storeWeather(w, greenhouse, place, options, answer, nowMs, describeService(deps.config.weatherUrl)),
  );
}

const sameValue = (a: number | null, b: number | null) => (a === null ? b === null : b !== null && Math.abs(a - b) < 1e-9);

export async function storeWeather(
  w: Writer,
  gh: GreenhouseTable,
  place: { latitude: number; longitude: number },
  options: RefreshOptions,
  answer: WeatherAnswer,
  nowMs: number,
  source: string,
): Promise<WeatherRefreshTable> {
  const hours = answer.hours;
  const first = hours[0]?.atMs;
  const last = hours.at(-1)?.atMs;
  const existing = new Map<number, WeatherHourTable>();
  if (first !== undefined && last !== undefined) {
    const rows = await w.trx
      .selectFrom('weather_hours')
      .selectAll()
      .where('greenhouse_id', '=', gh.id)
      .where('at_ms', '>=', first)
      .where('at_ms', '<=', last)
      .execute();
    for (const r of rows) existing.set(r.at_ms, r);
  }
  let added = 0;
  let updated = 0;
  let unchanged = 0;
  let forecastHours = 0;
  const changed: WeatherHour[] = [];
  for (const h of hours) {
    const forecast = h.atMs >= nowMs ? 1 : 0;
    forecastHours += forecast;
    const old = existing.get(h.atMs);
    if (!old) added++;
    else if (old.forecast !== forecast || FIELDS.some((f) => !sameValue(old[f], h[f]))) updated++;
    else {
      unchanged++;
      continue;
    }
    changed.push(h);
  }
  const refresh = await w.insert<WeatherRefreshTable>('weather_refreshes', {
    organization_id: gh.organization_id,
    farm_id: gh.farm_id,
    greenhouse_id: gh.id,
    source,
    latitude: place.latitude,
    longitude: place.longitude,
    past_days: options.pastDays,
    forecast_days: options.forecastDays,
    fetched_at: new Date(nowMs).toISOString(),
    from_utc: first === undefined ? null : new Date(first).toISOString(),
    to_utc: last === undefined ? null : new Date(last + 3_600_000).toISOString(),
    hours: hours.length,
    added,
    updated,
    unchanged,
    past_hours: hours.length - forecastHours,
    forecast_hours: forecastHours,
    conversions: JSON.stringify(answer.conversions),
  });
  // Multi-row upserts, well under SQLite's bound-value limit per statement.
  for (let i = 0; i < changed.length; i += 500) {
    const rows = changed.slice(i, i + 500).map((h) => ({
      ...pgOnlyOrganization(w.engine, gh.organization_id),
      greenhouse_id: gh.id,
      at_ms: h.atMs,
      forecast: h.atMs >= nowMs ? 1 : 0,
      temperature_c: h.temperature_c,
      relative_humidity: h.relative_humidity,
      shortwave_w_m2: h.shortwave_w_m2,
      precipitation_mm: h.precipitation_mm,
      wind_speed_m_s: h.wind_speed_m_s,
      fetched_ms: nowMs,
      refresh_id: refresh.id,
    }));
    await w.trx
      .insertInto('weather_hours')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(w.engine.kind === 'postgres' ? ['greenhouse_id', 'at_ms', 'organization_id' as never] : ['greenhouse_id', 'at_ms'])
          .doUpdateSet({
            forecast: sql`excluded.forecast`,
            temperature_c: sql`excluded.temperature_c`,
            relative_humidity: sql`excluded.relative_humidity`,
            shortwave_w_m2: sql`excluded.shortwave_w_m2`,
            precipitation_mm: sql`excluded.precipitation_mm`,
            wind_speed_m_s: sql`excluded.wind_speed_m_s`,
            fetched_ms: sql`excluded.fetched_ms`,
            refresh_id: sql`excluded.refresh_id`,
          }),
      )
      .execute();
  }
  return refresh;
}

/** For a schedule (the appliance's hourly refresh): every greenhouse with a location. */
export async function greenhousesWithLocation(db: Db): Promise<GreenhouseTable[]> {
  // One order on both engines (PostgreSQL has none without it): the schedule runs and lists its targets in it.
  return db
    .selectFrom('greenhouses')
    .selectAll()
    .where('latitude', 'is not', null)
    .where('longitude', 'is not', null)
    .orderBy('id')
    .execute();
}

/** Hours of outdoor weather of a greenhouse in [fromMs, toMs), oldest first. */
export async function weatherHours(db: Db, greenhouseId: string, fromMs: number, toMs: number): Promise<WeatherHourTable[]> {
  return db
    .selectFrom('weather_hours')
    .selectAll()
    .where('greenhouse_id', '=', greenhouseId)
    .where('at_ms', '>=', fromMs)
    .where('at_ms', '<', toMs)
    .orderBy('at_ms')
    .execute();
}

/** Stored hours of these greenhouses (the registry's contents and cascade). */
export async function countWeatherOf(db: Db | Writer['trx'], greenhouseIds: readonly string[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < greenhouseIds.length; i += 500) {
    const r = await db
      .selectFrom('weather_hours')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('greenhouse_id', 'in', greenhouseIds.slice(i, i + 500))
      .executeTakeFirst();
    n += Number(r?.n ?? 0);
  }
  return n;
}

/**
 * Removes the stored hours of these greenhouses in the caller's transaction, with one
 * change-log entry per greenhouse (entity `weather_hours`, `before` the count), like
 * a cycle's climate readings.
 */
export async function removeWeatherOf(w: Writer, greenhouseIds: readonly string[]): Promise<number> {
  let removed = 0;
  for (const id of greenhouseIds) {
    const r = await w.trx.deleteFrom('weather_hours').where('greenhouse_id', '=', id).executeTakeFirst();
    const n = Number(r.numDeletedRows);
    if (!n) continue;
    const gh = await w.trx.selectFrom('greenhouses').select('organization_id').where('id', '=', id).executeTakeFirst();
    await w.log({
      organization_id: gh?.organization_id ?? null,
      entity: 'weather_hours',
      entity_id: id,
      op: 'delete',
      before: { greenhouse_id: id, hours: n },
    });
    removed += n;
  }
  return removed;
}
