import { defineRoute, type RouteSpec } from '../http/route.js';
import { cascadeQuery, deletedSchema, listOf, pathParams } from '../http/schemas.js';
import type { ScopeName, Scopes } from '../http/scope.js';
import { LEVELS, LEVEL_ORDER, createSchema, patchSchema, responseSchema, type Level, type LevelName } from './levels.js';
import { createLevel, deleteLevel, levelContents, listLevel, updateLevel } from './commands.js';
import { presentLevel } from './presenters.js';
import { organizationTree } from './tree.js';
import { ORG } from './paths.js';

const TAG = 'Registry';

function idsOf(level: Level): string[] {
  return ['organization_id', ...level.parentIds, level.idName];
}

/** The scope a level's collection hangs under: its parent level, or the organization for farms. */
function parentScope(level: Level): ScopeName {
  return LEVEL_ORDER[LEVEL_ORDER.indexOf(level.name) - 1] ?? 'organization';
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

type Row = Record<string, any>;

/** A level's scope is its record (a crop cycle's also carries its greenhouse and zone). */
const rowOf = (scope: Scopes[LevelName]): Row => ('cycle' in scope && 'zone' in scope ? scope.cycle : scope) as Row;

function levelRoutes(level: Level): RouteSpec[] {
  const parentParams = pathParams(...['organization_id', ...level.parentIds]);
  const itemParams = pathParams(...idsOf(level));
  const schema = responseSchema(level);
  const Title = level.label[0]!.toUpperCase() + level.label.slice(1);
  return [
    defineRoute<Record<string, string>, unknown, Row, ScopeName, true>({
      method: 'post',
      path: level.collectionPath,
      operationId: `create_${level.name}`,
      summary: `Create a ${level.label}`,
      tags: [TAG],
      auth: 'key',
      scope: parentScope(level),
      write: true,
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
      handler: async ({ w, params, body, reply }) => {
        const row = await createLevel(w, level, params, body);
        reply.headers.Location = itemUrl(level, { ...params, [level.idName]: String(row.id) });
        return presentLevel(level, row);
      },
    }),
    defineRoute<Record<string, string>, unknown, unknown, ScopeName>({
      method: 'get',
      path: level.collectionPath,
      operationId: `list_${level.plural}`,
      summary: `List the ${level.plural} of the parent`,
      tags: [TAG],
      auth: 'key',
      scope: parentScope(level),
      params: parentParams,
      responses: { 200: { description: `The ${level.plural}, oldest first.`, schema: listOf(schema) } },
      errors: [404],
      handler: async ({ db, params }) => ({ items: (await listLevel(db, level, params)).map((r) => presentLevel(level, r)) }),
    }),
    defineRoute<Record<string, string>, unknown, unknown, LevelName>({
      method: 'get',
      path: level.itemPath,
      operationId: `get_${level.name}`,
      summary: `Read a ${level.label}`,
      tags: [TAG],
      auth: 'key',
      scope: level.name,
      params: itemParams,
      responses: { 200: { description: Title, schema } },
      errors: [404],
      handler: ({ scope }) => presentLevel(level, rowOf(scope)),
    }),
    defineRoute<Record<string, string>, unknown, Row, LevelName, true>({
      method: 'patch',
      path: level.itemPath,
      operationId: `update_${level.name}`,
      summary: `Change a ${level.label}'s name and details`,
      description:
        'Fields left out keep their value; a detail sent as null is cleared. Ids never change: an id field in the body is refused (422).',
      tags: [TAG],
      auth: 'key',
      scope: level.name,
      write: true,
      params: itemParams,
      body: patchSchema(level),
      responses: { 200: { description: `The changed ${level.label}.`, schema } },
      errors: [404],
      handler: async ({ w, scope, body }) => presentLevel(level, await updateLevel(w, level, rowOf(scope), body)),
    }),
    defineRoute<Record<string, string>, { cascade?: boolean }, unknown, LevelName, true>({
      method: 'delete',
      path: level.itemPath,
      operationId: `delete_${level.name}`,
      summary: `Delete a ${level.label}`,
      description: `409 with \`counts\` while the ${level.label} holds anything; with cascade=true it is removed with all it holds in one transaction. Once it has committed, the clips and frames of the walks that went with it are removed from disk, and a walk being scored is stopped.`,
      tags: [TAG],
      auth: 'key',
      scope: level.name,
      write: true,
      params: itemParams,
      query: cascadeQuery,
      responses: { 200: { description: 'Deleted, with what went with it.', schema: deletedSchema } },
      errors: [404, 409],
      handler: async ({ w, scope, query, services }) => {
        const deleted = await deleteLevel(w, services, level, rowOf(scope).id, query.cascade === true);
        return { deleted: true, counts: deleted.counts };
      },
    }),
    defineRoute<Record<string, string>, unknown, unknown, LevelName>({
      method: 'get',
      path: `${level.itemPath}/contents`,
      operationId: `${level.name}_contents`,
      summary: `Count everything under a ${level.label}`,
      description:
        level.name === 'farm' ? 'Exactly what a cascading delete of the farm removes.' : 'What a cascading delete removes with it.',
      tags: [TAG],
      auth: 'key',
      scope: level.name,
      params: itemParams,
      responses: { 200: { description: 'Counts per kind.', schema: contentsSchema } },
      errors: [404],
      handler: async ({ db, scope, services }) => {
        const counts = await levelContents(db, services.recordKinds, level, rowOf(scope).id);
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
  handler: ({ services, params }) => organizationTree(services, params.organization_id!),
});

export const registryRoutes: RouteSpec[] = [treeRoute, ...LEVEL_ORDER.flatMap((n) => levelRoutes(LEVELS[n]))];
