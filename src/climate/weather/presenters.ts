import { presentInstant } from '../../time/instants.js';
import type { WeatherRefreshTable } from './tables.js';

export function presentRefresh(r: WeatherRefreshTable, zone: string) {
  return {
    refresh_id: r.id,
    organization_id: r.organization_id,
    farm_id: r.farm_id,
    greenhouse_id: r.greenhouse_id,
    source: r.source,
    latitude: r.latitude,
    longitude: r.longitude,
    past_days: r.past_days,
    forecast_days: r.forecast_days,
    fetched_at: presentInstant(r.fetched_at, zone),
    from: r.from_utc && presentInstant(r.from_utc, zone),
    to: r.to_utc && presentInstant(r.to_utc, zone),
    hours: r.hours,
    added: r.added,
    updated: r.updated,
    unchanged: r.unchanged,
    past_hours: r.past_hours,
    forecast_hours: r.forecast_hours,
    conversions: JSON.parse(r.conversions) as string[],
    units: { temperature: '°C', relative_humidity: '%', shortwave_radiation: 'W/m²', precipitation: 'mm', wind_speed: 'm/s' },
  };
}
