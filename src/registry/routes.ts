import type { Context } from 'koa';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { cascadeQuery, deletedSchema, listOf, pathParams } from '../http/schemas.js';
import { actorOf } from '../http/pipeline.js';
import { notFound } from '../http/problem.js';
import { LEVELS, LEVEL_ORDER, createSchema, patchSchema, responseSchema, type Level } from './levels.js';
import { afterDelete, createLevel, deleteLevel, levelContents, updateLevel } from './commands.js';
import { presentLevel } from './presenters.js';
import { organizationTree } from './tree.js';
import { ORG } from './paths.js';

const TAG = 'Registry';

function idsOf(level: Level): string[] {
  return ['organization_id', ...level.parentIds, level.idName];
}

/** Loads a level's record by the full path, so mismatched parents are a 404. */
async function load(ctx: Context, level: Level, params: Record<string, string>) {
  let q = (ctx.services.db as any)
    .selectFrom(level.table)
    .selectAll()
    .where('id', '=', params[level.idName])
    .where('organization_id', '=', params.organization_id);
  for (const p of level.parentIds) q = q.where(p, '=', params[p]);
  const row = await q.executeTakeFirst();
  if (!row) throw notFound(level.label);
  return row as Record<string, any>;
}

/** The parent record must exist (and belong to this path) before a child is made under it. */
async function loadParent(ctx: Context, level: Level, params: Record<string, string>) {
  const parentName = LEVEL_ORDER[LEVEL_ORDER.indexOf(level.name) - 1];
  if (!parentName) return;
  await load(ctx, LEVELS[parentName], params);
}

const contentsSchema = {
  type: 'object',
  required: ['counts', 'total'],
  properties: {
    counts: {
      type: 'object',
      additionalProperties: { type: 'integer' },
      description: 'Per kind of record (lower levels, then every record kind), how many are under the level.',
    },
    total: { type: 'integer' },
  },
};

/** A level's item path with its ids filled in. */
function itemUrl(level: Level, ids: Record<string, string>): string {
  return level.itemPath.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(ids[name] ?? ''));
}

