/**
 * The Autonomous Greenhouse Challenge season in ../shared/data/agc2 (see its
 * README), read into what a grower would have typed into the box, week by
 * week: picks with their dates and kilos, weekly truss counts (10 tagged
 * stems), fruit mass from the weighed pick samples, hourly slab temperature,
 * daily irrigation and drain. Used by bench/forecast-agc2.ts (through the
 * API) and test/forecast/agc2.test.ts (straight into the model).
 *
 * What the files do not hold, and what is assumed instead (docs/forecast.md,
 * "The agc2 replay"): fruit per truss is not counted in the crop registration,
 * so a count carries the fruit per harvested truss of the last three weighed
 * picks before its date (before any pick: GUESS_FRUIT_PER_TRUSS); fruit mass
 * before the first pick is the grower's guess GUESS_FRUIT_MASS_G.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { missingMessage, sharedPath } from '../../test/helpers/shared-data.js';
import { DateTime } from 'luxon';
import { dateOfDay, dayNumber, weekStartDay } from '../../src/time/days.js';
import type { CycleHistory, DayTemperature } from '../../src/forecast/model/inputs.js';

export const ZONE = 'Europe/Amsterdam';
export const AREA_M2 = 62.5;
export const COMPARTMENTS = ['AICU', 'Digilog', 'TheAutomators'] as const;
export type Compartment = (typeof COMPARTMENTS)[number];
/** A grower's guess before anything is weighed: a cherry tomato of about 10 g. */
export const GUESS_FRUIT_MASS_G = 10;
/** A grower's guess of fruit per cherry truss before any truss is picked. */
export const GUESS_FRUIT_PER_TRUSS = 12;
/** Tagged stems per truss count. */
export const TAGGED_STEMS = 10;

/** The season in the shared data folder (CROPWALK_SHARED, else ../shared beside the repository). */
export function agc2Dir(): string {
  return sharedPath('agc2');
}

/** Why the season cannot be read here, or null when it can. */
export function agc2Missing(): string | null {
  return existsSync(path.join(agc2Dir(), 'AICU', 'Production.csv')) ? null : missingMessage('agc2');
}

interface Table {
  header: string[];
  rows: number[][];
}

function readTable(file: string): Table {
  const lines = readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '');
  const header = lines[0]!.split(',').map((h) => h.trim().replace(/^%/, '').toLowerCase());
  const rows = lines.slice(1).map((l) => l.split(',').map((v) => (v.trim() === 'NaN' ? Number.NaN : Number(v.trim()))));
  return { header, rows };
}

function col(t: Table, name: string): number {
  const i = t.header.indexOf(name.toLowerCase());
  if (i < 0) throw new Error(`column ${name} missing (have ${t.header.join(', ')})`);
  return i;
}

/** Excel serial day (local wall time, day 0 = 1899-12-30) to the local date and the UTC instant. */
export function excelLocal(serial: number): { date: string; ms: number } {
  const day = Math.floor(serial + 1e-9);
  const date = dateOfDay(day - 25569);
  const minutes = Math.round((serial - day) * 1440);
  const local = DateTime.fromISO(date, { zone: ZONE }).plus({ minutes });
  return { date, ms: local.toMillis() };
}

export interface Pick {
  date: string;
  kg: number;
  /** g per fruit of the weighed sample; null when not weighed. */
  sampleGPerFruit: number | null;
  /** Fruit per harvested truss of the sample; null when it cannot be told. */
  sampleFruitPerTruss: number | null;
}

export interface Registration {
  date: string;
  /** Mean trusses per stem so far; NaN when not registered. */
  trussesPerStem: number;
  stemsPerM2: number;
  plantsPerM2: number;
}

export interface Season {
  name: Compartment;
  startedOn: string;
  endedOn: string;
  picks: Pick[];
  registrations: Registration[];
  /** Hourly mean slab temperature: UTC hour start (ms) → °C. */
  slabHourly: { ms: number; value: number }[];
  /** Daily irrigation and drain, litres for the compartment. */
  water: { date: string; irrigationL: number; drainL: number }[];
}

