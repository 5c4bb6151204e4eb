import { DateTime } from 'luxon';
import type { TestServer, Tree } from './server.js';

/**
 * A crop cycle with weeks of records, typed over HTTP as a grower would: a truss count every
 * Monday (10 plants, their trusses numbered from 1), fruit mass, picks on Monday and Friday with
 * kilos that follow the trusses, and hourly air temperature. Used by the forecast, backtest,
 * export and week-read tests.
 */
export interface CropOptions {
  /** Weeks of counts from the cycle's start. */
  weeks: number;
  /** First week (0-based) with picks. */
  harvestFrom?: number;
  /** Weeks with picks: harvestFrom until this (exclusive); default all. */
  harvestUntil?: number;
  /** Air temperature every hour of the counted weeks. */
  climate?: boolean;
  zone?: string;
}

export const iso = (d: string, zone: string, hour = 0) => DateTime.fromISO(d, { zone }).plus({ hours: hour }).toUTC().toISO()!;
export const plusDays = (d: string, n: number) => DateTime.fromISO(d, { zone: 'UTC' }).plus({ days: n }).toISODate()!;

export async function typeCrop(s: TestServer, tree: Tree, startedOn: string, o: CropOptions) {
  const key = tree.adminKey;
  const c = tree.cyclePath;
  const zone = o.zone ?? 'Europe/Amsterdam';
  const ok = async (method: string, url: string, body: unknown) => {
    const r = await s.request(method, url, { key, body });
    if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${r.text}`);
    return r.body;
  };
  await ok('POST', `${c}/fruit-mass`, { week: startedOn, green_g: 9, turning_g: 9.5, red_g: 10 });
  for (let w = 0; w < o.weeks; w++) {
    const monday = plusDays(startedOn, 7 * w);
    const rows = [];
    for (let p = 1; p <= 10; p++) for (let t = 1; t <= w + 1; t++) rows.push({ plant: `P${p}`, truss: t, fruits: 12 });
    await ok('PUT', `${c}/truss-counts`, { counted_on: monday, rows });
    if (w >= (o.harvestFrom ?? 8) && w < (o.harvestUntil ?? o.weeks)) {
      await ok('POST', `${c}/harvests`, { harvested_on: monday, week: monday, kg: 20 + (w % 3) });
      await ok('POST', `${c}/harvests`, { harvested_on: plusDays(monday, 4), week: monday, kg: 15 + (w % 2) });
    }
    if (o.climate) {
      const points = [];
      for (let h = 0; h < 24 * 7; h++)
        points.push({ metric: 'air_temperature', at: iso(monday, zone, h), value: 20 + (h % 24 >= 8 && h % 24 < 18 ? 3 : 0) });
      await ok('POST', `${c}/climate`, { points });
    }
  }
}
