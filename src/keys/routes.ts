import type { Db } from '../db/database.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { listOf, pageOf, pagingQuery, pathParams, idSchema } from '../http/schemas.js';
import { actorOf } from '../http/pipeline.js';
import { notFound } from '../http/problem.js';
import { ORG, ORGS } from '../registry/paths.js';
import { createKey, createOrganization, renameKey, revokeKey } from './commands.js';
import { createdKeySchema, keySchema, presentKey } from './presenters.js';

const TAG = 'Keys';
const ADMIN_TAG = 'Appliance admin';
const keyName = { type: 'string', minLength: 1, maxLength: 200, description: 'A name to tell the key apart, e.g. "harvest tablet".' };
const role = { enum: ['admin', 'member'], description: 'admin manages keys; member does everything else.' };

async function loadKey(db: Db, keyId: string, organizationId?: string) {
  let q = db.selectFrom('api_keys').selectAll().where('id', '=', keyId);
  if (organizationId) q = q.where('organization_id', '=', organizationId);
  const key = await q.executeTakeFirst();
  if (!key) throw notFound('key');
  return key;
}

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
  defineRoute<unknown, unknown, { name: string; key_name?: string }>({
    method: 'post',
    path: ORGS,
    operationId: 'create_organization',
    summary: 'Create an organization with its first admin key',
    description: "Authenticated with the appliance admin token. The answer holds the first admin key's secret: the only time it is shown.",
    tags: [ADMIN_TAG],
    auth: 'admin-token',
    body: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
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
    handler: async (ctx, { body }) => {
      const { org, key } = await ctx.services.store.write(actorOf(ctx.state.principal), (w) =>
        createOrganization(w, body.name, body.key_name ?? 'first admin key'),
      );
      ctx.set('Location', `${ORGS}/${org.id}`);
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
  defineRoute({
    method: 'get',
    path: `${ORG}/keys`,
    operationId: 'list_keys',
    summary: "List the organization's keys (without secrets)",
    tags: [TAG],
    auth: 'admin',
    params: pathParams('organization_id'),
    responses: { 200: { description: 'Keys, oldest first.', schema: listOf(keySchema) } },
    handler: async (ctx, { params }) => {
      const rows = await ctx.services.db
        .selectFrom('api_keys')
        .selectAll()
        .where('organization_id', '=', params.organization_id!)
        .orderBy('id')
        .execute();
      return { items: rows.map(presentKey) };
    },
  }),
  defineRoute<Record<string, string>, unknown, { name: string; role: 'admin' | 'member' }>({
    method: 'post',
    path: `${ORG}/keys`,
    operationId: 'create_key',
    summary: 'Create a key; its secret is in this answer only',
    tags: [TAG],
    auth: 'admin',
    params: pathParams('organization_id'),
    body: { type: 'object', required: ['name', 'role'], additionalProperties: false, properties: { name: keyName, role } },
    responses: { 201: { description: 'The key with its secret `api_key`.', schema: createdKeySchema } },
    handler: async (ctx, { params, body }) => {
      const key = await ctx.services.store.write(actorOf(ctx.state.principal), (w) =>
        createKey(w, params.organization_id!, body.name, body.role),
      );
      return { ...presentKey(key.row), api_key: key.apiKey };
    },
  }),
  defineRoute<Record<string, string>, unknown, { name: string }>({
    method: 'patch',
    path: `${ORG}/keys/{key_id}`,
    operationId: 'rename_key',
    summary: 'Rename a key',
    tags: [TAG],
    auth: 'admin',
    params: pathParams('organization_id', 'key_id'),
    body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: keyName } },
    responses: { 200: { description: 'The renamed key.', schema: keySchema } },
    errors: [404],
    handler: async (ctx, { params, body }) => {
      const key = await loadKey(ctx.services.db, params.key_id!, params.organization_id);
      return presentKey(await ctx.services.store.write(actorOf(ctx.state.principal), (w) => renameKey(w, key, body.name)));
    },
  }),
  defineRoute({
    method: 'post',
    path: `${ORG}/keys/{key_id}/revoke`,
    operationId: 'revoke_key',
    summary: 'Revoke a key (the last active admin key gets 409)',
    description: 'A revoked key is refused with 401 everywhere from then on. Revoking a revoked key answers it unchanged.',
    tags: [TAG],
    auth: 'admin',
    params: pathParams('organization_id', 'key_id'),
    responses: { 200: { description: 'The revoked key.', schema: keySchema } },
    errors: [404, 409],
    handler: async (ctx, { params }) => {
      return ctx.services.store.write(actorOf(ctx.state.principal), async (w) => {
        const key = await loadKey(w.trx, params.key_id!, params.organization_id);
        return presentKey(await revokeKey(w, key));
      });
    },
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
    handler: async (ctx, { query }) => {
      let q = ctx.services.db.selectFrom('api_keys');
      if (query.organization_id) q = q.where('organization_id', '=', query.organization_id);
      const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await q.selectAll().orderBy('id').limit(query.limit).offset(query.offset).execute();
      return { items: rows.map(presentKey), total: Number(total.n), limit: query.limit, offset: query.offset };
    },
  }),
  defineRoute<unknown, unknown, { organization_id: string; name: string; role: 'admin' | 'member' }>({
    method: 'post',
    path: '/api/admin/keys',
    operationId: 'admin_create_key',
    summary: 'Create a key for any organization (appliance admin token)',
    tags: [ADMIN_TAG],
    auth: 'admin-token',
    body: {
      type: 'object',
      required: ['organization_id', 'name', 'role'],
      additionalProperties: false,
      properties: { organization_id: idSchema('Organization the key belongs to.'), name: keyName, role },
    },
    responses: { 201: { description: 'The key with its secret `api_key`.', schema: createdKeySchema } },
    errors: [404],
    handler: async (ctx, { body }) => {
      const org = await ctx.services.db.selectFrom('organizations').select('id').where('id', '=', body.organization_id).executeTakeFirst();
      if (!org) throw notFound('organization');
      const key = await ctx.services.store.write(actorOf(ctx.state.principal), (w) =>
        createKey(w, body.organization_id, body.name, body.role),
      );
      return { ...presentKey(key.row), api_key: key.apiKey };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/admin/keys/{key_id}/revoke',
    operationId: 'admin_revoke_key',
    summary: 'Revoke any key (appliance admin token; the last active admin key of an organization gets 409)',
    tags: [ADMIN_TAG],
    auth: 'admin-token',
    params: pathParams('key_id'),
    responses: { 200: { description: 'The revoked key.', schema: keySchema } },
    errors: [404, 409],
    handler: async (ctx, { params }) =>
      ctx.services.store.write(actorOf(ctx.state.principal), async (w) =>
        presentKey(await revokeKey(w, await loadKey(w.trx, params.key_id!))),
      ),
  }),
];