function levelRoutes(level: Level): RouteSpec[] {
  const parentParams = pathParams(...['organization_id', ...level.parentIds]);
  const itemParams = pathParams(...idsOf(level));
  const schema = responseSchema(level);
  const Title = level.label[0]!.toUpperCase() + level.label.slice(1);
  return [
    defineRoute<Record<string, string>, unknown, Record<string, unknown>>({
      method: 'post',
      path: level.collectionPath,
      operationId: `create_${level.name}`,
      summary: `Create a ${level.label}`,
      tags: [TAG],
      auth: 'key',
      params: parentParams,
      body: createSchema(level),
      responses: {
        201: {
          description: `The created ${level.label}.`,
          schema,
          headers: { Location: { description: `The new ${level.label}'s address.`, schema: { type: 'string' } } },
        },
      },
      errors: [404],
      handler: async (ctx, { params, body }) => {
        await loadParent(ctx, level, params);
        const row = await ctx.services.store.write(actorOf(ctx.state.principal), (w) => createLevel(w, level, params, body));
        ctx.set('Location', itemUrl(level, { ...params, [level.idName]: String(row.id) }));
        return presentLevel(level, row);
      },
    }),
    defineRoute({
      method: 'get',
      path: level.collectionPath,
      operationId: `list_${level.plural}`,
      summary: `List the ${level.plural} of the parent`,
      tags: [TAG],
      auth: 'key',
      params: parentParams,
      responses: { 200: { description: `The ${level.plural}, oldest first.`, schema: listOf(schema) } },
      errors: [404],
      handler: async (ctx, { params }) => {
        await loadParent(ctx, level, params);
        const owner = level.parentIds.at(-1) ?? 'organization_id';
        const rows = await (ctx.services.db as any)
          .selectFrom(level.table)
          .selectAll()
          .where(owner, '=', params[owner])
          .orderBy('id')
          .execute();
        return { items: rows.map((r: Record<string, unknown>) => presentLevel(level, r)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: level.itemPath,
      operationId: `get_${level.name}`,
      summary: `Read a ${level.label}`,
      tags: [TAG],
      auth: 'key',
      params: itemParams,
      responses: { 200: { description: Title, schema } },
      errors: [404],
      handler: async (ctx, { params }) => presentLevel(level, await load(ctx, level, params)),
    }),
    defineRoute<Record<string, string>, unknown, Record<string, unknown>>({
      method: 'patch',
      path: level.itemPath,
      operationId: `update_${level.name}`,
      summary: `Change a ${level.label}'s name and details`,
      description:
        'Fields left out keep their value; a detail sent as null is cleared. Ids never change: an id field in the body is refused (422).',
      tags: [TAG],
      auth: 'key',
      params: itemParams,
      body: patchSchema(level),
      responses: { 200: { description: `The changed ${level.label}.`, schema } },
      errors: [404],
      handler: async (ctx, { params, body }) => {
        const current = await load(ctx, level, params);
        const row = await ctx.services.store.write(actorOf(ctx.state.principal), (w) => updateLevel(w, level, current, body));
        return presentLevel(level, row);
      },
    }),
    defineRoute<Record<string, string>, { cascade?: boolean }>({
      method: 'delete',
      path: level.itemPath,
      operationId: `delete_${level.name}`,
      summary: `Delete a ${level.label}`,
      description: `409 with \`counts\` while the ${level.label} holds anything; with cascade=true it is removed with all it holds in one transaction. Once it has committed, the clips and frames of the walks that went with it are removed from disk, and a walk being scored is stopped.`,
      tags: [TAG],
      auth: 'key',
      params: itemParams,
      query: cascadeQuery,
      responses: { 200: { description: 'Deleted, with what went with it.', schema: deletedSchema } },
      errors: [404, 409],
      handler: async (ctx, { params, query }) => {
        await load(ctx, level, params);
        const deleted = await ctx.services.store.write(actorOf(ctx.state.principal), (w) =>
          deleteLevel(w, ctx.services.recordKinds, level, params[level.idName]!, query.cascade === true),
        );
        afterDelete(ctx.services, deleted);
        return { deleted: true, counts: deleted.counts };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${level.itemPath}/contents`,
      operationId: `${level.name}_contents`,
      summary: `Count everything under a ${level.label}`,
      description:
        level.name === 'farm' ? 'Exactly what a cascading delete of the farm removes.' : 'What a cascading delete removes with it.',
      tags: [TAG],
      auth: 'key',
      params: itemParams,
      responses: { 200: { description: 'Counts per kind.', schema: contentsSchema } },
      errors: [404],
      handler: async (ctx, { params }) => {
        await load(ctx, level, params);
        const counts = await levelContents(ctx.services.db, ctx.services.recordKinds, level, params[level.idName]!);
        return { counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
      },
    }),
  ];
}

const treeNode = (level: Level, child?: { key: string; schema: unknown }) => ({
  ...(responseSchema(level) as object),
  ...(child ? { properties: { ...(responseSchema(level) as any).properties, [child.key]: { type: 'array', items: child.schema } } } : {}),
});

const treeSchema = {
  type: 'object',
  required: ['organization_id', 'name', 'farms'],
  properties: {
    organization_id: { type: 'string' },
    name: { type: 'string' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    version: { type: 'string' },
    farms: {
      type: 'array',
      items: treeNode(LEVELS.farm, {
        key: 'greenhouses',
        schema: treeNode(LEVELS.greenhouse, {
          key: 'rows',
          schema: treeNode(LEVELS.row, { key: 'cycles', schema: treeNode(LEVELS.cycle) }),
        }),
      }),
    },
  },
};

export const treeRoute = defineRoute({
  method: 'get',
  path: ORG,
  operationId: 'get_organization_tree',
  summary: 'The organization with its tree of farms, greenhouses, rows and crop cycles',
  tags: [TAG],
  auth: 'key',
  params: pathParams('organization_id'),
  responses: {
    200: {
      description: 'The tree.',
      schema: treeSchema,
      headers: {
        ETag: {
          description: 'Changes whenever anything in the organization changes; send it back as If-None-Match for a 304.',
          schema: { type: 'string' },
        },
      },
    },
  },
  handler: async (ctx, { params }) => organizationTree(ctx.services, params.organization_id!),
});

export const registryRoutes: RouteSpec[] = [treeRoute, ...LEVEL_ORDER.flatMap((n) => levelRoutes(LEVELS[n]))];
