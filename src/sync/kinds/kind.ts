import type { RawSql } from '../../db/raw.js';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Writer } from '../../db/store.js';
import type { Services } from '../../services.js';
import type { WireChange } from '../wire.js';
import type { BatchState, BatchedKind } from '../batch.js';

/** A change-log row as sync reads it (src/db/schema.ts ChangeLogTable, with the sync columns). */
export interface LoggedChange {
  seq: number;
  organization_id: string;
  entity: string;
  entity_id: string;
  op: 'insert' | 'update' | 'delete';
  before: string | null;
  after: string | null;
  version: string;
  at: string;
  origin: string | null;
  change_id: string | null;
  org_seq: number | null;
}

/** The part of a wire change a kind builds from a logged change; ids, origin and organization are added around it. */
export type WireBody = Pick<WireChange, 'op' | 'eid' | 'v'> & Partial<Pick<WireChange, 'row' | 'fv' | 'unit'>>;

/**
 * Serializing runs outside any transaction, so it reads through Kysely only: a query waits
 * for the one connection, never reading what another request's open transaction has not
 * committed (the raw better-sqlite3 handle would).
 */
export interface SerializeContext {
  db: Kysely<Database>;
  dataDir: string;
  /** Walk clips travel too (SYNC_CLIPS). */
  syncClips: boolean;
}

export interface ApplyContext {
  w: Writer;
  trx: Transaction<Database>;
  /** Plain SQL on the transaction's connection, either engine (src/db/raw.ts). */
  db: RawSql;
  services: Services;
  /** The organization the batch is for: every change and every parent must be in it. */
  org: string;
  /** `kind:eid` of the records upserted further on in the same batch: a parent may come after its child. */
  upcoming: Set<string>;
  /** Work for after the commit (a walk's files to fetch, folders to remove). */
  afterCommit: (() => Promise<void> | void)[];
  /**
   * Set only for a kind that declares `batched`: its reads gathered for the whole batch and its
   * writes held back (src/sync/batch.ts). A kind reads and writes through it when it is set.
   */
  batch?: BatchState;
}

export type Applied = 'applied' | 'superseded';

/**
 * How one kind of record travels and is merged (docs/sync.md, "Conflicts, kind by kind").
 * `serialize` reads a logged change into what travels, or null when nothing does (a walk still
 * being scored, a truss-count row, which travels inside its count date). `apply` checks a
 * received change with the API's schemas and rules and merges it, inside the batch's
 * transaction; it throws SyncRefused for a change the API would refuse.
 */
export interface SyncKind {
  kind: string;
  /** Tables compared by the digest, with the columns that must be equal on both sides. */
  digest: DigestSpec[];
  serialize(ctx: SerializeContext, entry: LoggedChange): Promise<WireBody | null>;
  apply(ctx: ApplyContext, change: WireChange): Promise<Applied>;
  /** Its changes can be applied from a batch's gathered reads, without a savepoint each (src/sync/batch.ts). */
  batched?: BatchedKind;
}

export interface DigestSpec {
  /** Name in the digest answer. */
  name: string;
  /** The rows of one organization, in a stable order, as plain values. */
  rows(db: Kysely<Database>, org: string): Promise<unknown[][]>;
}

export const parse = <T = Record<string, unknown>>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** The columns of a row that travel. */
export function pick(row: Record<string, unknown>, columns: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) if (c in row) out[c] = row[c] === undefined ? null : row[c];
  return out;
}

/** The columns whose values differ between two images of a row. */
export function changedColumns(before: Record<string, unknown>, after: Record<string, unknown>, columns: readonly string[]): string[] {
  return columns.filter((c) => !sameValue(before[c], after[c]));
}

export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

/** Versions are HLC stamps: fixed-width text that sorts as the clock does (src/db/hlc.ts). */
export const newer = (a: string, b: string | null | undefined): boolean => b === null || b === undefined || a > b;
export const maxVersion = (a: string, b: string): string => (a > b ? a : b);
