import { mkdirSync } from 'node:fs';
import Koa from 'koa';
import Router from '@koa/router';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { openStorage, type OpenedDatabase } from './db/database.js';
import { KEYS_CHANNEL, Store, outsideWriteGuard } from './db/store.js';
import { loadAdminToken } from './auth/admin-token.js';
import { FailureLimiter } from './auth/failures.js';
import { KeyCache, type KeyLoader } from './auth/principal.js';
import type { ApiKeyTable } from './db/schema.js';
import { internalError, methodNotAllowed, notFound, problemOf } from './http/problem.js';
import { clearIncoming } from './http/uploads.js';
import { mountRoutes, dispatch, type Routers } from './http/pipeline.js';
import type { ScopeResolvers } from './http/scope.js';
import { buildOpenApi } from './http/openapi.js';
import type { CompiledRoute } from './http/route.js';
import type { Services } from './services.js';
import type { Feature } from './feature.js';
import { systemClock, type Clock } from './clock.js';
import { FEATURES } from './features.js';
import { docsRoutes } from './docs/routes.js';
import { databaseCheck, storageCheck } from './health/routes.js';
import { webApp } from './http/web-app.js';
import { attachScheduler, startScheduler } from './schedules/feature.js';
import { checkSchedules } from './schedules/scheduler.js';
import { removePidFile, writePidFile } from './backup/restore.js';

export interface AppOptions {
  config?: Partial<Config>;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  validateResponses?: boolean;
  features?: Feature[];
  /** The service clock (src/clock.ts); tests pass a SettableClock. Default: the system clock. */
  clock?: Clock;
  /** Start background work (job runner, folder watcher, schedules). Default true. */
  startBackground?: boolean;
}

export interface App {
  koa: Koa;
  /** The routers serving the API (split by prefix, see mountRoutes). */
  routers: Routers;
  services: Services;
  routes: CompiledRoute[];
  document: ReturnType<typeof buildOpenApi>;
  listen(port?: number, host?: string): Promise<Server>;
  close(): Promise<void>;
}

const API_DESCRIPTION = `cropwalk: the greenhouse appliance's API. Registry (organization > farm > greenhouse > row > crop cycle), keys and sessions, records per crop cycle, walk scoring.

Errors are application/problem+json with a stable \`code\`; a 422 lists one entry per failing field. Ids are UUIDv7 strings. Weeks are ISO weeks, accepted as a label (2026-W07) or any date of the week, answered as labels. Instants are ISO 8601 with offset; one without an offset is read in the greenhouse's time zone.

Canonical units: kg, g, L, m³, m², °C, % (relative humidity, vent opening), ppm (CO₂), W/m² (global radiation), µmol/m²/s (PAR), J/cm² (radiation sums), kPa (VPD), mS/cm (EC), mm (fruit diameter).`;

/** How the key cache reads a key it does not hold: a prepared statement on SQLite's one connection, a query on PostgreSQL. */
function keyLoader(opened: OpenedDatabase): KeyLoader {
  if (opened.engine.kind === 'sqlite') {
    const stmt = opened.engine.sqlite!.prepare<[string], ApiKeyTable>('select * from api_keys where lookup = ?');
    return (lookup) => stmt.get(lookup);
  }
  const db = opened.db;
  return (lookup) => db.selectFrom('api_keys').selectAll().where('lookup', '=', lookup).executeTakeFirst();
}

const END: Koa.Next = () => Promise.resolve();

/**
 * Error handling, request ids and one JSON log line per request, around the
 * handler that answers it. One middleware rather than two in Koa's chain: each
 * link costs every request a promise and a bound function.
 */
function serve(log: Logger, handler: Koa.Middleware): Koa.Middleware {
  return async (ctx) => {
    const started = process.hrtime.bigint();
    const requestId = randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await handler(ctx, END);
      if (ctx.status === 404 && ctx.body === undefined) throw notFound(`No route for ${ctx.method} ${ctx.path}.`);
      if (ctx.status === 405 && ctx.body === undefined) throw methodNotAllowed(`${ctx.method} is not allowed on ${ctx.path}.`);
    } catch (err) {
      const known = problemOf(err);
      const problem = known ?? internalError(requestId);
      // The operator must see a full disk, whichever layer noticed it first.
      if (problem.status === 507)
        log.error('disk full', { request_id: requestId, method: ctx.method, path: ctx.path, error: err as Error });
      else if (!known) log.error('unhandled error', { request_id: requestId, method: ctx.method, path: ctx.path, error: err as Error });
      ctx.status = problem.status;
      for (const [h, v] of Object.entries(problem.headers)) ctx.set(h, v);
      ctx.type = 'application/problem+json';
      ctx.body = problem.toBody();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.request({
        request_id: requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(ms * 10) / 10,
        key_id: ctx.state.principal?.kind === 'key' ? ctx.state.principal.keyId : undefined,
      });
    }
  };
}

