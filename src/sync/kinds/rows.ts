import { Conflict, Forbidden } from '../../errors.js';
import { sql, type Kysely, type Transaction } from 'kysely';
import { engineKindOf } from '../../db/engine.js';
import { insertRows } from '../../db/bulk.js';
import type { Database } from '../../db/schema.js';
import type { JsonSchema } from '../../http/route.js';
import type { WireChange } from '../wire.js';
import type { FieldVersion } from '../batch.js';
import { checkFields, invalid, notHeld } from '../refusal.js';
import {
  changedColumns,
  maxVersion,
  newer,
  parse,
  pick,
  sameValue,
  type Applied,
  type ApplyContext,
  type LoggedChange,
  type SerializeContext,
  type SyncKind,
  type WireBody,
} from './kind.js';

type Row = Record<string, unknown>;
type Q = Kysely<Database> | Transaction<Database>;
const anyDb = (q: Q) => q as unknown as Kysely<any>;

export const SYNCED = ['id', 'organization_id', 'created_at', 'updated_at', 'version'] as const;

/**
 * A record's delete is final for an id made once (UUIDv7): the change log keeps the tombstone.
 * A record that lost its natural key to another (two boxes saved the same week's fruit mass) is
 * removed too, but that is no delete: its entry carries `after: {superseded_by}`, it does not
 * travel, and a later write of it may win the key back (see lostTo).
 */
export async function wasDeleted(q: Q, entity: string, id: string): Promise<boolean> {
  const r = await tombstones(q).select('seq').where('entity', '=', entity).where('entity_id', '=', id).limit(1).executeTakeFirst();
  return r !== undefined;
}

/**
 * The change log's tombstones (deletes without an `after`), read through their partial index
 * (migration 0012): the values are written out, not bound, so that SQLite's planner and
 * PostgreSQL's, whatever its statistics of the table say, see that the index covers the query.
 */
export function tombstones(q: Q) {
  return anyDb(q).selectFrom('change_log').where('op', '=', sql.lit('delete')).where('after', 'is', null);
}

/** The record with this id as the transaction has it: through the batch's gathered reads when the kind is batched. */
const held = (ctx: ApplyContext, table: string, id: string): Promise<Row | undefined> =>
  ctx.batch ? ctx.batch.row(table, id) : findRow(ctx.trx, table, id);

/** wasDeleted, through the batch's gathered reads when the kind is batched. */
const deletedHere = (ctx: ApplyContext, kind: string, id: string): Promise<boolean> =>
  ctx.batch ? ctx.batch.deleted(kind, id) : wasDeleted(ctx.trx, kind, id);

/** A change-log entry: held back with the batch's others when the kind is batched (src/sync/batch.ts). */
async function logEntry(ctx: ApplyContext, entry: Parameters<ApplyContext['w']['log']>[0]): Promise<void> {
  if (ctx.batch) ctx.batch.log(entry);
  else await ctx.w.log(entry);
}

/** Logs that a record of a natural-key kind gave way to another one with the same key (not a delete: see wasDeleted). */
export async function logLoss(ctx: ApplyContext, entity: string, loser: Row, winnerId: string, version?: string): Promise<void> {
  await logEntry(ctx, {
    organization_id: ctx.org,
    entity,
    entity_id: loser.id as string,
    op: 'delete',
    before: loser,
    after: { superseded_by: winnerId },
    ...(version ? { version } : {}),
  });
  if (version) ctx.services.hlc.seed(version);
}

/**
 * The version each column of a record last changed with here. Writes made here are read from
 * the record's change-log entries (an insert sets every column, an update the columns its
 * images differ in, with the version the record took); received writes from
 * sync_field_versions, which apply() fills (docs/sync.md, "Registry and settings").
 */
