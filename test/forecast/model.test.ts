import t from 'tap';
import { MODEL_CONSTANTS as C, type ModelConstants } from '../../src/forecast/model/constants.js';
import { asOf, type CycleHistory, type HarvestInput } from '../../src/forecast/model/inputs.js';
import {
  cumulativeDevelopment,
  developmentDays,
  developmentRate,
  ripeningDay,
  temperatureSeries,
} from '../../src/forecast/model/development.js';
import { trussCohorts } from '../../src/forecast/model/cohorts.js';
import { pickCalendar } from '../../src/forecast/model/picks.js';
import { rawForecast } from '../../src/forecast/model/raw.js';
import { backtestStats, baselinesAt, quantile, replay } from '../../src/forecast/model/replay.js';
import { firstChangedWeek } from '../../src/forecast/model/changes.js';
import { dateOfDay, dayNumber, isoWeekday, weekStartDay } from '../../src/time/days.js';

const day = dayNumber;
const monday = (d: string) => weekStartDay(dayNumber(d));

t.test('day numbers', async (t) => {
  t.equal(dateOfDay(day('2026-02-11')), '2026-02-11');
  t.equal(dateOfDay(monday('2026-02-11')), '2026-02-09', 'Wednesday → its Monday');
  t.equal(dateOfDay(monday('2026-02-15')), '2026-02-09', 'Sunday is still in the ISO week');
  t.equal(dateOfDay(monday('2021-01-03')), '2020-12-28', 'across the year');
  t.equal(isoWeekday(day('2026-02-09')), 1);
  t.equal(isoWeekday(day('2026-02-15')), 7);
  t.ok(Number.isNaN(day('2026-2-1')));
});

t.test('development: degree-days above a base, capped', async (t) => {
  const c: ModelConstants = { ...C, thermalTimeDegreeDays: 950, baseTemperatureC: 5, maxTemperatureC: 28 };
  t.equal(developmentRate(24, c), 19 / 950);
  t.equal(developmentRate(4, c), 0, 'no development below the base');
  t.equal(developmentRate(35, c), developmentRate(28, c), 'no faster above the cap');
  t.equal(developmentDays(24, c), 50);
  // A constant 24 °C: a fruit flowering at the start of day 0 is ripe 50 days later.
  const series = temperatureSeries([], [], 0, 200, 0, { ...c, defaultTemperatureC: 24 });
  const D = cumulativeDevelopment(series, c);
  t.equal(Math.round(ripeningDay(D, 0, 10)! * 1e6) / 1e6, 60);
  t.equal(ripeningDay(D, 0, 180), null, 'ripens after the series ends');
  // Warmer days ripen sooner.
  const warm = temperatureSeries(
    Array.from({ length: 100 }, (_, i) => ({ day: i, meanC: 26, hours: 24, source: 'air_temperature' as const })),
    [],
    0,
    200,
    100,
    c,
  );
  t.ok(ripeningDay(cumulativeDevelopment(warm, c), 0, 10)! < 60);
});

t.test('temperature series: stored days, gaps, the days ahead', async (t) => {
  const stored = [
    { day: 10, meanC: 18, hours: 24, source: 'air_temperature' as const },
    { day: 12, meanC: 22, hours: 24, source: 'air_temperature' as const },
    { day: 13, meanC: 24, hours: 20, source: 'substrate_temperature' as const },
  ];
  const s = temperatureSeries(stored, [], 8, 20, 14, { ...C, recentTemperatureDays: 2 });
  t.same(
    [...s.t],
    [18, 18, 18, 18, 22, 24, 23, 23, 23, 23, 23, 23, 23],
    'before: the first; a gap: the day before; ahead: the recent mean',
  );
  t.equal(s.source, 'air_temperature', 'the source most days rest on');
  t.same(s.ahead, { meanC: 23, basis: 'recent_mean', days: 2 });
  const none = temperatureSeries([], [], 0, 3, 2, C);
  t.same([...none.t], [20, 20, 20, 20]);
  t.equal(none.source, 'default');
  t.equal(none.ahead.basis, 'default');
  // A stored day at or after asOf is not known yet.
  const late = temperatureSeries([{ day: 5, meanC: 30, hours: 24, source: 'air_temperature' }], [], 0, 6, 5, C);
  t.equal(late.storedDays, 0);
  t.equal(late.t[5], 20);
  // A day ahead is not cooler than its outdoor forecast (plus 1 °C); a cool forecast changes nothing.
  const out = temperatureSeries(
    [{ day: 9, meanC: 20, hours: 24, source: 'air_temperature' }],
    [
      { day: 11, meanC: 25, fetchedDay: 10 },
      { day: 12, meanC: 10, fetchedDay: 10 },
    ],
    9,
    12,
    10,
    C,
  );
  t.same([...out.t], [20, 20, 26, 20]);
  t.equal(out.outdoorAdjustedDays, 1);
});

