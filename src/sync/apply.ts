import { Forbidden, Invalid } from '../errors.js';
import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import type { Actor, Writer } from '../db/store.js';
import type { Services } from '../services.js';
import type { ApplyContext, SyncKind } from './kinds/kind.js';
import { indexLocalTombstones } from './kinds/climate.js';
import { rawSql } from '../db/raw.js';
import { refusalOf } from './refusal.js';
import { BatchState, type BatchedKind } from './batch.js';
import { seqOfChangeId, type ChangeResult, type Outcome, type WireChange } from './wire.js';

/**
 * Emits 'batch' with the instance's services and the Writer at the end of every batch of received changes,
 * inside its transaction just before the commit, where a listener (synchronous) sees exactly
 * what is about to commit: the fault tests check referential integrity there, every batch.
 */
export const applyEvents = new EventEmitter();
export type BatchListener = (services: Services, w: Writer) => void | Promise<void>;

/** An HLC stamp as src/db/hlc.ts writes it. */
const VERSION = /^\d{13}\.\d{6}\.[0-9a-z]{1,64}$/;
const ID = /^[0-9a-z]{1,64}:\d{1,15}(\/\d{1,6})*$/;

/** Checks the envelope every change carries, before its kind looks at it. */
function checkEnvelope(c: WireChange, kinds: ReadonlyMap<string, SyncKind>): SyncKind {
  if (!c || typeof c !== 'object') throw new Invalid([], 'A change is an object.');
  if (c.op !== 'upsert' && c.op !== 'delete') throw new Invalid([], 'op must be upsert or delete.');
  if (typeof c.v !== 'string' || !VERSION.test(c.v)) throw new Invalid([], 'v must be a version stamp.');
  if (typeof c.eid !== 'string' || c.eid.length === 0 || c.eid.length > 100) throw new Invalid([], 'eid must be a record id.');
  if (typeof c.at !== 'string') throw new Invalid([], 'at must be an instant.');
  const kind = kinds.get(c.kind);
  if (!kind) throw new Invalid([], `Records of kind ${String(c.kind)} do not travel to this instance.`, 'unknown_kind');
  return kind;
}

/** A change as it was received: its id, origin and organization checked before anything is applied. */
export function checkIdentity(c: WireChange, org: string): Invalid | Forbidden | null {
  if (
    !c ||
    typeof c !== 'object' ||
    typeof c.id !== 'string' ||
    !ID.test(c.id) ||
    typeof c.origin !== 'string' ||
    !c.id.startsWith(`${c.origin}:`)
  )
    return new Invalid([], 'A change carries its id (<origin>:<number>) and origin.');
  if (c.org !== org) return new Forbidden(`The change is for organization ${String(c.org)}; this link is for ${org}.`);
  return null;
}

export interface ApplyOptions {
  org: string;
  actor: Actor;
  changes: WireChange[];
  kinds: ReadonlyMap<string, SyncKind>;
  /** Written in the same transaction as the changes (a box's pull cursor, its quarantine). */
  alsoInTransaction?: (ctx: ApplyContext, results: ChangeResult[]) => Promise<void>;
}

/**
 * Applies a batch of received changes in one transaction, in order (docs/sync.md, "Applying").
 * Foreign keys are checked at commit (`PRAGMA defer_foreign_keys`; `SET CONSTRAINTS ALL DEFERRED`
 * on PostgreSQL), so a child may come before its parent in a batch. A change the API would
 * refuse is answered `refused` with the reason and leaves nothing behind, the others applied.
 * Every change's outcome is recorded by id in the same transaction, so a batch received again
 * applies nothing twice and answers as the first time.
 *
 * Changes of a batched kind (harvests, irrigation entries, and walks not held here yet:
 * src/sync/batch.ts) are applied from reads gathered once for the batch, their writes held back
 * and written with multi-row statements; such a change writes only once its checks passed, so
 * one it refuses needs no savepoint. Every other change runs in a savepoint of its own, rolled
 * back alone when refused. The whole runs under one savepoint: were a batched change refused after it wrote (no kind
 * does), the batch is rolled back to it and applied again with a savepoint for every change.
 */
