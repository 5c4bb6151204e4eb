/**
 * The forecast model's constants. Each one, its value and where it comes from
 * is described in docs/forecast.md ("Constants"); what was tuned, on which
 * compartment, and what was held out, too. Change one there and here together.
 */
export interface ModelConstants {
  /** Weeks the answer covers: the week asked for and the seven after it. */
  horizons: number;
  /** Degree-days (°C·d above `baseTemperatureC`) from flowering to ripe. */
  thermalTimeDegreeDays: number;
  /** Below this daily mean temperature fruit do not develop (°C). */
  baseTemperatureC: number;
  /** Above this daily mean temperature development speeds up no more (°C). */
  maxTemperatureC: number;
  /** Daily mean temperature when nothing is stored (°C). */
  defaultTemperatureC: number;
  /** A day ahead is at least its outdoor forecast mean plus this (°C); null ignores the outdoor forecast. */
  outdoorFloorC: number | null;
  /** Days of recent temperature whose mean stands for the days ahead. */
  recentTemperatureDays: number;
  /** A truss ripens over this many days either side of its mean ripening day (triangular spread). */
  ripeningSpreadDays: number;
  /** The trusses counted on the first count date flowered over this many days before it. */
  firstCountSpreadDays: number;
  /** A stem kept as an extra one sets its first truss this many days after the count date that carries the new density. */
  newStemLagDays: number;
  /** Count dates at least this many days back give the recent truss appearance rate. */
  trussRateWindowDays: number;
  /** Fruit per truss when a count has no fruit counted. */
  defaultFruitPerTruss: number;
  /** Walk: turning fruit are picked over these days after the week starts (inclusive range). */
  walkTurningDays: readonly [number, number];
  /** Walk: green fruit are picked over these days after the week starts. */
  walkGreenDays: readonly [number, number];
  /** Walk counts older than this many days before the week are not used. */
  walkMaxAgeDays: number;
  /** Recent pick dates used to learn the pick rhythm, and how far back (days). */
  pickHistory: number;
  pickHistoryDays: number;
  /** Complete weeks whose realized / forecast ratio calibrates the model. */
  calibrationWeeks: number;
  /** The calibration factor stays within these bounds. */
  calibrationBounds: readonly [number, number];
  /** Fewer pairs than this at a horizon: that horizon borrows horizon 0's factor. */
  calibrationMinPairs: number;
  /** The rolling backtest behind the fallback: recent complete pairs per horizon, and how many it needs. */
  fallbackWindow: number;
  fallbackMinPairs: number;
  /** The model must beat the best naive baseline's WAPE by this factor to stand (1 = any margin). */
  fallbackMargin: number;
  /** Ranges: recent pairs per horizon whose actual / forecast ratios give p10 and p90, and how many they need. */
  rangeWindow: number;
  rangeMinPairs: number;
  /** Ranges without enough pairs: ± this share, widening by `rangeDefaultPerWeek` per week of horizon. */
  rangeDefaultShare: number;
  rangeDefaultPerWeek: number;
}

export const MODEL_CONSTANTS: ModelConstants = {
  horizons: 8,
  thermalTimeDegreeDays: 950,
  baseTemperatureC: 5,
  maxTemperatureC: 28,
  defaultTemperatureC: 20,
  outdoorFloorC: 1,
  recentTemperatureDays: 7,
  ripeningSpreadDays: 3,
  firstCountSpreadDays: 14,
  newStemLagDays: 0,
  trussRateWindowDays: 21,
  defaultFruitPerTruss: 10,
  walkTurningDays: [3, 10],
  walkGreenDays: [14, 42],
  walkMaxAgeDays: 7,
  pickHistory: 9,
  pickHistoryDays: 42,
  calibrationWeeks: 4,
  calibrationBounds: [0.5, 2],
  calibrationMinPairs: 2,
  fallbackWindow: 8,
  fallbackMinPairs: 3,
  fallbackMargin: 1,
  rangeWindow: 12,
  rangeMinPairs: 4,
  rangeDefaultShare: 0.25,
  rangeDefaultPerWeek: 0.05,
};
