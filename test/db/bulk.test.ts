import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { among, insertRows } from '../../src/db/bulk.js';
import { apiOnPostgres, testDatabase } from '../helpers/postgres.js';

/**
 * src/db/bulk.ts on the engine of this pass (SQLite in the first pass of npm test, PostgreSQL in
 * the second): rows land in their order with every value as given, a missing column takes its
 * default, the conflict clause applies, and the statements are as few as the engine allows.
 */

type Row = Record<string, unknown>;

async function open(t: Test): Promise<{ db: Kysely<any>; statements: string[]; engine: 'sqlite' | 'postgres' } | null> {
  const statements: string[] = [];
  const log = (e: { level: string; query: { sql: string } }) => void statements.push(e.query.sql);
  if (apiOnPostgres()) {
    const url = await testDatabase(t);
    if (!url) return null;
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }), log });
    t.teardown(() => db.destroy());
    await sql`CREATE TABLE scratch (
      seq bigserial PRIMARY KEY, name text COLLATE "C" NOT NULL, big bigint, ratio double precision,
      note text COLLATE "C" NOT NULL DEFAULT 'none', raw bytea, UNIQUE (name))`.execute(db);
    return { db, statements, engine: 'postgres' };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-bulk-'));
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(path.join(dir, 'b.db')) }), log });
  t.teardown(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  await sql`CREATE TABLE scratch (
    seq integer PRIMARY KEY AUTOINCREMENT, name text NOT NULL UNIQUE, big integer, ratio real,
    note text NOT NULL DEFAULT 'none', raw blob)`.execute(db);
  return { db, statements, engine: 'sqlite' };
}

interface Stored {
  seq: number;
  name: string;
  big: number | null;
  ratio: number | null;
  note: string;
  raw: Uint8Array | null;
}

const read = async (db: Kysely<any>): Promise<Stored[]> =>
  (await sql<Row>`SELECT seq, name, big, ratio, note, raw FROM scratch ORDER BY seq`.execute(db)).rows.map((r) => ({
    ...(r as unknown as Stored),
    seq: Number(r.seq),
    big: r.big === null ? null : Number(r.big),
  }));

const inserts = (statements: string[]) => statements.filter((s) => /^\s*insert/i.test(s));

t.test('many rows: in their order, values as given, as few statements as the engine allows', async (t) => {
  const o = await open(t);
  if (!o) return;
  const awkward = ['plain', "it's", 'back\\slash', '{"looks":"like json"}', 'émoji 🍅', '"quoted"', '  spaces  ', ''];
  const rows = Array.from({ length: 12_000 }, (_, i) => ({
    name: `${awkward[i % awkward.length]}#${i}`,
    big: i % 7 === 0 ? null : Number.MAX_SAFE_INTEGER - i,
    ratio: i % 5 === 0 ? null : 0.1 + 0.2 + i / 3,
  }));
  await insertRows(o.db, 'scratch', rows);
  const got = await read(o.db);
  t.equal(got.length, rows.length, 'every row stored');
  t.same(
    got.map((r) => r.name),
    rows.map((r) => r.name),
    'the serial key follows the rows order',
  );
  t.same(
    got.map(({ name, big, ratio, note, raw }) => ({ name, big, ratio, note, raw })),
    rows.map((r) => ({ ...r, note: 'none', raw: null })),
    'every value back as given; the column left out took its default',
  );
  // SQLite: 30,000 bound values a statement, three columns a row; PostgreSQL: 5,000 rows a JSON value.
  t.equal(inserts(o.statements).length, o.engine === 'sqlite' ? 2 : 3, 'statements: as many as the engine needs, no more');
  if (o.engine === 'postgres')
    t.ok(
      inserts(o.statements).every((s) => s.includes('json_populate_recordset')),
      'PostgreSQL: the rows went as one JSON value a statement',
    );
});

