import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { LogEntry, Writer } from '../db/store.js';
import { remoteIds } from '../db/feed.js';
import type { WireChange } from './wire.js';
import { findRow, tombstones, wasDeleted, writeFieldVersions } from './kinds/rows.js';
import { among, insertRows } from '../db/bulk.js';

type Row = Record<string, unknown>;
const anyDb = (q: Transaction<Database>) => q as unknown as Kysely<any>;

/** Ids asked for in one `IN (...)`. */
const CHUNK = 1000;

/** A parent a batched kind's records name (src/sync/kinds/rows.ts ParentSpec, the part read here). */
export interface BatchedParent {
  column: string;
  table: string;
  kind: string;
}

/**
 * What a kind whose changes can be applied from a batch's gathered reads declares: the table its
 * records live in, its change-log entity, and the parents its records name. Such a kind reads
 * nothing while applying a change but its record, its parents and their deletes (through
 * ApplyContext.batch), and writes its record and its change-log entry only once every check
 * passed: a change it refuses has written nothing, so it needs no savepoint of its own.
 */
export interface BatchedKind {
  table: string;
  kind: string;
  parents: readonly BatchedParent[];
  /**
   * When only some of the kind's changes may take the gathered path, which: asked with the
   * batch's reads gathered. The others run alone in a savepoint (a walk already held here is
   * merged by reading its clips, files and corrections, which the batch does not gather).
   */
  only?(batch: BatchState, change: WireChange): Promise<boolean>;
}

/** A field's version as sync_field_versions keeps it (src/sync/kinds/rows.ts columnVersions). */
export interface FieldVersion {
  organization_id: string;
  entity: string;
  entity_id: string;
  field: string;
  version: string;
}

/**
 * A batch's reads gathered and its writes held back (docs/sync.md, "Applying"; docs/postgres.md,
 * "Fifty boxes pushing at once"). On PostgreSQL every statement is a round trip to another
 * process, and a received change cost about a dozen: here the records a batch names, their
 * parents and the deletes of either are each read with one query per table for the whole batch,
 * new records are inserted with one multi-row statement per table, and the change-log entries
 * with one statement and one run of feed numbers (Writer.logMany), in the batch's order.
 *
 * What a change writes is visible to the next ones through this object (a record inserted, a
 * parent deleted): the kinds read through it, never around it. Before a change of another kind
 * runs, everything held back is written (`flush`) and what was read is forgotten (`forget`),
 * since that change reads the database itself and may change anything.
 */
export class BatchState {
  /** By table, by id: the record as it is now in this transaction; null when there is none. */
  private readonly rows = new Map<string, Map<string, Row | null>>();
  /** By change-log entity, by id: whether the record was deleted here (a tombstone in the change log). */
  private readonly deletes = new Map<string, Map<string, boolean>>();
  /** New records not written yet, by table, in their order. */
  private readonly inserts = new Map<string, Row[]>();
  private readonly entries: (LogEntry & { origin: string | null; change_id: string | null })[] = [];
  private readonly versions: FieldVersion[] = [];
  private readonly deferred: (() => Promise<void>)[] = [];
  /** Writes made or held back so far: a change that is refused after writing anything cannot be answered alone. */
  writes = 0;

  constructor(
    private readonly trx: Transaction<Database>,
    private readonly w: Writer,
  ) {}

  /** Reads, for the changes of batched kinds, their records, their parents and the deletes of those not held. */
  async gather(changes: { spec: BatchedKind; change: WireChange }[]): Promise<void> {
    const ids = new Map<string, Set<string>>();
    const kinds = new Map<string, string>();
    const want = (table: string, kind: string, id: unknown) => {
      if (typeof id !== 'string') return;
      kinds.set(table, kind);
      let set = ids.get(table);
      if (!set) ids.set(table, (set = new Set()));
      set.add(id);
    };
    for (const { spec, change } of changes) {
      if (typeof change.eid !== 'string') continue;
      want(spec.table, spec.kind, change.eid);
      const row = change.row;
      if (row && typeof row === 'object') for (const p of spec.parents) want(p.table, p.kind, (row as Row)[p.column]);
    }
    const absent = new Map<string, string[]>();
    for (const [table, set] of ids) {
      const known = this.table(table);
      const asked = [...set].filter((id) => !known.has(id));
      for (let i = 0; i < asked.length; i += CHUNK) {
        const part = asked.slice(i, i + CHUNK);
        const found = (await anyDb(this.trx)
          .selectFrom(table)
          .selectAll()
          .where(among(anyDb(this.trx), 'id', part))
          .execute()) as Row[];
        for (const r of found) known.set(r.id as string, r);
      }
      const kind = kinds.get(table)!;
      const missing = asked.filter((id) => !known.get(id) && !this.deletesOf(kind).has(id));
      for (const id of asked) if (!known.has(id)) known.set(id, null);
      if (missing.length) absent.set(kind, [...(absent.get(kind) ?? []), ...missing]);
    }
    for (const [kind, list] of absent) {
      const seen = this.deletesOf(kind);
      for (let i = 0; i < list.length; i += CHUNK) {
        const part = list.slice(i, i + CHUNK);
        const found = (await tombstones(this.trx)
          .select('entity_id')
          .where('entity', '=', kind)
          .where(among(anyDb(this.trx), 'entity_id', part))
          .execute()) as { entity_id: string }[];
        for (const id of part) seen.set(id, false);
        for (const r of found) seen.set(r.entity_id, true);
      }
    }
  }