export async function columnVersions(q: Q, entity: string, id: string, columns: readonly string[]): Promise<Map<string, string>> {
  const entries = await anyDb(q)
    .selectFrom('change_log')
    .select(['op', 'before', 'after', 'version'])
    .where('entity', '=', entity)
    .where('entity_id', '=', id)
    .where('origin', 'is', null)
    .orderBy('seq')
    .execute();
  const versions = new Map<string, string>();
  const set = (c: string, v: string) => {
    const had = versions.get(c);
    if (had === undefined || v > had) versions.set(c, v);
  };
  for (const e of entries as { op: string; before: string | null; after: string | null; version: string }[]) {
    if (e.op === 'delete') continue;
    const after = parse(e.after) ?? {};
    const v = typeof after.version === 'string' ? after.version : e.version;
    const touched = e.op === 'insert' ? columns : changedColumns(parse(e.before) ?? {}, after, columns);
    for (const c of touched) set(c, v);
  }
  const received = (await anyDb(q)
    .selectFrom('sync_field_versions')
    .select(['field', 'version'])
    .where('entity', '=', entity)
    .where('entity_id', '=', id)
    .execute()) as { field: string; version: string }[];
  for (const r of received) set(r.field, r.version);
  return versions;
}

/**
 * Records the versions received fields took (see columnVersions), each field once, all in one
 * statement (a round trip each on PostgreSQL was most of what a registry record or walk cost).
 */
export async function recordColumnVersions(
  q: Q,
  org: string,
  entity: string,
  id: string,
  versions: ReadonlyMap<string, string>,
): Promise<void> {
  await writeFieldVersions(
    q,
    [...versions].map(([field, version]) => ({ organization_id: org, entity, entity_id: id, field, version })),
  );
}

/** Field versions of any records, a later version replacing an earlier one, in as few statements as the bound-value cap allows. */
export async function writeFieldVersions(q: Q, rows: readonly FieldVersion[]): Promise<void> {
  // PostgreSQL's table carries the organization (Citus distributes by it); SQLite's has none.
  const pg = engineKindOf(anyDb(q)) === 'postgres';
  // One statement may not propose the same row twice (PostgreSQL refuses it): the latest version of each field.
  const latest = new Map<string, FieldVersion>();
  for (const r of rows) {
    const key = JSON.stringify([r.organization_id, r.entity, r.entity_id, r.field]);
    const had = latest.get(key);
    if (!had || r.version > had.version) latest.set(key, r);
  }
  const all = [...latest.values()].map((r) => (pg ? r : { entity: r.entity, entity_id: r.entity_id, field: r.field, version: r.version }));
  const key = pg ? sql`(entity, entity_id, field, organization_id)` : sql`(entity, entity_id, field)`;
  await insertRows(
    anyDb(q),
    'sync_field_versions',
    all,
    sql`ON CONFLICT ${key} DO UPDATE SET version = excluded.version WHERE excluded.version > sync_field_versions.version`,
  );
}

export async function findRow(q: Q, table: string, id: string): Promise<Row | undefined> {
  return (await anyDb(q).selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst()) as Row | undefined;
}

/** Logs an applied change with the version it was made with. */
export async function logApplied(
  ctx: ApplyContext,
  change: Pick<WireChange, 'kind' | 'eid' | 'v'>,
  op: 'insert' | 'update' | 'delete',
  before: Row | undefined,
  after: Row | undefined,
): Promise<void> {
  await logEntry(ctx, {
    organization_id: ctx.org,
    entity: change.kind,
    entity_id: change.eid,
    op,
    ...(before ? { before } : {}),
    ...(after ? { after } : {}),
    version: change.v,
  });
  ctx.services.hlc.seed(change.v);
}

/** Which record a record hangs under, and the columns it copies from it (a harvest's farm_id...). */
export interface ParentSpec {
  column: string;
  table: string;
  /** The kind (change-log entity) of the parent, for a parent sent later in the same batch. */
  kind: string;
  /** Columns the child copies from the parent: they must agree. */
  same?: string[];
  /** The column may be null (a quick-score walk has no crop cycle). */
  nullable?: boolean;
  what: string;
}

export class Superseded extends Error {}

/**
 * The parents a record names must be this organization's and agree with each other; a parent
 * deleted here takes the late child with it (superseded); one sent further on in the batch is
 * fine (foreign keys are checked at commit).
 */
