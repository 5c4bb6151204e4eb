import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { climateMetric } from '../metrics.js';
import { cycleKeyOf } from './points.js';
import './tables.js';

type Q = Kysely<Database> | Transaction<Database>;

/**
 * A cycle's stored readings of some metrics as hours: readings finer than an
 * hour (typed every five minutes, say) make one value per UTC hour by the
 * metric's own rule (the mean of a temperature, the sum of a radiation sum).
 * What the week read and the forecast summarise.
 */
export interface HourlySeries {
  /** Start of each hour with a value, epoch ms, ascending. */
  at: number[];
  values: number[];
}

const HOUR = 3_600_000;

export async function hourlySeries(
  db: Q,
  cycleId: string,
  metrics: readonly string[],
  fromMs: number,
  toMs: number,
): Promise<Map<string, HourlySeries>> {
  const out = new Map<string, HourlySeries>(metrics.map((m) => [m, { at: [], values: [] }]));
  const key = await cycleKeyOf(db, cycleId);
  if (key === undefined || !metrics.length) return out;
  const codes = await db.selectFrom('climate_metric_codes').select(['code', 'metric']).where('metric', 'in', metrics).execute();
  if (!codes.length) return out;
  const byCode = new Map(codes.map((c) => [c.code, c.metric]));
  const rows = await db
    .selectFrom('climate_points')
    .select(['at_ms', 'metric_code', 'value'])
    .where('cycle_key', '=', key)
    .where('at_ms', '>=', fromMs)
    .where('at_ms', '<', toMs)
    .where(
      'metric_code',
      'in',
      codes.map((c) => c.code),
    )
    .orderBy('at_ms')
    .execute();
  // Per metric: the hour being gathered, its sum and count.
  const open = new Map<string, { hour: number; sum: number; n: number }>();
  const flush = (metric: string, acc: { hour: number; sum: number; n: number }) => {
    const s = out.get(metric)!;
    s.at.push(acc.hour);
    s.values.push(climateMetric(metric)?.aggregate === 'sum' ? acc.sum : acc.sum / acc.n);
  };
  for (const r of rows) {
    const metric = byCode.get(r.metric_code)!;
    const hour = Math.floor(r.at_ms / HOUR) * HOUR;
    const acc = open.get(metric);
    if (acc && acc.hour === hour) {
      acc.sum += r.value;
      acc.n++;
      continue;
    }
    if (acc) flush(metric, acc);
    open.set(metric, { hour, sum: r.value, n: 1 });
  }
  for (const [metric, acc] of open) flush(metric, acc);
  return out;
}
