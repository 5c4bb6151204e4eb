import type Koa from 'koa';
import type { Context } from 'koa';
import Router from '@koa/router';
import { forbidden, tooManyRequests, unauthenticated } from './problem.js';
import { NotFound } from '../errors.js';
import { readJsonBody } from './json-body.js';
import {
  compileRoute,
  validatePart,
  validateTextPart,
  assertValid,
  JsonText,
  type CompiledRoute,
  type RouteSpec,
  type RouteCall,
} from './route.js';
import type { ScopeName, ScopeResolver, ScopeResolvers } from './scope.js';
import { receiveMultipart, receiveRawBody, cleanupUploads } from './uploads.js';
import { adminTokenPresented, findActiveKey, isSameOrigin, presentedKey, type PresentedKey, type Principal } from '../auth/principal.js';
import type { ApiKeyTable } from '../db/schema.js';
import { secretMatches } from '../auth/keys.js';
import { ADMIN_TOKEN_ACTOR, type Actor } from '../db/store.js';

declare module 'koa' {
  interface DefaultState {
    principal?: Principal;
    requestId: string;
    uploadedFiles?: unknown[];
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function clientAddress(ctx: Context): string {
  return ctx.ip || ctx.req.socket.remoteAddress || 'unknown';
}

/**
 * A credential that does not hold: 401, or 429 once the address is past its failures for the
 * minute, saying when to try again. Only failures are slowed down: the people behind one
 * address (a greenhouse's phones behind its router) keep in with a valid key whatever another
 * of them mistyped. Each failure is logged, never the secret.
 */
export function refuseCredentials(ctx: Context, detail: string): never {
  const { failures, log } = ctx.services;
  const client = clientAddress(ctx);
  const over = failures.retryAfter(client) > 0;
  failures.fail(client);
  const wait = over ? failures.retryAfter(client) : 0;
  log.warn('credentials refused', {
    request_id: ctx.state.requestId,
    client,
    method: ctx.method,
    path: ctx.path,
    throttled: over,
    ...(over ? { retry_after_seconds: wait } : {}),
  });
  if (over)
    throw tooManyRequests(
      `Too many failed credentials from this address: try again in ${wait} s. A valid key or token is accepted at any time.`,
      wait,
    );
  throw unauthenticated(detail);
}
const refuse = refuseCredentials;

// Synchronous unless a key has to be read from PostgreSQL: nothing else here waits, and an
// await per request costs a turn of the microtask queue on the busiest path of the service.
function authenticate(ctx: Context, route: CompiledRoute, params: Record<string, string>): Principal | undefined | Promise<Principal> {
  if (route.auth === 'none') return undefined;
  if (route.auth === 'admin-token') {
    const token = adminTokenPresented(ctx);
    if (!token || !secretMatches(token, ctx.services.adminToken.hash))
      refuse(ctx, 'The appliance admin token is required (Authorization: Bearer <token> or X-Admin-Token).');
    return { kind: 'admin-token' };
  }
  const headerOnly = route.auth === 'header-key';
  if (headerOnly && (ctx.query.api_key !== undefined || ctx.query.key !== undefined)) {
    refuse(ctx, 'This operation takes the key in a header only (X-API-Key or Authorization: Bearer), never in the query.');
  }
  const presented = presentedKey(ctx, !headerOnly);
  if (!presented) {
    refuse(
      ctx,
      headerOnly && ctx.cookies.get('service_key')
        ? 'This operation takes the key in a header only (X-API-Key or Authorization: Bearer), not the session cookie.'
        : 'An API key is required (X-API-Key, Authorization: Bearer, or the service_key session cookie).',
    );
  }
  const key = findActiveKey(ctx.services.keys, presented!.value);
  return key instanceof Promise
    ? key.then((k) => keyPrincipal(ctx, route, params, presented!, k))
    : keyPrincipal(ctx, route, params, presented!, key);
}

function keyPrincipal(
  ctx: Context,
  route: CompiledRoute,
  params: Record<string, string>,
  presented: PresentedKey,
  key: ApiKeyTable | null,
): Principal {
  if (!key) refuse(ctx, 'The API key is unknown or revoked.');
  const principal: Principal = {
    kind: 'key',
    keyId: key!.id,
    organizationId: key!.organization_id,
    role: key!.role,
    name: key!.name,
    source: presented.source,
  };
  if (principal.source === 'cookie' && !SAFE_METHODS.has(ctx.method) && !isSameOrigin(ctx)) {
    throw forbidden('A request authenticated by the session cookie alone must come from this origin.');
  }
  if (params.organization_id !== undefined && params.organization_id !== principal.organizationId) {
    throw new NotFound('organization');
  }
  if (route.auth === 'admin' && principal.role !== 'admin') {
    throw forbidden('This operation needs an admin key.');
  }
  return principal;
}

export function actorOf(principal: Principal | undefined): Actor {
  if (!principal) return { keyId: null, label: 'anonymous' };
  if (principal.kind === 'admin-token') return ADMIN_TOKEN_ACTOR;
  return { keyId: principal.keyId, label: `key:${principal.keyId}` };
}

function run(route: CompiledRoute, scopes: ScopeResolvers) {
  const resolve = route.scope && route.scope !== 'none' ? (scopes[route.scope as ScopeName] as ScopeResolver<any> | undefined) : undefined;
  if (route.scope && route.scope !== 'none' && !resolve)
    throw new Error(`route ${route.operationId}: no feature resolves scope "${route.scope}"`);
  return async (ctx: Context) => {
    const params: Record<string, string> = ctx.params ? { ...(ctx.params as Record<string, string>) } : {};
    try {
      const authenticated = authenticate(ctx, route, params);
      const principal = authenticated instanceof Promise ? await authenticated : authenticated;
      ctx.state.principal = principal;

      const query = { ...ctx.query } as Record<string, unknown>;
      const headers = route.headers
        ? Object.fromEntries(
            Object.keys(route.headers.properties)
              .filter((h) => ctx.get(h) !== '')
              .map((h) => [h, ctx.get(h)]),
          )
        : {};
      const errors =
        route.validators.params || route.validators.query || route.validators.headers
          ? [
              ...validateTextPart('path', route.params, route.validators.params, params),
              ...validateTextPart('query', route.query, route.validators.query, query),
              ...validateTextPart('header', route.headers, route.validators.headers, headers),
            ]
          : [];

      const services = ctx.services;
      if (route.admit) ctx.res.once('close', route.admit(services));
      const call: RouteCall = {
        params,
        query,
        headers,
        body: undefined,
        files: [],
        scope: undefined,
        w: undefined,
        db: services.db,
        services,
        actor: actorOf(principal),
        principal,
        reply: { headers: {} },
        http: ctx,
      };
      if (route.multipart) {
        assertValid(errors);
        const { fields, files } = await receiveMultipart(ctx, route.multipart, services.config.dataDir);
        errors.push(...validateTextPart('body', route.multipart.fields, route.validators.fields, fields));
        for (const f of route.multipart.files) {
          if (f.required && !files.some((u) => u.fieldname === f.name))
            errors.push({ in: 'body', name: f.name, message: 'is required (a file part)' });
        }
        call.body = fields;
        call.files = files;
      } else if (route.rawBody) {
        assertValid(errors);
        call.rawFile = await receiveRawBody(ctx, route.rawBody, services.config.dataDir);
      } else if (route.body) {
        // UTF-8 and nesting are checked on the bytes, before anything walks the body (json-body.ts).
        const read = await readJsonBody(ctx, services.config.jsonBodyLimit);
        call.body = read === undefined ? {} : read.value;
        if (read !== undefined) call.bodyBytes = read.bytes;
        errors.push(...validatePart('body', route.validators.body, call.body));
      }
      assertValid(errors);

      let result: unknown;
      if (route.write) {
        // The scope is read inside the transaction: what the handler writes under cannot go in between.
        // On PostgreSQL the organization's writers queue from here on (src/db/store.ts).
        const organization = params.organization_id ?? (principal?.kind === 'key' ? principal.organizationId : undefined);
        result = await services.store.write(
          call.actor,
          async (w) => {
            call.w = w;
            call.db = w.trx;
            if (resolve) call.scope = await resolve(w.trx, params, principal);
            return route.handler(call);
          },
          { organization },
        );
      } else {
        if (resolve) call.scope = await resolve(services.db, params, principal);
        // Most read handlers answer synchronously (a read from SQLite): only a promise is awaited.
        const answered = route.handler(call);
        result = answered instanceof Promise ? await answered : answered;
      }
      for (const name in call.reply.headers) ctx.set(name, call.reply.headers[name]!);
      if (result !== undefined) {
        ctx.status = call.reply.status ?? route.successStatus;
        if (result instanceof JsonText) {
          if (result.etag) {
            ctx.set('ETag', result.etag);
            if (ctx.get('if-none-match') === result.etag) {
              ctx.status = 304;
              return;
            }
          }
          ctx.type = 'application/json; charset=utf-8';
          ctx.body = result.bytes;
        } else {
          ctx.body = result;
        }
        const check = services.validateResponses ? route.validators.responses.get(ctx.status) : undefined;
        if (check && !check(result instanceof JsonText ? JSON.parse(result.text) : JSON.parse(JSON.stringify(result)))) {
          services.log.error('response does not match its schema', { operation: route.operationId, errors: check.errors });
          throw new Error(`response of ${route.operationId} does not match its schema: ${JSON.stringify(check.errors)}`);
        }
      }
    } finally {
      if (ctx.state.uploadedFiles?.length) await cleanupUploads(ctx);
    }
  };
}

/**
 * Routes are split over two routers by a fixed prefix: @koa/router tests every
 * route's pattern in turn, so a request under /api/organizations/ never scans
 * the others and the rest never scan the organization tree's routes.
 */
export const ORG_PREFIX = '/api/organizations/';

export interface Routers {
  organization: Router;
  other: Router;
}

export function routerFor(routers: Routers, path: string): Router {
  return path.startsWith(ORG_PREFIX) ? routers.organization : routers.other;
}

export function mountRoutes(routers: Routers, specs: RouteSpec[], scopes: ScopeResolvers): CompiledRoute[] {
  const compiled = specs.map(compileRoute);
  const seen = new Set<string>();
  for (const route of compiled) {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) throw new Error(`route declared twice: ${key}`);
    seen.add(key);
    routerFor(routers, route.path).register(route.koaPath, [route.method.toUpperCase()], run(route, scopes), {
      name: route.operationId,
    });
  }
  return compiled;
}

/**
 * The Koa middleware that hands each request to its route. A route without
 * path parameters is found by its exact path and method in a map; anything
 * else (parameters, HEAD, OPTIONS, a trailing slash or other case, a method
 * the path does not take) goes to @koa/router, where every route is also
 * registered, so the answers are the router's either way. The map only spares
 * the exact, most frequent requests (the session, health) the router's
 * per-request pattern scan and chain building.
 */
export function dispatch(routers: Routers, routes: CompiledRoute[], scopes: ScopeResolvers): Koa.Middleware {
  const exact = new Map<string, Koa.Middleware>();
  for (const route of routes) {
    if (!route.path.includes('{')) exact.set(`${route.method.toUpperCase()} ${route.path}`, run(route, scopes) as Koa.Middleware);
  }
  const handlers = new Map<Router, Koa.Middleware>();
  for (const r of [routers.organization, routers.other]) {
    const routed = r.routes() as unknown as Koa.Middleware;
    const allowed = r.allowedMethods({ throw: false }) as unknown as Koa.Middleware;
    handlers.set(r, (ctx, next) => routed(ctx, () => allowed(ctx, next)));
  }
  return (ctx, next) => {
    const direct = exact.get(`${ctx.method} ${ctx.path}`);
    if (direct) return direct(ctx, next);
    return handlers.get(routerFor(routers, ctx.path))!(ctx, next);
  };
}
