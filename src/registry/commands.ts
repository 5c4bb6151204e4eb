import type { Db } from '../db/database.js';
import type { Writer } from '../db/store.js';
import type { RecordKind } from '../feature.js';
import type { Services } from '../services.js';
import { LEVELS, LEVEL_ORDER, type Level, type LevelName } from './levels.js';
import { Conflict, Invalid, NotFound } from '../errors.js';

type Row = Record<string, any>;

/** Rules that span fields, checked on the merged record (create and patch alike). */
export function checkLevelRules(level: Level, merged: Row): void {
  if (level.name === 'greenhouse') {
    const hasLat = merged.latitude !== null && merged.latitude !== undefined;
    const hasLon = merged.longitude !== null && merged.longitude !== undefined;
    if (hasLat !== hasLon)
      throw Invalid.field(hasLat ? 'longitude' : 'latitude', 'latitude and longitude are given together (both, or neither)', 'body');
  }
  if (level.name === 'cycle' && merged.ended_on && merged.started_on && merged.ended_on < merged.started_on) {
    throw Invalid.field('ended_on', 'must not be before started_on', 'body');
  }
}

export async function createLevel(w: Writer, level: Level, parents: Record<string, string>, input: Row): Promise<Row> {
  const values: Row = { organization_id: parents.organization_id };
  for (const p of level.parentIds) values[p] = parents[p];
  for (const f of Object.keys(level.fields)) values[f] = input[f] ?? null;
  checkLevelRules(level, values);
  return w.insert(level.table, values as any);
}

/** The children of the parent the path names, oldest first. */
export async function listLevel(db: Db, level: Level, params: Record<string, string>): Promise<Row[]> {
  const owner = level.parentIds.at(-1) ?? 'organization_id';
  return (db as any).selectFrom(level.table).selectAll().where(owner, '=', params[owner]).orderBy('id').execute();
}

export async function updateLevel(w: Writer, level: Level, current: Row, patch: Row): Promise<Row> {
  const changes = Object.fromEntries(Object.entries(patch).filter(([k]) => k in level.fields));
  for (const r of level.required) {
    if (r in changes && changes[r] === null) throw Invalid.field(r, 'cannot be cleared', 'body');
  }
  checkLevelRules(level, { ...current, ...changes });
  const { after } = await w.update(level.table, current.id, changes);
  return after;
}

/** The levels below `level`, nearest first. */
function levelsBelow(level: LevelName): Level[] {
  return LEVEL_ORDER.slice(LEVEL_ORDER.indexOf(level) + 1).map((n) => LEVELS[n]);
}

/** Column that ties a lower level's rows to the level being counted. */
function ownerColumn(level: Level): string {
  return level.idName;
}

/** Ids of the cycles / greenhouses at or under a level. */
async function idsUnder(db: Db, level: Level, id: string, target: 'cycles' | 'greenhouses'): Promise<string[]> {
  if (level.table === target) return [id];
  const targetLevel = target === 'cycles' ? LEVELS.cycle : LEVELS.greenhouse;
  if (LEVEL_ORDER.indexOf(targetLevel.name) < LEVEL_ORDER.indexOf(level.name)) return [];
  const rows = await (db as any).selectFrom(target).select('id').where(ownerColumn(level), '=', id).execute();
  return rows.map((r: { id: string }) => r.id);
}

/**
 * Counts everything under a level: the lower levels and every registered kind
 * of record. For a farm this is exactly what a cascading delete removes.
 */
export async function levelContents(db: Db, kinds: RecordKind[], level: Level, id: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const below of levelsBelow(level.name)) {
    const r = await (db as any)
      .selectFrom(below.table)
      .select((eb: any) => eb.fn.countAll().as('n'))
      .where(ownerColumn(level), '=', id)
      .executeTakeFirst();
    counts[below.plural] = Number(r?.n ?? 0);
  }
  const cycles = await idsUnder(db, level, id, 'cycles');
  const greenhouses = await idsUnder(db, level, id, 'greenhouses');
  for (const kind of kinds) {
    const owners = kind.scope === 'cycle' ? cycles : greenhouses;
    counts[kind.name] = (counts[kind.name] ?? 0) + (kind.count ? await kind.count(db, owners) : await countRows(db, kind, owners));
  }
  return counts;
}

