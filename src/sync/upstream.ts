import { createWriteStream, createReadStream, existsSync, statSync } from 'node:fs';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import type { Services } from '../services.js';
import { Conflict, Forbidden, Invalid, TooLarge, UnsupportedMedia } from '../errors.js';
import type { Actor } from '../db/store.js';
import { newId } from '../db/ids.js';
import { createKey } from '../keys/commands.js';
import type { OrganizationTable } from '../db/schema.js';
import { pushGateOf } from './admission.js';
import { applyChanges, checkIdentity } from './apply.js';
import { readFeed } from './outbox.js';
import { kindsOf, nodeOf } from './registry.js';
import { notHeld } from './refusal.js';
import { completeContent, partialPath, partialSize, presentCopies, presentCopy, SHA256, wanted, wantedSizes } from './files.js';
import {
  cursorTag,
  decodeCursor,
  encodeCursor,
  localChangeId,
  PROTOCOL,
  type HelloAnswer,
  type PullAnswer,
  type PushAnswer,
  type WireChange,
} from './wire.js';

/**
 * The upstream's side of the protocol (docs/sync.md): the same service, answering boxes. Every
 * call is made with an admin key of the organization (UPSTREAM_KEY on the box) and reaches
 * only that organization.
 */

export interface Caller {
  organizationId: string;
  keyId: string;
}

export async function hello(services: Services, caller: Caller, askingNode: string | undefined): Promise<HelloAnswer> {
  const org = await services.db
    .selectFrom('organizations')
    .select(['id', 'name'])
    .where('id', '=', caller.organizationId)
    .executeTakeFirst();
  // The highest of the asking node's own change numbers held here: a box restored from an old
  // backup would number new changes as ones already sent (docs/sync.md, "Restoring from a backup").
  const last = askingNode
    ? Number(
        // The highest over its rows: one per organization on PostgreSQL (src/sync/apply.ts).
        (
          await services.db
            .selectFrom('sync_origins')
            .select((eb) => eb.fn.max('last_seq').as('last_seq'))
            .where('origin', '=', askingNode)
            .executeTakeFirst()
        )?.last_seq ?? 0,
      )
    : 0;
  return {
    protocol: PROTOCOL,
    node: nodeOf(services),
    organization_id: caller.organizationId,
    organization_name: org?.name ?? null,
    key_id: caller.keyId,
    last_seq_from_you: last,
  };
}

/** Most bytes of one push body, compressed or not (the box sends far less; docs/sync.md). */
export const PUSH_LIMIT = 64 * 1024 * 1024;

/**
 * Reads a push body: JSON `{changes: [...]}`, gzip allowed, under the cap. `parseJson` is the
 * API's own reading of a JSON body (UTF-8 only, depth-limited: src/http/json-body.ts), so a push
 * is refused for what any other body would be.
 */
export async function readPushBody(
  req: Readable,
  encoding: string | undefined,
  parseJson: (raw: Buffer) => unknown,
  limit = PUSH_LIMIT,
): Promise<WireChange[]> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new TooLarge(limit, `A push body is at most ${limit} bytes.`);
    chunks.push(chunk as Buffer);
  }
  let raw = Buffer.concat(chunks);
  if (encoding === 'gzip') {
    try {
      raw = gunzipSync(raw, { maxOutputLength: limit });
    } catch {
      throw new Invalid([], 'The body is not gzip within the size cap.');
    }
  } else if (encoding && encoding !== 'identity') throw new UnsupportedMedia(`Content-Encoding ${encoding} is not taken.`);
  const body = parseJson(raw);
  const changes = (body as { changes?: unknown })?.changes;
  if (!Array.isArray(changes)) throw new Invalid([], 'The body is {"changes": [...]}.');
  if (changes.length > 10_000) throw new TooLarge(null, 'A push holds at most 10,000 changes.');
  return changes as WireChange[];
}

/**
 * Applies a box's batch. A change naming another organization than the key's refuses the whole
 * batch (403) and nothing is applied; otherwise each change is applied or refused on its own,
 * and the answer, sent once the transaction has committed, is the acknowledgement.
 */