t.test('truss cohorts', async (t) => {
  const c = { ...C, firstCountSpreadDays: 14, trussRateWindowDays: 14, newStemLagDays: 0 };
  const counts = [
    { day: 100, trussesPerStem: 2, fruitPerTruss: 10, stemsPerM2: null },
    { day: 107, trussesPerStem: 3, fruitPerTruss: 12, stemsPerM2: 4 },
    { day: 114, trussesPerStem: 4.5, fruitPerTruss: null, stemsPerM2: null },
  ];
  const plan = trussCohorts(counts, 3, 128, c);
  t.equal(plan.reason, null);
  t.same(
    plan.cohorts.map((k) => [k.from, k.to, k.trussesPerM2, k.fruitPerTruss, k.projected]),
    [
      [87, 100, 6, 10, false],
      [101, 106, 3 * (6 / 7), 12, false],
      [107, 107, 4 * (1 / 7), 12, false],
      [108, 114, 6, 12, false],
      [115, 128, 10, 12, true],
    ],
    "the first count's trusses over the 14 days before it at the cycle's 3 stems/m²; a count date's 4 stems/m² holds from that day on; then (4.5 − 2) trusses in 14 days, kept up",
  );
  t.equal(plan.trussesPerStemPerWeek, 1.25);
  t.match(trussCohorts([], 3, 128, c).reason, /no truss count/);
  t.match(
    trussCohorts(
      counts.map((x) => ({ ...x, stemsPerM2: null })),
      null,
      128,
      c,
    ).reason,
    /stem density/,
  );
  // New stems set trusses only after the lag.
  const lagged = trussCohorts(counts, 3, 114, { ...c, newStemLagDays: 3 });
  t.same(
    lagged.cohorts.filter((k) => k.from >= 101).map((k) => [k.from, k.to, k.stemsPerM2]),
    [
      [101, 107, 3],
      [108, 109, 3],
      [110, 114, 4],
    ],
  );
});

t.test('pick calendar', async (t) => {
  const picks = (dates: string[]): HarvestInput[] => dates.map((d) => ({ day: day(d), week: monday(d), kg: 10 }));
  // Mon, Fri, Wed, Mon, Fri, Wed: intervals 4, 5, 5 repeating.
  const mwf = picks(['2026-03-02', '2026-03-06', '2026-03-11', '2026-03-16', '2026-03-20', '2026-03-25', '2026-03-30']);
  const cal = pickCalendar(mwf, day('2026-04-06'), day('2026-04-26'), null, C);
  t.equal(cal.mode, 'picks');
  t.equal(cal.basis, 'repeating_intervals');
  t.same(cal.pattern, [4, 5, 5]);
  t.same(
    cal.projected.map(dateOfDay),
    ['2026-04-08', '2026-04-13', '2026-04-17', '2026-04-22'],
    'the next, Monday the 27th, is past the end',
  );
  t.equal(dateOfDay(cal.previous!), '2026-04-03', 'the projected Friday before the forecast starts ends the first ripening');
  const irregular = pickCalendar(
    picks(['2026-03-02', '2026-03-05', '2026-03-11', '2026-03-13', '2026-03-20']),
    day('2026-03-23'),
    day('2026-04-05'),
    null,
    C,
  );
  t.equal(irregular.basis, 'median_interval');
  t.same(irregular.pattern, [5], 'median of 3, 6, 2, 7 is 4.5, rounded');
  const few = pickCalendar(picks(['2026-03-02', '2026-03-06']), day('2026-03-09'), day('2026-03-30'), null, C);
  t.equal(few.mode, 'continuous');
  t.equal(few.basis, 'too_few_picks');
  t.equal(
    pickCalendar([{ day: null, week: monday('2026-03-02'), kg: 5 }], day('2026-03-09'), day('2026-03-30'), null, C).basis,
    'no_dated_picks',
  );
  const ending = pickCalendar(mwf, day('2026-04-06'), day('2026-04-26'), day('2026-04-15'), C);
  t.same(
    ending.projected.map(dateOfDay),
    ['2026-04-08', '2026-04-13', '2026-04-15'],
    'none after the last day, which is a pick (clearing)',
  );
  t.same(pickCalendar(mwf, day('2026-03-25'), day('2026-04-05'), null, C).pattern.length > 0, true, 'only picks before the forecast count');
});

