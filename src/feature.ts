import type { RouteSpec } from './http/route.js';
import type { Db } from './db/database.js';
import type { Writer } from './db/store.js';
import type { Services } from './services.js';
import type { ScopeResolvers } from './http/scope.js';
import type { Schedule } from './schedules/schedule.js';
import type { SyncKind } from './sync/kinds/kind.js';

/**
 * A kind of record kept under the registry (harvests, climate readings, walks...).
 * The registry counts and cascades over these without knowing them: a feature
 * lists its kinds and `GET <level>/contents` and `DELETE ?cascade=true` follow.
 */
export interface RecordKind {
  /** Name in `contents` counts, e.g. "harvests". */
  name: string;
  table: string;
  /** Which registry level the rows hang under, and the column naming it. */
  scope: 'cycle' | 'greenhouse';
  column: string;
  /** Kinds this one references (e.g. clips reference their walk): a cascade removes this kind's rows before theirs. */
  dependsOn?: string[];
  /**
   * For a kind not stored one synced row per record (climate readings): how many
   * records the owners hold, and how to remove them (with what the change log
   * should say). Without these, `table` is counted and removed by `column`, a
   * tombstone per row.
   */
  count?(db: Db, ownerIds: readonly string[]): Promise<number>;
  remove?(w: Writer, ownerIds: readonly string[]): Promise<number>;
  /**
   * Called with the ids of the rows a cascade removed, once its transaction has committed, for
   * what the feature keeps outside the database (a walk's clips and frames). Never called for a
   * delete that rolled back, so no file goes before its row.
   */
  afterRemove?(services: Services, ids: readonly string[]): Promise<void>;
}

/** A feature module: its routes, its record kinds, and what it runs beside the API. */
export interface Feature {
  name: string;
  routes: RouteSpec[];
  recordKinds?: RecordKind[];
  /** The scopes this feature resolves for routes (`scope: 'cycle'`...), by name (src/http/scope.ts). */
  scopes?: ScopeResolvers;
  /** How its records travel to and from an upstream, when sync does not know them already (docs/sync.md). */
  syncKinds?: SyncKind[];
  /** Background work (job runner, folder watcher); started after migrations. */
  start?(services: Services): Promise<void> | void;
  /**
   * Periodic work the service's scheduler runs (src/schedules/schedule.ts): started after every
   * feature's `start`, listed by GET /api/schedules, each switched and timed by SCHEDULE_<NAME>.
   */
  schedules?: Schedule[];
}
