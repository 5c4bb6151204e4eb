import { sql, type Kysely } from 'kysely';
import { engineKindOf } from './engine.js';

/**
 * Each organization's changes are numbered by a counter of its own (`sync_counters`), taken in
 * the transaction that logs them: the number and the change commit together, and the row lock
 * on the counter makes writers of one organization commit in the order of their numbers. A
 * reader of the feed that asks for "after n" therefore never skips a change that commits late,
 * on SQLite now and on a database with concurrent writers later (docs/sync.md, "Pull").
 *
 * Returns the first of `n` new numbers for the organization.
 */
export async function takeOrgSeqs(db: Kysely<any>, organizationId: string, n: number): Promise<number> {
  const r = await sql<{ next: number }>`
    INSERT INTO sync_counters (organization_id, next) VALUES (${organizationId}, ${n})
    ON CONFLICT (organization_id) DO UPDATE SET next = sync_counters.next + ${n}
    RETURNING next`.execute(db);
  return Number(r.rows[0]!.next) - n + 1;
}

/**
 * While a Writer applies a change received by sync, every entry it logs carries the change's
 * origin (the site that made it), and its id: the first entry the change id itself, the
 * entries it causes here (a cascade, a record that lost to it) the id with `/1`, `/2`...
 * A box pushes only the entries without an origin: what was made on it.
 */
export interface RemoteOrigin {
  origin: string;
  changeId: string;
  /** Entries logged so far for this change. */
  n: number;
}

export function remoteIds(remote: RemoteOrigin | undefined): { origin: string | null; change_id: string | null } {
  if (!remote) return { origin: null, change_id: null };
  const id = remote.n === 0 ? remote.changeId : `${remote.changeId}/${remote.n}`;
  remote.n++;
  return { origin: remote.origin, change_id: id };
}

/**
 * Whether this database has the feed's counters (migration 0010_sync): a database built only as
 * far as an older migration (a migration's own test) is written without feed numbers.
 */
export async function hasFeed(db: Kysely<any>): Promise<boolean> {
  const r =
    engineKindOf(db) === 'postgres'
      ? await sql<{
          n: number;
        }>`SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'sync_counters'`.execute(
          db,
        )
      : await sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'sync_counters'`.execute(db);
  return Number(r.rows[0]?.n ?? 0) > 0;
}