export async function checkParents(ctx: ApplyContext, row: Row, parents: readonly ParentSpec[]): Promise<void> {
  for (const p of parents) {
    const id = row[p.column];
    if (id === null || id === undefined) {
      if (p.nullable) continue;
      throw invalid(`${p.column} is required.`, [{ in: 'body', name: p.column, message: 'is required' }]);
    }
    if (typeof id !== 'string') throw invalid(`${p.column} must be an id.`, [{ in: 'body', name: p.column, message: 'must be a string' }]);
    const parent = await held(ctx, p.table, id);
    if (!parent) {
      if (ctx.upcoming.has(`${p.kind}:${id}`)) continue;
      if (await deletedHere(ctx, p.kind, id)) throw new Superseded(`the ${p.what} ${id} was deleted`);
      throw notHeld(`The ${p.what} ${id} is not held here: send it first.`);
    }
    const parentOrg = p.table === 'organizations' ? parent.id : parent.organization_id;
    if (parentOrg !== ctx.org) throw notHeld(`The ${p.what} ${id} is not held here.`);
    for (const c of p.same ?? []) {
      if (!sameValue(parent[c], row[c]))
        throw invalid(`${c} does not match the ${p.what}'s.`, [{ in: 'body', name: c, message: `must be the ${p.what}'s ${c}` }]);
    }
  }
}

export interface RowKindSpec {
  kind: string;
  table: string;
  what: string;
  /** Columns that travel, the synced ones included. */
  columns: readonly string[];
  /** Columns that never change once the record is made (parents, natural keys, a key's hash). */
  immutable: readonly string[];
  /** Values of the columns that do not travel, for a record made here by sync. */
  localDefaults?: (row: Row) => Row;
  /**
   * 'record': the later version takes the whole record (facts). Groups: each group of columns
   * takes the later of its own versions (registry and settings; a group holds the columns a
   * rule ties together, e.g. latitude with longitude).
   */
  merge: 'record' | { groups: readonly (readonly string[])[] };
  /** The API's field schemas for the columns (checked on every record received). */
  schema: JsonSchema;
  parents: readonly ParentSpec[];
  /** Columns unique together (one fruit-mass entry per cycle and week): the later record of two wins. */
  naturalKey?: readonly string[];
  /**
   * Columns merged by a rule of their own rather than by version (a key's revocation always
   * wins): the values to set, given the record here and the one received.
   */
  extraMerge?(existing: Row, incoming: Row): Row;
  /** The API's rules across fields and records, on the record as it would be stored (and on what travels with it). */
  check?(ctx: ApplyContext, row: Row, existing: Row | undefined, change: WireChange): Promise<void> | void;
  /** Does the record travel in this state? (a walk being scored does not: it is this box's job). */
  travels?(row: Row): boolean;
  /** What travels with the record (a walk's clips and files). */
  unit?(ctx: SerializeContext, row: Row): Promise<Record<string, unknown>> | Record<string, unknown>;
  /**
   * After a record was written (`taken`: the columns taken from the received one, all of them for
   * a new record) or removed (`row` undefined) here.
   */
  afterApply?(
    ctx: ApplyContext,
    row: Row | undefined,
    before: Row | undefined,
    change: WireChange,
    taken: ReadonlySet<string>,
  ): Promise<void> | void;
  /** Removes the record and what hangs under it; default: the row alone, logged. */
  remove?(ctx: ApplyContext, existing: Row, change: WireChange): Promise<void>;
  /** Made once, never changed (a stored forecast): an update is refused. */
  insertOnly?: boolean;
  /**
   * Its `check` reads nothing from the database, so a batch may apply its changes from reads
   * gathered once for the whole batch, with its writes held back (src/sync/batch.ts). `true` is
   * taken only for a kind merged as a whole record, without natural key, afterApply or remove of
   * its own. `'new'`: only a change of a record not held here takes that path, and the kind's
   * afterApply writes through `ctx.batch` for a record it makes (a walk with its clips and file
   * list); a change of a record held here runs alone, in a savepoint.
   */
  batched?: boolean | 'new';
}

