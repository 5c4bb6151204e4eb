import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { LOCK_SPACE } from '../../db/postgres.js';
import type { Store, Writer } from '../../db/store.js';
import { SYSTEM_ACTOR } from '../../db/store.js';
import { DEFAULT_OPTIONS, KIND_OF_MODE, type ScoringMode, type ScoringOptions } from './options.js';
import type { StoredResult } from './result.js';
import { mediaRemoved } from './retention.js';
import type { WalkClipTable, WalkSource, WalkTable } from './tables.js';
import { Conflict, Invalid, NotFound } from '../../errors.js';
import { stat } from 'node:fs/promises';
import type { Services } from '../../services.js';
import type { CycleScope } from '../../registry/scope.js';
import type { ScopeResolvers } from '../../http/scope.js';
import { parseWeek, WEEK_FORMS } from '../../time/weeks.js';
import { forgetWalks } from './runner.js';
import { framePath } from './storage.js';

/**
 * Domain functions of the walk queue: plain values in, rows out, no Koa.
 * State changes (queued → running → done | failed, and back to queued) go
 * through the Writer so the change log has them; progress ticks do not (see
 * recordProgress).
 */

/** A job interrupted this many times is failed instead of queued again: it is probably what kills the process. */
export const MAX_ATTEMPTS = 3;

export interface NewClip {
  fileName: string;
  originalName: string;
  size: number;
  sha256: string;
  kind: 'image' | 'video';
  format: string;
  width: number;
  height: number;
  durationSeconds: number;
}

export interface NewWalk {
  id: string;
  organizationId: string;
  cycle: { farm_id: string; greenhouse_id: string; row_id: string; cycle_id: string; week: string } | null;
  source: WalkSource;
  exampleKey: string | null;
  mode: string;
  options: ScoringOptions;
  idempotencyKey: string | null;
  requestHash: string;
  keyId: string | null;
  clips: NewClip[];
}

export interface WalkWithClips {
  walk: WalkTable;
  clips: WalkClipTable[];
}

/** A walk waiting to be scored, with nothing of a scoring yet: as uploaded, or queued again by a rescore. */
const UNSCORED = {
  status: 'queued',
  progress: 0,
  detector: null,
  error: null,
  attempts: 0,
  started_at: null,
  finished_at: null,
  count_green: null,
  count_turning: null,
  count_red: null,
  count_total: null,
  corrected_green: null,
  corrected_turning: null,
  corrected_red: null,
  corrected_total: null,
  result: null,
} as const;

export async function createWalk(w: Writer, input: NewWalk): Promise<WalkWithClips> {
  const walk = await w.insert<WalkTable>('walks', {
    id: input.id,
    organization_id: input.organizationId,
    farm_id: input.cycle?.farm_id ?? null,
    greenhouse_id: input.cycle?.greenhouse_id ?? null,
    row_id: input.cycle?.row_id ?? null,
    cycle_id: input.cycle?.cycle_id ?? null,
    week: input.cycle?.week ?? null,
    source: input.source,
    example_key: input.exampleKey,
    ...UNSCORED,
    mode: input.mode,
    options: JSON.stringify(input.options),
    idempotency_key: input.idempotencyKey,
    request_hash: input.requestHash,
    created_by_key_id: input.keyId,
    clips_removed_at: null,
    frames_removed_at: null,
  });
  const clips: WalkClipTable[] = [];
  for (const [position, c] of input.clips.entries()) {
    clips.push(
      await w.insert<WalkClipTable>('walk_clips', {
        organization_id: input.organizationId,
        walk_id: walk.id,
        cycle_id: walk.cycle_id,
        position,
        file_name: c.fileName,
        original_name: c.originalName.slice(0, 255),
        size_bytes: c.size,
        sha256: c.sha256,
        kind: c.kind,
        format: c.format,
        width: c.width,
        height: c.height,
        duration_s: c.durationSeconds,
        status: 'queued',
        progress: 0,
        frames: 0,
        error: null,
      }),
    );
  }
  return { walk, clips };
}

