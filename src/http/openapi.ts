import type { CompiledRoute, JsonSchema } from './route.js';

export const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details. `code` is stable and snake_case.',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: {
      type: 'string',
      examples: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'payload_too_large', 'insufficient_storage'],
    },
    errors: {
      type: 'array',
      description: 'On 422: one entry per failing field.',
      items: {
        type: 'object',
        required: ['in', 'name', 'message'],
        properties: { in: { enum: ['path', 'query', 'header', 'body'] }, name: { type: 'string' }, message: { type: 'string' } },
      },
    },
    counts: { type: 'object', description: 'On a refused delete (409): what the level holds.', additionalProperties: { type: 'integer' } },
  },
  additionalProperties: true,
};

const ERROR_TEXT: Record<number, string> = {
  400: 'The upload has blocking problems, or the body could not be read.',
  401: 'Missing, unknown or revoked credential.',
  403: 'The key may not do this (member key on key management; cross-origin cookie request).',
  404: 'No such resource in this organization.',
  409: 'Conflict with the current state; the body says what to do.',
  410: "It existed and was removed on purpose (a walk's frames past WALK_FRAME_KEEP_DAYS, or taken for room under DISK_RESERVE); the body says when.",
  413: 'The body or upload is larger than its cap.',
  415: 'The body has the wrong content type.',
  422: 'The request failed validation (path, query, header or body); `errors` lists each field.',
  429: 'Too many failed credentials from this client; see Retry-After.',
  500: 'Internal error; the log has it under X-Request-Id.',
  503: 'A required part is unavailable: the database, or for an upload ffprobe, which checks it (code scoring_unavailable); or, for a sync push, the upstream is busy (code upstream_busy: send it again after Retry-After seconds).',
  507: "The appliance's disk is full: nothing was stored; free space on it and try again.",
};

function securityFor(route: CompiledRoute): Record<string, string[]>[] | undefined {
  switch (route.auth) {
    case 'none':
      return [];
    case 'admin-token':
      return [{ AdminToken: [] }, { AdminTokenHeader: [] }];
    case 'header-key':
      return [{ ApiKey: [] }, { Bearer: [] }];
    default:
      return [{ ApiKey: [] }, { Bearer: [] }, { SessionCookie: [] }];
  }
}

function impliedErrors(route: CompiledRoute): number[] {
  const out = new Set<number>(route.errors ?? []);
  if (route.auth !== 'none') {
    out.add(401);
    out.add(429);
  }
  if (route.auth === 'admin') out.add(403);
  if (route.auth === 'key' || route.auth === 'admin') {
    if (route.path.includes('{organization_id}')) out.add(404);
    if (route.method !== 'get') out.add(403);
  }
  if (route.params || route.query || route.headers || route.body || route.multipart) out.add(422);
  if (route.body) {
    out.add(413);
    out.add(415);
  }
  if (route.multipart || route.rawBody) {
    out.add(413);
    if (route.multipart) out.add(415);
    out.add(507);
  }
  out.add(500);
  return [...out].sort();
}

function parameters(route: CompiledRoute) {
  const out: Record<string, unknown>[] = [];
  const add = (where: 'path' | 'query' | 'header', schema: CompiledRoute['params']) => {
    if (!schema) return;
    for (const [name, prop] of Object.entries(schema.properties)) {
      const { description, ...rest } = prop as { description?: string };
      out.push({ name, in: where, required: where === 'path' || (schema.required ?? []).includes(name), description, schema: rest });
    }
  };
  add('path', route.params);
  add('query', route.query);
  add('header', route.headers);
  return out;
}

function requestBody(route: CompiledRoute) {
  // An absent JSON body is read as {} (pipeline.ts): where {} is valid, the body may be left out.
  if (route.body) return { required: route.validators.body?.({}) !== true, content: { 'application/json': { schema: route.body } } };
  if (route.multipart) {
    const properties: Record<string, unknown> = { ...route.multipart.fields.properties };
    const required = [...(route.multipart.fields.required ?? [])];
    for (const f of route.multipart.files) {
      properties[f.name] =
        f.maxCount > 1
          ? {
              type: 'array',
              maxItems: f.maxCount,
              items: { type: 'string', contentMediaType: 'application/octet-stream' },
              description: f.description,
            }
          : { type: 'string', contentMediaType: 'application/octet-stream', description: f.description };
      if (f.required) required.push(f.name);
    }
    return { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties, required } } } };
  }
  if (route.rawBody) {
    return {
      required: true,
      description: route.rawBody.description,
      content: Object.fromEntries(route.rawBody.contentTypes.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }])),
    };
  }
  return undefined;
}

export function buildOpenApi(routes: CompiledRoute[], info: { version: string; description: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(route.responses)) {
      const type = r.contentType ?? 'application/json';
      responses[status] = {
        description: r.description,
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.schema || type !== 'application/json' ? { content: { [type]: { schema: r.schema ?? { type: 'string' } } } } : {}),
      };
    }
    for (const status of impliedErrors(route)) {
      if (!responses[status])
        responses[status] = {
          description: ERROR_TEXT[status] ?? 'Error',
          content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
        };
    }
    const body = requestBody(route);
    (paths[route.path] ??= {})[route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      security: securityFor(route),
      parameters: parameters(route),
      ...(body ? { requestBody: body } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'cropwalk API', version: info.version, description: info.description },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Problem: PROBLEM_SCHEMA },
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An organization key.' },
        Bearer: { type: 'http', scheme: 'bearer', description: 'An organization key as a bearer credential.' },
        SessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'service_key',
          description: 'Set by POST /api/session. A state-changing request carried by the cookie alone must come from the same origin.',
        },
        AdminToken: { type: 'http', scheme: 'bearer', description: 'The appliance admin token (ADMIN_TOKEN, or DATA_DIR/admin-token).' },
        AdminTokenHeader: { type: 'apiKey', in: 'header', name: 'X-Admin-Token', description: 'The appliance admin token.' },
      },
    },
  };
}