async function insertRow(ctx: ApplyContext, table: string, row: Row): Promise<void> {
  if (ctx.batch) ctx.batch.insert(table, row);
  else await anyDb(ctx.trx).insertInto(table).values(row).execute();
}

async function updateRow(ctx: ApplyContext, table: string, id: string, values: Row): Promise<void> {
  if (ctx.batch) return ctx.batch.update(table, id, values);
  if (Object.keys(values).length === 0) return;
  await anyDb(ctx.trx).updateTable(table).set(values).where('id', '=', id).execute();
}

async function deleteRow(ctx: ApplyContext, table: string, id: string): Promise<void> {
  if (ctx.batch) await ctx.batch.remove(table, id);
  else await anyDb(ctx.trx).deleteFrom(table).where('id', '=', id).execute();
}

/** Removes one row here because of a received change (a record that lost to it, a count date's rows), logged. */
export async function removeRow(ctx: ApplyContext, table: string, existing: Row, version?: string): Promise<void> {
  await deleteRow(ctx, table, existing.id as string);
  await logEntry(ctx, {
    organization_id: ctx.org,
    entity: table,
    entity_id: existing.id as string,
    op: 'delete',
    before: existing,
    ...(version ? { version } : {}),
  });
}

/** Of two records with one natural key, the later version wins; equal versions, the greater id. */
export const wins = (a: Row, b: Row): boolean =>
  (a.version as string) > (b.version as string) || (a.version === b.version && String(a.id) > String(b.id));

const groupVersion = (group: readonly string[], versions: ReadonlyMap<string, string> | Record<string, string>, fallback?: string) => {
  let best: string | undefined;
  for (const c of group) {
    const v = versions instanceof Map ? versions.get(c) : (versions as Record<string, string>)[c];
    const x = v ?? fallback;
    if (x !== undefined && (best === undefined || x > best)) best = x;
  }
  return best;
};

/**
 * What travels for a logged change of a one-row record: its tombstone for a delete, else the
 * record as it is now (nothing when it is gone since: its delete follows in the log, and a
 * record deleted later never has to be made first).
 */
export async function currentBody(ctx: SerializeContext, spec: RowKindSpec, entry: LoggedChange): Promise<WireBody | null> {
  if (entry.op === 'delete') {
    // A record that gave way to another with its natural key is no delete: every side settles that itself.
    if (entry.after !== null) return null;
    const before = parse(entry.before);
    return { op: 'delete', eid: entry.entity_id, v: entry.version, ...(before ? { row: pick(before, spec.columns) } : {}) };
  }
  const now = await findRow(ctx.db, spec.table, entry.entity_id);
  if (!now || (spec.travels && !spec.travels(now))) return null;
  const body: WireBody = { op: 'upsert', eid: entry.entity_id, v: now.version as string, row: pick(now, spec.columns) };
  if (spec.merge !== 'record') {
    const fields = spec.columns.filter((c) => !(SYNCED as readonly string[]).includes(c));
    body.fv = Object.fromEntries(await columnVersions(ctx.db, spec.kind, entry.entity_id, fields));
  }
  if (spec.unit) body.unit = await spec.unit(ctx, now);
  return body;
}

