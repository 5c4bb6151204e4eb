import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { SYSTEM_ACTOR } from '../../db/store.js';
import { scheduled } from '../../db/engine.js';
import { storageOf } from '../../health/routes.js';
import { Conflict, Gone } from '../../errors.js';
import type { Services } from '../../services.js';
import { clipsDir, framesDir } from './storage.js';
import type { WalkTable } from './tables.js';

/**
 * Removes the files of scored walks once they are past their keep time, so a box that films
 * every row every week does not fill its disk (uploads are then refused with 507): the clips
 * after WALK_CLIP_KEEP_DAYS (they are only needed to score the walk again), the frames and
 * overlays after WALK_FRAME_KEEP_DAYS. And when free space under DATA_DIR falls below
 * DISK_RESERVE, the oldest scored walks' clips go early, then their frames, until it is back above.
 * The walk keeps its counts, result and clip list; the row says when each part went, in the
 * change log as the system's update.
 */
export type MediaPart = 'clips' | 'frames';
export const MEDIA_PARTS: readonly MediaPart[] = ['clips', 'frames'];

const DAY_MS = 86_400_000;
const BATCH = 200;
const REMOVED_COLUMN = { clips: 'clips_removed_at', frames: 'frames_removed_at' } as const;

/** When a walk finished at `finishedAt` loses this part, or null when it is kept for ever (0 days) or not finished. */
export function keptUntil(finishedAt: string | null, keepDays: number): string | null {
  if (finishedAt === null || !(keepDays > 0)) return null;
  return new Date(Date.parse(finishedAt) + keepDays * DAY_MS).toISOString();
}

/** Walks that finished before this instant lose the part now; null when the part is kept for ever. */
export function removalCutoff(now: Date, keepDays: number): string | null {
  return keepDays > 0 ? new Date(now.getTime() - keepDays * DAY_MS).toISOString() : null;
}

export function keepDaysOf(services: Services, part: MediaPart): number {
  return part === 'clips' ? services.config.walkClipKeepDays : services.config.walkFrameKeepDays;
}

export function removedAt(walk: Pick<WalkTable, 'clips_removed_at' | 'frames_removed_at'>, part: MediaPart): string | null {
  return walk[REMOVED_COLUMN[part]];
}

async function folderBytes(dir: string): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let bytes = 0;
  for (const name of names) bytes += (await stat(path.join(dir, name)).catch(() => null))?.size ?? 0;
  return bytes;
}

/**
 * The answer for a walk whose part is gone: 409 clips_removed to a rescore (the walk is there,
 * its state forbids it), 410 frames_removed to a frame (the file existed and was removed on purpose).
 */
export function mediaRemoved(part: MediaPart, walkId: string, removedAt: string): Conflict | Gone {
  const setting = part === 'clips' ? 'WALK_CLIP_KEEP_DAYS' : 'WALK_FRAME_KEEP_DAYS';
  const what = part === 'clips' ? "The walk's clips were" : "The walk's frames and overlays were";
  const after = part === 'clips' ? ', so it cannot be scored again' : '';
  const detail = `${what} removed at ${removedAt}, past the days they are kept (${setting}) or to keep DISK_RESERVE free${after}; its counts and result are kept.`;
  const extra = { job_id: walkId, [`${part}_removed_at`]: removedAt };
  return part === 'clips' ? new Conflict(detail, extra, 'clips_removed') : new Gone(detail, 'frames_removed', extra);
}

function dirOf(services: Services, part: MediaPart, walkId: string): string {
  return part === 'clips' ? clipsDir(services.config.dataDir, walkId) : framesDir(services.config.dataDir, walkId);
}

export interface SweepReport {
  clips: string[];
  frames: string[];
  /** Walks whose clips went before their keep time, to bring free space back above the reserve. */
  clipsForSpace: string[];
  /** Walks whose frames went for room, once no scored walk had clips left. */
  framesForSpace: string[];
}

/** What /api/health shows of the last sweep: when it ended and how many walks lost each part. */
export interface SweepSummary {
  at: string;
  clips: number;
  frames: number;
  clips_for_space: number;
  frames_for_space: number;
}

/** Bytes of uploaded clips still on disk, from the sizes stored at upload (no scan of the disk). */
export async function keptClipBytes(db: Services['db']): Promise<{ walks: number; bytes: number }> {
  // Walks first (the partial index walks_clips_kept), each one's clips by walk_id: the cost follows
  // the walks still holding clips, not every clip ever uploaded.
  const r = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('walks')
        .where('clips_removed_at', 'is', null)
        .select((w) =>
          w
            .selectFrom('walk_clips')
            .whereRef('walk_clips.walk_id', '=', 'walks.id')
            .select((c) => c.fn.sum<number>('size_bytes').as('bytes'))
            .as('bytes'),
        )
        .as('kept'),
    )
    .select((eb) => [eb.fn.countAll<number>().as('walks'), eb.fn.coalesce(eb.fn.sum<number>('kept.bytes'), eb.lit(0)).as('bytes')])
    .executeTakeFirstOrThrow();
  return { walks: Number(r.walks), bytes: Number(r.bytes) };
}

