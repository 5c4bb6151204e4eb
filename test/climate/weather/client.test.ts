import t from 'tap';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fetchWeather, parseAnswer, weatherUrl, WeatherFailure } from '../../../src/climate/weather/client.js';
import { startFakeWeather } from '../../helpers/open-meteo.js';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/weather/${name}`, import.meta.url), 'utf8'));
const request = { latitude: 52.0, longitude: 4.3, pastDays: 2, forecastDays: 3 };

t.test('the request: hourly variables in UTC and canonical units', async (t) => {
  const u = weatherUrl('http://127.0.0.1:9/', request);
  t.equal(u.pathname, '/v1/forecast');
  t.equal(u.searchParams.get('timezone'), 'GMT');
  t.equal(u.searchParams.get('past_days'), '2');
  t.equal(u.searchParams.get('forecast_days'), '3');
  t.equal(u.searchParams.get('wind_speed_unit'), 'ms');
  t.equal(u.searchParams.get('hourly'), 'temperature_2m,relative_humidity_2m,shortwave_radiation,precipitation,wind_speed_10m');
  t.equal(weatherUrl('https://example.org/v1/forecast', request).pathname, '/v1/forecast', 'the endpoint itself is taken as it is');
  t.equal(weatherUrl('https://example.org/meteo/', request).pathname, '/meteo/v1/forecast', 'a service root under a path');
});

t.test('a recorded-shape answer across the spring clock change', async (t) => {
  const a = parseAnswer(fixture('open-meteo-gmt-dst.json'));
  t.equal(a.hours.length, 72, 'three UTC days, 24 hours each, whatever the local clock did');
  t.equal(new Date(a.hours[0]!.atMs).toISOString(), '2026-03-28T00:00:00.000Z');
  t.ok(
    a.hours.every((h, i) => i === 0 || h.atMs - a.hours[i - 1]!.atMs === 3_600_000),
    'contiguous hours',
  );
  t.same(a.conversions, ['wind_speed_10m: km/h → m/s'], 'the wind came in km/h and is stored in m/s');
  const raw = fixture('open-meteo-gmt-dst.json');
  t.equal(a.hours[5]!.wind_speed_m_s, Math.round((raw.hourly.wind_speed_10m[5] / 3.6) * 1e12) / 1e12);
  t.equal(a.hours[6]!.precipitation_mm, 0.2);
  t.equal(a.latitude, 52.52);

  // The same hours answered on a local clock (a service that ignored timezone=GMT): the skipped hour shows, and it is refused.
  t.throws(() => parseAnswer(fixture('open-meteo-local-dst.json')), {
    code: 'weather_bad_answer',
    message: /2026-03-29T03:00.*more than an hour/,
  });
});

t.test('hostile or broken answers are refused with what is wrong', async (t) => {
  const good = fixture('open-meteo-gmt-dst.json');
  const cases: [string, unknown, RegExp][] = [
    ['not an object', [1, 2], /not an object/],
    ['no hourly', { latitude: 1 }, /without hourly.time/],
    ['time not an array', { hourly: { time: 'x' } }, /without hourly.time/],
    ['a time that is no time', { hourly: { time: ['2026-03-28T00:00', 'soon'] } }, /hourly.time\[1\]/],
    ['a time with seconds and zone', { hourly: { time: ['2026-03-28T00:00:00+01:00'] } }, /hourly.time\[0\]/],
    ['time going back', { hourly: { time: ['2026-03-28T01:00', '2026-03-28T00:00'] } }, /not after the hour before/],
    ['a repeated hour', { hourly: { time: ['2026-10-25T02:00', '2026-10-25T02:00'] } }, /not after the hour before/],
    [
      'values of another length',
      { hourly: { time: ['2026-03-28T00:00', '2026-03-28T01:00'], temperature_2m: [1] } },
      /1 values for 2 hours/,
    ],
    ['a value that is text', { hourly: { time: ['2026-03-28T00:00'], temperature_2m: ['12'] } }, /temperature_2m\[0\]/],
    [
      'a unit that cannot be converted',
      { hourly_units: { temperature_2m: 'kg' }, hourly: { time: ['2026-03-28T00:00'], temperature_2m: [1] } },
      /'kg'/,
    ],
    ['an offset that is no number', { utc_offset_seconds: '3600', hourly: { time: [] } }, /utc_offset_seconds/],
    ['far too many hours', { hourly: { time: Array.from({ length: 5000 }, (_, i) => i * 3600) } }, /more than were asked/],
    ['prototype keys', JSON.parse('{"__proto__": {"hourly": {"time": []}}}'), /without hourly.time/],
  ];
  for (const [what, body, message] of cases) t.throws(() => parseAnswer(body), { code: 'weather_bad_answer', message }, what);
  // Fahrenheit and unix times are read, not refused.
  const f = parseAnswer({
    hourly_units: { temperature_2m: '°F' },
    hourly: { time: [1774656000, 1774659600], temperature_2m: [50, null] },
  });
  t.equal(f.hours[0]!.temperature_c, 10);
  t.equal(f.hours[1]!.temperature_c, null, 'a missing value stays missing');
  t.equal(new Date(f.hours[0]!.atMs).toISOString(), '2026-03-28T00:00:00.000Z');
  t.ok(good);
});

t.test('over HTTP: the loopback service and its failures', async (t) => {
  const fake = await startFakeWeather(t, '2026-03-30');
  const opts = { timeoutMs: 400 };
  const a = await fetchWeather(fake.url, request, opts);
  t.equal(a.hours.length, 5 * 24);
  t.equal(new Date(a.hours[0]!.atMs).toISOString(), '2026-03-28T00:00:00.000Z', 'two days back from the service’s today');
  t.equal(fake.requests.at(-1)!.searchParams.get('latitude'), '52');

  const failures: [string, string, string, RegExp][] = [
    ['error', 'bad_answer', 'weather_upstream_error', /answered 400: Parameter 'latitude'/],
    ['html-500', 'bad_answer', 'weather_upstream_error', /answered 500 with something that is not JSON/],
    ['garbage', 'bad_answer', 'weather_bad_answer', /not JSON/],
    ['hang', 'unavailable', 'weather_timeout', /did not answer within 400 ms/],
    ['stall', 'unavailable', 'weather_timeout', /did not answer within 400 ms/],
  ];
  for (const [mode, kind, code, message] of failures) {
    fake.mode = mode as typeof fake.mode;
    const started = Date.now();
    await t.rejects(fetchWeather(fake.url, request, opts), { kind, code, message }, mode);
    t.ok(Date.now() - started < 5000, `${mode}: gave up in time`);
  }
  fake.mode = 'huge';
  await t.rejects(fetchWeather(fake.url, request, { timeoutMs: 5000, maxBytes: 1024 * 1024 }), { code: 'weather_answer_too_large' });

  // Nothing listening.
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  await t.rejects(fetchWeather(`http://127.0.0.1:${port}`, request, opts), {
    kind: 'unavailable',
    code: 'weather_unreachable',
    message: /could not be reached \(ECONNREFUSED\)/,
  });
  await t.rejects(fetchWeather('not a url', request, opts), { code: 'weather_not_configured' });
  t.ok(new WeatherFailure('unavailable', 'x', 'y') instanceof Error);
});