/** A cycle in a steady state: trusses at 1 per stem per week on 3 stems/m², 10 fruit of 10 g, 24 °C, 100 m². */
function steady(options: { weeks?: number; pickDates?: string[]; dated?: boolean } = {}): CycleHistory {
  const start = monday('2026-01-05');
  const weeks = options.weeks ?? 30;
  const trussCounts = Array.from({ length: weeks }, (_, i) => ({
    day: start + 7 * i + 2,
    trussesPerStem: i + 1,
    fruitPerTruss: 10,
    stemsPerM2: null,
  }));
  const temperature = Array.from({ length: 7 * weeks }, (_, i) => ({
    day: start + i,
    meanC: 24,
    hours: 24,
    source: 'air_temperature' as const,
  }));
  return {
    startWeek: start,
    startDay: start,
    endWeek: null,
    endDay: null,
    areaM2: 100,
    stemsPerM2: 3,
    harvests: [],
    trussCounts,
    walks: [],
    fruitMass: [{ week: start, green_g: 8, turning_g: 9, red_g: 10 }],
    temperature,
    outdoorForecast: [],
  };
}

t.test('raw forecast: trusses × fruit × mass, on pick days', async (t) => {
  // 1 truss/stem/week × 3 stems × 10 fruit × 10 g × 100 m² = 30 kg ripening per week once the first trusses are ripe.
  const h = steady();
  const asOfWeek = h.startWeek + 7 * 14;
  const run = rawForecast(asOf(h, asOfWeek), asOfWeek, C);
  t.equal(run.trusses.used, true);
  t.equal(run.picks.mode, 'continuous');
  for (const w of run.weeks.slice(0, 4)) t.ok(Math.abs(w.kg! - 30) < 0.01, `week ${w.horizon}: ${w.kg}`);
  t.equal(run.weeks[0]!.picks.length, 7, 'undated: every day of the week');
  t.ok(Math.abs(run.weeks[0]!.developmentDays! - 50) < 0.01, '950 °Cd at 19 °Cd a day');
  t.equal(run.weeks[0]!.projectedShare, 0, 'these trusses were counted');
  t.ok(run.weeks[7]!.projectedShare! > 0, 'eight weeks out some trusses are not counted yet');
  // Picks on Monday and Friday of one week and Wednesday of the next (intervals 4, 5, 5): a pick takes what ripened since the one before.
  const picks: string[] = [];
  for (let d = asOfWeek - 42; d < asOfWeek; d++) {
    const cycleDay = (d - (asOfWeek - 42)) % 14;
    if ([0, 4, 9].includes(cycleDay)) picks.push(dateOfDay(d));
  }
  const withPicks = { ...h, harvests: picks.map((p) => ({ day: day(p), week: monday(p), kg: 20 })) };
  const run2 = rawForecast(asOf(withPicks, asOfWeek), asOfWeek, C);
  t.equal(run2.picks.mode, 'picks');
  const [w0, w1] = run2.weeks;
  const perDay = 30 / 7;
  t.same(w0!.picks.map(isoWeekday), [1, 5]);
  t.ok(Math.abs(w0!.kg! - 9 * perDay) < 0.01, `two picks take 9 days of ripening: ${w0!.kg}`);
  t.same(w1!.picks.map(isoWeekday), [3]);
  t.ok(Math.abs(w1!.kg! - 5 * perDay) < 0.01, `one pick takes 5: ${w1!.kg}`);
  // Nothing to go on.
  const bare = { ...h, fruitMass: [] };
  const run3 = rawForecast(asOf(bare, asOfWeek), asOfWeek, C);
  t.equal(run3.weeks[0]!.kg, null);
  t.match(run3.trusses.reason, /fruit mass/);
  t.match(rawForecast(asOf({ ...h, areaM2: null }, asOfWeek), asOfWeek, C).trusses.reason, /area/);
});