export async function receivePush(services: Services, caller: Caller, changes: WireChange[]): Promise<PushAnswer> {
  const foreign: string[] = [];
  for (const c of changes) {
    const problem = checkIdentity(c, caller.organizationId);
    if (problem instanceof Forbidden) foreign.push(String(c?.id));
    else if (problem) throw new Invalid([], `Change ${String(c?.id)}: ${problem.message}`);
  }
  if (foreign.length) {
    throw new Forbidden(`${foreign.length} change(s) are for another organization than the key's; nothing was applied.`, 'forbidden', {
      change_ids: foreign.slice(0, 100),
    });
  }
  const origin = changes[0]?.origin ?? 'unknown';
  const actor: Actor = { keyId: caller.keyId, label: `sync:${origin}` };
  return pushGateOf(services).run(async () => {
    const results = await applyChanges(services, { org: caller.organizationId, actor, changes, kinds: kindsOf(services) });
    const counter = await services.db
      .selectFrom('sync_counters')
      .select('next')
      .where('organization_id', '=', caller.organizationId)
      .executeTakeFirst();
    return { results, applied: counter?.next ?? 0 };
  });
}

export const PULL_MAX = 2000;

/** The id of the change at an organization's feed number, as the feed gives it. */
async function changeIdAt(services: Services, organizationId: string, orgSeq: number): Promise<string | null> {
  const r = await services.db
    .selectFrom('change_log')
    .select(['seq', 'change_id'])
    .where('organization_id', '=', organizationId)
    .where('org_seq', '=', orgSeq)
    .executeTakeFirst();
  return r ? (r.change_id ?? localChangeId(nodeOf(services), r.seq)) : null;
}

/** A page of the organization's feed after `cursor` (null: from the start), without the asking node's own changes. */
export async function servePull(
  services: Services,
  caller: Caller,
  cursor: string | undefined,
  limit: number,
  askingNode: string | undefined,
): Promise<PullAnswer> {
  const node = nodeOf(services);
  let after = 0;
  if (cursor) {
    const c = decodeCursor(cursor);
    if (!c) throw new Invalid([], 'cursor is not a cursor this upstream gave.');
    // A cursor from another upstream (this one's data was replaced): the box starts again from the start.
    if (c.node !== node)
      throw new Conflict('The cursor is from another upstream; pull again from the start (no cursor).', {}, 'cursor_unknown');
    after = c.orgSeq;
    // The change the cursor stopped at must be the one at that number here: an upstream restored
    // from a backup numbers new changes anew, and the box reads its feed again from the start.
    const at = after === 0 ? null : await changeIdAt(services, caller.organizationId, after);
    if (after > 0 && (at === null || c.tag !== cursorTag(at)))
      throw new Conflict(
        'The cursor is not one this upstream gave since its data was last restored; pull again from the start.',
        {},
        'cursor_unknown',
      );
  }
  const page = await readFeed(services, kindsOf(services), node, caller.organizationId, after, askingNode ?? null, {
    maxChanges: Math.min(Math.max(1, limit), PULL_MAX),
    maxBytes: 4 * 1024 * 1024,
  });
  const lastId = page.lastId ?? (page.last === 0 ? null : await changeIdAt(services, caller.organizationId, page.last));
  return { changes: page.changes, cursor: encodeCursor(node, page.last, lastId), more: page.more };
}

/**
 * Makes (or finds) an organization with a given id, for a box used on its own first
 * (docs/sync.md, "Linking a box that has data"): answers an admin key of it, which the box
 * then syncs with. Appliance admin token only.
 */
export async function registerOrganization(
  services: Services,
  actor: Actor,
  input: { organization_id: string; name: string; key_name?: string },
): Promise<{ org: OrganizationTable; created: boolean; key: { id: string; apiKey: string; name: string } }> {
  return services.store.write(actor, async (w) => {
    let org = (await w.trx.selectFrom('organizations').selectAll().where('id', '=', input.organization_id).executeTakeFirst()) as
      OrganizationTable | undefined;
    let created = false;
    if (!org) {
      org = await w.insert<OrganizationTable>('organizations', {
        id: input.organization_id,
        organization_id: input.organization_id,
        name: input.name,
      });
      created = true;
    }
    const key = await createKey(w, org.id, input.key_name ?? `sync link ${newId().slice(-8)}`, 'admin');
    return { org, created, key: { id: key.row.id, apiKey: key.apiKey, name: key.row.name } };
  });
}

// ---- Files: uploads (box → upstream), resumable; downloads (upstream → box), ranged.

export interface UploadState {
  sha256: string;
  /** Bytes held: the next byte expected. */
  offset: number;
  size: number;
  complete: boolean;
}