export async function createApp(options: AppOptions = {}): Promise<App> {
  const config = loadConfig(options.env ?? process.env, options.config ?? {});
  const log = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const features = options.features ?? FEATURES;
  // Before the database opens: a misspelt SCHEDULE_* setting stops the start with nothing to close.
  checkSchedules(
    features.flatMap((f) => f.schedules ?? []),
    config.schedules,
  );
  const opened = await openStorage(
    config.dataDir,
    {
      databaseUrl: config.databaseUrl,
      poolMax: config.pgPoolMax,
      onLinkError: (err) => log.warn('the process lost its own database connection; reconnecting', { error: err.message }),
    },
    clock,
  );
  // On PostgreSQL nothing has made DATA_DIR yet (SQLite's file lives in it): clips and frames go there.
  mkdirSync(config.dataDir, { recursive: true });
  // `cropwalk restore` refuses while this mark names a live process (src/backup/restore.ts).
  await writePidFile(config.dataDir);
  const leftover = await clearIncoming(config.dataDir);
  if (leftover.files) log.info('interrupted uploads removed', { ...leftover, why: 'received when the box last stopped without finishing' });

  const store = new Store(opened.db, opened.hlc, clock, opened.engine);
  const keys = new KeyCache(keyLoader(opened));
  store.afterWrite((tables) => {
    if (tables.has('api_keys')) keys.clear();
  });
  if (opened.engine.kind === 'postgres') {
    // Keys written by another process sharing the database: it says so on commit. While this
    // process cannot hear it, no key is kept in memory.
    opened.engine.link.subscribe(KEYS_CHANNEL, () => keys.clear());
    opened.engine.link.onState((up) => keys.setTrusted(up));
  }
  const services: Services = {
    config,
    log,
    // The guard turns SQLite's one-connection deadlock into an error; PostgreSQL's pool has none to guard.
    db: opened.engine.kind === 'sqlite' ? opened.db.withPlugin(outsideWriteGuard) : opened.db,
    engine: opened.engine,
    clock,
    hlc: opened.hlc,
    store,
    keys,
    adminToken: loadAdminToken(config.adminToken, config.dataDir, log),
    failures: new FailureLimiter(config.authFailuresPerMinute, () => clock.now()),
    recordKinds: features.flatMap((f) => f.recordKinds ?? []),
    syncKinds: features.flatMap((f) => f.syncKinds ?? []),
    validateResponses: options.validateResponses ?? false,
    healthChecks: [],
    onClose: [],
  };
  services.healthChecks.push(databaseCheck(services), storageCheck(services));
  attachScheduler(services, features);

  const koa = new Koa({ proxy: config.trustProxy });
  koa.context.services = services;
  const routers: Routers = { organization: new Router(), other: new Router() };
  // The docs routes serve the document built from every route, their own included.
  const built: { document?: ReturnType<typeof buildOpenApi> } = {};
  const specs = [...features.flatMap((f) => f.routes), ...docsRoutes(() => built.document)];
  const scopes: ScopeResolvers = Object.assign({}, ...features.map((f) => f.scopes ?? {}));
  const routes = mountRoutes(routers, specs, scopes);
  const document = (built.document = buildOpenApi(routes, { version: '1.0', description: API_DESCRIPTION }));

  // The staff app answers its own paths (never under /api); everything else is the API's.
  const web = webApp(config.webDir);
  const api = dispatch(routers, routes, scopes);
  koa.use(serve(log, async (ctx, next) => ((await web(ctx)) ? undefined : api(ctx, next))));
  // What Koa sees outside the handler is a connection that went away mid-request (a box's link cut
  // mid-body): worth a line, not Koa's default stack trace on stderr.
  koa.on('error', (err: Error) => log.warn('connection closed early', { error: err.message }));

  const stopAll = async () => {
    // Stop background work first (it may re-queue a job), then the database; one failing step must not keep the rest open.
    for (const fn of [...services.onClose].reverse()) {
      try {
        await fn();
      } catch (err) {
        log.error('error while closing', { error: err as Error });
      }
    }
    await opened.close();
  };
  if (options.startBackground ?? true) {
    try {
      for (const f of features) await f.start?.(services);
      // After every feature has started: a job made up at start may use what a feature started.
      await startScheduler(services);
    } catch (err) {
      // A start that fails (a bad setting a feature reads) leaves nothing open: PostgreSQL's pool
      // and the process's link connection would keep the process alive.
      await stopAll();
      await removePidFile(config.dataDir);
      throw err;
    }
  }

  let server: Server | undefined;
  return {
    koa,
    routers,
    services,
    routes,
    document,
    listen(port = config.port, host = config.host) {
      return new Promise((resolve) => {
        server = koa.listen(port, host, () => resolve(server!));
      });
    },
    async close() {
      if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
      await stopAll();
      await removePidFile(config.dataDir);
    },
  };
}
