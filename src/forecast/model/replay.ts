import type { ModelConstants } from './constants.js';
import { firstChangedWeek } from './changes.js';
import { asOf, weeklyHarvest, type CycleHistory } from './inputs.js';
import { rawForecast, type RawRun } from './raw.js';

/**
 * The forecast as of every week of a cycle, each made only from what was known
 * when its week began. A week's forecast needs the weeks before it: the model
 * is calibrated on its own recent misses (realized over forecast), answers the
 * best naive baseline instead where its own rolling backtest says it does worse,
 * and takes its range from the spread of its past errors at that horizon. The
 * live forecast is the last week of a replay; the backtest is all of it.
 */
export type Method = 'model' | 'persistence' | 'mean_3_weeks';
export const BASELINES = ['persistence', 'mean_3_weeks'] as const;
export type Baseline = (typeof BASELINES)[number];

export interface Calibration {
  factor: number;
  /** Complete weeks it rests on. */
  pairs: number;
  /** Whether the bounds held it in. */
  bounded: boolean;
  /** Its own horizon's misses, horizon 0's (too few of its own), or none yet (factor 1). */
  basis: 'horizon' | 'horizon_0' | 'none';
}

export interface Fallback {
  /** The rolling backtest at this horizon before the week: WAPE of the model and of each baseline on the same weeks. */
  pairs: number;
  model_wape: number | null;
  persistence_wape: number | null;
  mean_3_weeks_wape: number | null;
  /** The method answered, and why. */
  chosen: Method;
  reason: string;
}

export interface ForecastWeek {
  horizon: number;
  /** Monday of the forecast week. */
  week: number;
  kg: number;
  p10: number;
  p90: number;
  range_basis: 'past_errors' | 'default';
  range_pairs: number;
  method: Method;
  /** The calibrated model's kilos (null when the model had nothing to go on). */
  model_kg: number | null;
  raw_kg: number | null;
  calibration: Calibration;
  baselines: Record<Baseline, number>;
  fallback: Fallback;
}

export interface WeekRun {
  /** Monday of the week the forecast is made as of. */
  asOf: number;
  raw: RawRun;
  weeks: ForecastWeek[];
}

