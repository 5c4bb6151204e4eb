import { orgKey } from '../db/engine.js';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Services } from '../services.js';
import type { Actor } from '../db/store.js';
import { applyChanges, checkIdentity } from './apply.js';
import { refusalOf, type Refusal } from './refusal.js';
import { UpstreamClient, UpstreamError } from './client.js';
import { completeContent, materialize, partialPath, partialSize, presentCopies, presentCopy } from './files.js';
import { kindsOf, nodeOf } from './registry.js';
import { DEFAULT_LIMITS, readOutbox, type ReadLimits } from './outbox.js';
import type { ChangeResult, WireChange } from './wire.js';
import type { SyncLinkTable } from './tables.js';
import type { ManifestEntry } from './files.js';

/**
 * A box's sync with its upstream (docs/sync.md, "A round"): push what was made here, in
 * change-log order, in batches; pull the organization's feed from the cursor, a page per
 * transaction; then the walk files both ways. Rounds run in the background, one at a time, on
 * an interval and soon after writes; a failed round backs off; POST /api/sync runs one now.
 */

export type SyncState = 'idle' | 'syncing' | 'offline' | 'key_refused' | 'error';

export interface RoundReport {
  ok: boolean;
  state: SyncState;
  error: string | null;
  /** Changes the upstream acknowledged (applied, or already there). */
  pushed: number;
  /** Changes it refused: quarantined here. */
  refused: number;
  /** Changes received from the upstream and applied. */
  pulled: number;
  /** Received changes this box refused: quarantined here. */
  pull_refused: number;
  files_sent: number;
  files_received: number;
  bytes_sent: number;
  bytes_received: number;
  /** Pushes the upstream turned away as busy, each sent again after its Retry-After. */
  busy_waits: number;
  ms: number;
  /** Milliseconds spent pushing, pulling and moving files. */
  phases: { push: number; pull: number; files: number };
}

export interface LinkConfig {
  url: string;
  key: string;
}

/** Contents asked about in one status call, and sent at once. */
const UPLOAD_STATUS_BATCH = 500;
const UPLOADS_AT_ONCE = 2;

