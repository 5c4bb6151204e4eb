// `npm run bench forecast-speed`: GET {cycle}/backtest and GET {cycle}/weeks/{week} on a 45-week
// cycle with a year of hourly climate (5 metrics), a walk, a truss count and a fruit mass every week,
// two picks a week once harvest begins and daily irrigation; each timed over HTTP (median of many
// runs) against reading the same rows with one SQL query each (prepared, better-sqlite3) in the same
// run. Goals: backtest under 200 ms, week read under 20 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DateTime } from 'luxon';
import { createApp } from '../src/app.js';
import { createLogger } from '../src/log.js';
import { SettableClock } from '../src/clock.js';
import { dateOfDay, dayNumber } from '../src/time/days.js';
import { addWeeks, parseWeek } from '../src/time/weeks.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';
const ZONE = 'Europe/Amsterdam';
const WEEKS = 45;
const START = '2025-03-03';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};

async function timed(runs: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

export async function runForecastSpeedBench(options: { runs?: number } = {}) {
  const runs = options.runs ?? Number(process.env.BENCH_RUNS ?? 15);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-forecast-speed-'));
  const startDay = dayNumber(START);
  const clock = new SettableClock(
    DateTime.fromISO(dateOfDay(startDay + 7 * WEEKS), { zone: ZONE })
      .plus({ hours: 8 })
      .toMillis(),
  );
  const app = await createApp({
    config: { adminToken: TOKEN, logLevel: 'error', dataDir, diskReserve: 0, scoringThreads: 0 },
    env: {},
    logger: createLogger('error', {}, (line) => console.error(line)),
    validateResponses: false,
    clock,
  });
  const server = await app.listen(0, '127.0.0.1');
  // The baselines run in this process and hold the event loop for seconds: keep the client's idle sockets open meanwhile.
  server.keepAliveTimeout = 120_000;
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  let key = '';
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(base + url, {
      method,
      headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : { authorization: `Bearer ${TOKEN}` }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  try {
    const org = await call('POST', '/api/organizations', { name: 'Speed' });
    key = org.key.api_key;
    const o = `/api/organizations/${org.organization_id}`;
    const farm = await call('POST', `${o}/farms`, { name: 'Farm' });
    const gh = await call('POST', `${o}/farms/${farm.farm_id}/greenhouses`, { name: 'GH', time_zone: ZONE, latitude: 52, longitude: 4.5 });
    const ghPath = `${o}/farms/${farm.farm_id}/greenhouses/${gh.greenhouse_id}`;
    const row = await call('POST', `${ghPath}/rows`, { name: 'Row', plant_count: 250 });
    const cycle = await call('POST', `${ghPath}/rows/${row.row_id}/cycles`, {
      name: 'Speed',
      started_on: START,
      plants_per_m2: 2.5,
      stems_per_m2: 3.3,
    });
    const c = `${ghPath}/rows/${row.row_id}/cycles/${cycle.cycle_id}`;

    // A year of hourly climate from eight weeks before the start.
    const metrics = ['air_temperature', 'relative_humidity', 'co2', 'global_radiation', 'par'];
    const t0 = Date.parse(`${dateOfDay(startDay - 56)}T00:00:00Z`);
    let points: { metric: string; at: string; value: number }[] = [];
    for (let hr = 0; hr < 365 * 24; hr++) {
      const ms = t0 + hr * 3_600_000;
      const h = new Date(ms).getUTCHours();
      const sun = Math.max(0, Math.sin(((h - 6) / 12) * Math.PI));
      const values = [19 + 4 * sun, 80 - 15 * sun, 450 + 300 * sun, 500 * sun, 900 * sun];
      for (const [i, m] of metrics.entries())
        points.push({ metric: m, at: new Date(ms).toISOString(), value: Math.round(values[i]! * 10) / 10 });
      if (points.length >= 4_000) {
        await call('POST', `${c}/climate`, { points });
        points = [];
      }
    }
    if (points.length) await call('POST', `${c}/climate`, { points });

    let trusses = 0;
    for (let wk = 0; wk < WEEKS; wk++) {
      const monday = startDay + 7 * wk;
      trusses += 1.1;
      const rows = [];
      for (let p = 1; p <= 10; p++) {
        const top = Math.max(1, Math.round(trusses + (p % 3) * 0.3));
        for (let t = 1; t <= top; t++) rows.push({ plant: `P${p}`, truss: t, fruits: 10 + (t % 4) });
      }
      await call('PUT', `${c}/truss-counts`, { counted_on: dateOfDay(monday), rows });
      await call('POST', `${c}/fruit-mass`, { week: dateOfDay(monday), green_g: 9, turning_g: 9.5, red_g: 10 });
      if (wk >= 9) {
        await call('POST', `${c}/harvests`, { harvested_on: dateOfDay(monday), week: dateOfDay(monday), kg: 40 + (wk % 5) });
        await call('POST', `${c}/harvests`, { harvested_on: dateOfDay(monday + 4), week: dateOfDay(monday), kg: 30 + (wk % 3) });
      }
      for (let d = 0; d < 7; d++)
        await call('POST', `${c}/irrigation`, { at: `${dateOfDay(monday + d)}T10:00:00`, volume_l: 600, drain_l: 150, ec_in: 3 });
    }
    // A scored walk every week: written as the walks feature stores one (scoring a video here would time the detector).
    const services = app.services;
    const week0 = parseWeek(START)!;
    await services.store.write({ keyId: null, label: 'bench' }, async (w) => {
      for (let wk = 0; wk < WEEKS; wk++)
        await w.insert(
          'walks' as never,
          {
            organization_id: org.organization_id,
            farm_id: farm.farm_id,
            greenhouse_id: gh.greenhouse_id,
            row_id: row.row_id,
            cycle_id: cycle.cycle_id,
            week: addWeeks(week0, wk).label,
            source: 'cycle_video',
            example_key: null,
            status: 'done',
            progress: 1,
            mode: 'video',
            options: '{}',
            detector: 'builtin',
            error: null,
            idempotency_key: null,
            request_hash: `bench-${wk}`,
            created_by_key_id: null,
            attempts: 1,
            started_at: null,
            finished_at: null,
            count_green: 300,
            count_turning: 80,
            count_red: 60,
            count_total: 440,
            corrected_green: 300,
            corrected_turning: 80,
            corrected_red: 60,
            corrected_total: 440,
            result: null,
          } as never,
        );
    });

    // The baseline: the same rows, one prepared SQL query each.
    // The bench runs on SQLite (a box): its own connection, for the prepared baseline.
    if (services.engine.kind !== 'sqlite' || !services.engine.sqlite) throw new Error('bench forecast-speed runs on SQLite');
    const db = services.engine.sqlite;
    const id = cycle.cycle_id;
    const key0 = (db.prepare('select key from climate_cycle_keys where cycle_id = ?').get(id) as { key: number }).key;
    const codes = (
      db.prepare(`select code from climate_metric_codes where metric in ('air_temperature','substrate_temperature')`).all() as {
        code: number;
      }[]
    ).map((x) => x.code);
    const q = {
      cycle: db.prepare('select * from cycles where id = ?'),
      greenhouse: db.prepare('select * from greenhouses where id = ?'),
      row: db.prepare('select * from rows where id = ?'),
      harvests: db.prepare('select * from harvests where cycle_id = ?'),
      counts: db.prepare('select * from truss_counts where cycle_id = ?'),
      countRows: db.prepare('select * from truss_count_rows where cycle_id = ?'),
      walks: db.prepare(
        'select id, week, count_green, count_turning, count_red, corrected_green, corrected_turning, corrected_red from walks where cycle_id = ?',
      ),
      masses: db.prepare('select * from fruit_masses where cycle_id = ?'),
      temps: db.prepare(`select at_ms, metric_code, value from climate_points where cycle_key = ? and metric_code in (${codes.join(',')})`),
      weather: db.prepare('select * from weather_hours where greenhouse_id = ?'),
      weekClimate: db.prepare('select at_ms, metric_code, value from climate_points where cycle_key = ? and at_ms >= ? and at_ms < ?'),
      weekIrrigation: db.prepare('select * from irrigation_entries where cycle_id = ? and at >= ? and at < ?'),
      forecasts: db.prepare('select * from forecasts where cycle_id = ?'),
      notes: db.prepare('select * from week_notes where cycle_id = ?'),
    };
    const rowsRead = { harvests: 0, truss_count_rows: 0, climate_points: 0 };
    const backtestRows = () => {
      q.cycle.all(id);
      q.greenhouse.all(gh.greenhouse_id);
      q.row.all(row.row_id);
      rowsRead.harvests = q.harvests.all(id).length;
      q.counts.all(id);
      rowsRead.truss_count_rows = q.countRows.all(id).length;
      q.walks.all(id);
      q.masses.all(id);
      rowsRead.climate_points = q.temps.all(key0).length;
      q.weather.all(gh.greenhouse_id);
    };
    const mid = addWeeks(week0, 30);
    const midFrom = DateTime.fromISO(mid.start, { zone: ZONE }).toMillis();
    const midTo = DateTime.fromISO(mid.start, { zone: ZONE }).plus({ weeks: 1 }).toMillis();
    const weekRows = () => {
      backtestRows();
      q.weekClimate.all(key0, midFrom, midTo);
      q.weekIrrigation.all(id, new Date(midFrom).toISOString(), new Date(midTo).toISOString());
      q.forecasts.all(id);
      q.notes.all(id);
    };

    // Cold: the first read right after a write, which moves the change log, so the cycle's records are read again and
    // the replay made again from the first week they differ in (docs/forecast.md, "Speed"); warm: the same read again,
    // which finds the replay kept since that write. Three writes, from the cheapest to the dearest for the replay: a
    // week note (no week replayed), a harvest typed for today (this week's run), an edit of the season's first
    // harvest (every week after it: the worst case).
    const today = dateOfDay(startDay + 7 * WEEKS);
    // Harvests are listed by week: the first one is the season's first.
    const firstHarvest = ((await call('GET', `${c}/harvests?limit=1`)) as { items: { harvest_id: string }[] }).items[0]!;
    let n = 0;
    const writes = {
      note: () => call('POST', `${c}/weeks/${mid.label}`, { n: n++ }),
      today: () => call('POST', `${c}/harvests`, { harvested_on: today, week: today, kg: 0.5 + (n++ % 7) / 10 }),
      early: () => call('PATCH', `${c}/harvests/${firstHarvest.harvest_id}`, { kg: 40 + (n++ % 7) / 10 }),
    };
    type WriteKind = keyof typeof writes;
    // Wall time, and the process's CPU time (user + system: the server and the client both live here), which a
    // machine shared with other work inflates far less than wall time.
    const cpuMs = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const coldWarm = async (url: string, kind: WriteKind) => {
      const cold: number[] = [];
      const warm: number[] = [];
      const coldCpu: number[] = [];
      const warmCpu: number[] = [];
      await call('GET', url);
      for (let i = 0; i < runs; i++) {
        await writes[kind]();
        let t0 = performance.now();
        let c0 = cpuMs();
        await call('GET', url);
        cold.push(performance.now() - t0);
        coldCpu.push(cpuMs() - c0);
        t0 = performance.now();
        c0 = cpuMs();
        await call('GET', url);
        warm.push(performance.now() - t0);
        warmCpu.push(cpuMs() - c0);
      }
      return { cold: median(cold), warm: median(warm), coldCpu: median(coldCpu), warmCpu: median(warmCpu) };
    };
    const timedCpu = (n: number, fn: () => unknown) => {
      const xs: number[] = [];
      for (let i = 0; i < n; i++) {
        const c0 = cpuMs();
        fn();
        xs.push(cpuMs() - c0);
      }
      return median(xs);
    };
    const baselineBacktest = await timed(runs * 4, backtestRows);
    const backtest = await coldWarm(`${c}/backtest`, 'today');
    const backtestEarly = await coldWarm(`${c}/backtest`, 'early');
    const baselineWeek = await timed(runs * 4, weekRows);
    const weekRead = await coldWarm(`${c}/weeks/${mid.label}`, 'today');
    const weekReadNote = await coldWarm(`${c}/weeks/${mid.label}`, 'note');
    const weekReadEarly = await coldWarm(`${c}/weeks/${mid.label}`, 'early');
    const forecast = await coldWarm(`${c}/forecast`, 'today');
    const writeMs = await timed(runs, writes.today);
    const baselineBacktestCpu = timedCpu(runs * 4, backtestRows);
    const baselineWeekCpu = timedCpu(runs * 4, weekRows);
    const bt = await call('GET', `${c}/backtest`);
    const figures = {
      weeks: WEEKS,
      replayedWeeks: bt.weeks.length,
      climatePoints: 365 * 24 * metrics.length,
      temperatureRowsRead: rowsRead.climate_points,
      trussCountRows: rowsRead.truss_count_rows,
      harvests: rowsRead.harvests,
      baselineBacktestMs: baselineBacktest,
      backtestColdMs: backtest.cold,
      backtestWarmMs: backtest.warm,
      backtestColdRatio: backtest.cold / baselineBacktest,
      backtestColdAfterEarlyEditMs: backtestEarly.cold,
      backtestGoalMs: 200,
      baselineWeekReadMs: baselineWeek,
      weekReadColdMs: weekRead.cold,
      weekReadWarmMs: weekRead.warm,
      weekReadColdRatio: weekRead.cold / baselineWeek,
      weekReadWarmRatio: weekRead.warm / baselineWeek,
      weekReadColdAfterNoteMs: weekReadNote.cold,
      weekReadColdAfterEarlyEditMs: weekReadEarly.cold,
      weekReadColdAfterEarlyEditRatio: weekReadEarly.cold / baselineWeek,
      weekReadGoalMs: 20,
      cpu: {
        baselineBacktestMs: baselineBacktestCpu,
        backtestColdMs: backtest.coldCpu,
        backtestWarmMs: backtest.warmCpu,
        baselineWeekReadMs: baselineWeekCpu,
        weekReadColdMs: weekRead.coldCpu,
        weekReadWarmMs: weekRead.warmCpu,
        backtestColdAfterEarlyEditMs: backtestEarly.coldCpu,
        weekReadColdAfterNoteMs: weekReadNote.coldCpu,
        weekReadColdAfterEarlyEditMs: weekReadEarly.coldCpu,
      },
      loadAverage: os.loadavg()[0],
      forecastColdMs: forecast.cold,
      forecastWarmMs: forecast.warm,
      harvestWriteMs: writeMs,
    };
    const f = (x: number) => x.toFixed(1);
    console.log(
      `reading the rows with one query each: backtest's ${baselineBacktest.toFixed(2)} ms, week read's ${baselineWeek.toFixed(2)} ms\n` +
        `backtest (${figures.replayedWeeks} weeks): cold after a harvest typed for today ${f(backtest.cold)} ms = ${figures.backtestColdRatio.toFixed(2)}×, after an edit of the first harvest ${f(backtestEarly.cold)} ms, warm ${f(backtest.warm)} ms (goal < 200 ms)\n` +
        `week read: cold after a harvest typed for today ${f(weekRead.cold)} ms = ${figures.weekReadColdRatio.toFixed(2)}×, after a week note ${f(weekReadNote.cold)} ms, after an edit of the first harvest ${f(weekReadEarly.cold)} ms = ${figures.weekReadColdAfterEarlyEditRatio.toFixed(2)}×; warm ${f(weekRead.warm)} ms = ${figures.weekReadWarmRatio.toFixed(2)}× (goal < 20 ms)\n` +
        `forecast: cold ${f(forecast.cold)} ms, warm ${f(forecast.warm)} ms; a harvest's write ${f(writeMs)} ms\n` +
        `CPU time: reading the rows ${f(baselineBacktestCpu)} / ${f(baselineWeekCpu)} ms; backtest cold ${f(backtest.coldCpu)} ms (${(backtest.coldCpu / baselineBacktestCpu).toFixed(2)}×), warm ${f(backtest.warmCpu)} ms; week read cold ${f(weekRead.coldCpu)} ms (${(weekRead.coldCpu / baselineWeekCpu).toFixed(2)}×), warm ${f(weekRead.warmCpu)} ms; load average ${os.loadavg()[0].toFixed(1)}`,
    );
    return figures;
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runForecastSpeedBench();