export function rowKind(spec: RowKindSpec): SyncKind {
  const fieldColumns = spec.columns.filter((c) => !(SYNCED as readonly string[]).includes(c));
  const all: ReadonlySet<string> = new Set(spec.columns);

  async function remove(ctx: ApplyContext, existing: Row, change: WireChange) {
    if (spec.remove) await spec.remove(ctx, existing, change);
    else {
      await deleteRow(ctx, spec.table, existing.id as string);
      await logApplied(ctx, change, 'delete', existing, undefined);
    }
  }

  /** The field versions a change carries, each checked to be a version no later than the change's own. */
  function fieldVersions(change: WireChange): Record<string, string> {
    const fv = change.fv ?? {};
    if (typeof fv !== 'object') throw invalid('fv must map fields to versions.');
    for (const [c, v] of Object.entries(fv)) {
      if (!fieldColumns.includes(c)) throw invalid(`fv names ${c}, which does not travel.`);
      if (typeof v !== 'string' || v > change.v) throw invalid(`fv.${c} must be a version no later than the change's.`);
    }
    return fv;
  }

  async function upsert(ctx: ApplyContext, change: WireChange): Promise<Applied> {
    const incoming = change.row;
    if (!incoming || typeof incoming !== 'object') throw invalid('An upsert carries the record (row).');
    const row = pick(incoming, spec.columns);
    if (row.id !== change.eid) throw invalid('row.id must be the change’s record id.');
    if (row.organization_id !== ctx.org) throw new Forbidden('The record belongs to another organization.');
    if (row.version !== change.v) throw invalid('row.version must be the change’s version.');
    const fv = spec.merge === 'record' ? {} : fieldVersions(change);
    const existing = await held(ctx, spec.table, change.eid);
    if (existing && existing.organization_id !== ctx.org) throw new Forbidden('A record with this id belongs to another organization.');

    if (!existing) {
      if (await deletedHere(ctx, spec.kind, change.eid)) return 'superseded';
      checkFields(spec.schema, row, spec.what);
      try {
        await checkParents(ctx, row, spec.parents);
      } catch (err) {
        if (err instanceof Superseded) return 'superseded';
        throw err;
      }
      await spec.check?.(ctx, row, undefined, change);
      const stored = { ...row, ...(spec.localDefaults?.(row) ?? {}) };
      if (spec.naturalKey) {
        let q = anyDb(ctx.trx).selectFrom(spec.table).selectAll().where('id', '!=', change.eid);
        for (const c of spec.naturalKey) q = q.where(c, '=', row[c]);
        const clash = (await q.executeTakeFirst()) as Row | undefined;
        if (clash) {
          if (!wins(stored, clash)) {
            // The record here is the later one: the received one gives way (a later write of it may still win).
            await logLoss(ctx, spec.kind, stored, clash.id as string, change.v);
            return 'superseded';
          }
          await removeAfterLoss(ctx, clash, change);
        }
      }
      await insertRow(ctx, spec.table, stored);
      if (spec.merge !== 'record') {
        const versions = new Map(fieldColumns.map((c) => [c, fv[c] ?? change.v]));
        if (ctx.batch) ctx.batch.fieldVersions(ctx.org, spec.kind, change.eid, versions);
        else await recordColumnVersions(ctx.trx, ctx.org, spec.kind, change.eid, versions);
      }
      await logApplied(ctx, change, 'insert', undefined, stored);
      await spec.afterApply?.(ctx, stored, undefined, change, all);
      return 'applied';
    }

    for (const c of spec.immutable) {
      if (c in row && !sameValue(row[c], existing[c]))
        throw invalid(`${c} cannot change.`, [{ in: 'body', name: c, message: 'cannot change once the record is made' }]);
    }
    if (spec.insertOnly) {
      const changed = fieldColumns.filter((c) => c in row && !sameValue(row[c], existing[c]));
      if (changed.length === 0) return 'superseded';
      throw new Conflict(`A ${spec.what} does not change once stored.`);
    }
    const extra = spec.extraMerge ? spec.extraMerge(existing, row) : {};
    // Made on two sides (an organization registered upstream for a box that had made it first): the earlier making stands.
    if (spec.merge !== 'record' && typeof row.created_at === 'string' && row.created_at < String(existing.created_at))
      extra.created_at = row.created_at;
    const extraChanges = Object.keys(extra).filter((c) => !sameValue(extra[c], existing[c]));
    let values: Row;
    let taken: string[] = [];
    if (spec.merge === 'record') {
      if (newer(change.v, existing.version as string)) {
        taken = fieldColumns;
        values = { ...pick(row, fieldColumns), ...extra, updated_at: row.updated_at ?? existing.updated_at, version: change.v };
      } else if (extraChanges.length) values = { ...extra };
      else return 'superseded';
    } else {
      const held = await columnVersions(ctx.trx, spec.kind, change.eid, fieldColumns);
      values = {};
      const took = new Map<string, string>();
      for (const group of spec.merge.groups) {
        const incomingVersion = groupVersion(group, fv, change.v);
        if (incomingVersion === undefined || !newer(incomingVersion, groupVersion(group, held))) continue;
        for (const c of group) {
          if (!(c in row)) continue;
          values[c] = row[c];
          taken.push(c);
          took.set(c, fv[c] ?? change.v);
        }
      }
      await recordColumnVersions(ctx.trx, ctx.org, spec.kind, change.eid, took);
      // A later write whose fields all lost here (a key revoked again after an earlier revocation
      // arrived) still gives the record its version and time, as on the side that made it:
      // otherwise that side and this one hold the same fields under different versions for good.
      if (taken.length === 0 && extraChanges.length === 0 && !newer(change.v, existing.version as string)) return 'superseded';
      Object.assign(values, extra);
      values.version = maxVersion(existing.version as string, change.v);
      // The time of the latest write by version, wherever it was made (wall clocks disagree; versions do not).
      values.updated_at = newer(change.v, existing.version as string) ? (row.updated_at ?? existing.updated_at) : existing.updated_at;
    }
    const merged = { ...existing, ...values };
    checkFields(spec.schema, merged, spec.what);
    await spec.check?.(ctx, merged, existing, change);
    await updateRow(ctx, spec.table, change.eid, values);
    await logApplied(ctx, change, 'update', existing, merged);
    await spec.afterApply?.(ctx, merged, existing, change, new Set([...taken, ...Object.keys(extra)]));
    return 'applied';
  }

  /** A record that lost its natural key to a received one goes (not deleted: see wasDeleted). */
  async function removeAfterLoss(ctx: ApplyContext, loser: Row, change: WireChange) {
    await anyDb(ctx.trx)
      .deleteFrom(spec.table)
      .where('id', '=', loser.id as string)
      .execute();
    await logLoss(ctx, spec.kind, loser, change.eid);
    await spec.afterApply?.(ctx, undefined, loser, change, all);
  }

  return {
    kind: spec.kind,
    digest: [
      {
        name: spec.kind,
        rows: async (db, org) => {
          const rows = (await anyDb(db)
            .selectFrom(spec.table)
            .select(spec.columns as string[])
            .where(spec.table === 'organizations' ? 'id' : 'organization_id', '=', org)
            .orderBy('id')
            .execute()) as Row[];
          return rows.map((r) => spec.columns.map((c) => r[c] ?? null));
        },
      },
    ],
    serialize: (ctx, entry) => currentBody(ctx, spec, entry),
    ...(spec.batched === true && spec.merge === 'record' && !spec.naturalKey && !spec.afterApply && !spec.remove
      ? { batched: { table: spec.table, kind: spec.kind, parents: spec.parents } }
      : {}),
    ...(spec.batched === 'new' && !spec.naturalKey
      ? {
          batched: {
            table: spec.table,
            kind: spec.kind,
            parents: spec.parents,
            only: async (batch, change) => (await batch.row(spec.table, change.eid)) === undefined,
          },
        }
      : {}),
    async apply(ctx, change) {
      if (change.op === 'upsert') return upsert(ctx, change);
      const existing = await held(ctx, spec.table, change.eid);
      if (existing && existing.organization_id !== ctx.org) throw new Forbidden('A record with this id belongs to another organization.');
      if (!existing) {
        // Deleted here already, or never seen: the tombstone is kept so a late write stays dead.
        if (await deletedHere(ctx, spec.kind, change.eid)) return 'superseded';
        await logApplied(ctx, change, 'delete', change.row ?? { id: change.eid }, undefined);
        return 'applied';
      }
      await remove(ctx, existing, change);
      await spec.afterApply?.(ctx, undefined, existing, change, all);
      return 'applied';
    },
  };
}

/** Raw SQL helper for kinds that write side tables. */
export { sql };
