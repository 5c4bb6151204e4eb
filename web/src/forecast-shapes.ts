// Reading the forecast routes' answers (issue 35: GET {cycle}/forecast, GET {cycle}/forecasts,
// GET {cycle}/backtest). They are being built beside this app; these readers take the shapes the
// issue describes and tolerate the small variations a first release may have (a range as
// {p10, p90} or {low, high}, weeks under `weeks` or `items`), so a screen shows what is there.

export interface ForecastWeek {
  week: string;
  horizon: number | null;
  kg: number | null;
  kgPerM2: number | null;
  low: number | null;
  high: number | null;
  realized: number | null;
  inputs: unknown;
}

export interface Forecast {
  asOf: string | null;
  weeks: ForecastWeek[];
  /** Why the answer is what it is (e.g. the naive forecast answered instead), in the box's words. */
  notes: string[];
}

export interface StoredForecast extends Forecast {
  id: string;
  createdAt: string | null;
}

export interface BacktestRow {
  horizon: number;
  n: number;
  actualKg: number | null;
  maeKg: number | null;
  wape: number | null;
  biasKg: number | null;
  persistence: { maeKg: number | null; wape: number | null };
  mean3: { maeKg: number | null; wape: number | null };
}

type Obj = Record<string, unknown>;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const first = (...vs: unknown[]) => {
  for (const v of vs) {
    const n = num(v);
    if (n !== null) return n;
  }
  return null;
};

function rangeOf(w: Obj): [number | null, number | null] {
  const r: Obj = Array.isArray(w.range) ? { low: w.range[0], high: w.range[1] } : obj(w.range);
  return [
    first(r.p10, r.low, r.lo, r.kg_p10, r.min, w.p10_kg, w.kg_p10, w.kg_low, w.low_kg),
    first(r.p90, r.high, r.hi, r.kg_p90, r.max, w.p90_kg, w.kg_p90, w.kg_high, w.high_kg),
  ];
}

export function readWeeks(list: unknown): ForecastWeek[] {
  if (!Array.isArray(list)) return [];
  return list
    .map((x) => obj(x))
    .filter((w) => str(w.week))
    .map((w) => {
      const [low, high] = rangeOf(w);
      return {
        week: str(w.week)!,
        horizon: num(w.horizon),
        kg: first(w.kg, w.forecast_kg, w.kg_forecast),
        kgPerM2: first(w.kg_per_m2, w.kg_m2),
        low,
        high,
        realized: first(w.realized_kg, w.actual_kg, w.harvest_kg, obj(w.realized).kg, obj(w.actual).kg),
        inputs: w.inputs ?? null,
      };
    });
}

function notesOf(o: Obj): string[] {
  const notes: string[] = [];
  for (const k of ['note', 'notes', 'reason', 'explanation', 'method_note', 'fallback_reason']) {
    const v = o[k];
    if (typeof v === 'string' && v) notes.push(v);
    if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') notes.push(x);
  }
  const method = obj(o.method);
  if (typeof o.method === 'string' && o.method !== 'model') notes.push(`Method: ${o.method}`);
  if (typeof method.reason === 'string') notes.push(method.reason);
  if (o.naive === true || o.used_naive === true) notes.push('The naive forecast answered: the model did worse than it in the backtest.');
  return notes;
}

export function readForecast(body: unknown): Forecast {
  const o = obj(body);
  return { asOf: str(o.week) ?? str(o.as_of), weeks: readWeeks(o.weeks ?? o.items ?? o.forecast), notes: notesOf(o) };
}

export function readStored(body: unknown): StoredForecast[] {
  const o = obj(body);
  const items = Array.isArray(o.items) ? o.items : Array.isArray(body) ? body : [];
  return items.map((x, i) => {
    const f = obj(x);
    return {
      id: str(f.forecast_id) ?? str(f.id) ?? String(i),
      createdAt: str(f.made_at) ?? str(f.created_at) ?? str(f.issued_at),
      ...readForecast(f),
    };
  });
}

export function readBacktest(body: unknown): BacktestRow[] {
  const o = obj(body);
  if (!Array.isArray(o.horizons)) return [];
  return o.horizons.map((x) => {
    const h = obj(x);
    const b = obj(h.baselines);
    const p = obj(b.persistence);
    const m = obj(b.mean_3_weeks ?? b.mean3);
    return {
      horizon: num(h.horizon) ?? 0,
      n: num(h.n) ?? 0,
      actualKg: num(h.actual_kg),
      maeKg: num(h.mae_kg),
      wape: num(h.wape),
      biasKg: num(h.bias_kg),
      persistence: { maeKg: num(p.mae_kg), wape: num(p.wape) },
      mean3: { maeKg: num(m.mae_kg), wape: num(m.wape) },
    };
  });
}

/** A 404 that means "this box has no such route yet", not "no such cycle". */
export function isMissingRoute(err: { status: number; detail: string }): boolean {
  return err.status === 404 && /^No route for /.test(err.detail);
}