t.test('raw forecast: the walk', async (t) => {
  const h = { ...steady(), trussCounts: [] };
  const w = h.startWeek + 7 * 10;
  const walk = { week: w, green: 3000, turning: 1000, red: 500, corrected: true };
  const run = rawForecast(asOf({ ...h, walks: [walk] }, w), w, C);
  t.equal(run.walk.used, true);
  t.equal(run.trusses.used, false);
  // Red (500 × 10 g) this week; turning (1000 × 9 g) over days 3 to 10; green (3000 × 8 g) over days 14 to 42.
  t.ok(Math.abs(run.weeks[0]!.kg! - (5 + 9 * (4 / 8))) < 1e-9, `${run.weeks[0]!.kg}`);
  t.ok(Math.abs(run.weeks[1]!.kg! - 9 * (4 / 8)) < 1e-9);
  const green = run.weeks.slice(2).reduce((s, x) => s + x.kg!, 0);
  t.ok(Math.abs(green - 24) < 1e-9, 'all green fruit within the horizon');
  // A walk of last week: its red were picked already, part of its turning is still to come.
  const late = rawForecast(asOf({ ...h, walks: [{ ...walk, week: w - 7 }] }, w), w, C);
  t.ok(Math.abs(late.weeks[0]!.kg! - 9 * (4 / 8)) < 1e-9, `${late.weeks[0]!.kg}`);
  // Too old.
  const old = rawForecast(asOf({ ...h, walks: [{ ...walk, week: w - 14 }] }, w), w, C);
  t.equal(old.walk.used, false);
  // With trusses, the walk speaks for the first two weeks and the trusses for the rest.
  const both = rawForecast(asOf({ ...steady(), walks: [walk] }, w), w, C);
  t.ok(both.weeks[0]!.fromWalkKg! > 0);
  t.equal(both.weeks[0]!.fromTrussesKg, 0);
  t.ok(both.weeks[3]!.fromTrussesKg! > 0);
});

t.test('as of a week: no harvest of that week or later', async (t) => {
  const h = steady();
  const w = h.startWeek + 70;
  const cut = asOf(
    {
      ...h,
      harvests: [
        { day: w - 1, week: w - 7, kg: 1 },
        { day: w, week: w, kg: 2 },
        { day: null, week: w, kg: 3 },
      ],
      walks: [
        { week: w, green: 1, turning: 1, red: 1, corrected: false },
        { week: w + 7, green: 1, turning: 1, red: 1, corrected: false },
      ],
      fruitMass: [
        { week: w - 7, green_g: 1, turning_g: 1, red_g: 1 },
        { week: w, green_g: 2, turning_g: 2, red_g: 2 },
      ],
    },
    w,
  );
  t.same(
    cut.harvests.map((x) => x.kg),
    [1],
  );
  t.same(
    cut.walks.map((x) => x.week),
    [w],
    "the week's own walk counts",
  );
  t.ok(cut.trussCounts.every((c) => c.day <= w + 6) && cut.trussCounts.some((c) => c.day > w), "the week's own truss count counts");
  t.ok(cut.temperature.every((d) => d.day < w));
  t.same(
    cut.fruitMass.map((f) => f.week),
    [w - 7],
  );
});

