import { decodeJsonText, parseJsonText } from '../http/json-body.js';
import { gzipSync } from 'node:zlib';
import { readFile } from 'node:fs/promises';
import type { Context } from 'koa';
import { Readable } from 'node:stream';
import { defineRoute, type RouteSpec } from '../http/route.js';
import type { Principal } from '../auth/principal.js';
import type { Services } from '../services.js';
import { Conflict, Forbidden } from '../errors.js';
import { agentOf, type SyncAgent } from './agent.js';
import { syncStatus } from './status.js';
import { organizationDigest } from './digest.js';
import { pushGateOf } from './admission.js';
import { linkToUpstream, type LinkInput } from './link.js';
import {
  appendUpload,
  hello,
  openContent,
  PUSH_LIMIT,
  readPushBody,
  receivePush,
  registerOrganization,
  servePull,
  STATUS_MAX,
  uploadStatus,
  uploadStatuses,
  type Caller,
} from './upstream.js';
import {
  digestSchema,
  helloSchema,
  linkBody,
  linkedSchema,
  pullAnswerSchema,
  pushAnswerSchema,
  registerBody,
  registeredSchema,
  roundSchema,
  statusSchema,
  uploadSchema,
  uploadStatusesSchema,
} from './schemas.js';

const TAG = 'Sync';
const V1 = '/api/sync/v1';
const contentParams = {
  type: 'object' as const,
  required: ['content'],
  properties: {
    content: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The content, named by its sha256 in lower-case hex.' },
  },
};
const nodeQuery = {
  type: 'string',
  pattern: '^[0-9a-z]{1,64}$',
  description: 'The asking box’s node id (GET /api/sync answers it as `node`).',
};

/** The key's organization: every sync route works on it and on nothing else. */
function caller(principal: Principal | undefined): Caller {
  if (principal?.kind !== 'key') throw new Forbidden('An admin key of the organization is required.');
  return { organizationId: principal.organizationId, keyId: principal.keyId };
}

/** The box's agent, for a route that runs a round; 409 on an instance that syncs with no upstream. */
function agentFor(services: Services, organizationId?: string): SyncAgent {
  const agent = agentOf(services);
  if (!agent) throw new Conflict('This instance syncs with no upstream (UPSTREAM_URL is not set and no link was made).', {}, 'no_upstream');
  if (organizationId && agent.organizationId !== null && agent.organizationId !== organizationId)
    throw new Conflict("This box syncs another organization than the key's.", {}, 'no_upstream');
  return agent;
}

/** Big pages go gzip-compressed to a client that takes it; the answer is the same JSON. */
function sendJson(ctx: Context, value: unknown): unknown {
  const text = JSON.stringify(value);
  if (text.length < 8192 || !ctx.acceptsEncodings('gzip', 'identity')?.toString().startsWith('gzip')) return value;
  ctx.status = 200;
  ctx.type = 'application/json; charset=utf-8';
  ctx.set('Content-Encoding', 'gzip');
  ctx.body = gzipSync(Buffer.from(text), { level: 6 });
  return undefined;
}

