import type { Db } from '../db/database.js';
import { dateOfDay, dayNumber, dayOfInstant, localDayCursor, weekStartDay } from '../time/days.js';
import { parseWeek, weekOfInstant } from '../time/weeks.js';
import { cycleArea } from '../registry/area.js';
import { hourlySeries } from '../climate/readings/hourly.js';
import { currentWeek } from './forecast.js';
import { loadRow, type CycleContext } from './queries.js';
import { weekLabel } from './presenters.js';
import type { StoredWeek } from './tables.js';

/**
 * The cycle week by week as CSV, for a spreadsheet: one row per ISO week from the
 * cycle's start to its end (or the current week). Cells a spreadsheet would take
 * for a formula are neutralised; `semicolon` gives `;` between cells and decimal
 * commas, as European spreadsheets expect.
 */
export type Delimiter = 'comma' | 'semicolon';

export const EXPORT_COLUMNS = [
  'week',
  'walk_model_green',
  'walk_model_turning',
  'walk_model_red',
  'walk_model_total',
  'walk_corrected_green',
  'walk_corrected_turning',
  'walk_corrected_red',
  'walk_corrected_total',
  'harvest_kg',
  'harvest_kg_per_m2',
  'irrigation_water_l',
  'irrigation_drain_l',
  'water_productivity_kg_per_m3',
  'air_temperature_mean_c',
  'radiation_sum_j_cm2',
  'forecast_h0_kg',
  'forecast_h3_kg',
  'note',
] as const;

type Cell = string | number | null;