t.test('replay: no peeking, calibration, fallback, ranges', async (t) => {
  // The steady crop picked Monday, Friday, Wednesday... with 1.3 × what ripened since the pick before: calibration finds the 1.3.
  const h = steady({ weeks: 30 });
  const perDay = 30 / 7;
  const harvests: HarvestInput[] = [];
  let previous = h.startWeek + 7 * 9 - 3;
  for (let d = h.startWeek + 7 * 9; d < h.startWeek + 7 * 29; d++) {
    if (![0, 4, 9].includes((d - h.startWeek) % 14)) continue;
    harvests.push({ day: d, week: weekStartDay(d), kg: 1.3 * perDay * (d - previous) });
    previous = d;
  }
  const full = { ...h, harvests };
  const until = h.startWeek + 7 * 27;
  const r = replay(full, until, C);
  const at = (i: number) => r.runs[i]!;
  const late = at(20).weeks[0]!;
  t.ok(Math.abs(late.calibration.factor - 1.3) < 0.01, `factor ${late.calibration.factor}`);
  t.equal(late.method, 'model', late.fallback.reason);
  t.ok(Math.abs(late.kg - 1.3 * (r.runs[20]!.raw.weeks[0]!.kg ?? 0)) < 1e-9, `${late.kg}`);
  t.ok(Math.abs(late.kg - (r.actuals.get(late.week) ?? 0)) < 0.5, 'which is what was picked');
  t.ok(late.p10 <= late.kg && late.p90 >= late.kg);

  // Changing anything dated in or after week 15 leaves the forecast as of week 15 as it was.
  const w15 = h.startWeek + 7 * 15;
  const altered = {
    ...full,
    harvests: full.harvests.map((x) => (x.week >= w15 ? { ...x, kg: x.kg * 5 } : x)),
    temperature: full.temperature.map((d) => (d.day >= w15 ? { ...d, meanC: 30 } : d)),
    trussCounts: full.trussCounts.map((c) => (c.day > w15 + 6 ? { ...c, trussesPerStem: c.trussesPerStem * 2 } : c)),
  };
  const a = replay(full, w15, C).runs.at(-1)!;
  const b = replay(altered, until, C).runs[15]!;
  t.same(b.weeks, a.weeks, 'the forecast as of a week is what was known then');
  t.not(replay(altered, until, C).runs[20]!.weeks[0]!.kg, at(20).weeks[0]!.kg, 'and later weeks do see the change');

  // A model that is far off: after enough complete weeks the rolling backtest hands over to a baseline.
  const wrong = { ...full, fruitMass: [{ week: h.startWeek, green_g: 100, turning_g: 100, red_g: 100 }] };
  const rw = replay(wrong, until, { ...C, calibrationBounds: [0.9, 1.1] });
  const f = rw.runs[20]!.weeks[0]!;
  t.ok(f.method !== 'model', `answers ${f.method}`);
  t.match(f.fallback.reason, /worse than/);
  t.ok(f.fallback.model_wape! > f.fallback[`${f.method as 'persistence' | 'mean_3_weeks'}_wape`]!);
  t.equal(f.kg, f.baselines[f.method as 'persistence' | 'mean_3_weeks']);
  t.equal(f.calibration.bounded, true, 'the bounds hold the calibration in');

  // The grower stops typing harvests: weeks of nothing harvested, where WAPE is undefined, still tell the
  // model (forecasting kilos) from the baselines (forecasting nothing) by their absolute errors.
  const stopped = { ...full, harvests: full.harvests.filter((x) => x.week < h.startWeek + 7 * 14) };
  const late2 = replay(stopped, until, C).runs[24]!.weeks[0]!;
  t.not(late2.method, 'model');
  t.match(late2.fallback.reason, /absolute error [\d.]+ kg is worse than/);
  t.equal(late2.kg, 0);

  // Without anything the model can use, the better baseline answers and says why.
  const nothing = replay({ ...full, trussCounts: [] }, until, C).runs[20]!.weeks[0]!;
  t.not(nothing.method, 'model');
  t.match(nothing.fallback.reason, /nothing to go on/);
});

t.test('baselines and backtest figures', async (t) => {
  const known = new Map([
    [14, 10],
    [21, 20],
    [28, 30],
  ]);
  t.same(baselinesAt(known, 35, 14), { persistence: 30, mean_3_weeks: 20 });
  t.same(baselinesAt(known, 21, 14), { persistence: 10, mean_3_weeks: 10 }, 'only weeks inside the cycle');
  t.same(baselinesAt(known, 14, 14), { persistence: 0, mean_3_weeks: 0 });
  t.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
  t.equal(quantile([1, 2, 3, 4, 5], 0.1), 1.4);

  const h = steady({ weeks: 20 });
  const harvests: HarvestInput[] = [];
  for (let i = 8; i < 20; i++) harvests.push({ day: null, week: h.startWeek + 7 * i, kg: 30 });
  const r = replay({ ...h, harvests }, h.startWeek + 7 * 19, C);
  const complete = h.startWeek + 7 * 18;
  const stats = backtestStats(r, complete, null, 8);
  const h0 = stats.horizons[0]!;
  // By hand from the replayed weeks.
  const pairs = r.runs.filter((x) => x.weeks[0]!.week < complete);
  t.equal(h0.n, pairs.length);
  const act = pairs.reduce((s, x) => s + (r.actuals.get(x.asOf) ?? 0), 0);
  const abs = pairs.reduce((s, x) => s + Math.abs(x.weeks[0]!.kg - (r.actuals.get(x.asOf) ?? 0)), 0);
  t.equal(h0.actual_kg, act);
  t.equal(h0.wape, abs / act);
  t.equal(h0.mae_kg, abs / pairs.length);
  const pers = pairs.reduce((s, x) => s + Math.abs(x.weeks[0]!.baselines.persistence - (r.actuals.get(x.asOf) ?? 0)), 0);
  t.equal(h0.baselines.persistence.wape, pers / act);
  t.equal(stats.horizons[7]!.n, pairs.length - 7, 'a horizon counts only complete target weeks');
  t.equal(stats.weeks.at(-1)!.forecasts[0]!.actual_kg, null, 'the incomplete week has no actual yet');
});

