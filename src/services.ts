import type { Config } from './config.js';
import type { Logger } from './log.js';
import type { Db } from './db/database.js';
import type { Store } from './db/store.js';
import type { Engine } from './db/engine.js';
import type { HybridLogicalClock } from './db/hlc.js';
import type { Clock } from './clock.js';
import type { AdminToken } from './auth/admin-token.js';
import type { FailureLimiter } from './auth/failures.js';
import type { RecordKind } from './feature.js';
import type { KeyCache } from './auth/principal.js';
import type { SyncKind } from './sync/kinds/kind.js';

/**
 * What a request handler may reach. Built once at start (src/app.ts) and
 * hung on every Koa context as `ctx.services`.
 */
export interface Services {
  config: Config;
  log: Logger;
  db: Db;
  /** SQLite or PostgreSQL, and what only one of them has (src/db/engine.ts). */
  engine: Engine;
  store: Store;
  /** The wall clock: the only one the service reads (src/clock.ts). Tests set and move it. */
  clock: Clock;
  /** Version stamps (hybrid logical clock) on `clock`. */
  hlc: HybridLogicalClock;
  adminToken: AdminToken;
  failures: FailureLimiter;
  /** Key rows by lookup, emptied after writes to api_keys. */
  keys: KeyCache;
  /** Every kind of record features keep under the registry (contents, cascade). */
  recordKinds: RecordKind[];
  /** Kinds of record features add to what travels to an upstream (src/sync). */
  syncKinds: SyncKind[];
  /** Check the response bodies against their schemas (on in tests). */
  validateResponses: boolean;
  /** Health probes features add: each says whether its part can run. */
  healthChecks: HealthCheck[];
  /** Called on shutdown, in reverse order of registration. */
  onClose: (() => Promise<void> | void)[];
}

export interface HealthCheck {
  name: string;
  check(): Promise<{ ok: boolean; detail: Record<string, unknown> }>;
  /** A failing critical check makes /api/health answer 503. */
  critical: boolean;
}

declare module 'koa' {
  interface DefaultContext {
    services: Services;
  }
}
