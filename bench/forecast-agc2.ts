// `npm run bench forecast-agc2`: the three compartments of ../shared/data/agc2 replayed through the
// API week by week as a grower would have entered them (bench/lib/agc2.ts says how), a forecast
// stored every Monday, and at the end the backtest per horizon against the two naive baselines.
// The constants were tuned on AICU only; Digilog and TheAutomators are held out (docs/forecast.md).
// Skips, saying why, where the season is absent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DateTime } from 'luxon';
import { createApp } from '../src/app.js';
import { createLogger } from '../src/log.js';
import { SettableClock } from '../src/clock.js';
import { dateOfDay, dayNumber, weekStartDay } from '../src/time/days.js';
import {
  agc2Missing,
  AREA_M2,
  COMPARTMENTS,
  fruitPerTrussOn,
  GUESS_FRUIT_MASS_G,
  readSeason,
  trussRows,
  weeklyFruitMass,
  ZONE,
  type Compartment,
  type Season,
} from './lib/agc2.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';
export const HELD_OUT: Compartment[] = ['Digilog', 'TheAutomators'];
export const TUNED_ON: Compartment[] = ['AICU'];

interface HorizonFigures {
  horizon: number;
  n: number;
  actual_kg: number;
  mae_kg: number | null;
  wape: number | null;
  bias_kg: number | null;
  baselines: { persistence: { mae_kg: number | null; wape: number | null }; mean_3_weeks: { mae_kg: number | null; wape: number | null } };
}