export async function findWalk(db: Db, id: string): Promise<WalkTable | undefined> {
  return db.selectFrom('walks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The walk when it belongs to the organization; another organization's walk is a 404 like a missing one. */
export async function loadWalk(db: Db, id: string, organizationId: string): Promise<WalkTable> {
  const walk = await db
    .selectFrom('walks')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  if (!walk) throw new NotFound('walk');
  return walk;
}

/** The zone a walk's instants are answered in: its greenhouse's, UTC for a walk in no crop cycle. */
export async function walkZone(db: Db, walk: Pick<WalkTable, 'greenhouse_id'>): Promise<string> {
  if (!walk.greenhouse_id) return 'UTC';
  const gh = await db.selectFrom('greenhouses').select('time_zone').where('id', '=', walk.greenhouse_id).executeTakeFirst();
  return gh?.time_zone ?? 'UTC';
}

export async function clipsOf(db: Db, walkId: string): Promise<WalkClipTable[]> {
  return db.selectFrom('walk_clips').selectAll().where('walk_id', '=', walkId).orderBy('position').execute();
}

export async function findByIdempotencyKey(db: Db, organizationId: string, key: string): Promise<WalkTable | undefined> {
  return db
    .selectFrom('walks')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/**
 * Claims the oldest queued walk for this process. The UPDATE ... WHERE
 * status = 'queued' is the claim: when two runners race for one row only one
 * of them changes it, and the other moves on.
 *
 * On PostgreSQL, where several processes share the queue, the candidate is read
 * FOR UPDATE SKIP LOCKED: a walk another process is claiming right now is passed
 * over instead of waited for, so two processes claim two walks, never one twice.
 * The claim records the process (`claimed_by`, its instance number), whose
 * advisory lock says whether it is still alive (recoverInterrupted).
 */
export async function claimNextWalk(store: Store): Promise<WalkTable | null> {
  return store.write(SYSTEM_ACTOR, async (w) => {
    const pg = w.engine.kind === 'postgres';
    const candidate = await w.trx
      .selectFrom('walks')
      .selectAll()
      .where('status', '=', 'queued')
      .orderBy('id')
      .limit(1)
      .$if(pg, (q) => q.forUpdate().skipLocked())
      .executeTakeFirst();
    if (!candidate) return null;
    const version = store.hlc.now();
    const changed = await w.trx
      .updateTable('walks')
      .set({
        status: 'running',
        progress: 0,
        started_at: w.now,
        finished_at: null,
        error: null,
        attempts: candidate.attempts + 1,
        updated_at: w.now,
        version,
        claimed_by: w.engine.kind === 'postgres' ? w.engine.instance : null,
      })
      .where('id', '=', candidate.id)
      .where('status', '=', 'queued')
      .executeTakeFirst();
    if (Number(changed.numUpdatedRows) !== 1) return null;
    const after = await w.trx.selectFrom('walks').selectAll().where('id', '=', candidate.id).executeTakeFirstOrThrow();
    await w.log({ organization_id: after.organization_id, entity: 'walks', entity_id: after.id, op: 'update', before: candidate, after });
    await w.trx
      .updateTable('walk_clips')
      .set({ status: 'queued', progress: 0, frames: 0, error: null })
      .where('walk_id', '=', after.id)
      .execute();
    return after;
  });
}

export interface ClipProgress {
  position: number;
  progress: number;
  frames: number;
  status: 'queued' | 'running' | 'done';
}

/**
 * Progress of a running walk. Written straight to the row rather than through
 * the Writer: it changes several times a second, is meaningless once the job
 * ends, and would otherwise flood the change log (the future sync outbox)
 * with hundreds of entries per walk. Only a running walk is touched, so a
 * late tick never overwrites a finished or re-queued one.
 */
export async function recordProgress(db: Db, walkId: string, progress: number, clips: ClipProgress[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('walks')
      .set({ progress: clamp01(progress) })
      .where('id', '=', walkId)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return;
    for (const c of clips) {
      await trx
        .updateTable('walk_clips')
        .set({ progress: clamp01(c.progress), frames: c.frames, status: c.status })
        .where('walk_id', '=', walkId)
        .where('position', '=', c.position)
        .execute();
    }
  });
}

/** Stores the result of a running walk; false when the walk is no longer running (deleted, or re-queued by a stop). */
export async function finishWalk(w: Writer, walkId: string, result: StoredResult): Promise<boolean> {
  const walk = await w.trx.selectFrom('walks').select(['status']).where('id', '=', walkId).executeTakeFirst();
  if (walk?.status !== 'running') return false;
  await w.update<WalkTable>('walks', walkId, {
    status: 'done',
    progress: 1,
    finished_at: w.now,
    detector: result.detector.name,
    count_green: result.counts.green,
    count_turning: result.counts.turning,
    count_red: result.counts.red,
    count_total: result.counts.total,
    // A walk is scored only without corrections (a corrected walk is not scored again), so these start as the detector's.
    corrected_green: result.counts.green,
    corrected_turning: result.counts.turning,
    corrected_red: result.counts.red,
    corrected_total: result.counts.total,
    result: JSON.stringify(result),
    error: null,
  });
  const frames = new Map(result.clips.map((c) => [c.position, c.frames]));
  for (const clip of await w.trx.selectFrom('walk_clips').selectAll().where('walk_id', '=', walkId).execute()) {
    await w.update<WalkClipTable>('walk_clips', clip.id, {
      status: 'done',
      progress: 1,
      frames: frames.get(clip.position) ?? clip.frames,
      error: null,
    });
  }
  return true;
}

/** Ends a running walk as failed with its reason (shown as `error`); `clip` names the clip at fault when known. */
export async function failWalk(w: Writer, walkId: string, reason: string, clip?: number): Promise<boolean> {
  const walk = await w.trx.selectFrom('walks').select(['status']).where('id', '=', walkId).executeTakeFirst();
  if (!walk || walk.status === 'done' || walk.status === 'failed') return false;
  await w.update<WalkTable>('walks', walkId, { status: 'failed', finished_at: w.now, error: reason.slice(0, 2000) });
  if (clip !== undefined) {
    const row = await w.trx
      .selectFrom('walk_clips')
      .select(['id'])
      .where('walk_id', '=', walkId)
      .where('position', '=', clip)
      .executeTakeFirst();
    if (row) await w.update<WalkClipTable>('walk_clips', row.id, { status: 'failed', error: reason.slice(0, 2000) });
  }
  return true;
}

/**
 * Moves a crop-cycle walk to another week (saved to the wrong one): only the week changes, the
 * counts stand, and the change log has the move. A quick score is in no crop cycle: 422.
 */
/** Moves a crop-cycle walk to another week (a label or any date of it). */
export async function moveWalkToWeek(w: Writer, walk: WalkTable, weekText: string): Promise<WalkTable> {
  const week = parseWeek(weekText)?.label;
  if (!week) throw Invalid.field('week', `must be ${WEEK_FORMS}`, 'body');
  if (!walk.cycle_id)
    throw Invalid.field('week', 'this walk is in no crop cycle (a quick score); only a walk uploaded to a crop cycle has a week', 'body');
  if (walk.week === week) return walk;
  return (await w.update<WalkTable>('walks', walk.id, { week })).after;
}

/** Options a walk is scored again with; those left out keep the walk's. */
export interface RescoreFields {
  mode?: ScoringMode;
  conf?: number;
  sample_seconds?: number;
  max_frames?: number;
  mm_per_pixel?: number;
}

/** The walk's options with the given ones over them; a given sample_seconds is exact (adaptive sampling off), as at upload. */
export function rescoreOptions(previous: ScoringOptions, fields: RescoreFields): ScoringOptions {
  return {
    conf: fields.conf ?? previous.conf,
    conf_given: fields.conf !== undefined || previous.conf_given,
    sample_seconds: fields.sample_seconds ?? previous.sample_seconds,
    fast_sample_seconds: fields.sample_seconds === undefined ? previous.fast_sample_seconds : null,
    max_frames: fields.max_frames ?? previous.max_frames,
    mm_per_pixel: fields.mm_per_pixel ?? previous.mm_per_pixel,
  };
}

/**
 * Queues a finished (done or failed) walk to be scored again from its kept clips, with other
 * options or another detector: a clip cut short by max_frames, a model installed since. Its
 * result and counts are cleared until then; a walk still queued or scoring is a 409.
 */
export async function rescoreWalk(w: Writer, walkId: string, fields: RescoreFields): Promise<WalkTable> {
  const walk = await w.trx.selectFrom('walks').selectAll().where('id', '=', walkId).executeTakeFirst();
  if (!walk) throw new NotFound('walk');
  if (walk.status === 'queued' || walk.status === 'running') {
    throw new Conflict('The walk is still being scored; score it again once it is done or failed.', {
      job_id: walk.id,
      walk_status: walk.status,
    });
  }
  if (walk.clips_removed_at !== null) throw mediaRemoved('clips', walk.id, walk.clips_removed_at);
  // Corrections name fruit by track id, and a new scoring gives new ones: staff work is never dropped silently.
  const corrections = await w.trx.selectFrom('walk_corrections').select('id').where('walk_id', '=', walk.id).orderBy('id').execute();
  if (corrections.length > 0) {
    throw new Conflict(
      `The walk has ${corrections.length} staff correction(s), which name its fruit by track id; scoring it again would number the fruit anew. Undo them first (DELETE {walk}/corrections/{correction_id}).`,
      { job_id: walk.id, correction_ids: corrections.map((c) => c.id) },
    );
  }
  const mode = fields.mode ?? (walk.mode as ScoringMode);
  const want = KIND_OF_MODE[mode];
  if (want) {
    const clips = await clipsOf(w.trx as unknown as Db, walk.id);
    if (clips.some((c) => c.kind !== want))
      throw Invalid.field('mode', `is "${mode}", but this walk holds ${mode === 'photo' ? 'a video clip' : 'a photo'}`, 'body');
  }
  const previous = { ...DEFAULT_OPTIONS, ...(JSON.parse(walk.options) as Partial<ScoringOptions>) };
  const { after } = await w.update<WalkTable>('walks', walk.id, {
    ...UNSCORED,
    mode,
    options: JSON.stringify(rescoreOptions(previous, fields)),
    // The frames are written anew, and kept from this scoring's end.
    frames_removed_at: null,
  });
  await w.trx
    .updateTable('walk_clips')
    .set({ status: 'queued', progress: 0, frames: 0, error: null })
    .where('walk_id', '=', walk.id)
    .execute();
  return after;
}

/**
 * Deletes a walk and its clip rows, each leaving a tombstone in the change log, in the caller's
 * transaction; its files go once that has committed (`forgetWalks`).
 */
/** Deletes a walk; once the delete has committed its clips and frames go, and a walk being scored is stopped. */
export async function removeWalk(w: Writer, services: Services, walkId: string): Promise<void> {
  await deleteWalk(w, walkId);
  w.afterCommit(() => forgetWalks(services, [walkId]));
}

export async function deleteWalk(w: Writer, walkId: string): Promise<void> {
  await w.removeWhereIn('walk_corrections', 'walk_id', [walkId]);
  await w.removeWhereIn('walk_clips', 'walk_id', [walkId]);
  await w.remove('walks', walkId);
}

/** Puts a running walk back in the queue (stopped by shutdown, or found running after a crash). */
export async function requeueWalk(w: Writer, walkId: string): Promise<boolean> {
  const walk = await w.trx.selectFrom('walks').select(['status']).where('id', '=', walkId).executeTakeFirst();
  if (walk?.status !== 'running') return false;
  await w.update<WalkTable>('walks', walkId, { status: 'queued', progress: 0, started_at: null });
  await w.trx
    .updateTable('walk_clips')
    .set({ status: 'queued', progress: 0, frames: 0, error: null })
    .where('walk_id', '=', walkId)
    .execute();
  return true;
}

/**
 * At start: every walk left `running` by a crash or a kill goes back to the
 * queue, except one that has already been interrupted MAX_ATTEMPTS times,
 * which fails rather than take the box down again and again.
 *
 * On PostgreSQL other processes may be scoring walks this minute: only walks
 * whose claiming process is gone are taken back, those whose claimer's advisory
 * lock (held by its link connection, src/db/postgres.ts) can be taken. The
 * runner asks again now and then, so walks of a process killed while others run
 * are not left behind until a restart.
 */
export async function recoverInterrupted(store: Store): Promise<{ requeued: string[]; failed: string[] }> {
  return store.write(SYSTEM_ACTOR, async (w) => {
    const running = await w.trx.selectFrom('walks').select(['id', 'attempts', 'claimed_by']).where('status', '=', 'running').execute();
    const requeued: string[] = [];
    const failed: string[] = [];
    for (const r of running) {
      if (w.engine.kind === 'postgres' && !(await claimerGone(w, w.engine.instance, r.claimed_by ?? null))) continue;
      if (r.attempts >= MAX_ATTEMPTS) {
        await failWalk(w, r.id, `scoring was interrupted ${r.attempts} times (the process stopped while scoring it); not trying again`);
        failed.push(r.id);
      } else {
        await requeueWalk(w, r.id);
        requeued.push(r.id);
      }
    }
    return { requeued, failed };
  });
}

/** Whether the process that claimed a walk is gone: no claimer recorded, or its liveness lock free (held until this transaction ends). */
async function claimerGone(w: Writer, me: number, claimer: number | null): Promise<boolean> {
  if (claimer === null) return true;
  // This process's own walks are in its runner's hands (a recovery while it runs).
  if (claimer === me) return false;
  const r = await sql<{ free: boolean }>`select pg_try_advisory_xact_lock(${LOCK_SPACE.process}, ${claimer}) as free`.execute(w.trx);
  return r.rows[0]!.free;
}

export async function queueDepth(db: Db): Promise<{ queued: number; running: number }> {
  const rows = await db
    .selectFrom('walks')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', 'in', ['queued', 'running'])
    .groupBy('status')
    .execute();
  const n = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
  return { queued: n('queued'), running: n('running') };
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/** A crop cycle's walks, newest first, optionally of one week; with how many there are in all. */
export async function listCycleWalks(
  db: Db,
  scope: CycleScope,
  options: { week?: string; limit: number; offset: number },
): Promise<{ rows: (WalkTable & { clip_count: number })[]; total: number }> {
  const week = options.week === undefined ? undefined : parseWeek(options.week);
  if (week === null) throw Invalid.field('week', `must be ${WEEK_FORMS}`, 'query');
  let q = db.selectFrom('walks').where('cycle_id', '=', scope.cycle.id);
  if (week) q = q.where('week', '=', week.label);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .selectAll('walks')
    .select((eb) =>
      eb
        .selectFrom('walk_clips')
        .select((c) => c.fn.countAll<number>().as('n'))
        .whereRef('walk_clips.walk_id', '=', 'walks.id')
        .as('clip_count'),
    )
    .orderBy('id', 'desc')
    .limit(options.limit)
    .offset(options.offset)
    .execute();
  return { rows: rows.map((r) => ({ ...r, clip_count: Number(r.clip_count ?? 0) })), total: Number(total.n) };
}

declare module '../../http/scope.js' {
  interface Scopes {
    walk: WalkTable;
  }
}

/**
 * A walk's path names no organization (`/api/observations/{id}`) or names one (`{org}/walks/{walk_id}`,
 * already checked against the key's): either way the walk must be the key's organization's, else 404.
 */
export const walkScopes: ScopeResolvers = {
  walk: (db, params, principal) => {
    const organizationId = params.organization_id ?? (principal?.kind === 'key' ? principal.organizationId : undefined);
    if (!organizationId) throw new NotFound('walk');
    return loadWalk(db, params.walk_id ?? params.id!, organizationId);
  },
};

/** One stored frame of a walk (image or overlay), or why not: 410 once frames are removed, 404 for none. */
export async function frameFile(dataDir: string, walk: WalkTable, frame: number, name: string): Promise<{ file: string; size: number }> {
  if (walk.frames_removed_at !== null) throw mediaRemoved('frames', walk.id, walk.frames_removed_at);
  const file = framePath(dataDir, walk.id, frame, name);
  const info = file ? await stat(file).catch(() => null) : null;
  if (!file || !info?.isFile()) throw new NotFound('frame');
  return { file, size: info.size };
}