export function readSeason(name: Compartment): Season {
  const dir = path.join(agc2Dir(), name);
  const prod = readTable(path.join(dir, 'Production.csv'));
  const [t, a, b, trusses, nA, wA] = ['time', 'ProdA', 'ProdB', 'avg_nr_harvested_trusses', 'Nr_fruits_ClassA', 'Weight_fruits_ClassA'].map(
    (n) => col(prod, n),
  );
  const picks: Pick[] = prod.rows.map((r) => {
    const kgM2 = (Number.isNaN(r[a!]!) ? 0 : r[a!]!) + (Number.isNaN(r[b!]!) ? 0 : r[b!]!);
    const n = r[nA!]!;
    const w = r[wA!]!;
    const tr = r[trusses!]!;
    return {
      date: excelLocal(r[t!]!).date,
      kg: Math.round(kgM2 * AREA_M2 * 1000) / 1000,
      sampleGPerFruit: n > 0 && w > 0 ? w / n : null,
      sampleFruitPerTruss: n > 0 && tr >= 0.3 ? n / (tr * TAGGED_STEMS) : null,
    };
  });
  const crop = readTable(path.join(dir, 'CropParameters.csv'));
  const [ct, cum, sd, pd] = ['time', 'Cum_trusses', 'stem_dens', 'plant_dens'].map((n) => col(crop, n));
  const registrations = crop.rows.map((r) => ({
    date: excelLocal(r[ct!]!).date,
    trussesPerStem: r[cum!]!,
    stemsPerM2: r[sd!]!,
    plantsPerM2: r[pd!]!,
  }));

  const sens = readTable(path.join(dir, 'GrodanSens.csv'));
  const [st, s1, s2] = ['time', 't_slab1', 't_slab2'].map((n) => col(sens, n));
  const hours = new Map<number, { sum: number; n: number }>();
  for (const r of sens.rows) {
    const vals = [r[s1!]!, r[s2!]!].filter((v) => Number.isFinite(v) && v > 0 && v < 45);
    if (!vals.length) continue;
    const ms = excelLocal(r[st!]!).ms;
    const hour = Math.floor(ms / 3_600_000) * 3_600_000;
    const h = hours.get(hour) ?? { sum: 0, n: 0 };
    h.sum += vals.reduce((x, y) => x + y, 0) / vals.length;
    h.n++;
    hours.set(hour, h);
  }
  const slabHourly = [...hours.entries()]
    .filter(([, h]) => h.n >= 6)
    .map(([ms, h]) => ({ ms, value: Math.round((h.sum / h.n) * 100) / 100 }))
    .sort((x, y) => x.ms - y.ms);

  const res = readTable(path.join(dir, 'Resources.csv'));
  const [rt, irr, drain] = ['time', 'Irr', 'Drain'].map((n) => col(res, n));
  const water = res.rows.map((r) => ({
    date: excelLocal(r[rt!]!).date,
    irrigationL: (Number.isFinite(r[irr!]!) ? r[irr!]! : 0) * AREA_M2,
    drainL: (Number.isFinite(r[drain!]!) ? r[drain!]! : 0) * AREA_M2,
  }));
  return {
    name,
    startedOn: water[0]!.date,
    endedOn: water.at(-1)!.date,
    picks,
    registrations,
    slabHourly,
    water,
  };
}

/** Fruit per truss a grower would have written on a count of `date`: the last three weighed picks before it. */
export function fruitPerTrussOn(season: Season, date: string): number {
  const known = season.picks.filter((p) => p.date < date && p.sampleFruitPerTruss !== null).slice(-3);
  if (!known.length) return GUESS_FRUIT_PER_TRUSS;
  return known.reduce((s, p) => s + p.sampleFruitPerTruss!, 0) / known.length;
}

/**
 * The rows of one count: TAGGED_STEMS stems, the trusses of each numbered from 1,
 * so that the mean highest truss is the registered trusses per stem (to 0.1), and
 * fruit per truss spread over whole numbers to the same mean.
 */