/** A steady crop with picks, walks and a weather forecast: every kind of record the replay reads. */
function busy(): CycleHistory {
  const h = steady({ weeks: 30 });
  const harvests: HarvestInput[] = [];
  for (let d = h.startWeek + 7 * 9; d < h.startWeek + 7 * 29; d++)
    if ([0, 3].includes((d - h.startWeek) % 7)) harvests.push({ day: d, week: weekStartDay(d), kg: 12 + ((d * 7) % 5) });
  const walks = Array.from({ length: 20 }, (_, i) => ({
    week: h.startWeek + 7 * (i + 8),
    green: 400 + 3 * i,
    turning: 60,
    red: 90 + i,
    corrected: i % 4 === 0,
  }));
  const outdoorForecast = Array.from({ length: 7 }, (_, i) => ({
    day: h.startWeek + 7 * 28 + i,
    meanC: 12,
    fetchedDay: h.startWeek + 7 * 28,
  }));
  return { ...h, harvests, walks, outdoorForecast };
}

/** Seeded, so a failure can be replayed (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** One random edit of a history, as a grower's typing or an import would make it. */
function edit(h: CycleHistory, r: () => number): { h: CycleHistory; what: string } {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const at = (xs: readonly unknown[]) => Math.floor(r() * xs.length);
  const day = h.startWeek + Math.floor(r() * 7 * 30);
  const without = <T>(xs: readonly T[], i: number) => xs.filter((_, j) => j !== i);
  const kinds = [
    () => ({ what: 'a harvest added', h: { ...h, harvests: [...h.harvests, { day, week: weekStartDay(day), kg: 5 + 20 * r() }] } }),
    () => {
      const i = at(h.harvests);
      return { what: 'a harvest edited', h: { ...h, harvests: h.harvests.map((x, j) => (j === i ? { ...x, kg: x.kg * 2 } : x)) } };
    },
    () => ({ what: 'a harvest deleted', h: { ...h, harvests: without(h.harvests, at(h.harvests)) } }),
    () => {
      const i = at(h.harvests);
      // Moved to another date: both weeks count.
      return {
        what: 'a harvest moved',
        h: { ...h, harvests: h.harvests.map((x, j) => (j === i ? { ...x, day, week: weekStartDay(day) } : x)) },
      };
    },
    () => {
      const i = at(h.trussCounts);
      return {
        what: 'a truss count edited',
        h: {
          ...h,
          trussCounts: h.trussCounts.map((c, j) => (j === i ? { ...c, fruitPerTruss: 6 + 8 * r(), stemsPerM2: pick([null, 3.5]) } : c)),
        },
      };
    },
    () => {
      const i = at(h.walks);
      return {
        what: 'a walk corrected',
        h: { ...h, walks: h.walks.map((w, j) => (j === i ? { ...w, red: w.red + 40, corrected: true } : w)) },
      };
    },
    () => ({
      what: 'a fruit mass added',
      h: { ...h, fruitMass: [...h.fruitMass, { week: weekStartDay(day), green_g: 9, turning_g: 10, red_g: 12 }] },
    }),
    () => {
      const i = at(h.temperature);
      return {
        what: 'a day of climate re-imported',
        h: { ...h, temperature: h.temperature.map((d, j) => (j === i ? { ...d, meanC: 18 + 10 * r() } : d)) },
      };
    },
    () => ({ what: 'the weather refreshed', h: { ...h, outdoorForecast: h.outdoorForecast.map((d) => ({ ...d, meanC: d.meanC + 3 })) } }),
    () => ({ what: 'the cycle ended', h: { ...h, endWeek: h.startWeek + 7 * 26, endDay: h.startWeek + 7 * 26 + 4 } }),
    () => ({ what: 'the area changed', h: { ...h, areaM2: 120 } }),
    () => ({
      what: 'nothing changed, the rows read in another order',
      h: { ...h, harvests: [...h.harvests].reverse(), temperature: [...h.temperature].reverse() },
    }),
  ];
  return pick(kinds)();
}