  private table(table: string): Map<string, Row | null> {
    let m = this.rows.get(table);
    if (!m) this.rows.set(table, (m = new Map()));
    return m;
  }

  private deletesOf(kind: string): Map<string, boolean> {
    let m = this.deletes.get(kind);
    if (!m) this.deletes.set(kind, (m = new Map()));
    return m;
  }

  /** The record with this id as this transaction has it (a table's ids are UUIDs: the id alone finds it). */
  async row(table: string, id: string): Promise<Row | undefined> {
    const known = this.table(table);
    if (!known.has(id)) known.set(id, (await findRow(this.trx, table, id)) ?? null);
    return known.get(id) ?? undefined;
  }

  /** Whether a record of this kind was deleted here (src/sync/kinds/rows.ts wasDeleted). */
  async deleted(kind: string, id: string): Promise<boolean> {
    const seen = this.deletesOf(kind);
    if (!seen.has(id)) seen.set(id, await wasDeleted(this.trx, kind, id));
    return seen.get(id)!;
  }

  /**
   * A new row, written with the others of its table at the next flush. A row without an id (a
   * walk's file list) is written, never read back through this object.
   */
  insert(table: string, row: Row): void {
    let list = this.inserts.get(table);
    if (!list) this.inserts.set(table, (list = []));
    list.push(row);
    if (typeof row.id === 'string') this.table(table).set(row.id, row);
    this.writes++;
  }

  /** The versions a new record's fields took, written with the others at the next flush. */
  fieldVersions(org: string, entity: string, id: string, versions: ReadonlyMap<string, string>): void {
    for (const [field, version] of versions) this.versions.push({ organization_id: org, entity, entity_id: id, field, version });
    if (versions.size) this.writes++;
  }

  /**
   * Work run at the next flush, after the held-back writes (one query for what several changes
   * need, e.g. which of the batch's new walk files are here already). It must not refuse: every
   * check has passed by then.
   */
  defer(fn: () => Promise<void>): void {
    this.deferred.push(fn);
  }

  /** Changes a record now (after the inserts held back, one of which may be this record). */
  async update(table: string, id: string, values: Row): Promise<void> {
    this.writes++;
    const known = this.table(table);
    const before = known.get(id);
    if (Object.keys(values).length === 0) return;
    await this.writeInserts();
    await anyDb(this.trx).updateTable(table).set(values).where('id', '=', id).execute();
    if (before) known.set(id, { ...before, ...values });
    else known.delete(id);
  }

  /** Removes a record now (after the inserts held back). */
  async remove(table: string, id: string): Promise<void> {
    this.writes++;
    await this.writeInserts();
    await anyDb(this.trx).deleteFrom(table).where('id', '=', id).execute();
    this.table(table).set(id, null);
  }

  /**
   * A change-log entry, written in order with the others at the next flush. It takes the origin
   * and id of the change being applied now (Writer.remote); a delete without `after` is a
   * tombstone the next changes see.
   */
  log(entry: LogEntry): void {
    this.entries.push({ ...entry, ...remoteIds(this.w.remote) });
    if (entry.op === 'delete' && entry.after === undefined) this.deletesOf(entry.entity).set(entry.entity_id, true);
    this.writes++;
  }

  private async writeInserts(): Promise<void> {
    for (const [table, list] of this.inserts) await insertRows(anyDb(this.trx), table, list);
    this.inserts.clear();
  }

  /**
   * Writes what is held back: the new records, then the change-log entries with their feed
   * numbers and the fields' versions; then runs the work deferred to it.
   */
  async flush(): Promise<void> {
    await this.writeInserts();
    if (this.entries.length) await this.w.logMany(this.entries.splice(0));
    if (this.versions.length) await writeFieldVersions(this.trx, this.versions.splice(0));
    for (const fn of this.deferred.splice(0)) await fn();
  }

  /** Forgets what was read: a change applied outside this object may have changed anything. */
  forget(): void {
    this.rows.clear();
    this.deletes.clear();
  }
}