export function trussRows(trussesPerStem: number, fruitPerTruss: number): { plant: string; truss: number; fruits: number }[] {
  const tenths = Math.round(trussesPerStem * TAGGED_STEMS);
  const base = Math.floor(tenths / TAGGED_STEMS);
  const extra = tenths - base * TAGGED_STEMS;
  const rows: { plant: string; truss: number; fruits: number }[] = [];
  for (let s = 0; s < TAGGED_STEMS; s++) {
    const n = base + (s < extra ? 1 : 0);
    for (let k = 1; k <= n; k++) rows.push({ plant: `S${String(s + 1).padStart(2, '0')}`, truss: k, fruits: 0 });
  }
  const total = Math.round(fruitPerTruss * rows.length);
  const each = Math.floor(total / Math.max(1, rows.length));
  let left = total - each * rows.length;
  for (const r of rows) r.fruits = each + (left-- > 0 ? 1 : 0);
  return rows;
}

/** Fruit mass by week (Monday day → g per fruit): the mean of the week's weighed samples. */
export function weeklyFruitMass(season: Season): Map<number, number> {
  const byWeek = new Map<number, number[]>();
  for (const p of season.picks) {
    if (p.sampleGPerFruit === null) continue;
    const w = weekStartDay(dayNumber(p.date));
    byWeek.set(w, [...(byWeek.get(w) ?? []), p.sampleGPerFruit]);
  }
  return new Map([...byWeek].map(([w, xs]) => [w, xs.reduce((s, x) => s + x, 0) / xs.length]));
}

/** Daily mean slab temperature on local days. */
export function dailySlab(season: Season): DayTemperature[] {
  const days = new Map<number, { sum: number; n: number }>();
  for (const h of season.slabHourly) {
    const day = dayNumber(DateTime.fromMillis(h.ms, { zone: ZONE }).toISODate()!);
    const d = days.get(day) ?? { sum: 0, n: 0 };
    d.sum += h.value;
    d.n++;
    days.set(day, d);
  }
  return [...days]
    .filter(([, d]) => d.n >= 12)
    .map(([day, d]) => ({ day, meanC: d.sum / d.n, hours: d.n, source: 'substrate_temperature' as const }))
    .sort((a, b) => a.day - b.day);
}

/**
 * The season as the model's input, built straight from the files the way the
 * API would store them (the same rules as the replay through the API).
 */
export function seasonHistory(season: Season): CycleHistory {
  const first = season.registrations.find((r) => Number.isFinite(r.trussesPerStem))!;
  const counts = season.registrations
    .filter((r) => Number.isFinite(r.trussesPerStem))
    .map((r, i, all) => {
      const rows = trussRows(r.trussesPerStem, fruitPerTrussOn(season, r.date));
      const plants = new Map<string, number>();
      for (const x of rows) plants.set(x.plant, Math.max(plants.get(x.plant) ?? 0, x.truss));
      const set = rows.filter((x) => x.fruits > 0);
      const changed = i === 0 || all[i - 1]!.stemsPerM2 !== r.stemsPerM2;
      return {
        day: dayNumber(r.date),
        trussesPerStem: [...plants.values()].reduce((s, x) => s + x, 0) / plants.size,
        fruitPerTruss: set.length ? set.reduce((s, x) => s + x.fruits, 0) / set.length : null,
        stemsPerM2: changed ? r.stemsPerM2 : null,
      };
    });
  const mass = weeklyFruitMass(season);
  const startWeek = weekStartDay(dayNumber(season.startedOn));
  const fruitMass = [{ week: startWeek, g: GUESS_FRUIT_MASS_G }, ...[...mass].map(([week, g]) => ({ week, g }))].map((m) => ({
    week: m.week,
    green_g: m.g,
    turning_g: m.g,
    red_g: m.g,
  }));
  return {
    startWeek,
    startDay: dayNumber(season.startedOn),
    endWeek: weekStartDay(dayNumber(season.endedOn)),
    endDay: dayNumber(season.endedOn),
    areaM2: AREA_M2,
    stemsPerM2: first.stemsPerM2,
    harvests: season.picks.map((p) => ({ day: dayNumber(p.date), week: weekStartDay(dayNumber(p.date)), kg: p.kg })),
    trussCounts: counts,
    walks: [],
    fruitMass,
    temperature: dailySlab(season),
    outdoorForecast: [],
  };
}