const sorted = (h: CycleHistory) => {
  const s = <T>(xs: readonly T[]) => xs.map((x) => JSON.stringify(x)).sort();
  return {
    ...h,
    harvests: s(h.harvests),
    trussCounts: s(h.trussCounts),
    walks: s(h.walks),
    fruitMass: s(h.fruitMass),
    temperature: s(h.temperature),
    outdoorForecast: s(h.outdoorForecast),
  };
};

t.test('firstChangedWeek: the first week asOf can tell two histories apart', async (t) => {
  const base = busy();
  t.equal(firstChangedWeek(base, base), null, 'the same history');
  const r = rng(35);
  for (let i = 0; i < 300; i++) {
    const { h, what } = edit(base, r);
    const first = firstChangedWeek(base, h);
    // Sound: every week before it sees the same inputs in both.
    for (let w = base.startWeek; w < Math.min(first ?? Infinity, base.startWeek + 7 * 40); w += 7)
      if (JSON.stringify(sorted(asOf(base, w))) !== JSON.stringify(sorted(asOf(h, w)))) {
        t.fail(`${what}: week ${dateOfDay(w)} differs, before the first changed week ${first === null ? 'none' : dateOfDay(first)}`);
        return;
      }
    // Tight: the week it names does see the change (a weather forecast is seen only while it speaks of days ahead).
    if (first !== null && !/weather|cycle ended|area/.test(what))
      t.not(JSON.stringify(sorted(asOf(base, first))), JSON.stringify(sorted(asOf(h, first))), `${what}: seen from ${dateOfDay(first)}`);
  }
  // Each record's own rule, exactly.
  const harvestWeek = base.harvests[5]!.week;
  t.equal(
    firstChangedWeek(base, { ...base, harvests: base.harvests.slice(0, 5).concat(base.harvests.slice(6)) }),
    harvestWeek + 7,
    'a harvest: from the week after its own',
  );
  const count = base.trussCounts[10]!;
  t.equal(
    firstChangedWeek(base, { ...base, trussCounts: base.trussCounts.map((c) => (c === count ? { ...c, fruitPerTruss: 9 } : c)) }),
    weekStartDay(count.day),
    'a truss count: from its own week',
  );
  const walk = base.walks[3]!;
  t.equal(
    firstChangedWeek(base, { ...base, walks: base.walks.map((w) => (w === walk ? { ...w, red: 1 } : w)) }),
    walk.week,
    'a walk: from its own week',
  );
  const temp = base.temperature[50]!;
  t.equal(
    firstChangedWeek(base, { ...base, temperature: base.temperature.map((d) => (d === temp ? { ...d, meanC: 30 } : d)) }),
    weekStartDay(temp.day) + 7,
    "a day's temperature: from the week after its week",
  );
  t.equal(firstChangedWeek(base, { ...base, stemsPerM2: 4 }), base.startWeek, 'the cycle itself: every week');
});

t.test('replay given the previous one: the same runs as a replay from scratch, the earlier ones kept', async (t) => {
  const r = rng(3535);
  let before = busy();
  const until = before.startWeek + 7 * 27;
  let previous = replay(before, until, C);
  for (let i = 0; i < 60; i++) {
    const { h, what } = edit(before, r);
    // Sometimes the clock has also entered another week.
    const untilNow = until + 7 * (i % 3 === 0 ? 1 : 0);
    const fresh = replay(h, untilNow, C);
    const kept = replay(h, untilNow, C, { history: before, replay: previous });
    t.same(kept.runs, fresh.runs, `${what}: the runs of a replay from scratch`);
    t.same([...kept.actuals], [...fresh.actuals]);
    const first = firstChangedWeek(before, h) ?? Infinity;
    const reused = kept.runs.filter((run, j) => run === previous.runs[j]).length;
    t.equal(
      reused,
      Math.min(previous.runs.length, Math.max(0, (Math.min(first, untilNow + 7) - before.startWeek) / 7)),
      `${what}: the runs before the first changed week are the previous ones`,
    );
    before = h;
    previous = kept;
  }
});
