import type { SyncedColumns } from '../../db/schema.js';

/**
 * Outdoor weather of a greenhouse (migration 0009): one row per UTC hour, past and
 * forecast told apart by `forecast`, refreshed in place. Each refresh is a synced
 * record (`weather_refreshes`) and the change log's entry for it; the hours are not
 * logged one by one (a refresh writes up to 2,600 of them), like climate readings.
 */
export interface WeatherHourTable {
  greenhouse_id: string;
  /** Start of the UTC hour, epoch ms. */
  at_ms: number;
  /** 1 when the hour was ahead of the clock when last fetched, 0 when past. */
  forecast: number;
  temperature_c: number | null;
  relative_humidity: number | null;
  shortwave_w_m2: number | null;
  precipitation_mm: number | null;
  wind_speed_m_s: number | null;
  fetched_ms: number;
  refresh_id: string;
}

export interface WeatherRefreshTable extends SyncedColumns {
  farm_id: string;
  greenhouse_id: string;
  /** The service asked (scheme, host and path; never its query). */
  source: string;
  latitude: number;
  longitude: number;
  past_days: number;
  forecast_days: number;
  fetched_at: string;
  from_utc: string | null;
  to_utc: string | null;
  hours: number;
  added: number;
  updated: number;
  unchanged: number;
  past_hours: number;
  forecast_hours: number;
  /** JSON array of text. */
  conversions: string;
}

declare module '../../db/schema.js' {
  interface Database {
    weather_hours: WeatherHourTable;
    weather_refreshes: WeatherRefreshTable;
  }
}