async function replaySeason(season: Season) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-agc2-'));
  const startWeek = weekStartDay(dayNumber(season.startedOn));
  const endWeek = weekStartDay(dayNumber(season.endedOn));
  const mondayMs = (week: number) => DateTime.fromISO(dateOfDay(week), { zone: ZONE }).plus({ hours: 6 }).toMillis();
  const clock = new SettableClock(mondayMs(startWeek));
  const app = await createApp({
    config: { adminToken: TOKEN, logLevel: 'silent', dataDir, diskReserve: 0, scoringThreads: 0 },
    env: {},
    logger: createLogger('silent', {}, () => {}),
    validateResponses: false,
    clock,
  });
  const server = await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  let key = '';
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(base + url, {
      method,
      headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : { authorization: `Bearer ${TOKEN}` }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text);
  };
  try {
    const org = await call('POST', '/api/organizations', { name: `AGC ${season.name}` });
    key = org.key.api_key;
    const o = `/api/organizations/${org.organization_id}`;
    const farm = await call('POST', `${o}/farms`, { name: 'Bleiswijk' });
    const gh = await call('POST', `${o}/farms/${farm.farm_id}/greenhouses`, {
      name: season.name,
      time_zone: ZONE,
      latitude: 52.0,
      longitude: 4.53,
    });
    const ghPath = `${o}/farms/${farm.farm_id}/greenhouses/${gh.greenhouse_id}`;
    const row = await call('POST', `${ghPath}/rows`, { name: 'Compartment' });
    const first = season.registrations[0]!;
    // The clearing date is known from the start: the season was planned to end then.
    const cycle = await call('POST', `${ghPath}/rows/${row.row_id}/cycles`, {
      name: `Axiany ${season.name}`,
      crop: 'tomato',
      variety: 'Axiany',
      started_on: season.startedOn,
      ended_on: season.endedOn,
      plants_per_m2: first.plantsPerM2,
      stems_per_m2: first.stemsPerM2,
      area_m2: AREA_M2,
    });
    const c = `${ghPath}/rows/${row.row_id}/cycles/${cycle.cycle_id}`;
    const mass = weeklyFruitMass(season);
    const registrations = season.registrations.filter((r) => Number.isFinite(r.trussesPerStem));
    let lastStems = first.stemsPerM2;
    const stored: { week: string; weeks: { week: string; kg: number }[] }[] = [];
    const started = performance.now();
    let requests = 0;

    // The grower's expectation before anything is weighed.
    await call('POST', `${c}/fruit-mass`, {
      week: dateOfDay(startWeek),
      green_g: GUESS_FRUIT_MASS_G,
      turning_g: GUESS_FRUIT_MASS_G,
      red_g: GUESS_FRUIT_MASS_G,
    });
    // One Monday past the last week, for its records; no forecast then.
    for (let week = startWeek; week <= endWeek + 7; week += 7) {
      clock.set(mondayMs(week));
      // Last week's records, typed on Monday morning.
      const prev = week - 7;
      if (prev >= startWeek) {
        for (const p of season.picks.filter((x) => weekStartDay(dayNumber(x.date)) === prev)) {
          await call('POST', `${c}/harvests`, { harvested_on: p.date, week: p.date, kg: p.kg });
          requests++;
        }
        const g = mass.get(prev);
        if (g !== undefined) {
          await call('POST', `${c}/fruit-mass`, { week: dateOfDay(prev), green_g: g, turning_g: g, red_g: g });
          requests++;
        }
        const fromMs = mondayMs(prev) - 6 * 3_600_000;
        const toMs = mondayMs(week) - 6 * 3_600_000;
        const points = season.slabHourly
          .filter((h) => h.ms >= fromMs && h.ms < toMs)
          .map((h) => ({ metric: 'substrate_temperature', at: new Date(h.ms).toISOString(), value: h.value }));
        if (points.length) {
          await call('POST', `${c}/climate`, { points });
          requests++;
        }
        for (const wtr of season.water.filter((x) => weekStartDay(dayNumber(x.date)) === prev && x.irrigationL > 0)) {
          await call('POST', `${c}/irrigation`, { at: `${wtr.date}T23:00:00`, volume_l: wtr.irrigationL, drain_l: wtr.drainL });
          requests++;
        }
      }
      // This week's truss count (the registration's dates are Mondays).
      for (const r of registrations.filter((x) => weekStartDay(dayNumber(x.date)) === week)) {
        const body: Record<string, unknown> = { counted_on: r.date, rows: trussRows(r.trussesPerStem, fruitPerTrussOn(season, r.date)) };
        if (r.stemsPerM2 !== lastStems) body.stems_per_m2 = lastStems = r.stemsPerM2;
        await call('PUT', `${c}/truss-counts`, body);
        requests++;
      }
      if (week > endWeek) break;
      const f = await call('POST', `${c}/forecasts?week=${dateOfDay(week)}`);
      requests++;
      stored.push({ week: f.week, weeks: f.weeks.map((x: { week: string; kg: number }) => ({ week: x.week, kg: x.kg })) });
    }
    const enteredMs = performance.now() - started;
    // The clock is on the Monday after the season: every week of it is complete.
    const t0 = performance.now();
    const backtest = await call('GET', `${c}/backtest`);
    const backtestMs = performance.now() - t0;
    // No peeking, end to end: each forecast stored on its Monday, with only that week's records in the box,
    // is what the backtest replays for that week with the whole season in it.
    let mismatches = 0;
    for (const s of stored) {
      const replayed = backtest.weeks.find((w: { week: string }) => w.week === s.week);
      for (const [h, sw] of s.weeks.entries()) if (Math.abs(replayed.forecasts[h].kg - sw.kg) > 0.002) mismatches++;
    }
    return {
      name: season.name,
      horizons: backtest.horizons as HorizonFigures[],
      storedForecasts: stored.length,
      storedMismatches: mismatches,
      requests,
      enteredS: enteredMs / 1000,
      backtestMs,
    };
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** WAPE pooled over compartments: sum of absolute errors over sum of actuals (each compartment's WAPE × its actuals). */
function pooled(results: { horizons: HorizonFigures[] }[], h: number) {
  let act = 0;
  let model = 0;
  let pers = 0;
  let mean3 = 0;
  for (const r of results) {
    const x = r.horizons[h]!;
    act += x.actual_kg;
    model += (x.wape ?? 0) * x.actual_kg;
    pers += (x.baselines.persistence.wape ?? 0) * x.actual_kg;
    mean3 += (x.baselines.mean_3_weeks.wape ?? 0) * x.actual_kg;
  }
  const best = Math.min(pers, mean3);
  return {
    horizon: h,
    wape: model / act,
    persistence: pers / act,
    mean_3_weeks: mean3 / act,
    ratio_to_better_baseline: model / best,
  };
}

export async function runForecastAgc2Bench() {
  const missing = agc2Missing();
  if (missing) {
    console.log(`skipped: ${missing}`);
    return { skipped: missing };
  }
  const results: Awaited<ReturnType<typeof replaySeason>>[] = [];
  for (const name of COMPARTMENTS) {
    const r = await replaySeason(readSeason(name));
    results.push(r);
    console.log(
      `\n${name}${TUNED_ON.includes(name) ? ' (tuned on)' : ' (held out)'}: ${r.storedForecasts} weekly forecasts stored, ${r.storedMismatches} differ from the backtest's replay; ${r.requests} requests in ${r.enteredS.toFixed(1)} s; backtest ${r.backtestMs.toFixed(0)} ms`,
    );
    console.log('h  n   actual_kg  wape   persistence  mean_3_weeks  bias_kg');
    for (const h of r.horizons)
      console.log(
        `${h.horizon}  ${String(h.n).padEnd(3)} ${h.actual_kg.toFixed(0).padStart(9)}  ${h.wape?.toFixed(3)}  ${h.baselines.persistence.wape?.toFixed(3).padStart(11)}  ${h.baselines.mean_3_weeks.wape?.toFixed(3).padStart(12)}  ${h.bias_kg?.toFixed(1)}`,
      );
  }
  const held = results.filter((r) => HELD_OUT.includes(r.name));
  const heldOut = Array.from({ length: 8 }, (_, h) => pooled(held, h));
  console.log(`\nheld out (${HELD_OUT.join(', ')}), pooled: model WAPE / better baseline WAPE`);
  for (const p of heldOut)
    console.log(
      `h${p.horizon}: ${p.wape.toFixed(3)} / ${Math.min(p.persistence, p.mean_3_weeks).toFixed(3)} = ${p.ratio_to_better_baseline.toFixed(2)}×${p.horizon === 0 || p.horizon === 3 ? (p.ratio_to_better_baseline <= 0.8 ? '  (goal ≤ 0.8: met)' : '  (goal ≤ 0.8: not met)') : ''}`,
    );
  const all = Array.from({ length: 8 }, (_, h) => pooled(results, h));
  return {
    tunedOn: TUNED_ON,
    heldOut: HELD_OUT,
    heldOutPooled: heldOut,
    allPooled: all,
    compartments: results.map((r) => ({
      name: r.name,
      storedMismatches: r.storedMismatches,
      backtestMs: r.backtestMs,
      h0: r.horizons[0],
      h3: r.horizons[3],
    })),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runForecastAgc2Bench();
