import type { Services } from '../services.js';
import { agentOf } from './agent.js';
import { pendingCount } from './outbox.js';
import { nodeOf } from './registry.js';

/** GET /api/sync: where this instance stands with its upstream, for one organization (docs/sync.md, "Status"). */
export async function syncStatus(services: Services, organizationId: string) {
  const agent = agentOf(services);
  const db = services.db;
  const link = await db.selectFrom('sync_links').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
  const linkedHere = agent !== undefined && (agent.organizationId === organizationId || agent.organizationId === null);
  const pushedSeq = link?.pushed_seq ?? 0;
  const pending = linkedHere || link ? await pendingCount(services, organizationId, pushedSeq) : { count: 0, oldestAt: null };
  const quarantined = await db
    .selectFrom('sync_quarantine')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('at', 'desc')
    .limit(100)
    .execute();
  const quarantineCount = await db
    .selectFrom('sync_quarantine')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  const uploads = await db
    .selectFrom('sync_uploads')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('bytes_sent').as('bytes')])
    .where('organization_id', '=', organizationId)
    .where('done_at', 'is', null)
    .executeTakeFirstOrThrow();
  const sentBytes = await db
    .selectFrom('sync_uploads')
    .select((eb) => eb.fn.sum<number>('bytes_sent').as('bytes'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  const downloads = await db
    .selectFrom('sync_walk_files')
    .select((eb) => eb.fn.count<number>('sha256').distinct().as('n'))
    .where('organization_id', '=', organizationId)
    .where('present', '=', 0)
    .executeTakeFirstOrThrow();
  const received = await db
    .selectFrom('sync_received')
    .select(['origin', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.max('at').as('last_at')])
    .where('organization_id', '=', organizationId)
    .groupBy('origin')
    .orderBy('origin')
    .execute();
  const feed = await db.selectFrom('sync_counters').select('next').where('organization_id', '=', organizationId).executeTakeFirst();
  const now = services.clock.now();
  const lagS = (iso: string | null | undefined) => (iso ? Math.max(0, Math.round((now - Date.parse(iso)) / 1000)) : null);
  const role = agent ? 'box' : 'upstream';
  // Idle rounds keep their time in memory (they write nothing): the later of that and the stored one.
  const later = (a: string | null | undefined, b: string | null | undefined) => (a && b ? (a > b ? a : b) : (a ?? b ?? null));
  const lastPullAt = later(link?.last_pull_at, linkedHere ? agent!.lastPullAt : null);
  return {
    role,
    node: nodeOf(services),
    organization_id: organizationId,
    upstream: link
      ? { url: link.upstream_url, node: link.upstream_node, linked_at: link.linked_at }
      : agent
        ? { url: agent.link.url, node: null, linked_at: null }
        : null,
    state: linkedHere ? agent!.state : link ? link.state : role === 'upstream' ? 'serving' : 'not_linked',
    pending: { changes: pending.count, oldest_at: pending.oldestAt },
    quarantined: {
      count: Number(quarantineCount.n),
      items: quarantined.map((q) => ({
        change_id: q.change_id,
        direction: q.direction,
        kind: q.entity,
        record_id: q.entity_id,
        op: q.op,
        status: q.status,
        code: q.code,
        reason: q.reason,
        errors: q.errors ? (JSON.parse(q.errors) as unknown[]) : [],
        at: q.at,
      })),
    },
    last_push: { at: link?.last_push_at ?? null, count: link?.last_push_count ?? null, error: link?.last_push_error ?? null },
    last_pull: { at: lastPullAt, count: link?.last_pull_count ?? null, error: link?.last_pull_error ?? null },
    lag_s: { push: pending.count > 0 ? lagS(pending.oldestAt) : 0, pull: link ? lagS(lastPullAt) : null },
    failures: linkedHere ? agent!.failures : (link?.failures ?? 0),
    next_attempt_at: linkedHere ? agent!.nextAttemptIso() : null,
    files: {
      uploads_pending: Number(uploads.n),
      downloads_pending: Number(downloads.n),
      bytes_sent: Number(sentBytes.bytes ?? 0),
    },
    feed_position: Number(feed?.next ?? 0),
    received: received.map((r) => ({ origin: r.origin, changes: Number(r.n), last_at: r.last_at as string })),
  };
}
