import type SQLite from 'better-sqlite3';
import type { EngineKind, TransactionEngine } from './engine.js';

/**
 * Plain SQL on the write transaction's own connection, for code that runs many small
 * statements in a loop (sync's climate kind, the received-change ledger): on SQLite a prepared
 * statement per text, kept for the connection's life and run synchronously, as better-sqlite3
 * is at its fastest; on PostgreSQL the same text with `$n` for each `?`, on the transaction's
 * pooled connection. The text must be valid on both engines (ON CONFLICT ... excluded is).
 */
export interface RawSql {
  readonly kind: EngineKind;
  get<R>(text: string, ...params: unknown[]): Promise<R | undefined>;
  all<R>(text: string, ...params: unknown[]): Promise<R[]>;
  run(text: string, ...params: unknown[]): Promise<void>;
}

const prepared = new WeakMap<SQLite.Database, Map<string, SQLite.Statement>>();
const numbered = new Map<string, { text: string; name: string }>();

function statement(sqlite: SQLite.Database, text: string): SQLite.Statement {
  let cache = prepared.get(sqlite);
  if (!cache) prepared.set(sqlite, (cache = new Map()));
  let st = cache.get(text);
  if (!st) cache.set(text, (st = sqlite.prepare(text)));
  return st;
}

/**
 * `?` → `$1, $2, ...` (the texts given here hold no `?` inside a string literal), and a name:
 * `pg` prepares a named statement once per connection and runs it again without parsing.
 */
function pgStatement(text: string): { text: string; name: string } {
  let out = numbered.get(text);
  if (out === undefined) {
    let n = 0;
    out = { text: text.replace(/\?/g, () => `$${++n}`), name: `cw_raw_${numbered.size + 1}` };
    numbered.set(text, out);
  }
  return out;
}

export function rawSql(engine: TransactionEngine): RawSql {
  if (engine.kind === 'sqlite') {
    const sqlite = engine.sqlite;
    if (!sqlite) throw new Error('plain SQL needs the SQLite connection (Store built without its engine)');
    return {
      kind: 'sqlite',
      get: async <R>(text: string, ...params: unknown[]) => statement(sqlite, text).get(...params) as R | undefined,
      all: async <R>(text: string, ...params: unknown[]) => statement(sqlite, text).all(...params) as R[],
      run: async (text: string, ...params: unknown[]) => void statement(sqlite, text).run(...params),
    };
  }
  const client = engine.client;
  const query = (text: string, params: unknown[]) => client.query({ ...pgStatement(text), values: params });
  return {
    kind: 'postgres',
    get: async <R>(text: string, ...params: unknown[]) => (await query(text, params)).rows[0] as R | undefined,
    all: async <R>(text: string, ...params: unknown[]) => (await query(text, params)).rows as R[],
    run: async (text: string, ...params: unknown[]) => void (await query(text, params)),
  };
}
