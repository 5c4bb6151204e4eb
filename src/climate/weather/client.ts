import { conversion, parseUnit, unitBySymbol } from '../../units/units.js';

/**
 * A client for an Open-Meteo compatible forecast service (`WEATHER_URL`): hourly
 * outdoor temperature, relative humidity, short-wave radiation, precipitation
 * and wind for a place, some days back and some ahead, asked for in UTC.
 * Nothing here touches the database: it answers hours in canonical units, or
 * throws a `WeatherFailure` that says what went wrong with the service.
 */
export interface WeatherHour {
  /** Start of the hour, epoch ms (UTC). */
  atMs: number;
  temperature_c: number | null;
  relative_humidity: number | null;
  shortwave_w_m2: number | null;
  precipitation_mm: number | null;
  wind_speed_m_s: number | null;
}

export interface WeatherAnswer {
  hours: WeatherHour[];
  /** Unit conversions applied to reach the canonical units (e.g. "km/h → m/s"). */
  conversions: string[];
  latitude: number | null;
  longitude: number | null;
  elevation: number | null;
}

/** What went wrong with the weather service: unavailable (503: unreachable, timed out) or a bad answer (502). */
export class WeatherFailure extends Error {
  constructor(
    readonly kind: 'unavailable' | 'bad_answer',
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}

export interface WeatherRequest {
  latitude: number;
  longitude: number;
  pastDays: number;
  forecastDays: number;
}

export interface ClientOptions {
  timeoutMs: number;
  /** Bytes an answer may have; past it the answer is refused. */
  maxBytes?: number;
}

/** The hourly variables asked for, and the canonical unit each is stored in. */
export const VARIABLES = [
  { name: 'temperature_2m', field: 'temperature_c', unit: '°C' },
  { name: 'relative_humidity_2m', field: 'relative_humidity', unit: '%' },
  { name: 'shortwave_radiation', field: 'shortwave_w_m2', unit: 'W/m²' },
  { name: 'precipitation', field: 'precipitation_mm', unit: 'mm' },
  { name: 'wind_speed_10m', field: 'wind_speed_m_s', unit: 'm/s' },
] as const;

export const MAX_PAST_DAYS = 92;
export const MAX_FORECAST_DAYS = 16;
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
const HOUR_MS = 3_600_000;

/** The request URL: WEATHER_URL as a service root (…/v1/forecast is added) or the forecast endpoint itself. */
export function weatherUrl(base: string, r: WeatherRequest): URL {
  const url = new URL(base);
  if (!/\/forecast\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/forecast`;
  const q = url.searchParams;
  q.set('latitude', String(r.latitude));
  q.set('longitude', String(r.longitude));
  q.set('hourly', VARIABLES.map((v) => v.name).join(','));
  q.set('past_days', String(r.pastDays));
  q.set('forecast_days', String(r.forecastDays));
  q.set('timezone', 'GMT');
  q.set('timeformat', 'iso8601');
  q.set('temperature_unit', 'celsius');
  q.set('wind_speed_unit', 'ms');
  q.set('precipitation_unit', 'mm');
  return url;
}

/** A host and path to name the service in answers and logs, without its query (which could carry a key). */
export function describeService(base: string): string {
  try {
    const u = new URL(base);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'the configured weather service';
  }
}

export async function fetchWeather(base: string, r: WeatherRequest, options: ClientOptions): Promise<WeatherAnswer> {
  let url: URL;
  try {
    url = weatherUrl(base, r);
  } catch {
    throw new WeatherFailure('unavailable', 'weather_not_configured', `WEATHER_URL (${base}) is not a URL.`);
  }
  const where = describeService(base);
  const signal = AbortSignal.timeout(options.timeoutMs);
  let text: string;
  let status: number;
  try {
    const res = await fetch(url, { signal, headers: { accept: 'application/json' } });
    status = res.status;
    text = await readCapped(res, options.maxBytes ?? DEFAULT_MAX_BYTES, where);
  } catch (err) {
    if (err instanceof WeatherFailure) throw err;
    if (signal.aborted)
      throw new WeatherFailure(
        'unavailable',
        'weather_timeout',
        `The weather service at ${where} did not answer within ${options.timeoutMs} ms.`,
      );
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new WeatherFailure('unavailable', 'weather_unreachable', `The weather service at ${where} could not be reached (${cause}).`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new WeatherFailure(
      'bad_answer',
      status >= 400 ? 'weather_upstream_error' : 'weather_bad_answer',
      `The weather service at ${where} answered ${status} with something that is not JSON.`,
    );
  }
  if (status < 200 || status >= 300) {
    const reason =
      typeof (body as { reason?: unknown })?.reason === 'string' ? `: ${(body as { reason: string }).reason.slice(0, 300)}` : '';
    throw new WeatherFailure('bad_answer', 'weather_upstream_error', `The weather service at ${where} answered ${status}${reason}.`);
  }
  return parseAnswer(body, where);
}

async function readCapped(res: Response, maxBytes: number, where: string): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel();
    throw new WeatherFailure('bad_answer', 'weather_answer_too_large', `The weather service at ${where} sent more than ${maxBytes} bytes.`);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new WeatherFailure(
        'bad_answer',
        'weather_answer_too_large',
        `The weather service at ${where} sent more than ${maxBytes} bytes.`,
      );
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const bad = (where: string, what: string) =>
  new WeatherFailure('bad_answer', 'weather_bad_answer', `The weather service at ${where} ${what}.`);

/** An Open-Meteo answer to hours in canonical units; anything not shaped like one is a bad answer. */
export function parseAnswer(body: unknown, where = 'the weather service'): WeatherAnswer {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw bad(where, 'answered JSON that is not an object');
  const b = body as Record<string, unknown>;
  const hourly = b.hourly as Record<string, unknown> | undefined;
  if (!hourly || typeof hourly !== 'object' || !Array.isArray(hourly.time)) throw bad(where, 'answered without hourly.time');
  const times = hourly.time as unknown[];
  if (times.length > (MAX_PAST_DAYS + MAX_FORECAST_DAYS + 2) * 24)
    throw bad(where, `answered ${times.length} hours, more than were asked for`);
  const offset = b.utc_offset_seconds === undefined ? 0 : b.utc_offset_seconds;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || Math.abs(offset) > 18 * 3600)
    throw bad(where, 'answered a utc_offset_seconds that is not a whole number of seconds');
  const atMs = times.map((t, i) => {
    let ms: number;
    if (typeof t === 'number' && Number.isInteger(t)) ms = t * 1000;
    else if (typeof t === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(t)) ms = Date.parse(`${t}:00Z`) - offset * 1000;
    else throw bad(where, `answered hourly.time[${i}] = ${JSON.stringify(t)?.slice(0, 40)}, not a time`);
    if (!Number.isFinite(ms)) throw bad(where, `answered hourly.time[${i}] = ${JSON.stringify(t)}, not a time`);
    return ms;
  });
  for (let i = 1; i < atMs.length; i++) {
    if (atMs[i]! - atMs[i - 1]! !== HOUR_MS)
      throw bad(
        where,
        atMs[i]! <= atMs[i - 1]!
          ? `answered hourly.time[${i}] (${String(times[i])}) not after the hour before it (a local clock change? the box asks for GMT)`
          : `answered hourly.time[${i}] (${String(times[i])}) more than an hour after the one before it`,
      );
  }
  const units = (b.hourly_units ?? {}) as Record<string, unknown>;
  const conversions: string[] = [];
  const columns = VARIABLES.map((v) => {
    const values = hourly[v.name];
    if (values === undefined) return atMs.map(() => null);
    if (!Array.isArray(values) || values.length !== atMs.length)
      throw bad(where, `answered hourly.${v.name} with ${Array.isArray(values) ? values.length : 'no'} values for ${atMs.length} hours`);
    const unitText = typeof units[v.name] === 'string' ? (units[v.name] as string) : v.unit;
    let convert = (x: number) => x;
    if (unitText !== v.unit) {
      const from = unitBySymbol(unitText) ?? parseUnit(unitText);
      const c = from && conversion(from, v.unit);
      if (!c) throw bad(where, `answered ${v.name} in '${unitText.slice(0, 20)}', which cannot be converted to ${v.unit}`);
      if (!c.identity) conversions.push(`${v.name}: ${c.label}`);
      convert = c.apply;
    }
    return values.map((x, i) => {
      if (x === null) return null;
      if (typeof x !== 'number' || !Number.isFinite(x))
        throw bad(where, `answered hourly.${v.name}[${i}] = ${JSON.stringify(x)?.slice(0, 40)}, not a number`);
      return convert(x);
    });
  });
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
  return {
    hours: atMs.map((ms, i) => ({
      atMs: ms,
      temperature_c: columns[0]![i]!,
      relative_humidity: columns[1]![i]!,
      shortwave_w_m2: columns[2]![i]!,
      precipitation_mm: columns[3]![i]!,
      wind_speed_m_s: columns[4]![i]!,
    })),
    conversions,
    latitude: num(b.latitude),
    longitude: num(b.longitude),
    elevation: num(b.elevation),
  };
}