t.test('rows of different columns, a conflict clause, a value JSON cannot carry', async (t) => {
  const o = await open(t);
  if (!o) return;
  await insertRows(o.db, 'scratch', [
    { name: 'a', big: 1 },
    { name: 'b', big: 2, note: 'given' },
    { name: 'c', big: 3, note: 'given' },
    { name: 'd', big: 4 },
  ]);
  t.equal(inserts(o.statements).length, 3, 'one statement for each run of rows with the same columns');
  const keep = sql`ON CONFLICT (name) DO UPDATE SET big = excluded.big WHERE excluded.big > scratch.big`;
  await insertRows(
    o.db,
    'scratch',
    [
      { name: 'a', big: 10 },
      { name: 'b', big: 0 },
      { name: 'e', big: 5 },
    ],
    keep,
  );
  const bytes = Buffer.from([0, 1, 2, 255]);
  await insertRows(o.db, 'scratch', [{ name: 'f', big: 6, raw: bytes }], keep);
  const got = await read(o.db);
  t.same(
    got.map((r) => [r.name, r.big, r.note]),
    [
      ['a', 10, 'none'],
      ['b', 2, 'given'],
      ['c', 3, 'given'],
      ['d', 4, 'none'],
      ['e', 5, 'none'],
      ['f', 6, 'none'],
    ],
    'a later value replaced an earlier one, an earlier one did not replace a later one',
  );
  t.same(Buffer.from(got.at(-1)!.raw as Uint8Array), bytes, 'bytes went as a bound value');
  if (o.engine === 'postgres')
    t.notOk(inserts(o.statements).at(-1)!.includes('json_populate_recordset'), 'PostgreSQL: a row with bytes went by VALUES');
});

t.test('a row the table refuses: nothing of the statement is written', async (t) => {
  const o = await open(t);
  if (!o) return;
  await insertRows(o.db, 'scratch', [{ name: 'kept', big: 1 }]);
  const bad = [
    { name: 'x', big: 1 },
    { name: null, big: 2 },
    { name: 'y', big: 3 },
  ];
  await t.rejects(insertRows(o.db, 'scratch', bad), /null|NOT NULL/i);
  t.same(
    (await read(o.db)).map((r) => r.name),
    ['kept'],
    'the rows before and after the refused one were not written either',
  );
});

t.test('among: the rows whose column is one of a list, whatever the values hold', async (t) => {
  const o = await open(t);
  if (!o) return;
  const names = ['a,b', '{x}', 'q"uote', 'back\\slash', 'NULL', "it's", '', 'plain'];
  await insertRows(
    o.db,
    'scratch',
    [...names, 'other'].map((name, i) => ({ name, big: i })),
  );
  const found = await o.db
    .selectFrom('scratch')
    .select('name')
    .where(among(o.db, 'name', [...names, 'absent']))
    .orderBy('seq')
    .execute();
  t.same(
    found.map((r) => r.name),
    names,
    'each value matched as itself: none split, none taken for a null',
  );
  const byNumber = await o.db
    .selectFrom('scratch')
    .select('name')
    .where(among(o.db, 'big', [0, 8]))
    .orderBy('seq')
    .execute();
  t.same(
    byNumber.map((r) => r.name),
    ['a,b', 'other'],
    'numbers too',
  );
});

t.test(
  'PostgreSQL: text JSON cannot carry goes as a bound parameter, stored as before',
  { skip: apiOnPostgres() ? false : "the JSON path is PostgreSQL's: SQLite binds every value" },
  async (t) => {
    const o = await open(t);
    if (!o) return;
    await insertRows(o.db, 'scratch', [
      { name: 'lone \ud800 surrogate', big: 1 },
      { name: 'pair 🍅', big: 2 },
    ]);
    t.same(
      (await read(o.db)).map((r) => r.name),
      ['lone \ufffd surrogate', 'pair 🍅'],
      'a lone surrogate stored as U+FFFD, as pg sends it bound; its JSON escape would have been refused',
    );
    await t.rejects(
      insertRows(o.db, 'scratch', [{ name: 'nul \u0000 inside', big: 3 }]),
      { code: '22021' },
      'a NUL refused as a bound parameter is (invalid byte sequence), not as JSON text',
    );
    t.equal((await read(o.db)).length, 2, 'and nothing of it stored');
  },
);
