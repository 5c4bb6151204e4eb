import type { Generated } from 'kysely';

/**
 * Columns every synced record carries: it belongs to an organization, has a
 * UUIDv7 id made where it was created, and a version stamp (HLC) that only grows.
 */
export interface SyncedColumns {
  id: string;
  organization_id: string;
  created_at: string;
  updated_at: string;
  version: string;
}

export interface OrganizationTable extends SyncedColumns {
  name: string;
}

export interface ApiKeyTable extends SyncedColumns {
  name: string;
  role: 'admin' | 'member';
  lookup: string;
  secret_hash: string;
  display: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface FarmTable extends SyncedColumns {
  name: string;
  location: string | null;
  notes: string | null;
}

export interface GreenhouseTable extends SyncedColumns {
  farm_id: string;
  name: string;
  time_zone: string;
  latitude: number | null;
  longitude: number | null;
  area_m2: number | null;
  notes: string | null;
}

export interface RowTable extends SyncedColumns {
  farm_id: string;
  greenhouse_id: string;
  name: string;
  length_m: number | null;
  plant_count: number | null;
  notes: string | null;
}

export interface CycleTable extends SyncedColumns {
  farm_id: string;
  greenhouse_id: string;
  row_id: string;
  name: string;
  crop: string | null;
  variety: string | null;
  started_on: string;
  ended_on: string | null;
  plants_per_m2: number | null;
  stems_per_m2: number | null;
  /** Growing area the cycle's records cover (m²); migration 0009. */
  area_m2: number | null;
  notes: string | null;
}

export interface ChangeLogTable {
  seq: Generated<number>;
  organization_id: string | null;
  entity: string;
  entity_id: string;
  op: 'insert' | 'update' | 'delete';
  actor_key_id: string | null;
  actor: string;
  before: string | null;
  after: string | null;
  version: string;
  at: string;
  /** Sync (migration 0008): the site that made the change, null when made here. */
  origin?: string | null;
  /** Sync: the change's id on the wire, null when made here (`<node>:<seq>`). */
  change_id?: string | null;
  /** Sync: the change's number in its organization's feed. */
  org_seq?: number | null;
}

export interface MetaTable {
  key: string;
  value: string;
}

/**
 * The database's tables. Feature modules add their own tables by augmenting
 * this interface (`declare module '../db/schema.js' { interface Database {...} }`),
 * so no feature edits another's file.
 */
export interface Database {
  organizations: OrganizationTable;
  api_keys: ApiKeyTable;
  farms: FarmTable;
  greenhouses: GreenhouseTable;
  rows: RowTable;
  cycles: CycleTable;
  change_log: ChangeLogTable;
  meta: MetaTable;
}

export type SyncedTableName = {
  [K in keyof Database]: Database[K] extends SyncedColumns ? K : never;
}[keyof Database];
