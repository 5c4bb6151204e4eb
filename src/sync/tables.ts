/** Sync's own tables (migration 0008_sync; docs/sync.md). None of them is a synced record. */

export interface SyncCounterTable {
  organization_id: string;
  next: number;
}

export interface SyncReceivedTable {
  change_id: string;
  organization_id: string;
  origin: string;
  outcome: 'applied' | 'superseded' | 'refused';
  status: number | null;
  code: string | null;
  detail: string | null;
  /** JSON: the fields at fault, for a refusal. */
  errors: string | null;
  at: string;
}

export interface SyncOriginTable {
  origin: string;
  last_seq: number;
}

export interface SyncLinkTable {
  organization_id: string;
  upstream_url: string;
  upstream_key: string | null;
  upstream_node: string | null;
  linked_at: string;
  pushed_seq: number;
  pull_cursor: string | null;
  state: string;
  last_push_at: string | null;
  last_push_count: number | null;
  last_push_error: string | null;
  last_pull_at: string | null;
  last_pull_count: number | null;
  last_pull_error: string | null;
  last_ok_at: string | null;
  failures: number;
}

export interface SyncQuarantineTable {
  change_id: string;
  organization_id: string;
  direction: 'push' | 'pull';
  seq: number | null;
  entity: string;
  entity_id: string;
  op: string;
  status: number;
  code: string;
  reason: string;
  errors: string | null;
  at: string;
}

export interface SyncTombstoneTable {
  entity: string;
  entity_id: string;
  organization_id: string;
  version: string;
}

export interface SyncFieldVersionTable {
  entity: string;
  entity_id: string;
  field: string;
  version: string;
}

export interface SyncWalkFileTable {
  walk_id: string;
  name: string;
  organization_id: string;
  sha256: string;
  size: number;
  present: number;
}

export interface SyncUploadTable {
  sha256: string;
  organization_id: string;
  size: number;
  queued_at: string;
  done_at: string | null;
  outcome: 'sent' | 'had' | 'gone' | 'unwanted' | null;
  bytes_sent: number;
}

declare module '../db/schema.js' {
  interface Database {
    sync_counters: SyncCounterTable;
    sync_received: SyncReceivedTable;
    sync_origins: SyncOriginTable;
    sync_links: SyncLinkTable;
    sync_quarantine: SyncQuarantineTable;
    sync_tombstones: SyncTombstoneTable;
    sync_field_versions: SyncFieldVersionTable;
    sync_walk_files: SyncWalkFileTable;
    sync_uploads: SyncUploadTable;
  }
}
