import { defineRoute, type JsonSchema, type RouteSpec } from '../../http/route.js';
import { instantSchema, pathParams } from '../../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../../registry/paths.js';
import type { CyclePath } from '../../registry/scope.js';
import { MAX_FORECAST_DAYS, MAX_PAST_DAYS } from './client.js';
import { refreshWeather } from './commands.js';
import { presentRefresh } from './presenters.js';

const obj = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});
const int = (description: string): JsonSchema => ({ type: 'integer', description });

export const refreshBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    past_days: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_PAST_DAYS,
      default: 7,
      description: `Days back to fetch, 0 to ${MAX_PAST_DAYS} (default 7).`,
    },
    forecast_days: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_FORECAST_DAYS,
      default: 7,
      description: `Days ahead to fetch, counting today, 0 to ${MAX_FORECAST_DAYS} (default 7).`,
    },
  },
};

export const refreshSchema = obj({
  refresh_id: { type: 'string', description: 'Id of this refresh (UUIDv7): the change log’s entry for it.' },
  organization_id: { type: 'string' },
  farm_id: { type: 'string' },
  greenhouse_id: { type: 'string', description: 'Weather belongs to the greenhouse: every cycle in it reads the same hours.' },
  source: { type: 'string', description: 'The service asked (scheme, host and path).' },
  latitude: { type: 'number', description: 'Degrees north asked for.' },
  longitude: { type: 'number', description: 'Degrees east asked for.' },
  past_days: int('Days back asked for.'),
  forecast_days: int('Days ahead asked for.'),
  fetched_at: {
    ...instantSchema,
    description: 'When it was fetched (greenhouse clock): hours before it are stored as past, the rest as forecast.',
  },
  from: { type: ['string', 'null'], format: 'date-time', description: 'First hour answered (greenhouse clock).' },
  to: { type: ['string', 'null'], format: 'date-time', description: 'End of the last hour answered (greenhouse clock).' },
  hours: int('Hours answered.'),
  added: int('Hours stored that were not stored before.'),
  updated: int('Hours stored before whose values, or past/forecast side, changed.'),
  unchanged: int('Hours stored before and answered the same.'),
  past_hours: int('Hours before fetched_at (observed or analysed weather).'),
  forecast_hours: int('Hours from fetched_at on (forecast).'),
  conversions: {
    type: 'array',
    items: { type: 'string' },
    description: 'Units the service answered in that were converted, e.g. "wind_speed_10m: km/h → m/s".',
  },
  units: obj({
    temperature: { const: '°C' },
    relative_humidity: { const: '%' },
    shortwave_radiation: { const: 'W/m²' },
    precipitation: { const: 'mm' },
    wind_speed: { const: 'm/s' },
  }),
});

export const weatherRoutes: RouteSpec[] = [
  defineRoute<CyclePath, unknown, { past_days: number; forecast_days: number }, 'cycle'>({
    method: 'post',
    path: `${CYCLE}/weather`,
    operationId: 'refresh_weather',
    summary: "Refresh the greenhouse's outdoor weather now",
    description:
      "Fetches hourly outdoor temperature (°C), relative humidity (%), short-wave radiation (W/m²), precipitation (mm) and wind speed (m/s) at the greenhouse's latitude and longitude from the Open-Meteo compatible service at WEATHER_URL, past_days back and forecast_days ahead, in UTC, and stores them as the greenhouse's outdoor hours: past and forecast apart, a known hour updated, never doubled. The week read shows them; the forecast uses the days ahead. 422 (greenhouse_location_missing) when the greenhouse has no latitude and longitude. When the service cannot be reached (503 weather_unreachable), does not answer in WEATHER_TIMEOUT_MS (503 weather_timeout), answers an error (502 weather_upstream_error) or something that is not an Open-Meteo answer (502 weather_bad_answer, weather_answer_too_large), nothing is stored.",
    tags: ['Weather'],
    auth: 'key',
    scope: 'cycle',
    params: pathParams(...CYCLE_PARAMS),
    body: refreshBody,
    responses: { 200: { description: 'What the refresh stored.', schema: refreshSchema } },
    errors: [404, 502, 503],
    // Not a write route: the service is asked before the write transaction opens (refreshWeather opens it).
    handler: async ({ scope, body, services, actor }) =>
      presentRefresh(
        await refreshWeather(services, scope.greenhouse, { pastDays: body.past_days, forecastDays: body.forecast_days }, actor),
        scope.zone,
      ),
  }),
];
