import type { Context } from 'koa';
import type SQLite from 'better-sqlite3';
import type { ApiKeyTable } from '../db/schema.js';
import { keyLookup, secretMatches } from './keys.js';

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

const lookupStatements = new WeakMap<SQLite.Database, SQLite.Statement<[string], ApiKeyTable>>();

/**
 * Finds the active key matching a presented value, or null (unknown, malformed
 * or revoked). Every authenticated request runs this, so it uses one prepared
 * statement per database instead of building the query each time.
 */
export function findActiveKey(sqlite: SQLite.Database, presented: string): ApiKeyTable | null {
  let stmt = lookupStatements.get(sqlite);
  if (!stmt) lookupStatements.set(sqlite, (stmt = sqlite.prepare<[string], ApiKeyTable>('select * from api_keys where lookup = ?')));
  const lookup = keyLookup(presented);
  const row = lookup ? stmt.get(lookup) : undefined;
  // Compare even when nothing was found, so timing does not tell a near-miss from a miss.
  if (!secretMatches(presented, row?.secret_hash)) return null;
  if (!row || row.revoked_at) return null;
  return row;
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
