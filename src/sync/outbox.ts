import { sql } from 'kysely';
import type { Services } from '../services.js';
import type { LoggedChange, SerializeContext, SyncKind } from './kinds/kind.js';
import { localChangeId, type WireChange } from './wire.js';

/**
 * Reading the change log as sync sends it (docs/sync.md, "Push" and "Pull"): a box's outbox is
 * its own changes of one organization in change-log order (`seq`); an upstream's feed is every
 * change of one organization in feed order (`org_seq`). Both serialize each entry through its
 * kind, in order, up to a count and a size.
 */

export interface Page {
  changes: WireChange[];
  /** The local seqs (outbox) of the changes, in order: what an acknowledgement covers. */
  seqs: number[];
  /** Where the next read starts: the last entry looked at (sent or not). */
  last: number;
  /** The id of that entry; null when none was looked at. */
  lastId: string | null;
  /** Entries remain after `last`. */
  more: boolean;
  /** Entries looked at, sent or not. */
  scanned: number;
  bytes: number;
}

export interface ReadLimits {
  maxChanges: number;
  maxBytes: number;
}

/**
 * A box's push batch: 500 changes or 1 MiB of them. The upstream applies a batch in one
 * transaction, in a time that follows its bytes more than its count: a scored walk travels with
 * its result (about 27 kB in the upstream benchmark), so 50 walks made a 1.4 MB batch that took
 * 2.5 times as long as 500 harvests. 1 MiB keeps every batch near the others (docs/sync.md,
 * "Push"); on a slow link, a batch cut off is sent again whole, and a smaller one costs less.
 */
export const DEFAULT_LIMITS: ReadLimits = { maxChanges: 500, maxBytes: 1024 * 1024 };

export function serializeContext(services: Services): SerializeContext {
  return {
    db: services.db,
    dataDir: services.config.dataDir,
    syncClips: services.config.syncClips,
  };
}

/** A change of a kind this side does not know still travels as its log entry: the receiver refuses it with a reason people can see. */
function unknownBody(entry: LoggedChange): Omit<WireChange, 'id' | 'origin' | 'org' | 'at' | 'kind'> {
  const image = entry.op === 'delete' ? entry.before : entry.after;
  return {
    op: entry.op === 'delete' ? 'delete' : 'upsert',
    eid: entry.entity_id,
    v: entry.version,
    ...(image ? { row: JSON.parse(image) } : {}),
  };
}

interface Reading {
  entries: LoggedChange[];
  start: number;
  more: boolean;
  ids: (e: LoggedChange) => { id: string; origin: string };
  position: (e: LoggedChange) => number;
  /** Entries passed over without being sent (a reader's own changes). */
  skip?: (e: LoggedChange) => boolean;
}

async function serializeEntries(services: Services, kinds: ReadonlyMap<string, SyncKind>, r: Reading, limits: ReadLimits): Promise<Page> {
  const ctx = serializeContext(services);
  const { ids, position } = r;
  const page: Page = { changes: [], seqs: [], last: r.start, lastId: null, more: r.more, scanned: 0, bytes: 0 };
  const index = new Map<string, number>();
  for (const e of r.entries) {
    const kind = kinds.get(e.entity);
    const body = r.skip?.(e) ? null : kind ? await kind.serialize(ctx, e) : unknownBody(e);
    if (body) {
      const change: WireChange = { ...ids(e), org: e.organization_id, kind: e.entity, at: e.at, ...body };
      const size = JSON.stringify(change).length + 1;
      if (page.changes.length > 0 && page.bytes + size > limits.maxBytes) {
        page.more = true;
        break;
      }
      // The same state of one record twice in a page (it was changed twice since the last send): the later copy goes.
      const key = `${change.kind}|${change.eid}|${change.op}|${change.v}`;
      const dup = index.get(key);
      if (dup !== undefined) {
        page.bytes -= JSON.stringify(page.changes[dup]).length + 1;
        page.changes.splice(dup, 1);
        page.seqs.splice(dup, 1);
        for (const [k, i] of index) if (i > dup) index.set(k, i - 1);
      }
      index.set(key, page.changes.length);
      page.changes.push(change);
      page.seqs.push(e.seq);
      page.bytes += size;
    }
    page.last = position(e);
    page.lastId = ids(e).id;
    page.scanned++;
  }
  return page;
}

const COLUMNS = sql.raw('seq, organization_id, entity, entity_id, op, before, after, version, at, origin, change_id, org_seq');

/** A box's changes of one organization made here, after local seq `afterSeq`. */
export async function readOutbox(
  services: Services,
  kinds: ReadonlyMap<string, SyncKind>,
  node: string,
  organizationId: string,
  afterSeq: number,
  limits: ReadLimits = DEFAULT_LIMITS,
): Promise<Page> {
  const rows = (
    await sql<LoggedChange>`SELECT ${COLUMNS} FROM change_log
      WHERE organization_id = ${organizationId} AND origin IS NULL AND seq > ${afterSeq}
      ORDER BY seq LIMIT ${limits.maxChanges + 1}`.execute(services.db)
  ).rows;
  return serializeEntries(
    services,
    kinds,
    {
      entries: rows.slice(0, limits.maxChanges),
      start: afterSeq,
      more: rows.length > limits.maxChanges,
      ids: (e) => ({ id: localChangeId(node, e.seq), origin: node }),
      position: (e) => e.seq,
    },
    limits,
  );
}

/**
 * One organization's feed after its feed number `afterOrgSeq`, every origin's changes; a
 * reader's own changes (`skipOrigin`) are left out, their numbers still passed.
 */
export async function readFeed(
  services: Services,
  kinds: ReadonlyMap<string, SyncKind>,
  node: string,
  organizationId: string,
  afterOrgSeq: number,
  skipOrigin: string | null,
  limits: ReadLimits = DEFAULT_LIMITS,
): Promise<Page> {
  const rows = (
    await sql<LoggedChange>`SELECT ${COLUMNS} FROM change_log
      WHERE organization_id = ${organizationId} AND org_seq > ${afterOrgSeq}
      ORDER BY org_seq LIMIT ${limits.maxChanges + 1}`.execute(services.db)
  ).rows;
  return serializeEntries(
    services,
    kinds,
    {
      entries: rows.slice(0, limits.maxChanges),
      start: afterOrgSeq,
      more: rows.length > limits.maxChanges,
      ids: (e) => ({ id: e.change_id ?? localChangeId(node, e.seq), origin: e.origin ?? node }),
      position: (e) => e.org_seq!,
      skip: (e) => skipOrigin !== null && e.origin === skipOrigin,
    },
    limits,
  );
}

/** Local changes of an organization not yet acknowledged. */
export async function pendingCount(
  services: Services,
  organizationId: string,
  afterSeq: number,
): Promise<{ count: number; oldestAt: string | null }> {
  const r = (
    await sql<{ n: number; oldest: string | null }>`SELECT count(*) AS n, min(at) AS oldest FROM change_log
      WHERE organization_id = ${organizationId} AND origin IS NULL AND seq > ${afterSeq}`.execute(services.db)
  ).rows[0]!;
  return { count: Number(r.n), oldestAt: r.oldest };
}
