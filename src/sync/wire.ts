/**
 * What travels between a box and its upstream (docs/sync.md, "Protocol"). One change is one
 * line of NDJSON in a push body or a pull answer; everything a receiver needs to decide and
 * apply it is in the line.
 */
import { createHash } from 'node:crypto';

export const PROTOCOL = 1;

export interface WireChange {
  /** The change's id: `<node>:<seq>` where it was made; `/n` appended for what applying it caused elsewhere. */
  id: string;
  /** The node (site) that made it. */
  origin: string;
  /** The organization it belongs to; a receiver refuses another than its link's (403). */
  org: string;
  /** The record kind: the change log's entity (a table name, or `climate_readings`). */
  kind: string;
  /** The record's id. */
  eid: string;
  op: 'upsert' | 'delete';
  /** HLC version the change was made with (src/db/hlc.ts): compared as text, byte by byte. */
  v: string;
  /** When it was made, ISO 8601 UTC (informative; versions decide). */
  at: string;
  /**
   * The record's fields that travel: as the record is when sent for an upsert (a later state
   * than the change's is harmless, versions decide), as it was for a delete.
   */
  row?: Record<string, unknown>;
  /** For kinds merged field by field: the version each field last changed with where sent. */
  fv?: Record<string, string>;
  /** What travels with the record as one unit (a truss count's rows, an import's readings, a walk's clips and files). */
  unit?: Record<string, unknown>;
}

/** What a receiver did with one change. */
export type Outcome = 'applied' | 'superseded' | 'refused';

export interface ChangeResult {
  id: string;
  outcome: Outcome;
  /** For a refusal: the status and code the API would answer for the same write, and why. */
  status?: number;
  code?: string;
  detail?: string;
  errors?: { in?: string; name: string; message: string }[];
}

export interface PushAnswer {
  /** One entry per change sent, in the order sent (a change applied before answers as it did then). */
  results: ChangeResult[];
  /** The upstream's feed position after the batch: informative. */
  applied: number;
}

export interface HelloAnswer {
  protocol: number;
  node: string;
  organization_id: string;
  organization_name: string | null;
  key_id: string;
  /** The highest change number the upstream holds from the asking node (by its `node:seq` ids), 0 when none. */
  last_seq_from_you: number;
}

export interface PullAnswer {
  changes: WireChange[];
  /** Where the next page starts: opaque. */
  cursor: string;
  /** More pages wait behind this one. */
  more: boolean;
}

/**
 * A pull cursor is opaque to the box: the upstream's node id, the organization's feed number,
 * and a tag of the change at that number. An upstream restored from a backup numbers new
 * changes again from where the backup stood; the tag no longer matches there, and the box reads
 * the feed again from the start rather than skip what was numbered anew.
 */
export function encodeCursor(node: string, orgSeq: number, changeId: string | null): string {
  return Buffer.from(`${PROTOCOL}|${node}|${orgSeq}|${changeId === null ? '' : cursorTag(changeId)}`, 'utf8').toString('base64url');
}

export function cursorTag(changeId: string): string {
  return createHash('sha256').update(changeId).digest('hex').slice(0, 12);
}

export function decodeCursor(cursor: string): { node: string; orgSeq: number; tag: string | null } | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^1\|([0-9a-z]{1,64})\|(\d{1,15})\|([0-9a-f]{12})?$/.exec(text);
  if (!m) return null;
  return { node: m[1]!, orgSeq: Number(m[2]), tag: m[3] ?? null };
}

/** The local id of a change made on `node` with change_log seq `seq`. */
export const localChangeId = (node: string, seq: number): string => `${node}:${seq}`;

/** `<node>:<seq>` → seq, for the ids a node gave its own changes; null for derived ids (`/n`) and others. */
export function seqOfChangeId(id: string, node: string): number | null {
  const prefix = `${node}:`;
  if (!id.startsWith(prefix)) return null;
  const rest = id.slice(prefix.length);
  return /^\d{1,15}$/.test(rest) ? Number(rest) : null;
}