export interface Replay {
  runs: WeekRun[];
  /** Realized kilos per week (Monday → kg), from every harvest. */
  actuals: Map<number, number>;
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/** Quantile with linear interpolation between order statistics (type 7). */
export function quantile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

function wape(pairs: readonly { f: number; a: number }[]): number | null {
  let err = 0;
  let act = 0;
  for (const p of pairs) {
    err += Math.abs(p.f - p.a);
    act += p.a;
  }
  return act > 0 ? err / act : null;
}

/** The naive forecasts as of a week: last complete week's harvest, and the mean of the last three (within the cycle). */
export function baselinesAt(known: ReadonlyMap<number, number>, week: number, startWeek: number): Record<Baseline, number> {
  const persistence = week - 7 >= startWeek ? (known.get(week - 7) ?? 0) : 0;
  const prior = [week - 7, week - 14, week - 21].filter((w) => w >= startWeek);
  const mean = prior.length ? prior.reduce((s, w) => s + (known.get(w) ?? 0), 0) / prior.length : 0;
  return { persistence, mean_3_weeks: mean };
}

/** A replay made earlier of the same cycle, and the history it was made from: its runs before the first changed week are kept. */
export interface PreviousReplay {
  history: CycleHistory;
  replay: Replay;
}

/**
 * Replays the cycle from its first week to `untilWeek` (a Monday). Every run
 * sees `asOf(history, week)` only, and the misses of earlier runs only where
 * their target week ended before its own week began.
 *
 * So a run depends on nothing dated at or after its week, and given a previous
 * replay of the same cycle, the runs before the first week the histories differ
 * in (`firstChangedWeek`) are its runs unchanged: a harvest typed in today costs
 * this week's run, not the season's. The constants must be the same.
 */
export function replay(history: CycleHistory, untilWeek: number, c: ModelConstants, previous?: PreviousReplay): Replay {
  const actuals = weeklyHarvest(history.harvests);
  const harvestWeeks = [...actuals].filter(([, kg]) => kg > 0).map(([w]) => w);
  const runs: WeekRun[] = [];
  if (previous) {
    const keepBefore = firstChangedWeek(previous.history, history) ?? Number.POSITIVE_INFINITY;
    for (const run of previous.replay.runs) {
      const week = history.startWeek + 7 * runs.length;
      if (run.asOf !== week || week >= keepBefore || week > untilWeek) break;
      runs.push(run);
    }
  }
  for (let week = history.startWeek + 7 * runs.length; week <= untilWeek; week += 7) {
    const known = asOf(history, week);
    const raw = rawForecast(known, week, c);
    // Weeks before this one are complete: their harvest as stored is what was known of them.
    const base = baselinesAt(actuals, week, history.startWeek);
    let firstHarvestWeek = Number.POSITIVE_INFINITY;
    for (const w of harvestWeeks) if (w < week && w < firstHarvestWeek) firstHarvestWeek = w;

    /**
     * Earlier runs' forecasts at horizon h whose target week is complete now, newest first, that `keep`
     * accepts, at most `limit`. Runs are one a week from the first, so run i's target at h is complete
     * exactly when i + h < runs.length.
     */
    const pairsAt = (h: number, limit: number, keep: (run: WeekRun) => boolean) => {
      const out: { run: WeekRun; a: number }[] = [];
      for (let i = runs.length - 1 - h; i >= 0 && out.length < limit; i--) {
        const run = runs[i]!;
        if (keep(run)) out.push({ run, a: actuals.get(run.asOf + 7 * h) ?? 0 });
      }
      return out;
    };

    const calibrationOf = (h: number): Calibration | null => {
      const pairs = pairsAt(h, c.calibrationWeeks, (run) => run.asOf + 7 * h >= firstHarvestWeek && run.weeks[h]!.raw_kg !== null);
      if (pairs.length < c.calibrationMinPairs) return null;
      let rawSum = 0;
      let actSum = 0;
      for (const p of pairs) {
        rawSum += p.run.weeks[h]!.raw_kg!;
        actSum += p.a;
      }
      if (rawSum <= 0) return null;
      const ratio = actSum / rawSum;
      const factor = clamp(ratio, c.calibrationBounds[0], c.calibrationBounds[1]);
      return { factor, pairs: pairs.length, bounded: factor !== ratio, basis: 'horizon' };
    };
    const cal0 = calibrationOf(0);

    const weeks: ForecastWeek[] = raw.weeks.map((rw, h) => {
      const own = calibrationOf(h);
      const calibration: Calibration =
        own ?? (cal0 ? { ...cal0, basis: 'horizon_0' } : { factor: 1, pairs: 0, bounded: false, basis: 'none' });
      const modelKg = rw.kg === null ? null : rw.kg * calibration.factor;

      // The rolling backtest at this horizon: the model against the baselines on the same recent weeks,
      // once harvest has begun (before it, every forecast of nothing is right and says nothing).
      const recent = pairsAt(h, c.fallbackWindow, (run) => run.asOf + 7 * h >= firstHarvestWeek);
      const withModel = recent.filter((p) => p.run.weeks[h]!.model_kg !== null);
      const on = modelKg === null ? recent : withModel;
      // On the same weeks, comparing WAPEs is comparing sums of absolute errors; the sums also decide when
      // nothing was harvested in them (a crop the grower stopped typing, say), where WAPE is undefined.
      const absErr = (f: (p: (typeof recent)[number]) => number) => on.reduce((sum, p) => sum + Math.abs(f(p) - p.a), 0);
      const modelErr = modelKg === null ? null : absErr((p) => p.run.weeks[h]!.model_kg!);
      const baseErr = {
        persistence: absErr((p) => p.run.weeks[h]!.baselines.persistence),
        mean_3_weeks: absErr((p) => p.run.weeks[h]!.baselines.mean_3_weeks),
      };
      const modelW = modelKg === null ? null : wape(withModel.map((p) => ({ f: p.run.weeks[h]!.model_kg!, a: p.a })));
      const baseW = Object.fromEntries(
        BASELINES.map((b) => [b, wape(on.map((p) => ({ f: p.run.weeks[h]!.baselines[b], a: p.a })))]),
      ) as Record<Baseline, number | null>;
      const best: Baseline = baseErr.persistence < baseErr.mean_3_weeks ? 'persistence' : 'mean_3_weeks';
      const say = (x: number | null, err: number) => (x === null ? `absolute error ${err.toFixed(1)} kg` : `WAPE ${x.toFixed(2)}`);
      let chosen: Method = 'model';
      let reason: string;
      if (modelKg === null) {
        chosen = best;
        reason = `the model has nothing to go on (${[raw.trusses.reason, raw.walk.reason].filter(Boolean).join('; ')}): the better naive baseline answers`;
      } else if (withModel.length < c.fallbackMinPairs) {
        reason = `too few complete weeks (${withModel.length}, at least ${c.fallbackMinPairs} since harvest began) to compare the model with the baselines: the model answers`;
      } else if (modelErr! > c.fallbackMargin * baseErr[best]) {
        chosen = best;
        reason = `over the last ${withModel.length} complete weeks at this horizon the model's ${say(modelW, modelErr!)} is worse than ${best}'s ${say(baseW[best], baseErr[best])}: ${best} answers`;
      } else {
        reason = `over the last ${withModel.length} complete weeks at this horizon the model's ${say(modelW, modelErr!)} beats ${best}'s ${say(baseW[best], baseErr[best])}`;
      }
      // Nothing is harvested after the cycle's last week.
      const over = history.endWeek !== null && rw.week > history.endWeek;
      if (over) reason = 'the week is after the crop cycle ended: nothing to harvest';
      const kg = over ? 0 : chosen === 'model' ? modelKg! : base[chosen];

      // The range: the spread of past actual / forecast ratios at this horizon.
      const ratios = pairsAt(h, c.rangeWindow, (run) => run.weeks[h]!.kg > 0)
        .map((p) => p.a / p.run.weeks[h]!.kg)
        .sort((a, b) => a - b);
      let p10: number;
      let p90: number;
      let rangeBasis: ForecastWeek['range_basis'] = 'past_errors';
      if (ratios.length >= c.rangeMinPairs) {
        p10 = kg * Math.min(1, quantile(ratios, 0.1));
        p90 = kg * Math.max(1, quantile(ratios, 0.9));
      } else {
        const share = c.rangeDefaultShare + c.rangeDefaultPerWeek * h;
        p10 = kg * Math.max(0, 1 - share);
        p90 = kg * (1 + share);
        rangeBasis = 'default';
      }
      return {
        horizon: h,
        week: rw.week,
        kg,
        p10,
        p90,
        range_basis: rangeBasis,
        range_pairs: ratios.length,
        method: chosen,
        model_kg: modelKg,
        raw_kg: rw.kg,
        calibration,
        baselines: base,
        fallback: {
          pairs: withModel.length,
          model_wape: modelW,
          persistence_wape: baseW.persistence,
          mean_3_weeks_wape: baseW.mean_3_weeks,
          chosen,
          reason,
        },
      };
    });
    runs.push({ asOf: week, raw, weeks });
  }
  return { runs, actuals };
}

export interface HorizonStats {
  horizon: number;
  n: number;
  actual_kg: number;
  mae_kg: number | null;
  wape: number | null;
  bias_kg: number | null;
  baselines: Record<Baseline, { mae_kg: number | null; wape: number | null }>;
}

export interface BacktestWeekForecast {
  horizon: number;
  week: number;
  kg: number;
  p10: number;
  p90: number;
  method: Method;
  baselines: Record<Baseline, number>;
  /** Realized kilos, once the week is complete; null before. */
  actual_kg: number | null;
}

/**
 * The backtest's figures: per horizon, the errors of the answered forecasts on
 * every week that is complete (before `completeBefore`, and inside the cycle),
 * and those of the baselines on the same weeks.
 */
export function backtestStats(r: Replay, completeBefore: number, endWeek: number | null, horizons: number) {
  const complete = (w: number) => w < completeBefore && (endWeek === null || w <= endWeek);
  const stats: HorizonStats[] = [];
  for (let h = 0; h < horizons; h++) {
    let n = 0;
    let act = 0;
    let abs = 0;
    let bias = 0;
    const bAbs: Record<Baseline, number> = { persistence: 0, mean_3_weeks: 0 };
    for (const run of r.runs) {
      const f = run.weeks[h]!;
      if (!complete(f.week)) continue;
      const a = r.actuals.get(f.week) ?? 0;
      n++;
      act += a;
      abs += Math.abs(f.kg - a);
      bias += f.kg - a;
      for (const b of BASELINES) bAbs[b] += Math.abs(f.baselines[b] - a);
    }
    const ratio = (x: number) => (act > 0 ? x / act : null);
    stats.push({
      horizon: h,
      n,
      actual_kg: act,
      mae_kg: n ? abs / n : null,
      wape: ratio(abs),
      bias_kg: n ? bias / n : null,
      baselines: {
        persistence: { mae_kg: n ? bAbs.persistence / n : null, wape: ratio(bAbs.persistence) },
        mean_3_weeks: { mae_kg: n ? bAbs.mean_3_weeks / n : null, wape: ratio(bAbs.mean_3_weeks) },
      },
    });
  }
  const weeks = r.runs.map((run) => ({
    asOf: run.asOf,
    forecasts: run.weeks.map((f): BacktestWeekForecast => ({
      horizon: f.horizon,
      week: f.week,
      kg: f.kg,
      p10: f.p10,
      p90: f.p90,
      method: f.method,
      baselines: f.baselines,
      actual_kg: complete(f.week) ? (r.actuals.get(f.week) ?? 0) : null,
    })),
  }));
  return { horizons: stats, weeks };
}