export const syncRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/sync',
    operationId: 'get_sync_status',
    summary: 'Where this instance stands with its upstream',
    description:
      "For the key's organization: the upstream, the state, the changes made here not yet acknowledged, the quarantined changes with their reasons, the last push and pull (time, count, error), the lag in seconds, and the walk files still to move. On an upstream (no UPSTREAM_URL) the role is `upstream` and `received` lists the boxes that sent changes. Admin key. See docs/sync.md.",
    tags: [TAG],
    auth: 'admin',
    responses: { 200: { description: 'The sync status.', schema: statusSchema } },
    handler: ({ services, principal }) => syncStatus(services, caller(principal).organizationId),
  }),
  defineRoute({
    method: 'post',
    path: '/api/sync',
    operationId: 'sync_now',
    summary: 'Sync with the upstream now',
    description:
      'Runs a round now (after the one running, if any), whatever the backoff, and answers when it is done with what moved: changes pushed and refused, pulled, walk files sent and received, bytes. A round that failed (offline, key refused) answers 200 with `ok: false` and the reason. 409 on an instance without an upstream. Admin key.',
    tags: [TAG],
    auth: 'admin',
    responses: { 200: { description: 'What the round moved.', schema: roundSchema } },
    errors: [409],
    handler: ({ services, principal }) => agentFor(services, caller(principal).organizationId).syncNow(),
  }),
  defineRoute({
    method: 'get',
    path: '/api/sync/digest',
    operationId: 'get_sync_digest',
    summary: 'What this instance holds of the organization, per kind of record',
    description:
      "Per kind of record of the key's organization: how many, and a sha256 over them (the fields that travel, in id order). A box and its upstream that have synced with nothing made since answer the same. Admin key.",
    tags: [TAG],
    auth: 'admin',
    responses: { 200: { description: 'Counts and digests.', schema: digestSchema } },
    handler: async ({ services, principal }) => {
      const org = caller(principal).organizationId;
      return { organization_id: org, kinds: await organizationDigest(services, org) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/admin/sync',
    operationId: 'admin_sync_now',
    summary: 'Sync this box with its upstream now (appliance admin token)',
    description:
      'As POST /api/sync, with the appliance admin token: for a box set up with UPSTREAM_URL and UPSTREAM_KEY that holds no key of the organization yet (its first round brings them). 409 on an instance without an upstream.',
    tags: [TAG],
    auth: 'admin-token',
    responses: { 200: { description: 'What the round moved.', schema: roundSchema } },
    errors: [409],
    handler: ({ services }) => agentFor(services).syncNow(),
  }),
  defineRoute<unknown, unknown, LinkInput>({
    method: 'post',
    path: '/api/admin/sync/link',
    operationId: 'link_upstream',
    summary: 'Link this box, with the data it holds, to an upstream',
    description:
      "For a box used on its own first: makes the organization on the upstream with the same id (with `upstream_token`, the upstream's appliance admin token, used once and not stored) or takes an admin key of it made there (`upstream_key`), stores the link, and runs the first round, which sends everything the box holds of the organization. Ids are UUIDv7, so nothing collides with what the upstream holds. 409 when UPSTREAM_URL is set or a link exists. Appliance admin token.",
    tags: [TAG],
    auth: 'admin-token',
    body: linkBody,
    responses: { 200: { description: 'The link and its first round.', schema: linkedSchema } },
    errors: [404, 409, 502],
    handler: async ({ services, body }) => {
      const { report, key_id } = await linkToUpstream(services, body);
      return { organization_id: body.organization_id, upstream_url: body.upstream_url.replace(/\/+$/, ''), key_id, round: report };
    },
  }),

  // ---- What an upstream answers boxes (docs/sync.md, "Protocol").
  defineRoute<unknown, { node?: string }>({
    method: 'get',
    path: `${V1}/hello`,
    operationId: 'sync_hello',
    summary: 'First contact: whose key this is, and which upstream answers',
    description:
      "Answers the key's organization, this upstream's node id and the highest change number it holds from the asking node. Admin key of the organization (the box's UPSTREAM_KEY).",
    tags: [TAG],
    auth: 'admin',
    query: { type: 'object', properties: { node: nodeQuery } },
    responses: { 200: { description: 'Who and where.', schema: helloSchema } },
    handler: ({ services, principal, query }) => hello(services, caller(principal), query.node),
  }),
  defineRoute({
    method: 'post',
    path: `${V1}/push`,
    operationId: 'sync_push',
    summary: 'Receive a batch of changes from a box',
    description: `Body: {"changes": [...]} as JSON, gzip-encoded or not (Content-Encoding), at most ${PUSH_LIMIT / 1024 / 1024} MiB. Applied in one transaction, each change checked by the same schemas and rules as the API; the answer, sent after the commit, is the acknowledgement: one result per change (applied, superseded, refused with the status and reason the API would give). A change sent again answers as the first time and applies nothing. A change for another organization than the key's: 403, and nothing of the batch is applied. While SYNC_PUSH_AT_ONCE batches apply and SYNC_PUSH_WAITING more wait (both half the machine's cores by default, 1 to 8), a further push is answered 503 upstream_busy with Retry-After (seconds) before its body is read, and nothing of it is applied: send it again then. Admin key.`,
    tags: [TAG],
    auth: 'admin',
    rawBody: {
      contentTypes: ['application/json', 'application/gzip'],
      description:
        'The batch: {"changes": [...]} as JSON, compressed or not (Content-Encoding: gzip); or the same JSON gzip-compressed as application/gzip.',
      limitBytes: () => PUSH_LIMIT,
    },
    responses: { 200: { description: 'One result per change.', schema: pushAnswerSchema } },
    errors: [403, 413, 415, 503],
    admit: (services) => pushGateOf(services).admit(),
    handler: async ({ services, principal, rawFile, http }) => {
      const body = await readFile(rawFile!.path);
      const gzipped = http.is('application/gzip') ? 'gzip' : undefined;
      const changes = await readPushBody(Readable.from([body]), http.get('content-encoding') || gzipped, (raw) =>
        parseJsonText(decodeJsonText(raw)),
      );
      return receivePush(services, caller(principal), changes);
    },
  }),
  defineRoute<unknown, { cursor?: string; limit?: number; node?: string }>({
    method: 'get',
    path: `${V1}/changes`,
    operationId: 'sync_pull',
    summary: "A page of the organization's changes",
    description:
      "The organization's changes after `cursor` (from the start without one), in the order they were made here, without the asking node's own (`node`), with the cursor for the next page. 409 cursor_unknown for a cursor another upstream gave: pull from the start. Big pages are gzip-encoded for a client that accepts it. Admin key.",
    tags: [TAG],
    auth: 'admin',
    query: {
      type: 'object',
      properties: {
        cursor: { type: 'string', maxLength: 200, description: 'The cursor of the previous page.' },
        limit: { type: 'integer', minimum: 1, maximum: 2000, default: 500, description: 'Most changes in the page.' },
        node: nodeQuery,
      },
    },
    responses: { 200: { description: 'A page.', schema: pullAnswerSchema } },
    errors: [409],
    handler: async ({ services, principal, query, http }) =>
      sendJson(http, await servePull(services, caller(principal), query.cursor, query.limit ?? 500, query.node)),
  }),
  defineRoute<unknown, unknown, { contents: string[] }>({
    method: 'post',
    path: `${V1}/uploads/status`,
    operationId: 'sync_upload_statuses',
    summary: 'How much of many walk files this upstream holds',
    description: `As GET ${V1}/uploads/{content}, for up to ${STATUS_MAX} contents in one call; a content no walk of the organization lists answers \`wanted: false\`. A box asks it before sending walk files (how much is held) and before fetching them (\`complete\`: the upstream holds the whole content, so GET ${V1}/files/{content} has it). Admin key.`,
    tags: [TAG],
    auth: 'admin',
    body: {
      type: 'object',
      required: ['contents'],
      additionalProperties: false,
      properties: {
        contents: {
          type: 'array',
          maxItems: STATUS_MAX,
          items: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          description: 'sha256 of each content, lower-case hex.',
        },
      },
    },
    responses: { 200: { description: 'One entry per content asked, in order.', schema: uploadStatusesSchema } },
    handler: ({ services, principal, body }) => uploadStatuses(services, caller(principal), body.contents),
  }),
  defineRoute<{ content: string }>({
    method: 'get',
    path: `${V1}/uploads/{content}`,
    operationId: 'sync_upload_status',
    summary: 'How much of a walk file this upstream holds',
    description:
      'For a content one of the organization’s walks lists: the bytes held (send from there), its size, and whether it is complete. 404 for a content no walk of the organization has. Admin key.',
    tags: [TAG],
    auth: 'admin',
    params: contentParams,
    responses: { 200: { description: 'What is held.', schema: uploadSchema } },
    handler: ({ services, principal, params }) => uploadStatus(services, caller(principal), params.content),
  }),
  defineRoute<{ content: string }>({
    method: 'patch',
    path: `${V1}/uploads/{content}`,
    operationId: 'sync_upload',
    summary: 'Send (more of) a walk file',
    description:
      'Body: the bytes of the content from `Upload-Offset` (header; must be the offset held, else 409 with it) to its end, as application/offset+octet-stream. Bytes that arrive before a cut are kept, so the next request goes on from there. With the last byte the content is checked against the sha256 and put in place (422 hash_mismatch: dropped, send again from 0). Admin key.',
    tags: [TAG],
    auth: 'admin',
    params: contentParams,
    headers: {
      type: 'object',
      required: ['upload-offset'],
      properties: { 'upload-offset': { type: 'string', pattern: '^\\d{1,15}$', description: 'The first byte sent.' } },
    },
    responses: { 200: { description: 'What is held after.', schema: uploadSchema } },
    errors: [409, 413],
    handler: ({ services, principal, params, headers, http }) =>
      appendUpload(services, caller(principal), params.content, Number(headers['upload-offset']), http.req),
  }),
  defineRoute<{ content: string }>({
    method: 'get',
    path: `${V1}/files/{content}`,
    operationId: 'sync_download',
    summary: 'Fetch a walk file',
    description:
      'The bytes of a content one of the organization’s walks lists, from the byte a `Range: bytes=N-` header names (206) or whole (200). 404 not_here_yet while it has not arrived here. Admin key.',
    tags: [TAG],
    auth: 'admin',
    params: contentParams,
    responses: {
      200: { description: 'The content.', contentType: 'application/octet-stream' },
      206: { description: 'The content from the byte asked.', contentType: 'application/octet-stream' },
    },
    handler: async ({ services, principal, params, http }) => {
      const m = /^bytes=(\d+)-$/.exec(http.get('range'));
      const file = await openContent(services, caller(principal), params.content, m ? Number(m[1]) : 0);
      http.status = m ? 206 : 200;
      http.type = 'application/octet-stream';
      http.set('Content-Length', String(file.size - file.start));
      if (m) http.set('Content-Range', `bytes ${file.start}-${file.size - 1}/${file.size}`);
      http.body = file.stream;
      return undefined;
    },
  }),
  defineRoute<unknown, unknown, { organization_id: string; name: string; key_name?: string }>({
    method: 'post',
    path: `${V1}/organizations`,
    operationId: 'sync_register_organization',
    summary: 'Make an organization with a given id, for a box that holds it',
    description:
      "For linking a box used on its own first (docs/sync.md): makes the organization with the box's id (or finds it) and an admin key of it for the box; the key's secret is in this answer only. Appliance admin token of this upstream.",
    tags: [TAG],
    auth: 'admin-token',
    body: registerBody,
    responses: { 201: { description: 'The organization and the key.', schema: registeredSchema } },
    handler: async ({ services, actor, body }) => {
      const r = await registerOrganization(services, actor, body);
      return {
        organization_id: r.org.id,
        name: r.org.name,
        created: r.created,
        key: { key_id: r.key.id, api_key: r.key.apiKey, role: 'admin', name: r.key.name },
      };
    },
  }),
];