async function countRows(db: Db, kind: RecordKind, owners: readonly string[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < owners.length; i += 500) {
    const part = owners.slice(i, i + 500);
    const r = await (db as any)
      .selectFrom(kind.table)
      .select((eb: any) => eb.fn.countAll().as('n'))
      .where(kind.column, 'in', part)
      .executeTakeFirst();
    n += Number(r?.n ?? 0);
  }
  return n;
}

/** Record kinds in an order where a kind comes before the kinds it depends on. */
function deletionOrder(kinds: RecordKind[]): RecordKind[] {
  const out: RecordKind[] = [];
  const visit = (k: RecordKind, stack: Set<string>) => {
    if (out.includes(k)) return;
    if (stack.has(k.name)) throw new Error(`record kinds depend on each other in a cycle: ${k.name}`);
    stack.add(k.name);
    // Kinds that depend on k (hold references to it) go first.
    for (const other of kinds) if (other.dependsOn?.includes(k.name)) visit(other, stack);
    stack.delete(k.name);
    out.push(k);
  };
  for (const k of kinds) visit(k, new Set());
  return out;
}

/** What a delete removed: counts per kind, and the row ids of the kinds that keep files beside their rows. */
export interface Deleted {
  counts: Record<string, number>;
  removed: Map<RecordKind, string[]>;
}

/**
 * After a delete has committed: each kind that lost rows tidies what it keeps outside the
 * database (walk files). It runs after the answer, since stopping a walk being scored takes a
 * moment; a failure there is logged and the delete stands.
 */
export function afterDelete(services: Services, deleted: Deleted): void {
  for (const [kind, ids] of deleted.removed) {
    if (ids.length === 0) continue;
    kind
      .afterRemove?.(services, ids)
      .catch((err) => services.log.error('tidying up after a delete failed', { kind: kind.name, error: err as Error }));
  }
}

/**
 * Deletes a level. While it holds anything the answer is 409 with the counts;
 * with `cascade` everything under it goes too, each row leaving a tombstone,
 * all inside the caller's single transaction.
 */
export async function deleteLevel(w: Writer, services: Services, level: Level, id: string, cascade: boolean): Promise<Deleted> {
  const kinds = services.recordKinds;
  const db = w.trx as unknown as Db;
  const counts = await levelContents(db, kinds, level, id);
  const holds = Object.values(counts).some((n) => n > 0);
  if (holds && !cascade) {
    throw new Conflict(`The ${level.label} is not empty; delete with cascade=true to remove it and everything it holds.`, { counts });
  }
  const removed = new Map<RecordKind, string[]>();
  if (holds) {
    const cycles = await idsUnder(db, level, id, 'cycles');
    const greenhouses = await idsUnder(db, level, id, 'greenhouses');
    for (const kind of deletionOrder(kinds)) {
      const owners = kind.scope === 'cycle' ? cycles : greenhouses;
      if (kind.afterRemove) {
        const rows: { id: string }[] = owners.length
          ? await (db as any).selectFrom(kind.table).select('id').where(kind.column, 'in', owners).execute()
          : [];
        removed.set(
          kind,
          rows.map((r) => r.id),
        );
      }
      if (kind.remove) await kind.remove(w, owners);
      else await w.removeWhereIn(kind.table, kind.column, owners);
    }
    for (const below of levelsBelow(level.name).reverse()) {
      const rows = await (db as any).selectFrom(below.table).select('id').where(ownerColumn(level), '=', id).execute();
      await w.removeWhereIn(
        below.table,
        'id',
        rows.map((r: { id: string }) => r.id),
      );
    }
  }
  if (!(await w.remove(level.table, id))) throw new NotFound(level.label);
  const deleted = { counts, removed };
  w.afterCommit(() => afterDelete(services, deleted));
  return deleted;
}
