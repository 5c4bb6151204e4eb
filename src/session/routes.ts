import { defineRoute, type RouteSpec } from '../http/route.js';
import { findActiveKey, SESSION_COOKIE } from '../auth/principal.js';
import { refuseCredentials } from '../http/pipeline.js';
import { unauthenticated } from '../http/problem.js';

const TAG = 'Session';

const sessionSchema = {
  type: 'object',
  required: ['key_id', 'organization_id', 'role', 'name', 'via'],
  properties: {
    key_id: { type: 'string' },
    organization_id: { type: 'string' },
    role: { enum: ['admin', 'member'] },
    name: { type: 'string' },
    via: { enum: ['x-api-key', 'bearer', 'cookie'], description: 'How the key was presented.' },
  },
  additionalProperties: false,
};

export const sessionRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/session',
    operationId: 'get_session',
    summary: 'Read the session: which key, organization and role',
    tags: [TAG],
    auth: 'key',
    responses: { 200: { description: 'The session.', schema: sessionSchema } },
    handler: ({ principal: p }) => {
      if (p?.kind !== 'key') throw unauthenticated();
      return { key_id: p.keyId, organization_id: p.organizationId, role: p.role, name: p.name, via: p.source };
    },
  }),
  defineRoute<unknown, unknown, { api_key: string }>({
    method: 'post',
    path: '/api/session',
    operationId: 'create_session',
    summary: 'Sign in: check a key and set the service_key cookie',
    description:
      'The cookie is HttpOnly, SameSite=Strict, and Secure when the request came over TLS (directly or, with TRUST_PROXY, through a proxy). A state-changing request carried by the cookie alone must come from the same origin.',
    tags: [TAG],
    auth: 'none',
    body: {
      type: 'object',
      required: ['api_key'],
      additionalProperties: false,
      properties: { api_key: { type: 'string', minLength: 1, maxLength: 200 } },
    },
    responses: {
      200: {
        description: 'Signed in.',
        schema: sessionSchema,
        headers: { 'Set-Cookie': { description: 'service_key=<key>; HttpOnly; SameSite=Strict; Path=/', schema: { type: 'string' } } },
      },
    },
    errors: [401, 429],
    // Signing in is HTTP itself (a cookie, a client address to slow down): this route reads Koa's context.
    handler: async ({ http: ctx, services, body }) => {
      // A valid key signs in whatever this address failed before; a wrong one counts as a failure (pipeline.ts).
      const key = await findActiveKey(services.keys, body.api_key);
      if (!key) refuseCredentials(ctx, 'The API key is unknown or revoked.');
      ctx.cookies.set(SESSION_COOKIE, body.api_key, { httpOnly: true, sameSite: 'strict', secure: ctx.secure, path: '/', overwrite: true });
      return { key_id: key.id, organization_id: key.organization_id, role: key.role, name: key.name, via: 'cookie' };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/session',
    operationId: 'delete_session',
    summary: 'Sign out: clear the service_key cookie',
    tags: [TAG],
    auth: 'none',
    responses: {
      200: {
        description: 'Signed out.',
        schema: { type: 'object', required: ['signed_out'], properties: { signed_out: { const: true } } },
      },
    },
    handler: ({ http: ctx }) => {
      ctx.cookies.set(SESSION_COOKIE, null, { httpOnly: true, sameSite: 'strict', secure: ctx.secure, path: '/', overwrite: true });
      return { signed_out: true };
    },
  }),
];
