import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on loopback that answers like Open-Meteo's /v1/forecast
 * (the shape of its documented JSON answer: latitude, longitude, generationtime_ms,
 * utc_offset_seconds, timezone, timezone_abbreviation, elevation, hourly_units,
 * hourly), or fails the ways a service fails. Tests set `mode` between requests.
 */
export type FakeMode =
  | 'ok'
  /** A fixed answer (e.g. a fixture), whatever was asked. */
  | 'fixed'
  /** 400 with Open-Meteo's error body. */
  | 'error'
  /** 500 with an HTML page. */
  | 'html-500'
  /** 200 with text that is not JSON. */
  | 'garbage'
  /** Accepts the request and never answers. */
  | 'hang'
  /** Sends headers and part of the body, then stalls. */
  | 'stall'
  /** A body far larger than any answer. */
  | 'huge';

export interface FakeWeather {
  url: string;
  mode: FakeMode;
  /** Answer for mode 'fixed'. */
  fixed: unknown;
  /** "Today" of the fake service (UTC date): hours run from today − past_days to today + forecast_days. */
  today: string;
  /** Added to every temperature: a later refresh can answer other values for the same hours. */
  shift: number;
  requests: URL[];
  close(): Promise<void>;
}

/** A smooth, checkable day: 10 °C at night to 16 °C mid-afternoon (UTC), radiation by day, 0.2 mm rain at 06:00. */
export function fakeHour(ms: number, shift = 0) {
  const hour = new Date(ms).getUTCHours();
  return {
    temperature_2m: Math.round((13 + 3 * Math.sin(((hour - 9) / 24) * 2 * Math.PI) + shift) * 10) / 10,
    relative_humidity_2m: 80 - hour,
    shortwave_radiation: hour >= 7 && hour < 17 ? 100 * (5 - Math.abs(12 - hour)) : 0,
    precipitation: hour === 6 ? 0.2 : 0,
    wind_speed_10m: 3 + (hour % 4),
  };
}

export function fakeAnswer(q: URLSearchParams, today: string, shift = 0) {
  const past = Number(q.get('past_days') ?? 0);
  const ahead = Number(q.get('forecast_days') ?? 7);
  const start = Date.parse(`${today}T00:00:00Z`) - past * 86_400_000;
  const hours = (past + ahead) * 24;
  const vars = (q.get('hourly') ?? '').split(',').filter(Boolean);
  const time: string[] = [];
  const hourly: Record<string, unknown[]> = { time };
  for (const v of vars) hourly[v] = [];
  for (let i = 0; i < hours; i++) {
    const ms = start + i * 3_600_000;
    time.push(new Date(ms).toISOString().slice(0, 16));
    const values = fakeHour(ms, shift) as Record<string, number>;
    for (const v of vars) hourly[v]!.push(values[v] ?? null);
  }
  return {
    latitude: Number(q.get('latitude')),
    longitude: Number(q.get('longitude')),
    generationtime_ms: 0.05,
    utc_offset_seconds: 0,
    timezone: 'GMT',
    timezone_abbreviation: 'GMT',
    elevation: 3,
    hourly_units: {
      time: 'iso8601',
      temperature_2m: '°C',
      relative_humidity_2m: '%',
      shortwave_radiation: 'W/m²',
      precipitation: 'mm',
      wind_speed_10m: q.get('wind_speed_unit') === 'ms' ? 'm/s' : 'km/h',
    },
    hourly,
  };
}

export async function startFakeWeather(t: { teardown(fn: () => unknown): void }, today = '2026-03-30'): Promise<FakeWeather> {
  const open = new Set<ServerResponse>();
  const fake = { mode: 'ok' as FakeMode, fixed: null as unknown, today, shift: 0, requests: [] as URL[] };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    fake.requests.push(url);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname !== '/v1/forecast') return json(404, { error: true, reason: 'Not Found' });
    switch (fake.mode) {
      case 'ok':
        return json(200, fakeAnswer(url.searchParams, fake.today, fake.shift));
      case 'fixed':
        return json(200, fake.fixed);
      case 'error':
        return json(400, { error: true, reason: "Parameter 'latitude' and 'longitude' must have the same number of elements" });
      case 'html-500':
        res.writeHead(500, { 'content-type': 'text/html' });
        return res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"latitude": 52.0, "hourly": {"time": [');
      case 'hang':
        open.add(res);
        return;
      case 'stall':
        open.add(res);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"latitude": 52.0, ');
        return;
      case 'huge': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        let sent = 0;
        const push = () => {
          while (sent < 40) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', push);
          }
          res.end('{}');
        };
        res.on('error', () => {});
        return push();
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    for (const r of open) r.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.teardown(close);
  return Object.assign(fake, { url: `http://127.0.0.1:${port}`, close });
}
