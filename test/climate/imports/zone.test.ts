import t from 'tap';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startServer, createTree, dbRows } from '../../helpers/server.js';
import { climateCsv, form } from './helpers.js';

/**
 * What is stored must not depend on the process time zone: the same typed
 * points, CSV import and hourly import run in child processes under TZ=UTC and
 * TZ=America/New_York, and the stored UTC instants and answered local times
 * must be the same fixed values.
 */
async function scenario(): Promise<unknown> {
  const cleanups: (() => unknown)[] = [];
  try {
    const s = await startServer({ teardown: (fn) => cleanups.push(fn) });
    const tree = await createTree(s, { timeZone: 'Europe/Amsterdam' });
    const C = `${tree.cyclePath}/climate`;
    await s.request('POST', C, {
      key: tree.adminKey,
      body: {
        points: [
          { metric: 'co2', value: 500, at: '2026-10-25T02:30' },
          { metric: 'co2', value: 501, at: '2026-03-29T03:00' },
        ],
      },
    });
    await s.request('POST', `${C}/csv`, { key: tree.adminKey, raw: form(climateCsv(4, { start: '2026-10-25T01:50' }), 'autumn.csv') });
    const hourly = await createTree(s, { timeZone: 'America/Sao_Paulo' });
    await s.request('POST', `${hourly.cyclePath}/climate/file`, {
      key: hourly.adminKey,
      raw: form(climateCsv(24, { start: '2026-01-10T23:00' }), 'sp.csv'),
    });
    const stored = await dbRows(
      s,
      'SELECT metric, at_utc, value FROM climate_readings WHERE metric IN (?, ?) ORDER BY cycle_id, metric, at_utc',
      'co2',
      'air_temperature',
    );
    const answered = (await s.request('GET', `${C}?metric=co2`, { key: tree.adminKey })).body.items.map((i: any) => i.at);
    return { stored, answered };
  } finally {
    for (const fn of cleanups.reverse()) await fn();
  }
}

if (process.env.CLIMATE_ZONE_CHILD) {
  process.stdout.write('\n' + JSON.stringify(await scenario()) + '\n');
} else {
  const run = (TZ: string) => {
    const out = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, TZ, CLIMATE_ZONE_CHILD: '1', TAP: '0' },
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(out.trim().split('\n').pop()!);
  };
  const utc = run('UTC');
  const ny = run('America/New_York');
  t.same(ny, utc, 'the same under TZ=UTC and TZ=America/New_York');
  t.same(
    utc.answered,
    [
      '2026-10-25T02:30:00+02:00',
      '2026-10-25T02:05:00+02:00',
      '2026-10-25T02:00:00+02:00',
      '2026-10-25T01:55:00+02:00',
      '2026-10-25T01:50:00+02:00',
      '2026-03-29T03:00:00+02:00',
    ],
    'answered on the greenhouse clock, summer offsets before the autumn change',
  );
  t.ok(
    utc.stored.some((r: any) => r.at_utc === '2026-10-25T00:30:00.000Z' && r.value === 500),
    'typed 02:30 in autumn is the summer instant',
  );
  t.ok(utc.stored.some((r: any) => r.at_utc === '2026-03-29T01:00:00.000Z' && r.value === 501));
  // São Paulo has no summer time since 2019: 23:00 local on 10 January is 02:00 UTC on the 11th.
  t.ok(
    utc.stored.some((r: any) => r.metric === 'air_temperature' && r.at_utc === '2026-01-11T02:00:00.000Z'),
    'hourly values on the greenhouse clock',
  );
}
