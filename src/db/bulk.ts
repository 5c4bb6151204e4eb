import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { engineKindOf } from './engine.js';

type Row = Record<string, unknown>;

/** SQLite allows 32,766 bound values per statement; a multi-row insert stays under it. */
export const MAX_BOUND = 30_000;
/** Rows handed to PostgreSQL in one JSON value: a pushed batch's worth, so that one message stays a few megabytes. */
const PG_ROWS = 5000;

/**
 * Inserts rows of one table in their order, in as few statements as the engine allows
 * (docs/postgres.md, "Many rows in one statement"). Rows that follow one another with the same
 * columns go in one statement: a row without a column leaves it to its default, which a
 * multi-row VALUES cannot say on SQLite.
 *
 * - SQLite: a multi-row VALUES under the bound-value cap.
 * - PostgreSQL: the rows as one JSON parameter, turned into rows of the table's own type by
 *   `json_populate_recordset`. Built as a VALUES list with a bound parameter a value, 500
 *   change-log rows cost the service 1.7 times the CPU and took 1.3 times as long, 5,000 rows 2.8
 *   and 1.6 times (bench/bulk.ts): Kysely compiling and pg sending every value, the server parsing
 *   and planning them. Rows are taken in their order (WITH ORDINALITY), so a serial key such as
 *   the change log's follows it. A row holding a value JSON cannot carry as the column's text (a
 *   Buffer, a Date, a BigInt, a non-finite number, text with a lone surrogate or a NUL;
 *   undefined, which Kysely writes as DEFAULT) goes by VALUES instead.
 *
 * `conflict` is appended to every statement (an `ON CONFLICT ...` clause, named as the engine's
 * table keys it).
 */
export async function insertRows(
  db: Kysely<any>,
  table: string,
  records: readonly object[],
  conflict?: RawBuilder<unknown>,
): Promise<void> {
  const rows = records as readonly Row[];
  const pg = engineKindOf(db) === 'postgres';
  for (let i = 0; i < rows.length;) {
    const columns = Object.keys(rows[i]!);
    const shape = columns.join(',');
    const per = pg ? PG_ROWS : Math.max(1, Math.floor(MAX_BOUND / Math.max(1, columns.length)));
    let j = i + 1;
    while (j < rows.length && j - i < per && Object.keys(rows[j]!).join(',') === shape) j++;
    const part = rows.slice(i, j);
    if (pg && part.every(jsonSafe)) await insertJson(db, table, columns, part, conflict);
    else
      await db
        .insertInto(table)
        .values(part)
        .$if(conflict !== undefined, (q) => q.modifyEnd(conflict!))
        .execute();
    i = j;
  }
}

async function insertJson(db: Kysely<any>, table: string, columns: string[], rows: readonly Row[], conflict?: RawBuilder<unknown>) {
  const names = sql.join(columns.map((c) => sql.id(c)));
  const picked = sql.join(columns.map((c) => sql.ref(`r.${c}`)));
  await sql`INSERT INTO ${sql.table(table)} (${names})
    SELECT ${picked} FROM json_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)}::json) WITH ORDINALITY AS r
    ORDER BY r.ordinality ${conflict ?? sql``}`.execute(db);
}

/**
 * Text PostgreSQL's JSON input refuses where a bound parameter is taken: a lone UTF-16 surrogate
 * (which pg sends as U+FFFD, as SQLite stores it) and NUL (refused either way, with its own error).
 */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Whether every value of a row reaches PostgreSQL the same as JSON as it does as a bound parameter. */
function jsonSafe(row: Row): boolean {
  for (const k in row) {
    const v = row[k];
    if (v === null || typeof v === 'boolean') continue;
    if (typeof v === 'string' && !v.includes('\u0000') && !LONE_SURROGATE.test(v)) continue;
    if (typeof v === 'number' && Number.isFinite(v)) continue;
    return false;
  }
  return true;
}

/**
 * `column` is one of `values`: `IN (...)` on SQLite (the caller keeps the list under its
 * bound-value cap), `= ANY(...)` of one array parameter on PostgreSQL, which sends and plans the
 * same whatever the list's length.
 */
export function among(db: Kysely<any>, column: string, values: readonly (string | number)[]): RawBuilder<SqlBool> {
  return engineKindOf(db) === 'postgres'
    ? sql<SqlBool>`${sql.ref(column)} = ANY(${values})`
    : sql<SqlBool>`${sql.ref(column)} IN (${sql.join(values)})`;
}