/** The sweeps of one service: at start, hourly, and after each walk scored (`nudge`). */
export class MediaRetention {
  private lock: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  /** Sweeps run one after another; `waiting` counts those asked for and not yet begun. */
  private sweeps: Promise<unknown> = Promise.resolve();
  private waiting = 0;
  /** Once stopped, no sweep begins: a walk that ends as the service stops nudges after the database may have closed. */
  private stopped = false;
  lastSweep: SweepSummary | null = null;

  constructor(
    private readonly services: Services,
    private readonly intervalMs = 3_600_000,
  ) {}

  /**
   * Runs `fn` once no other media step is under way. A sweep's batch marks walks and then removes
   * their folders; a rescore clears a walk's marks and removes its old frames. Both take this, so
   * a folder's removal can never land after a rescore has begun to write into it.
   */
  exclusive<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  async start(): Promise<void> {
    await this.finishInterrupted();
    void this.sweepLogged();
    // 0: the service's scheduler runs the hourly sweep (the media_retention schedule, feature.ts).
    if (this.intervalMs > 0) {
      this.timer = setInterval(() => void this.sweepLogged(), this.intervalMs);
      // The sweep must not keep a stopping process alive.
      this.timer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeps;
  }

  /** Removes what is past its keep time at `now`, and clips for room; after any sweep already asked for. */
  sweep(now = new Date(this.services.clock.now())): Promise<SweepReport> {
    this.waiting++;
    const run = this.sweeps.then(() => {
      this.waiting--;
      return this.sweepOnce(now);
    });
    this.sweeps = run.catch(() => undefined);
    return run;
  }

  private async sweepOnce(now: Date): Promise<SweepReport> {
    const report: SweepReport = { clips: [], frames: [], clipsForSpace: [], framesForSpace: [] };
    for (const part of MEDIA_PARTS) {
      for (;;) {
        const ids = await this.exclusive(() => this.removeBatch(part, now));
        report[part].push(...ids);
        if (ids.length < BATCH) break;
      }
    }
    const forSpace = await this.exclusive(() => this.freeSpace());
    report.clipsForSpace = forSpace.clips;
    report.framesForSpace = forSpace.frames;
    this.lastSweep = {
      at: this.services.clock.iso(),
      clips: report.clips.length,
      frames: report.frames.length,
      clips_for_space: report.clipsForSpace.length,
      frames_for_space: report.framesForSpace.length,
    };
    return report;
  }

  /** Resolves once every sweep asked for so far has ended (tests, and a stop). */
  async idle(): Promise<void> {
    let seen: Promise<unknown>;
    do {
      seen = this.sweeps;
      await seen;
    } while (seen !== this.sweeps);
  }

  /** A sweep soon, not awaited: a walk has just been scored (its frames took room, its clips became removable). */
  nudge(): void {
    // One waiting is enough: it begins after the walk ended, so it sees what the walk left.
    if (this.waiting === 0 && !this.stopped) void this.sweepLogged();
  }

  private async sweepLogged(): Promise<void> {
    try {
      // Processes sharing a PostgreSQL database take turns: one sweeps each round.
      await scheduled(this.services.engine, 'walk-media-sweep', () => this.sweep());
    } catch (err) {
      // A full disk or a busy database now is no reason to stop: the next sweep tries again.
      this.services.log.error('walk media sweep failed', { error: err as Error });
    }
  }

  /** Marks up to BATCH walks' part removed in one transaction, then removes their folders. */
  private async removeBatch(part: MediaPart, now: Date): Promise<string[]> {
    const { store, log } = this.services;
    const days = keepDaysOf(this.services, part);
    const cutoff = removalCutoff(now, days);
    if (cutoff === null) return [];
    const column = REMOVED_COLUMN[part];
    const ids = await store.write(SYSTEM_ACTOR, async (w) => {
      const due = await w.trx
        .selectFrom('walks')
        .select('id')
        .where('status', 'in', ['done', 'failed'])
        .where('finished_at', '<', cutoff)
        .where(column, 'is', null)
        .orderBy('finished_at')
        .limit(BATCH)
        .execute();
      for (const { id } of due) await w.update<WalkTable>('walks', id, { [column]: w.now } as Partial<WalkTable>);
      return due.map((r) => r.id);
    });
    for (const id of ids) await rm(dirOf(this.services, part, id), { recursive: true, force: true });
    if (ids.length)
      log.info(`walk ${part} removed`, {
        walks: ids.length,
        keep_days: days,
        why: `scored more than ${days} days ago (WALK_${part === 'clips' ? 'CLIP' : 'FRAME'}_KEEP_DAYS)`,
      });
    return ids;
  }

  /**
   * Below the reserve, removes what the oldest scored walks hold, just as much as makes up the
   * shortfall: their clips first (needed only to score again), then, only when no scored walk
   * has clips left, their frames. Walks queued or being scored keep theirs.
   */
  private async freeSpace(): Promise<{ clips: string[]; frames: string[] }> {
    const { log, config } = this.services;
    const reserve = config.diskReserve;
    if (!(reserve > 0)) return { clips: [], frames: [] };
    const { free_bytes: free } = await storageOf(config.dataDir);
    if (free >= reserve) return { clips: [], frames: [] };
    const clips = await this.removeForSpace('clips', reserve - free);
    const frames = free + clips.freed < reserve ? await this.removeForSpace('frames', reserve - free - clips.freed) : { ids: [], freed: 0 };
    const freed = clips.freed + frames.freed;
    const why =
      'free space under DATA_DIR below DISK_RESERVE: the oldest scored walks lost their files before their keep time, clips first';
    if (clips.ids.length)
      log.warn('walk clips removed', { walks: clips.ids.length, freed_bytes: clips.freed, free_bytes: free, reserve_bytes: reserve, why });
    if (frames.ids.length)
      log.warn('walk frames removed', {
        walks: frames.ids.length,
        freed_bytes: frames.freed,
        free_bytes: free,
        reserve_bytes: reserve,
        why,
      });
    if (free + freed < reserve)
      log.warn('disk short of room', {
        free_bytes: free,
        freed_bytes: freed,
        reserve_bytes: reserve,
        why: "below DISK_RESERVE with no scored walk's files left to remove: something else fills DATA_DIR",
      });
    return { clips: clips.ids, frames: frames.ids };
  }

  /** The oldest scored walks whose part adds up to `need` bytes: marked in one transaction, then removed. */
  private async removeForSpace(part: MediaPart, need: number): Promise<{ ids: string[]; freed: number }> {
    const { db, store, config } = this.services;
    const column = REMOVED_COLUMN[part];
    const oldest = await db
      .selectFrom('walks')
      .select([
        'id',
        (eb) =>
          eb
            .selectFrom('walk_clips')
            .whereRef('walk_clips.walk_id', '=', 'walks.id')
            .select((c) => c.fn.sum<number>('size_bytes').as('bytes'))
            .as('clip_bytes'),
      ])
      .where('status', 'in', ['done', 'failed'])
      .where(column, 'is', null)
      .orderBy('finished_at')
      .limit(BATCH)
      .execute();
    const picked: string[] = [];
    let freed = 0;
    for (const walk of oldest) {
      if (freed >= need) break;
      picked.push(walk.id);
      // Clip sizes are stored at upload; frames are measured, a few hundred files per walk.
      freed += part === 'clips' ? Number(walk.clip_bytes ?? 0) : await folderBytes(framesDir(config.dataDir, walk.id));
    }
    if (!picked.length) return { ids: [], freed: 0 };
    const ids = await store.write(SYSTEM_ACTOR, async (w) => {
      // A walk deleted since the look above is simply not there any more.
      const still = await w.trx
        .selectFrom('walks')
        .select('id')
        .where('id', 'in', picked)
        .where('status', 'in', ['done', 'failed'])
        .where(column, 'is', null)
        .execute();
      for (const { id } of still) await w.update<WalkTable>('walks', id, { [column]: w.now } as Partial<WalkTable>);
      return still.map((r) => r.id);
    });
    for (const id of ids) await rm(dirOf(this.services, part, id), { recursive: true, force: true });
    return { ids, freed };
  }

  /** A stop between a batch's commit and its removals leaves folders of walks marked removed: remove them at start. */
  private async finishInterrupted(): Promise<void> {
    for (const part of MEDIA_PARTS) {
      const column = REMOVED_COLUMN[part];
      const marked = await this.services.db.selectFrom('walks').select('id').where(column, 'is not', null).execute();
      for (const { id } of marked) await rm(dirOf(this.services, part, id), { recursive: true, force: true });
    }
  }
}

const retentions = new WeakMap<Services, MediaRetention>();

export function attachRetention(services: Services, retention: MediaRetention): void {
  retentions.set(services, retention);
}

export function retentionOf(services: Services): MediaRetention | undefined {
  return retentions.get(services);
}
