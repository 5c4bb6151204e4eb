import type { Db } from '../db/database.js';
import type { Principal } from '../auth/principal.js';

/**
 * What a route can work on, by name, and the record each name resolves to. A feature that owns
 * a kind of scope adds it by declaration merging and registers its resolver (`Feature.scopes`):
 *
 * ```ts
 * declare module '../http/scope.js' {
 *   interface Scopes { cycle: CycleScope }
 * }
 * ```
 *
 * The pipeline resolves a route's scope before its handler runs (inside the write transaction on
 * a write route), so every path under another organization, or whose ids belong to different
 * parents, is the same 404 wherever it is declared.
 */
export interface Scopes {
  none: undefined;
}

export type ScopeName = keyof Scopes;

/**
 * Resolves a scope from the path's parameters; throws NotFound (src/errors.ts) when the path
 * names nothing the caller may see. `principal` is the authenticated caller: a walk's path
 * carries no organization, so its organization is the key's.
 */
export type ScopeResolver<S = unknown> = (db: Db, params: Record<string, string>, principal: Principal | undefined) => Promise<S>;

export type ScopeResolvers = { [K in ScopeName]?: ScopeResolver<Scopes[K]> };