async function uploadState(services: Services, caller: Caller, sha: string): Promise<UploadState> {
  if (!SHA256.test(sha)) throw new Invalid([], 'The content is named by its sha256 in lower-case hex.');
  const { wanted: listed, ...state } = (await uploadStatuses(services, caller, [sha])).items[0]!;
  if (!listed) throw notHeld('No walk of this organization has a file with this content.');
  return state;
}

export function uploadStatus(services: Services, caller: Caller, sha: string): Promise<UploadState> {
  return uploadState(services, caller, sha);
}

/** Most contents asked about in one call. */
export const STATUS_MAX = 1000;

/**
 * What is held of many contents at once; a content no walk of the organization lists answers
 * `wanted: false`. Two queries for the whole list: a box asks after every walk file it awaits,
 * every round, before it fetches any (src/sync/agent.ts).
 */
export async function uploadStatuses(
  services: Services,
  caller: Caller,
  shas: string[],
): Promise<{ items: (UploadState & { wanted: boolean })[] }> {
  if (!Array.isArray(shas) || shas.length > STATUS_MAX || !shas.every((x) => typeof x === 'string' && SHA256.test(x)))
    throw new Invalid(
      [{ in: 'body', name: 'contents', message: `must be at most ${STATUS_MAX} sha256 in lower-case hex` }],
      `contents is a list of at most ${STATUS_MAX} sha256 in lower-case hex.`,
    );
  const dataDir = services.config.dataDir;
  const sizes = await wantedSizes(services.db, caller.organizationId, shas);
  const copies = await presentCopies(services.db, dataDir, [...sizes.keys()]);
  return {
    items: shas.map((sha) => {
      const size = sizes.get(sha);
      if (size === undefined) return { sha256: sha, offset: 0, size: 0, complete: false, wanted: false };
      if (copies.has(sha)) return { sha256: sha, offset: size, size, complete: true, wanted: true };
      return { sha256: sha, offset: partialSize(dataDir, sha), size, complete: false, wanted: true };
    }),
  };
}

/**
 * Appends the body to a content being received, from `offset` (which must be what is held: a
 * request that starts elsewhere is 409 with the offset held). Bytes that arrived before a cut
 * are kept, so the sender goes on from there. With the last byte the content is checked
 * against its hash and put in place, or dropped whole on a mismatch (422).
 */
export async function appendUpload(services: Services, caller: Caller, sha: string, offset: number, body: Readable): Promise<UploadState> {
  const state = await uploadState(services, caller, sha);
  if (state.complete) {
    body.resume();
    return state;
  }
  if (offset !== state.offset) {
    body.resume();
    throw new Conflict(`This content is held up to byte ${state.offset}; send from there.`, { offset: state.offset }, 'offset_mismatch');
  }
  const file = partialPath(services.config.dataDir, sha);
  const out = createWriteStream(file, { flags: 'a' });
  let written = state.offset;
  try {
    for await (const chunk of body) {
      const b = chunk as Buffer;
      if (written + b.length > state.size) throw new TooLarge(state.size, `The content is ${state.size} bytes; more was sent.`);
      if (!out.write(b)) await once(out, 'drain');
      written += b.length;
    }
  } finally {
    out.end();
    await once(out, 'close').catch(() => undefined);
  }
  if (written < state.size) return { ...state, offset: written };
  const done = await completeContent(services.db, services.config.dataDir, sha);
  if (done === 'mismatch')
    throw new Invalid(
      [{ in: 'body', name: '(body)', message: 'does not hash to the content named' }],
      'The bytes received do not hash to the content named; send it again from the start.',
      'hash_mismatch',
    );
  return { ...state, offset: state.size, complete: true };
}

/** A content this instance holds, for a box to fetch (with Range, from where its copy stopped). */
export async function openContent(
  services: Services,
  caller: Caller,
  sha: string,
  from: number,
): Promise<{ stream: Readable; size: number; start: number }> {
  if (!SHA256.test(sha) || !(await wanted(services.db, caller.organizationId, sha)))
    throw notHeld('No walk of this organization has a file with this content.');
  const file = await presentCopy(services.db, services.config.dataDir, sha);
  if (!file || !existsSync(file)) throw notHeld('This content has not arrived here yet.');
  const size = statSync(file).size;
  const start = Math.min(Math.max(0, from), size);
  return { stream: createReadStream(file, { start }), size, start };
}
