/**
 * Many rows in one statement on PostgreSQL (src/db/bulk.ts): change-log rows, the widest rows a
 * pushed batch writes, inserted in batches of 50, 500 and 5,000 rows by insertRows (one JSON
 * value a statement, json_populate_recordset) against the baseline, Kysely's multi-row VALUES
 * with a bound parameter a value, under the same bound-value cap (what insertRows wrote before),
 * alternating in the same run.
 * Figures: wall time and this process's CPU a batch, each as a ratio to the baseline's. The
 * server's own CPU is in the wall time: the service and PostgreSQL share this machine's cores.
 * PostgreSQL runs durable (scripts/pg-cluster.mjs), or is the one CROPWALK_BENCH_POSTGRES names.
 *
 *   node --import tsx bench/bulk.ts [--rounds N]
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { insertRows, MAX_BOUND } from '../src/db/bulk.js';
// @ts-expect-error: plain JavaScript (scripts/ runs before the TypeScript tooling)
import { startCluster } from '../scripts/pg-cluster.mjs';

const SIZES = [50, 500, 5000] as const;
/** Rows inserted per size and way in one round: enough batches that a size's figure is not one statement's. */
const ROWS_A_ROUND = 20_000;

export interface BulkBench {
  rounds: number;
  /** By batch size: ms of wall time and of this process's CPU a batch, each way, and JSON / VALUES. */
  sizes: Record<
    string,
    { values: { wall: number; cpu: number }; json: { wall: number; cpu: number }; wallRatio: number; cpuRatio: number }
  >;
}

const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
};

let serial = 0;
/** Change-log rows as a pushed harvest writes them (src/db/store.ts logMany): 13 columns, the record as JSON text. */
function logRows(n: number) {
  return Array.from({ length: n }, () => {
    const i = serial++;
    const id = `0193a4c2-7f1e-7000-8000-${String(i).padStart(12, '0')}`;
    return {
      organization_id: `org-${i % 50}`,
      entity: 'harvests',
      entity_id: id,
      op: 'insert',
      actor_key_id: 'key-box',
      actor: 'key:box',
      before: null,
      after: JSON.stringify({ id, cycle_id: 'c-1', week: '2026-W12', kg: 12.5 + (i % 40) / 4, note: `crate ${i}`, version: 'v' }),
      version: `2026-11-29T00:00:00.000Z-${String(i).padStart(8, '0')}-node`,
      at: '2026-11-29T00:00:00.000Z',
      org_seq: i,
      origin: 'box-1',
      change_id: `change-${i}`,
    };
  });
}

export async function runBulkBench(opts: { rounds?: number } = {}): Promise<BulkBench> {
  const rounds = opts.rounds ?? 3;
  let cluster: { url: string; stop(): void } | null = null;
  const url =
    process.env.CROPWALK_BENCH_POSTGRES ?? (cluster = (await startCluster({ durable: true })) as { url: string; stop(): void }).url;
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
  try {
    const table = `bench_bulk_${process.pid}`;
    await sql`CREATE TABLE ${sql.table(table)} (
      seq bigserial PRIMARY KEY, organization_id text COLLATE "C" NOT NULL, entity text COLLATE "C" NOT NULL,
      entity_id text COLLATE "C" NOT NULL, op text COLLATE "C" NOT NULL, actor_key_id text COLLATE "C",
      actor text COLLATE "C", before text COLLATE "C", after text COLLATE "C", version text COLLATE "C" NOT NULL,
      at text COLLATE "C" NOT NULL, org_seq bigint, origin text COLLATE "C", change_id text COLLATE "C")`.execute(db);
    const ways = {
      values: async (rows: Record<string, unknown>[]) => {
        const per = Math.floor(MAX_BOUND / Object.keys(rows[0]!).length);
        for (let i = 0; i < rows.length; i += per)
          await db
            .insertInto(table)
            .values(rows.slice(i, i + per))
            .execute();
      },
      json: (rows: Record<string, unknown>[]) => insertRows(db, table, rows),
    };
    const samples: Record<string, number[]> = {};
    const once = async (size: number, way: keyof typeof ways) => {
      const batches = Array.from({ length: Math.max(2, Math.round(ROWS_A_ROUND / size)) }, () => logRows(size));
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (const b of batches) await ways[way](b);
      const wall = (performance.now() - t0) / batches.length;
      const used = process.cpuUsage(cpu0);
      return { wall, cpu: (used.user + used.system) / 1000 / batches.length };
    };
    // Not counted: the JIT and the server's caches warm up on each way and size.
    for (const size of SIZES) for (const way of ['values', 'json'] as const) await once(size, way);
    for (let r = 0; r < rounds; r++)
      for (const size of SIZES)
        for (const way of r % 2 ? (['json', 'values'] as const) : (['values', 'json'] as const)) {
          const m = await once(size, way);
          (samples[`${size}/${way}/wall`] ??= []).push(m.wall);
          (samples[`${size}/${way}/cpu`] ??= []).push(m.cpu);
        }
    const sizes: BulkBench['sizes'] = {};
    for (const size of SIZES) {
      const fig = (way: string) => ({ wall: median(samples[`${size}/${way}/wall`]!), cpu: median(samples[`${size}/${way}/cpu`]!) });
      const values = fig('values');
      const json = fig('json');
      sizes[size] = { values, json, wallRatio: json.wall / values.wall, cpuRatio: json.cpu / values.cpu };
    }
    await sql`DROP TABLE ${sql.table(table)}`.execute(db);
    return { rounds, sizes };
  } finally {
    await db.destroy();
    cluster?.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const ri = argv.indexOf('--rounds');
  const r = await runBulkBench({ rounds: ri >= 0 ? Number(argv[ri + 1]) : undefined });
  console.log(`change-log rows on PostgreSQL, one JSON value a statement against multi-row VALUES (median of ${r.rounds} rounds):`);
  for (const [size, s] of Object.entries(r.sizes))
    console.log(
      `  ${size.padStart(5)} rows a batch  wall ${s.json.wall.toFixed(2)} / ${s.values.wall.toFixed(2)} ms = ${s.wallRatio.toFixed(2)}×` +
        `  service CPU ${s.json.cpu.toFixed(2)} / ${s.values.cpu.toFixed(2)} ms = ${s.cpuRatio.toFixed(2)}×`,
    );
}
