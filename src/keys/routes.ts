import { defineRoute, type RouteSpec } from '../http/route.js';
import { listOf, pageOf, pagingQuery, pathParams, idSchema } from '../http/schemas.js';
import { ORG, ORGS } from '../registry/paths.js';
import { createKey, createKeyFor, createOrganization, listAllKeys, listKeys, renameKey, revokeKey } from './commands.js';
import { createdKeySchema, keySchema, presentKey } from './presenters.js';

const TAG = 'Keys';
const ADMIN_TAG = 'Appliance admin';
export const keyName = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'A name to tell the key apart, e.g. "harvest tablet".',
};
export const role = { enum: ['admin', 'member'], description: 'admin manages keys; member does everything else.' };
export const organizationName = { type: 'string', minLength: 1, maxLength: 200 };

const orgCreatedSchema = {
  type: 'object',
  required: ['organization_id', 'name', 'key', 'created_at', 'updated_at', 'version'],
  properties: {
    organization_id: { type: 'string' },
    name: { type: 'string' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    version: { type: 'string' },
    key: {
      type: 'object',
      required: ['key_id', 'api_key', 'role', 'name'],
      properties: {
        key_id: { type: 'string' },
        api_key: { type: 'string', description: 'Shown in this answer only.' },
        role: { const: 'admin' },
        name: { type: 'string' },
        display: { type: 'string' },
      },
    },
  },
};

export const keyRoutes: RouteSpec[] = [
  defineRoute<unknown, unknown, { name: string; key_name?: string }, 'none', true>({
    method: 'post',
    path: ORGS,
    operationId: 'create_organization',
    summary: 'Create an organization with its first admin key',
    description: "Authenticated with the appliance admin token. The answer holds the first admin key's secret: the only time it is shown.",
    tags: [ADMIN_TAG],
    auth: 'admin-token',
    write: true,
    body: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: organizationName,
        key_name: { ...keyName, description: 'Name of the first admin key (default "first admin key").' },
      },
    },
    responses: {
      201: {
        description: 'The organization and its first admin key.',
        schema: orgCreatedSchema,
        headers: {
          Location: { description: "The organization's address, /api/organizations/{organization_id}.", schema: { type: 'string' } },
        },
      },
    },
    handler: async ({ w, body, reply }) => {
      const { org, key } = await createOrganization(w, body.name, body.key_name ?? 'first admin key');
      reply.headers.Location = `${ORGS}/${org.id}`;
      return {
        organization_id: org.id,
        name: org.name,
        created_at: org.created_at,
        updated_at: org.updated_at,
        version: org.version,
        key: { key_id: key.row.id, api_key: key.apiKey, role: 'admin', name: key.row.name, display: key.row.display },
      };
    },
  }),
  defineRoute<Record<string, string>, unknown, unknown, 'organization'>({
    method: 'get',
    path: `${ORG}/keys`,
    operationId: 'list_keys',
    summary: "List the organization's keys (without secrets)",
    tags: [TAG],
    auth: 'admin',
    scope: 'organization',
    params: pathParams('organization_id'),
    responses: { 200: { description: 'Keys, oldest first.', schema: listOf(keySchema) } },
    handler: async ({ db, scope }) => ({ items: (await listKeys(db, scope.id)).map(presentKey) }),
  }),
  defineRoute<Record<string, string>, unknown, { name: string; role: 'admin' | 'member' }, 'organization', true>({
    method: 'post',
    path: `${ORG}/keys`,
    operationId: 'create_key',
    summary: 'Create a key; its secret is in this answer only',
    tags: [TAG],
    auth: 'admin',
    scope: 'organization',
    write: true,
    params: pathParams('organization_id'),
    body: { type: 'object', required: ['name', 'role'], additionalProperties: false, properties: { name: keyName, role } },
    responses: { 201: { description: 'The key with its secret `api_key`.', schema: createdKeySchema } },
    handler: async ({ w, scope, body }) => {
      const key = await createKey(w, scope.id, body.name, body.role);
      return { ...presentKey(key.row), api_key: key.apiKey };
    },
  }),
  defineRoute<Record<string, string>, unknown, { name: string }, 'key', true>({
    method: 'patch',
    path: `${ORG}/keys/{key_id}`,
    operationId: 'rename_key',
    summary: 'Rename a key',
    tags: [TAG],
    auth: 'admin',
    scope: 'key',
    write: true,
    params: pathParams('organization_id', 'key_id'),
    body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: keyName } },
    responses: { 200: { description: 'The renamed key.', schema: keySchema } },
    errors: [404],
    handler: async ({ w, scope, body }) => presentKey(await renameKey(w, scope, body.name)),
  }),
  defineRoute<Record<string, string>, unknown, unknown, 'key', true>({
    method: 'post',
    path: `${ORG}/keys/{key_id}/revoke`,
    operationId: 'revoke_key',
    summary: 'Revoke a key (the last active admin key gets 409)',
    description: 'A revoked key is refused with 401 everywhere from then on. Revoking a revoked key answers it unchanged.',
    tags: [TAG],
    auth: 'admin',
    scope: 'key',
    write: true,
    params: pathParams('organization_id', 'key_id'),
    responses: { 200: { description: 'The revoked key.', schema: keySchema } },
    errors: [404, 409],
    handler: async ({ w, scope }) => presentKey(await revokeKey(w, scope)),
  }),
  defineRoute<unknown, { organization_id?: string; limit: number; offset: number }>({
    method: 'get',
    path: '/api/admin/keys',
    operationId: 'admin_list_keys',
    summary: 'List keys of every organization (appliance admin token)',
    tags: [ADMIN_TAG],
    auth: 'admin-token',
    query: pagingQuery({ organization_id: idSchema('Only keys of this organization.') }),
    responses: { 200: { description: 'A page of keys.', schema: pageOf(keySchema) } },
    handler: async ({ db, query }) => {
      const page = await listAllKeys(db, query);
      return { ...page, items: page.items.map(presentKey) };
    },
  }),
  defineRoute<unknown, unknown, { organization_id: string; name: string; role: 'admin' | 'member' }, 'none', true>({
    method: 'post',
    path: '/api/admin/keys',
    operationId: 'admin_create_key',
    summary: 'Create a key for any organization (appliance admin token)',
    tags: [ADMIN_TAG],
    auth: 'admin-token',
    write: true,
    body: {
      type: 'object',
      required: ['organization_id', 'name', 'role'],
      additionalProperties: false,
      properties: { organization_id: idSchema('Organization the key belongs to.'), name: keyName, role },
    },
    responses: { 201: { description: 'The key with its secret `api_key`.', schema: createdKeySchema } },
    errors: [404],
    handler: async ({ w, body }) => {
      const key = await createKeyFor(w, body.organization_id, body.name, body.role);
      return { ...presentKey(key.row), api_key: key.apiKey };
    },
  }),
  defineRoute<Record<string, string>, unknown, unknown, 'key', true>({
    method: 'post',
    path: '/api/admin/keys/{key_id}/revoke',
    operationId: 'admin_revoke_key',
    summary: 'Revoke any key (appliance admin token; the last active admin key of an organization gets 409)',
    tags: [ADMIN_TAG],
    auth: 'admin-token',
    scope: 'key',
    write: true,
    params: pathParams('key_id'),
    responses: { 200: { description: 'The revoked key.', schema: keySchema } },
    errors: [404, 409],
    handler: async ({ w, scope }) => presentKey(await revokeKey(w, scope)),
  }),
];