/** Runs `fn` over `items`, at most `n` at once; the first failure stops the others from starting and is thrown. */
async function eachLimited<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const worker = async () => {
    while (failed === null && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  if (failed !== null) throw failed;
}

const PULL_ACTOR: Actor = { keyId: null, label: 'sync:upstream' };
const BACKOFF_BASE_MS = 1000;
const BACKOFF_MAX_MS = 5 * 60_000;
/** After a write, a round waits this long for the burst to end (each write restarts it), and never longer than BURST_MAX_MS. */
const BURST_QUIET_MS = 2000;
const BURST_MAX_MS = 10_000;
/**
 * A busy upstream (503 with Retry-After, src/sync/admission.ts) is waited on within the round,
 * not backed off from: it is up, and said when to come back. One wait is at most a minute; past
 * BUSY_WAIT_MAX_MS of waiting in a round the round ends as offline and the backoff takes over.
 */
const BUSY_WAIT_ONE_MAX_MS = 60_000;
const BUSY_WAIT_MAX_MS = 10 * 60_000;

class Failed extends Error {
  constructor(
    readonly state: SyncState,
    message: string,
  ) {
    super(message);
  }
}

export class SyncAgent {
  state: SyncState = 'idle';
  organizationId: string | null = null;
  failures = 0;
  nextAttemptAt = 0;
  /** The last round that reached its end, and the last page pulled, when not yet written (idle rounds write nothing). */
  lastOkAt: string | null = null;
  lastPullAt: string | null = null;
  lastReport: RoundReport | null = null;
  readonly client: UpstreamClient;
  limits: ReadLimits = { ...DEFAULT_LIMITS };
  pullPage = 500;
  private running: Promise<RoundReport> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private burstTimer: NodeJS.Timeout | null = null;
  private burstStarted = 0;
  private stopped = false;
  /** Ends a busy wait early when the agent stops. */
  private wake: (() => void) | null = null;
  private greeted = false;
  /** Writes made by sync itself do not call for another round. */
  private applying = 0;

  constructor(
    private readonly services: Services,
    readonly link: LinkConfig,
  ) {
    this.client = new UpstreamClient(link.url, link.key, nodeOf(services));
  }

  /** Elapsed time for backoff and bursts: never steps when the wall clock is set (src/clock.ts). */
  private get now(): number {
    return performance.now();
  }

  /** When the next round may run after failures, on the service clock; null when none waits. */
  nextAttemptIso(): string | null {
    const wait = this.nextAttemptAt - this.now;
    return wait > 0 ? new Date(this.services.clock.now() + wait).toISOString() : null;
  }

  start(): void {
    this.stopped = false;
    this.services.store.afterWrite((tables) => {
      if (this.applying > 0 || this.stopped) return;
      const kinds = kindsOf(this.services);
      for (const t of tables) if (kinds.has(t)) return this.soon();
    });
    // With an interval, the first round runs at start; without one, only writes and POST /api/sync start one.
    if (this.services.config.syncIntervalS > 0) this.schedule(100);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    if (this.timer) clearTimeout(this.timer);
    if (this.burstTimer) clearTimeout(this.burstTimer);
    this.timer = this.burstTimer = null;
    await this.running?.catch(() => undefined);
    this.client.close();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), Math.max(0, ms));
    this.timer.unref();
  }

  /** A write happened: a round once the burst is over. */
  private soon(): void {
    if (this.state === 'key_refused') return;
    const now = this.now;
    if (!this.burstTimer) this.burstStarted = now;
    if (this.burstTimer) clearTimeout(this.burstTimer);
    const wait = Math.max(
      0,
      Math.min(
        BURST_QUIET_MS,
        this.burstStarted + BURST_MAX_MS - now,
        this.nextAttemptAt - now > 0 ? this.nextAttemptAt - now : BURST_QUIET_MS,
      ),
    );
    this.burstTimer = setTimeout(() => {
      this.burstTimer = null;
      void this.tick();
    }, wait);
    this.burstTimer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.state === 'key_refused') return;
    const wait = this.nextAttemptAt - this.now;
    if (wait > 0) return this.schedule(wait);
    if (!this.running) await this.syncNow().catch(() => undefined);
    const interval = this.services.config.syncIntervalS * 1000;
    const wait2 = this.nextAttemptAt - this.now;
    if (wait2 > 0) this.schedule(wait2);
    else if (interval > 0) this.schedule(interval);
  }

  /** Runs a round now (after the one running, if any) and answers what moved. */
  async syncNow(): Promise<RoundReport> {
    while (this.running) await this.running.catch(() => undefined);
    this.running = this.round();
    try {
      return await this.running;
    } finally {
      this.running = null;
    }
  }

  private async round(): Promise<RoundReport> {
    const started = this.now;
    const traffic0 = { ...this.client.traffic };
    const report: RoundReport = {
      ok: false,
      state: 'syncing',
      error: null,
      pushed: 0,
      refused: 0,
      pulled: 0,
      pull_refused: 0,
      files_sent: 0,
      files_received: 0,
      bytes_sent: 0,
      bytes_received: 0,
      busy_waits: 0,
      ms: 0,
      phases: { push: 0, pull: 0, files: 0 },
    };
    const stateBefore = this.state;
    this.state = 'syncing';
    let phase: 'push' | 'pull' = 'push';
    try {
      const link = await this.ensureLinked();
      let t0 = this.now;
      await this.push(link, report);
      report.phases.push = Math.round(this.now - t0);
      phase = 'pull';
      t0 = this.now;
      await this.pull(link, report);
      report.phases.pull = Math.round(this.now - t0);
      t0 = this.now;
      await this.files(link, report);
      report.phases.files = Math.round(this.now - t0);
      this.failures = 0;
      this.nextAttemptAt = 0;
      const wasIdle = stateBefore === 'idle';
      this.state = 'idle';
      report.ok = true;
      this.lastOkAt = this.services.clock.iso();
      // An idle round writes nothing (an idle box's round must cost next to nothing); its time is kept in memory.
      const moved = report.pushed + report.refused + report.pulled + report.pull_refused + report.files_sent + report.files_received > 0;
      if (moved || !wasIdle || link.failures > 0 || link.state !== 'idle')
        await this.saveStats(link.organization_id, {
          last_ok_at: this.lastOkAt,
          failures: 0,
          state: 'idle',
          last_push_error: null,
          last_pull_error: null,
        });
    } catch (err) {
      const failed =
        err instanceof UpstreamError
          ? new Failed(
              err.failure === 'offline' || err.failure === 'busy' ? 'offline' : err.failure === 'unauthorized' ? 'key_refused' : 'error',
              err.message,
            )
          : err instanceof Failed
            ? err
            : new Failed('error', (err as Error).message);
      if (!(err instanceof UpstreamError) && !(err instanceof Failed))
        this.services.log.error('sync round failed', { error: err as Error });
      this.state = failed.state;
      report.error = failed.message;
      this.failures++;
      // Offline for days: wait longer after each failure, up to five minutes, with some jitter so boxes do not knock in step.
      const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(this.failures - 1, 20)) * (0.8 + Math.random() * 0.4);
      this.nextAttemptAt = this.now + backoff;
      this.greeted = false;
      if (this.organizationId)
        await this.saveStats(this.organizationId, {
          failures: this.failures,
          state: this.state,
          ...(phase === 'push' ? { last_push_error: failed.message } : { last_pull_error: failed.message }),
        }).catch(() => undefined);
    }
    report.state = this.state;
    report.bytes_sent = this.client.traffic.bytesSent - traffic0.bytesSent;
    report.bytes_received = this.client.traffic.bytesReceived - traffic0.bytesReceived;
    report.ms = Math.round(this.now - started);
    this.lastReport = report;
    return report;
  }

  private async saveStats(org: string, values: Partial<SyncLinkTable>): Promise<void> {
    await this.services.db.updateTable('sync_links').set(values).where('organization_id', '=', org).execute();
  }

  private async linkRow(org: string): Promise<SyncLinkTable | undefined> {
    return this.services.db.selectFrom('sync_links').selectAll().where('organization_id', '=', org).executeTakeFirst();
  }

  /** First contact (and after a failure): who the key is, and which upstream answers. */
  private async ensureLinked(): Promise<SyncLinkTable> {
    if (this.greeted && this.organizationId) return (await this.linkRow(this.organizationId))!;
    const hello = await this.client.hello();
    const org = hello.organization_id;
    this.organizationId = org;
    let link = await this.linkRow(org);
    if (!link) {
      await this.services.db
        .insertInto('sync_links')
        .values({
          organization_id: org,
          upstream_url: this.link.url,
          upstream_key: null,
          upstream_node: hello.node,
          linked_at: this.services.clock.iso(),
          pushed_seq: 0,
          pull_cursor: null,
          state: 'idle',
          failures: 0,
        } as never)
        .onConflict((oc) => oc.column('organization_id').doNothing())
        .execute();
      link = (await this.linkRow(org))!;
    } else if (link.upstream_node !== hello.node) {
      // Another upstream answers at this address (a new one, or one whose data was replaced):
      // everything made here is offered again (it applies nothing twice), and its feed is read from the start.
      await this.saveStats(org, { upstream_node: hello.node, pushed_seq: 0, pull_cursor: null, upstream_url: this.link.url });
      link = (await this.linkRow(org))!;
    }
    // An upstream restored from a backup has lost what it acknowledged after it: that is sent
    // again (it applies nothing twice); the entries between are looked at again, some travel.
    if (link.pushed_seq > hello.last_seq_from_you) {
      await this.saveStats(org, { pushed_seq: hello.last_seq_from_you });
      link = (await this.linkRow(org))!;
    }
    const maxSeq = Number(
      (await sql<{ s: number | null }>`SELECT max(seq) AS s FROM change_log`.execute(this.services.db)).rows[0]?.s ?? 0,
    );
    if (hello.last_seq_from_you > maxSeq) {
      throw new Failed(
        'error',
        `The upstream holds changes numbered up to ${hello.last_seq_from_you} from this box, which has only ${maxSeq}: this box's data is older than what it sent (restored from a backup?). Syncing would reuse change ids; see docs/sync.md, "Restoring from a backup".`,
      );
    }
    this.greeted = true;
    return link;
  }

  private async push(link: SyncLinkTable, report: RoundReport): Promise<void> {
    const node = nodeOf(this.services);
    const kinds = kindsOf(this.services);
    let after = link.pushed_seq;
    for (;;) {
      const page = await readOutbox(this.services, kinds, node, link.organization_id, after, this.limits);
      if (page.scanned === 0) break;
      let results: ChangeResult[] = [];
      if (page.changes.length) {
        const answer = await this.pushWhenLetIn(page.changes, report);
        results = answer.results;
        if (!Array.isArray(results) || results.length !== page.changes.length)
          throw new Failed('error', 'The upstream answered a push with another number of results than changes sent.');
      }
      // The acknowledgement is in: what was refused is quarantined, and everything up to page.last is sent.
      const now = this.services.clock.iso();
      await this.services.db.transaction().execute(async (trx) => {
        for (const [i, r] of results.entries()) {
          const c = page.changes[i]!;
          if (r.outcome === 'refused') {
            await quarantineRow(trx, link.organization_id, 'push', page.seqs[i]!, c, r, now);
          } else if (c.kind === 'walks' && c.op === 'upsert') {
            for (const f of (c.unit?.files ?? []) as ManifestEntry[]) {
              await trx
                .insertInto('sync_uploads')
                .values({
                  sha256: f.sha256,
                  organization_id: link.organization_id,
                  size: f.size,
                  queued_at: now,
                  done_at: null,
                  outcome: null,
                  bytes_sent: 0,
                })
                .onConflict((oc) => oc.columns(orgKey(trx as never, ['sha256'])).doNothing())
                .execute();
            }
          }
        }
        await trx
          .updateTable('sync_links')
          .set({ pushed_seq: page.last, last_push_at: now, last_push_count: results.length, last_push_error: null })
          .where('organization_id', '=', link.organization_id)
          .execute();
      });
      for (const r of results) {
        if (r.outcome === 'refused') report.refused++;
        else report.pushed++;
      }
      after = page.last;
      if (!page.more) break;
    }
  }

  /** Sends a batch; when the upstream is busy, again after its Retry-After, with jitter so boxes turned away together come back apart. */
  private async pushWhenLetIn(changes: WireChange[], report: RoundReport) {
    let waited = 0;
    for (;;) {
      try {
        return await this.client.push(changes);
      } catch (err) {
        if (!(err instanceof UpstreamError) || err.failure !== 'busy' || this.stopped) throw err;
        const wait = Math.min(BUSY_WAIT_ONE_MAX_MS, err.retryAfterMs ?? 1000) * (1 + Math.random() * 0.5);
        if (waited + wait > BUSY_WAIT_MAX_MS)
          throw new Failed('offline', `${err.message} (still busy after ${Math.round(waited / 1000)} s of waiting)`);
        report.busy_waits++;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = null;
        waited += wait;
        if (this.stopped) throw new Failed('offline', 'the service is stopping');
      }
    }
  }

  private async pull(link: SyncLinkTable, report: RoundReport): Promise<void> {
    const org = link.organization_id;
    const kinds = kindsOf(this.services);
    let cursor = link.pull_cursor;
    for (;;) {
      let answer;
      try {
        answer = await this.client.pull(cursor, this.pullPage);
      } catch (err) {
        if (err instanceof UpstreamError && err.failure === 'cursor' && cursor !== null) {
          cursor = null;
          continue;
        }
        throw err;
      }
      if (!answer || !Array.isArray(answer.changes) || typeof answer.cursor !== 'string')
        throw new Failed('error', 'The upstream answered a pull with something else than a page.');
      this.lastPullAt = this.services.clock.iso();
      if (answer.changes.length === 0 && answer.cursor === cursor && !answer.more) break;
      const good: WireChange[] = [];
      const bad: { change: WireChange; problem: Refusal }[] = [];
      for (const c of answer.changes) {
        const problem = checkIdentity(c, org);
        if (problem) bad.push({ change: c, problem: refusalOf(problem)! });
        else good.push(c);
      }
      const now = this.services.clock.iso();
      const quarantine = (
        trx: Transaction<Database>,
        c: WireChange,
        r: { status?: number; code?: string; detail?: string; errors?: unknown },
      ) => quarantineRow(trx, org, 'pull', null, c, r, now);
      const next = answer.cursor;
      this.applying++;
      let results: ChangeResult[];
      try {
        results = await applyChanges(this.services, {
          org,
          actor: PULL_ACTOR,
          changes: good,
          kinds,
          // The page and the cursor after it commit together: a crash repeats the page or none of it.
          alsoInTransaction: async (ctx, out) => {
            for (const [i, r] of out.entries()) if (r.outcome === 'refused') await quarantine(ctx.trx, good[i]!, r);
            for (const b of bad) await quarantine(ctx.trx, b.change, b.problem);
            await ctx.trx
              .updateTable('sync_links')
              .set({ pull_cursor: next, last_pull_at: now, last_pull_count: answer.changes.length, last_pull_error: null })
              .where('organization_id', '=', org)
              .execute();
          },
        });
      } finally {
        this.applying--;
      }
      for (const r of results) {
        if (r.outcome === 'refused') report.pull_refused++;
        else report.pulled++;
      }
      report.pull_refused += bad.length;
      cursor = next;
      if (!answer.more) break;
    }
  }

  private async files(link: SyncLinkTable, report: RoundReport): Promise<void> {
    const org = link.organization_id;
    const dataDir = this.services.config.dataDir;
    // Up: each content once, from where the upstream's copy stopped; what it holds already is not sent.
    for (;;) {
      const uploads = await this.services.db
        .selectFrom('sync_uploads')
        .selectAll()
        .where('organization_id', '=', org)
        .where('done_at', 'is', null)
        .orderBy('queued_at')
        .limit(UPLOAD_STATUS_BATCH)
        .execute();
      if (!uploads.length) break;
      // What became of each content is written in one transaction per batch, not one per file: a
      // round cut before that write asks the upstream again, which says it has them (never sent twice).
      const done: { sha256: string; outcome: 'sent' | 'had' | 'gone' | 'unwanted'; bytes: number }[] = [];
      const finish = (u: { sha256: string; bytes_sent: number }, outcome: 'sent' | 'had' | 'gone' | 'unwanted', sent = 0) => {
        done.push({ sha256: u.sha256, outcome, bytes: u.bytes_sent + sent });
      };
      const flush = async () => {
        const batch = done.splice(0);
        if (!batch.length) return;
        const at = this.services.clock.iso();
        await this.services.db.transaction().execute(async (trx) => {
          for (const d of batch)
            await trx
              .updateTable('sync_uploads')
              .set({ done_at: at, outcome: d.outcome, bytes_sent: d.bytes })
              .where('sha256', '=', d.sha256)
              .execute();
        });
      };
      try {
        const sources = new Map<string, string>();
        for (const u of uploads) {
          const source = await presentCopy(this.services.db, dataDir, u.sha256);
          // Gone from the box (retention removed the walk's frames) before it could be sent.
          if (!source) finish(u, 'gone');
          else sources.set(u.sha256, source);
        }
        const asked = uploads.filter((u) => sources.has(u.sha256));
        const states = asked.length ? await this.client.uploadStatuses(asked.map((u) => u.sha256)) : [];
        const toSend: { u: (typeof uploads)[number]; offset: number; size: number }[] = [];
        for (const [i, u] of asked.entries()) {
          const st = states[i];
          if (!st || st.sha256 !== u.sha256) throw new Failed('error', 'The upstream answered another list of contents than asked.');
          if (!st.wanted) finish(u, 'unwanted');
          else if (st.complete) finish(u, u.bytes_sent > 0 ? 'sent' : 'had');
          else toSend.push({ u, offset: st.offset, size: st.size });
        }
        await eachLimited(toSend, UPLOADS_AT_ONCE, async ({ u, offset, size }) => {
          const after = await this.client.upload(u.sha256, sources.get(u.sha256)!, offset, size);
          if (!after.complete) throw new UpstreamError('offline', 'an upload ended before its last byte');
          finish(u, 'sent', size - offset);
          report.files_sent++;
        }).catch(async (err) => {
          // Whatever arrived is kept upstream; the next round asks where it stopped. A content that
          // did not hash to its name was dropped there whole and is sent again from the start.
          if (err instanceof UpstreamError && err.code === 'hash_mismatch') return;
          throw err;
        });
      } finally {
        await flush();
      }
      if (uploads.length < UPLOAD_STATUS_BATCH) break;
    }
    // Down: the files of walks made elsewhere, each content once, from where the copy here stopped.
    const wanted = await this.services.db
      .selectFrom('sync_walk_files')
      .select(['sha256', 'size'])
      .distinct()
      .where('organization_id', '=', org)
      .where('present', '=', 0)
      .execute();
    const copies = await presentCopies(
      this.services.db,
      dataDir,
      wanted.map((w) => w.sha256),
    );
    const missing: typeof wanted = [];
    for (const w of wanted) {
      const copy = copies.get(w.sha256);
      if (copy) await this.services.db.transaction().execute((trx) => materialize(trx, dataDir, w.sha256, copy));
      else missing.push(w);
    }
    // Which of them the upstream holds whole, asked in one call for many: a content that has not
    // reached it yet (its walk's box has not sent it) costs no request of its own, round after round.
    for (let i = 0; i < missing.length; i += UPLOAD_STATUS_BATCH) {
      const part = missing.slice(i, i + UPLOAD_STATUS_BATCH);
      const there = new Set((await this.client.uploadStatuses(part.map((w) => w.sha256))).filter((s) => s.complete).map((s) => s.sha256));
      for (const w of part) {
        const partial = partialPath(dataDir, w.sha256);
        const from = existsSync(partial) ? partialSize(dataDir, w.sha256) : 0;
        if (from < w.size && !there.has(w.sha256)) continue;
        let have: number;
        try {
          have = from >= w.size ? from : await this.client.download(w.sha256, partial, from);
        } catch (err) {
          if (err instanceof UpstreamError && (err.status === 404 || err.code === 'not_here_yet')) continue;
          throw err;
        }
        if (have < w.size) continue;
        if ((await completeContent(this.services.db, dataDir, w.sha256)) === 'placed') report.files_received++;
      }
    }
  }
}

/** A change refused by the other side (push) or by this one (pull), kept with its reason. */
async function quarantineRow(
  trx: Transaction<Database>,
  org: string,
  direction: 'push' | 'pull',
  seq: number | null,
  c: WireChange,
  r: { status?: number; code?: string; detail?: string; errors?: unknown },
  at: string,
): Promise<void> {
  await trx
    .insertInto('sync_quarantine')
    .values({
      change_id: String(c?.id),
      organization_id: org,
      direction,
      seq,
      entity: String(c?.kind),
      entity_id: String(c?.eid),
      op: String(c?.op),
      status: r.status ?? 422,
      code: r.code ?? 'refused',
      reason: r.detail ?? 'refused',
      errors: r.errors ? JSON.stringify(r.errors) : null,
      at,
    })
    .onConflict((oc) => oc.columns(orgKey(trx as never, ['change_id'])).doNothing())
    .execute();
}

const agents = new WeakMap<Services, SyncAgent>();

export function agentOf(services: Services): SyncAgent | undefined {
  return agents.get(services);
}

export function attachAgent(services: Services, agent: SyncAgent): void {
  agents.set(services, agent);
}