export async function applyChanges(services: Services, opts: ApplyOptions): Promise<ChangeResult[]> {
  const { org, changes, kinds } = opts;
  const upcoming = new Set(changes.filter((c) => c?.op === 'upsert').map((c) => `${c.kind}:${c.eid}`));
  const afterCommit: ApplyContext['afterCommit'] = [];
  const results = await services.store.write(
    opts.actor,
    async (w) => {
      // On PostgreSQL a transaction may be run again (a deadlock, a check overtaken): the work
      // queued by an attempt that rolled back goes with it.
      afterCommit.length = 0;
      const db = rawSql(w.engine);
      const pg = db.kind === 'postgres';
      // Foreign keys are checked at commit: a child may come before its parent in a batch
      // (PostgreSQL's are DEFERRABLE for this, docs/postgres.md).
      await (pg ? sql`SET CONSTRAINTS ALL DEFERRED` : sql`PRAGMA defer_foreign_keys = ON`).execute(w.trx);
      await indexLocalTombstones(db, org);
      const ctx: ApplyContext = { w, trx: w.trx, db, services, org, upcoming, afterCommit };
      type Prior = { outcome: Outcome; status: number | null; code: string | null; detail: string | null; errors: string | null };
      // What became of each change before: on SQLite asked change by change (a prepared statement
      // in process); on PostgreSQL asked for the whole batch at once, and what this batch does
      // written at its end in one statement (round trips are what a batch costs there).
      const earlier = new Map<string, Prior>();
      if (pg) {
        const ids = changes.map((c) => String(c?.id));
        for (const r of await db.all<Prior & { change_id: string }>(
          'SELECT change_id, outcome, status, code, detail, errors FROM sync_received WHERE organization_id = ? AND change_id = ANY(?::text[])',
          org,
          ids,
        ))
          earlier.set(r.change_id, r);
      }
      const before = new Map(earlier);
      const batchedOf = (c: WireChange): BatchedKind | undefined => (c && typeof c === 'object' ? kinds.get(c.kind)?.batched : undefined);
      const anyBatched = changes.some((c) => batchedOf(c) !== undefined);
      if (anyBatched) await sql`SAVEPOINT sync_batch`.execute(w.trx);
      let out = await applyInOrder(anyBatched);
      if (out === null) {
        // A batched change was refused after it wrote: everything again, each change in a savepoint.
        await sql`ROLLBACK TO sync_batch`.execute(w.trx);
        afterCommit.length = 0;
        earlier.clear();
        for (const [k, v] of before) earlier.set(k, v);
        out = (await applyInOrder(false))!;
      }
      if (anyBatched) await sql`RELEASE sync_batch`.execute(w.trx);
      await opts.alsoInTransaction?.(ctx, out);
      // Listeners may be async (a check that asks PostgreSQL): each is awaited, inside the transaction.
      for (const listener of applyEvents.listeners('batch')) await (listener as BatchListener)(services, w);
      return out;

      /** The batch in order; null when a batched change was refused after writing (the caller rolls back). */
      async function applyInOrder(gathered: boolean): Promise<ChangeResult[] | null> {
        const seen = async (id: string): Promise<Prior | undefined> =>
          pg ? earlier.get(id) : db.get<Prior>('SELECT outcome, status, code, detail, errors FROM sync_received WHERE change_id = ?', id);
        const received: unknown[][] = [[], [], [], [], [], [], [], [], []];
        const record = async (...values: unknown[]) => {
          if (!pg)
            return db.run(
              'INSERT INTO sync_received (change_id, organization_id, origin, outcome, status, code, detail, errors, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
              ...values,
            );
          values.forEach((v, i) => received[i]!.push(v));
          const [id, , , outcome, status, code, detail, errors] = values as [
            string,
            string,
            string,
            Outcome,
            number | null,
            string | null,
            string | null,
            string | null,
          ];
          earlier.set(id, { outcome, status, code, detail, errors });
        };
        const recordAll = async () => {
          if (!pg || !received[0]!.length) return;
          await db.run(
            `INSERT INTO sync_received (change_id, organization_id, origin, outcome, status, code, detail, errors, at)
           SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::text[], ?::text[], ?::text[], ?::text[])`,
            ...received,
          );
        };
        // The highest number received from each node (per organization on PostgreSQL, whose
        // tables all carry one; src/sync/upstream.ts reads the highest of them).
        const highest = new Map<string, number>();
        const lastSeq = async (origin: string, seq: number) =>
          pg
            ? void highest.set(origin, Math.max(seq, highest.get(origin) ?? 0))
            : db.run(
                'INSERT INTO sync_origins (origin, last_seq) VALUES (?, ?) ON CONFLICT (origin) DO UPDATE SET last_seq = excluded.last_seq WHERE excluded.last_seq > sync_origins.last_seq',
                origin,
                seq,
              );
        const out: ChangeResult[] = [];
        const batch = gathered ? new BatchState(w.trx, w) : null;
        const batchCtx: ApplyContext = { ...ctx, batch: batch ?? undefined };
        // Whether what the batch read must be read again (at first, and after a change of another kind).
        let stale = true;
        for (let i = 0; i < changes.length; i++) {
          const change = changes[i]!;
          const prior = await seen(change.id);
          if (prior) {
            out.push({
              id: change.id,
              outcome: prior.outcome,
              ...(prior.status ? { status: prior.status, code: prior.code!, detail: prior.detail! } : {}),
              ...(prior.errors ? { errors: JSON.parse(prior.errors) as ChangeResult['errors'] } : {}),
            });
            continue;
          }
          const refused = (err: unknown): ChangeResult => {
            const refusal = refusalOf(err);
            if (!refusal) throw err;
            return {
              id: change.id,
              outcome: 'refused',
              status: refusal.status,
              code: refusal.code,
              detail: refusal.detail,
              ...(refusal.errors ? { errors: refusal.errors } : {}),
            };
          };
          let result: ChangeResult;
          let batched = batch ? batchedOf(change) : undefined;
          if (batch && batched) {
            if (stale) {
              const rest = changes.slice(i).flatMap((c) => {
                const spec = batchedOf(c);
                return spec ? [{ spec, change: c }] : [];
              });
              await batch.gather(rest);
              stale = false;
            }
            // A kind some of whose changes take the gathered path (a walk not held here yet).
            if (batched.only && !(await batched.only(batch, change))) batched = undefined;
          }
          if (batch && batched) {
            const writes = batch.writes;
            try {
              const kind = checkEnvelope(change, kinds);
              w.remote = { origin: change.origin, changeId: change.id, n: 0 };
              result = { id: change.id, outcome: await kind.apply(batchCtx, change) };
            } catch (err) {
              result = refused(err);
              if (batch.writes !== writes) return null;
            } finally {
              w.remote = undefined;
            }
          } else {
            if (batch) {
              // This change reads and writes the database itself: it sees what the batch did so far,
              // and what the batch read may be out of date after it.
              await batch.flush();
              batch.forget();
              stale = true;
            }
            await sql`SAVEPOINT sync_change`.execute(w.trx);
            try {
              const kind = checkEnvelope(change, kinds);
              w.remote = { origin: change.origin, changeId: change.id, n: 0 };
              const outcome = await kind.apply(ctx, change);
              await sql`RELEASE sync_change`.execute(w.trx);
              result = { id: change.id, outcome };
            } catch (err) {
              await sql`ROLLBACK TO sync_change`.execute(w.trx);
              await sql`RELEASE sync_change`.execute(w.trx);
              result = refused(err);
            } finally {
              w.remote = undefined;
            }
          }
          await record(
            change.id,
            org,
            change.origin,
            result.outcome,
            result.status ?? null,
            result.code ?? null,
            result.detail ?? null,
            result.errors ? JSON.stringify(result.errors) : null,
            w.now,
          );
          const seq = seqOfChangeId(change.id, change.origin);
          if (seq !== null) await lastSeq(change.origin, seq);
          out.push(result);
        }
        await batch?.flush();
        await recordAll();
        for (const [origin, seq] of highest)
          await db.run(
            'INSERT INTO sync_origins (origin, organization_id, last_seq) VALUES (?, ?, ?) ON CONFLICT (origin, organization_id) DO UPDATE SET last_seq = excluded.last_seq WHERE excluded.last_seq > sync_origins.last_seq',
            origin,
            org,
            seq,
          );
        return out;
      }
    },
    // One organization's batches queue on its lock from the start (src/db/store.ts).
    { organization: org },
  );
  for (const fn of afterCommit) {
    try {
      await fn();
    } catch (err) {
      services.log.error('sync: work after a batch failed', { error: err as Error });
    }
  }
  return results;
}
