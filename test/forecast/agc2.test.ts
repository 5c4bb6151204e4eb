// The model replayed on the real season in ../shared/data/agc2 (see its README), straight from the
// files into the model: no server. Skipped where the data is absent. The constants were tuned on AICU
// only; Digilog and TheAutomators are held out (docs/forecast.md, "Measured").
import t from 'tap';
import { agc2Missing, COMPARTMENTS, readSeason, seasonHistory } from '../../bench/lib/agc2.js';
import { backtestStats, replay } from '../../src/forecast/model/replay.js';
import { MODEL_CONSTANTS } from '../../src/forecast/model/constants.js';
import { asOf } from '../../src/forecast/model/inputs.js';

const missing = agc2Missing();

t.test('agc2: the season reads as a grower would have typed it', { skip: missing ?? false }, async (t) => {
  for (const name of COMPARTMENTS) {
    const s = readSeason(name);
    const h = seasonHistory(s);
    t.equal(s.startedOn, '2019-12-16', `${name} starts with its first day of records`);
    t.ok(
      s.picks.every((p) => p.date >= '2020-02-01' && p.date <= s.endedOn),
      `${name}: every pick inside the season`,
    );
    t.ok(h.trussCounts.length >= 15, `${name}: weekly truss counts`);
    t.ok(h.temperature.length >= 150, `${name}: a daily slab temperature for most days`);
    const total = s.picks.reduce((x, p) => x + p.kg, 0);
    t.ok(total > 700 && total < 1100, `${name}: ${total.toFixed(0)} kg off 62.5 m²`);
  }
});

t.test('agc2: backtest against the naive baselines', { skip: missing ?? false }, async (t) => {
  const pooled = (names: readonly string[], h: number) => {
    let act = 0;
    let model = 0;
    let pers = 0;
    let mean3 = 0;
    for (const name of names) {
      const hist = seasonHistory(readSeason(name as (typeof COMPARTMENTS)[number]));
      const stats = backtestStats(replay(hist, hist.endWeek!, MODEL_CONSTANTS), hist.endWeek! + 7, hist.endWeek, 8).horizons[h]!;
      act += stats.actual_kg;
      model += stats.wape! * stats.actual_kg;
      pers += stats.baselines.persistence.wape! * stats.actual_kg;
      mean3 += stats.baselines.mean_3_weeks.wape! * stats.actual_kg;
    }
    return { model: model / act, best: Math.min(pers, mean3) / act };
  };
  const heldOut = ['Digilog', 'TheAutomators'];
  const h3 = pooled(heldOut, 3);
  t.ok(h3.model <= 0.8 * h3.best, `held out, horizon 3: WAPE ${h3.model.toFixed(3)} ≤ 0.8 × ${h3.best.toFixed(3)}`);
  const h0 = pooled(heldOut, 0);
  // Horizon 0 misses the 0.8 goal on the held-out compartments and ties the better baseline (docs/forecast.md
  // says why): a floor against getting worse, not a claim.
  t.ok(h0.model <= 1.05 * h0.best, `held out, horizon 0: WAPE ${h0.model.toFixed(3)} ≤ 1.05 × ${h0.best.toFixed(3)}`);
});

t.test('agc2: a forecast as of a week does not change when later records are dropped', { skip: missing ?? false }, async (t) => {
  const hist = seasonHistory(readSeason('Digilog'));
  const full = replay(hist, hist.endWeek!, MODEL_CONSTANTS);
  for (const i of [8, 12, 16]) {
    const week = full.runs[i]!.asOf;
    const cut = asOf(hist, week);
    // Only what asOf keeps, plus the truss counts and walks of the week itself, may shape the forecast.
    const alone = replay(
      { ...hist, harvests: cut.harvests, temperature: cut.temperature, fruitMass: cut.fruitMass, trussCounts: cut.trussCounts },
      week,
      MODEL_CONSTANTS,
    );
    t.same(alone.runs.at(-1)!.weeks, full.runs[i]!.weeks, `as of run ${i}`);
  }
});
