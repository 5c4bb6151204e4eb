import type { Context } from 'koa';
import type { ApiKeyTable } from '../db/schema.js';
import { hashBytes, keyLookup, secretMatches } from './keys.js';

export type KeySource = 'x-api-key' | 'bearer' | 'cookie';

export type Principal =
  | { kind: 'key'; keyId: string; organizationId: string; role: 'admin' | 'member'; name: string; source: KeySource }
  | { kind: 'admin-token' };

export const SESSION_COOKIE = 'service_key';

export interface PresentedKey {
  value: string;
  source: KeySource;
}

/** The key a request presents, headers before the cookie. */
export function presentedKey(ctx: Context, allowCookie: boolean): PresentedKey | null {
  const header = ctx.get('x-api-key');
  if (header) return { value: header.trim(), source: 'x-api-key' };
  const bearer = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
  if (bearer) return { value: bearer[1]!.trim(), source: 'bearer' };
  if (allowCookie) {
    const cookie = ctx.cookies.get(SESSION_COOKIE);
    if (cookie) return { value: cookie, source: 'cookie' };
  }
  return null;
}

/** A key row as the cache holds it: with its stored hash already decoded for comparison. */
export interface CachedKey {
  row: ApiKeyTable;
  hash: Buffer;
}

/** Reads a key row by its lookup part: synchronously on SQLite (a prepared statement), by a query on PostgreSQL. */
export type KeyLoader = (lookup: string) => ApiKeyTable | undefined | Promise<ApiKeyTable | undefined>;

/**
 * Key rows by their lookup part, kept in memory: every authenticated request
 * needs one, and a read transaction on the WAL file costs more than the rest
 * of the check. The store empties it after any write to api_keys ends, so a
 * revocation takes effect on the next request; on PostgreSQL, where other
 * processes write keys too, also when one of them says so (src/app.ts, the
 * keys channel), and nothing is kept while that word cannot be heard.
 * On SQLite reads are synchronous, so none interleaves with a clearing; on
 * PostgreSQL a read that a clearing overtook keeps nothing. Only keys that
 * exist are kept (guesses are not).
 */
export class KeyCache {
  private readonly rows = new Map<string, CachedKey>();
  /** Moves on at every clearing: a read begun before one does not fill the cache after it. */
  private generation = 0;
  /** False while the cache cannot learn of other processes' writes (PostgreSQL, its listener down). */
  private trusted = true;

  constructor(
    private readonly load: KeyLoader,
    private readonly maxEntries = 10_000,
  ) {}

  clear(): void {
    this.rows.clear();
    this.generation++;
  }

  /** Whether rows may be kept: false empties the cache and reads every key afresh until set true again. */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.clear();
  }

  /** The key with this lookup part; a promise only when it has to be read from PostgreSQL. */
  get(lookup: string): CachedKey | undefined | Promise<CachedKey | undefined> {
    const hit = this.rows.get(lookup);
    if (hit) return hit;
    const generation = this.generation;
    const loaded = this.load(lookup);
    return loaded instanceof Promise ? loaded.then((row) => this.keep(lookup, row, generation)) : this.keep(lookup, loaded, generation);
  }

  private keep(lookup: string, row: ApiKeyTable | undefined, generation: number): CachedKey | undefined {
    if (!row) return undefined;
    const entry = { row, hash: hashBytes(row.secret_hash) };
    if (this.trusted && generation === this.generation && this.rows.size < this.maxEntries) this.rows.set(lookup, entry);
    return entry;
  }
}

/** Finds the active key matching a presented value, or null (unknown, malformed or revoked); a promise only when the key had to be read from PostgreSQL. */
export function findActiveKey(keys: KeyCache, presented: string): ApiKeyTable | null | Promise<ApiKeyTable | null> {
  const lookup = keyLookup(presented);
  const found = lookup ? keys.get(lookup) : undefined;
  return found instanceof Promise ? found.then((f) => activeKey(presented, f)) : activeKey(presented, found);
}

function activeKey(presented: string, found: CachedKey | undefined): ApiKeyTable | null {
  // Compare even when nothing was found, so timing does not tell a near-miss from a miss.
  if (!secretMatches(presented, found?.hash)) return null;
  if (!found || found.row.revoked_at) return null;
  return found.row;
}

export function adminTokenPresented(ctx: Context): string | null {
  const header = ctx.get('x-admin-token');
  if (header) return header.trim();
  const bearer = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
  return bearer ? bearer[1]!.trim() : null;
}

/** A state-changing request carried by the cookie alone must come from this origin (CSRF). */
export function isSameOrigin(ctx: Context): boolean {
  const origin = ctx.get('origin') || ctx.get('referer');
  if (!origin) return ctx.get('sec-fetch-site') === 'same-origin';
  try {
    const url = new URL(origin);
    return url.host === ctx.host;
  } catch {
    return false;
  }
}