/** A cell as text: numbers with the decimal mark asked for, text that could start a formula prefixed with an apostrophe. */
export function csvCell(value: Cell, delimiter: Delimiter): string {
  if (value === null) return '';
  let text: string;
  if (typeof value === 'number') {
    text = Number.isFinite(value) ? String(value) : '';
    if (delimiter === 'semicolon') text = text.replace('.', ',');
  } else {
    text = value;
    // =, +, -, @, tab and carriage return start a formula (or a DDE call) in common spreadsheets.
    if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  }
  const sep = delimiter === 'semicolon' ? ';' : ',';
  if (text.includes(sep) || /["\r\n]/.test(text) || (typeof value === 'string' && /^\s|\s$/.test(text)))
    text = `"${text.replace(/"/g, '""')}"`;
  return text;
}

export function csvText(rows: Cell[][], delimiter: Delimiter): string {
  const sep = delimiter === 'semicolon' ? ';' : ',';
  // The byte-order mark tells spreadsheets the file is UTF-8 (°, ², names with accents).
  return '\uFEFF' + rows.map((r) => r.map((c) => csvCell(c, delimiter)).join(sep)).join('\r\n') + '\r\n';
}

/** The text of a week note for a cell: its `text` (or `note`) field when it has one, else the object as JSON. */
export function noteText(body: string): string {
  const note = JSON.parse(body) as Record<string, unknown>;
  for (const k of ['text', 'note']) if (typeof note[k] === 'string') return note[k] as string;
  return JSON.stringify(note);
}

const round = (x: number | null, places: number) => (x === null ? null : Math.round(x * 10 ** places) / 10 ** places);

export async function exportRows(db: Db, ctx: CycleContext, nowMs: number): Promise<Cell[][]> {
  const { cycle, zone } = ctx;
  const startWeek = weekStartDay(dayNumber(cycle.started_on));
  const now = dayNumber(currentWeek(nowMs, zone).start);
  const end = cycle.ended_on ? weekStartDay(dayNumber(cycle.ended_on)) : now;
  const lastWeek = Math.max(startWeek, end);
  const area = cycleArea(cycle, await loadRow(db, cycle.row_id));

  const [walks, harvests, irrigation, notes, forecasts] = await Promise.all([
    db
      .selectFrom('walks')
      .select([
        'week',
        'count_green',
        'count_turning',
        'count_red',
        'count_total',
        'corrected_green',
        'corrected_turning',
        'corrected_red',
        'corrected_total',
      ])
      .where('cycle_id', '=', cycle.id)
      .where('status', '=', 'done')
      .where('week', 'is not', null)
      .execute(),
    // Summed below: in id order, so that the floating-point sums are the same on both engines.
    db.selectFrom('harvests').select(['week', 'kg']).where('cycle_id', '=', cycle.id).orderBy('id').execute(),
    db.selectFrom('irrigation_entries').select(['at', 'volume_l', 'drain_l']).where('cycle_id', '=', cycle.id).orderBy('id').execute(),
    db.selectFrom('week_notes').select(['week', 'body']).where('cycle_id', '=', cycle.id).execute(),
    db.selectFrom('forecasts').select(['id', 'week', 'weeks']).where('cycle_id', '=', cycle.id).orderBy('id').execute(),
  ]);

  const byWeek = <T>(init: () => T) => {
    const m = new Map<number, T>();
    return (week: number) => {
      let v = m.get(week);
      if (v === undefined) m.set(week, (v = init()));
      return v;
    };
  };
  const zero = () => ({ green: 0, turning: 0, red: 0, total: 0, n: 0 });
  const model = byWeek(zero);
  const corrected = byWeek(zero);
  const mondayOf = (label: string) => dayNumber(parseWeek(label)!.start);
  for (const w of walks) {
    const m = model(mondayOf(w.week!));
    const c = corrected(mondayOf(w.week!));
    m.green += w.count_green ?? 0;
    m.turning += w.count_turning ?? 0;
    m.red += w.count_red ?? 0;
    m.total += w.count_total ?? 0;
    m.n++;
    c.green += w.corrected_green ?? w.count_green ?? 0;
    c.turning += w.corrected_turning ?? w.count_turning ?? 0;
    c.red += w.corrected_red ?? w.count_red ?? 0;
    c.total += w.corrected_total ?? w.count_total ?? 0;
    c.n++;
  }
  const harvest = new Map<number, number>();
  for (const h of harvests) harvest.set(mondayOf(h.week), (harvest.get(mondayOf(h.week)) ?? 0) + h.kg);
  const water = byWeek(() => ({ l: null as number | null, drain: null as number | null }));
  for (const e of irrigation) {
    const w = water(dayNumber(weekOfInstant(e.at, zone).start));
    if (e.volume_l !== null) w.l = (w.l ?? 0) + e.volume_l;
    if (e.drain_l !== null) w.drain = (w.drain ?? 0) + e.drain_l;
  }
  const noteOf = new Map(notes.map((n) => [mondayOf(n.week), noteText(n.body)]));
  // The latest stored forecast made as of each week.
  const storedAsOf = new Map<number, StoredWeek[]>();
  for (const f of forecasts) storedAsOf.set(mondayOf(f.week), JSON.parse(f.weeks) as StoredWeek[]);

  // Climate per local week: the mean of the hours of air temperature, and the radiation sum (stored sums, else global radiation).
  const fromMs = Date.UTC(1970, 0, 1 + startWeek) - 14 * 3_600_000;
  const toMs = Date.UTC(1970, 0, 8 + lastWeek) + 14 * 3_600_000;
  const series = await hourlySeries(db, cycle.id, ['air_temperature', 'radiation_sum', 'global_radiation'], fromMs, toMs);
  const perWeek = (metric: string, f: (v: number) => number) => {
    const out = new Map<number, { sum: number; n: number }>();
    const s = series.get(metric)!;
    const dayOf = localDayCursor(startWeek, lastWeek + 6, zone);
    for (let i = 0; i < s.at.length; i++) {
      const day = dayOf(s.at[i]!);
      if (Number.isNaN(day)) continue;
      const w = weekStartDay(day);
      const acc = out.get(w) ?? { sum: 0, n: 0 };
      acc.sum += f(s.values[i]!);
      acc.n++;
      out.set(w, acc);
    }
    return out;
  };
  const air = perWeek('air_temperature', (v) => v);
  const radSum = perWeek('radiation_sum', (v) => v);
  const glob = perWeek('global_radiation', (v) => Math.max(0, v) * 0.36);

  const rows: Cell[][] = [[...EXPORT_COLUMNS]];
  for (let w = startWeek; w <= lastWeek; w += 7) {
    const m = model(w);
    const c = corrected(w);
    const kg = harvest.get(w) ?? 0;
    const wt = water(w);
    const rad = radSum.get(w) ?? glob.get(w);
    const a = air.get(w);
    const h0 = storedAsOf.get(w)?.[0]?.kg ?? null;
    const h3 = storedAsOf.get(w - 21)?.[3]?.kg ?? null;
    rows.push([
      weekLabel(w),
      m.n ? m.green : null,
      m.n ? m.turning : null,
      m.n ? m.red : null,
      m.n ? m.total : null,
      c.n ? c.green : null,
      c.n ? c.turning : null,
      c.n ? c.red : null,
      c.n ? c.total : null,
      round(kg, 3),
      area.area_m2 === null ? null : round(kg / area.area_m2, 4),
      round(wt.l, 3),
      round(wt.drain, 3),
      wt.l ? round(kg / (wt.l / 1000), 3) : null,
      a ? round(a.sum / a.n, 2) : null,
      rad ? round(rad.sum, 1) : null,
      h0,
      h3,
      noteOf.get(w) ?? null,
    ]);
  }
  return rows;
}

/** The download's file name: the cycle's name and id, and the date on the greenhouse clock; only safe characters. */
export function exportFileName(ctx: CycleContext, nowMs: number): { ascii: string; utf8: string } {
  const local = dateOfDay(dayOfInstant(nowMs, ctx.zone));
  const slug = ctx.cycle.name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .toLowerCase();
  const base = `cropwalk-${slug || 'cycle'}-${ctx.cycle.id.slice(0, 8)}-${local}.csv`;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what a header value must not carry
  const utf8Name = `cropwalk-${ctx.cycle.name.replace(/[\\/:*?"<>|\u0000-\u001f]+/g, '-').slice(0, 80)}-${ctx.cycle.id.slice(0, 8)}-${local}.csv`;
  return { ascii: base, utf8: utf8Name };
}
