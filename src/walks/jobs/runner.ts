import { readdir, rm, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fork, type ChildProcess } from 'node:child_process';
import { SYSTEM_ACTOR } from '../../db/store.js';
import type { Services } from '../../services.js';
import { DomainError } from '../../errors.js';
import { claimNextWalk, clipsOf, failWalk, findWalk, finishWalk, recordProgress, recoverInterrupted, requeueWalk } from './commands.js';
import { chooseDetector, configuredFor } from './detector-choice.js';
import type { RunnerMessage, WorkerJob, WorkerMessage } from './messages.js';
import { DEFAULT_OPTIONS, type ScoringMode, type ScoringOptions } from './options.js';
import { retentionOf } from './retention.js';
import { clipsDir, framesDir, walkDir, walksRoot } from './storage.js';
import { UUID_PATTERN } from '../../db/ids.js';
import type { WalkTable } from './tables.js';
import { removeWorkerLock, stopOldWorker, writeWorkerLock } from './worker-lock.js';

/**
 * Runs queued walks, each in its own worker process, so decoding and detection
 * never hold the API's event loop. The database is the queue: the runner
 * claims a row, hands the worker plain data, stores what it reports, and on
 * stop puts the running walk back in the queue.
 */
const HERE = fileURLToPath(import.meta.url);
const BOOT = fileURLToPath(new URL('./worker-boot.mjs', import.meta.url));
const ENTRY = new URL(`./worker${path.extname(HERE)}`, import.meta.url);

/** PostgreSQL: a walk folder without a row younger than this may be an upload under way in another process. */
const ORPHAN_AGE_MS = 3_600_000;

/** Frames live in ArrayBuffers outside this heap; the heap holds tracks, detections and the result. */
const WORKER_HEAP_MB = 1024;

export interface RunnerOptions {
  /** Walks scored at once; 0 pauses scoring (walks stay queued). */
  concurrency: number;
  /** Threads each walk's built-in detector analyses frames on ahead of their turn (SCORING_THREADS); 0 or absent, none. */
  detectThreads?: number;
  /** Least time between two progress writes of one walk, ms. */
  progressIntervalMs?: number;
  /** How long a stopping worker may take before it is terminated, ms. */
  stopTimeoutMs?: number;
  /** After a failed claim (a full disk, say), how long until the queue is looked at again, ms. */
  retryAfterFailureMs?: number;
  /** PostgreSQL: how often walks left running by a process that died are looked for, ms. */
  recoverEveryMs?: number;
}

interface Active {
  walk: WalkTable;
  worker: ChildProcess;
  startedAt: number;
  detector: string | null;
  frames: number;
  /** Messages are handled one after another, so a late progress tick never lands after the result. */
  chain: Promise<void>;
  terminal: 'done' | 'failed' | 'stopped' | null;
  stopRequested: boolean;
  pendingProgress: Extract<WorkerMessage, { type: 'progress' }> | null;
  lastProgressWrite: number;
  progressTimer: NodeJS.Timeout | null;
  workerError: Error | null;
  finished: Promise<void>;
}

export class WalkRunner {
  private readonly active = new Map<string, Active>();
  private running = false;
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private readonly progressIntervalMs: number;
  private readonly stopTimeoutMs: number;
  private readonly retryAfterFailureMs: number;
  private retryTimer: NodeJS.Timeout | null = null;
  private recoverTimer: NodeJS.Timeout | null = null;
  /** PostgreSQL: how often walks of processes that died are looked for, ms. */
  private readonly recoverEveryMs: number;

  constructor(
    private readonly services: Services,
    private readonly options: RunnerOptions,
  ) {
    this.progressIntervalMs = options.progressIntervalMs ?? 250;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    this.retryAfterFailureMs = options.retryAfterFailureMs ?? 30_000;
    this.recoverEveryMs = options.recoverEveryMs ?? 60_000;
  }

  get alive(): boolean {
    return this.running;
  }

  get concurrency(): number {
    return this.options.concurrency;
  }

  /** Ids of the walks being scored now. */
  activeWalks(): string[] {
    return [...this.active.keys()];
  }

  async start(): Promise<void> {
    await this.recover('found running at start (the process stopped while scoring it)');
    await this.sweepOrphans();
    this.running = true;
    if (this.services.engine.kind === 'postgres') {
      // Other processes share the queue: walks of one that dies while this one runs come back here.
      this.recoverTimer = setInterval(() => {
        this.recover('its process stopped while scoring it (another process sharing the database)')
          .then(() => this.wake())
          .catch((err: Error) => this.services.log.error('walk runner could not look for interrupted walks', { error: err }));
      }, this.recoverEveryMs);
      this.recoverTimer.unref();
    }
    this.wake();
  }

  /** Puts walks whose scoring was interrupted back in the queue (recoverInterrupted), their partial frames removed. */
  private async recover(why: string): Promise<void> {
    const { log, config } = this.services;
    const { requeued, failed } = await recoverInterrupted(this.services.store);
    for (const id of [...requeued, ...failed]) await this.stopOldWorker(id);
    for (const id of requeued) {
      // Frames of the interrupted attempt would mix with the next one's.
      await rm(framesDir(config.dataDir, id), { recursive: true, force: true });
      log.info('walk requeued', { job_id: id, step: 'requeued', why });
    }
    for (const id of failed) log.warn('walk failed', { job_id: id, step: 'failed', why: 'interrupted too often' });
  }

  /**
   * A worker of an earlier run of the box (killed with kill -9) may still be scoring the walk and
   * writing into its frames folder: it is stopped, with its ffmpeg, before the walk's frames are
   * cleared and it is scored again (see worker-lock.ts).
   */
  private async stopOldWorker(id: string): Promise<void> {
    const pids = await stopOldWorker(walkDir(this.services.config.dataDir, id), id);
    if (pids.length)
      this.services.log.warn('old walk worker stopped', {
        job_id: id,
        pids,
        why: 'a worker of an earlier run of the box was still scoring this walk',
      });
  }

  /**
   * Removes walk folders with no walk row, at start only (no upload is under way then): files
   * moved in by an upload whose transaction never committed (a crash in between), or left by a
   * crop cycle deleted with its walks while the box went down before removing them. On
   * PostgreSQL another process sharing DATA_DIR may be uploading right now: a folder from the
   * last hour is left for a later start.
   */
  private async sweepOrphans(): Promise<void> {
    const { db, config, log } = this.services;
    const root = walksRoot(config.dataDir);
    const names = await readdir(root).catch(() => [] as string[]);
    const id = new RegExp(UUID_PATTERN);
    const candidates = names.filter((n) => id.test(n));
    for (let i = 0; i < candidates.length; i += 500) {
      const part = candidates.slice(i, i + 500);
      const known = new Set((await db.selectFrom('walks').select('id').where('id', 'in', part).execute()).map((r) => r.id));
      for (const name of part) {
        if (known.has(name)) continue;
        if (this.services.engine.kind === 'postgres') {
          const made = await stat(walkDir(config.dataDir, name)).catch(() => null);
          if (made && this.services.clock.now() - made.mtimeMs < ORPHAN_AGE_MS) continue;
        }
        await rm(walkDir(config.dataDir, name), { recursive: true, force: true });
        log.info('walk files removed', { job_id: name, why: 'no such walk (upload interrupted, or the walk was deleted)' });
      }
    }
  }

  /** Looks for queued walks; called after a walk is queued and whenever one ends. */
  wake(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump()
      .catch((err) => {
        this.services.log.error('walk runner could not claim a walk', { error: err as Error, retry_in_ms: this.retryAfterFailureMs });
        // Nothing else may wake the runner (no upload comes while the disk is full): look again later.
        if (!this.retryTimer) {
          this.retryTimer = setTimeout(() => {
            this.retryTimer = null;
            this.wake();
          }, this.retryAfterFailureMs);
          this.retryTimer.unref();
        }
      })
      .finally(() => {
        this.pumping = null;
        if (this.pumpAgain && this.running) {
          this.pumpAgain = false;
          this.wake();
        }
      });
  }

  private async pump(): Promise<void> {
    do {
      this.pumpAgain = false;
      while (this.running && this.active.size < this.options.concurrency) {
        const walk = await claimNextWalk(this.services.store);
        if (!walk) break;
        if (!this.running) {
          await this.services.store.write(SYSTEM_ACTOR, (w) => requeueWalk(w, walk.id));
          break;
        }
        try {
          await this.launch(walk);
        } catch (err) {
          // Claimed but never started (no room for its frames folder, say): back to the queue, or
          // if even that write fails, left running for the next start to queue again.
          await this.services.store.write(SYSTEM_ACTOR, (w) => requeueWalk(w, walk.id)).catch(() => undefined);
          throw err;
        }
      }
    } while (this.pumpAgain && this.running);
  }

  private async launch(walk: WalkTable): Promise<void> {
    const { config, log, db } = this.services;
    const clips = await clipsOf(db, walk.id);
    let detector;
    try {
      detector = chooseDetector(configuredFor(this.services), walk.mode as ScoringMode);
    } catch (err) {
      // The configuration changed since the walk was queued (model removed): fail it with the reason.
      const reason = err instanceof DomainError ? err.message : String(err);
      await this.services.store.write(SYSTEM_ACTOR, (w) => failWalk(w, walk.id, reason));
      log.warn('walk failed', { job_id: walk.id, step: 'failed', reason, duration_ms: 0 });
      return;
    }
    await this.stopOldWorker(walk.id);
    const frames = framesDir(config.dataDir, walk.id);
    await rm(frames, { recursive: true, force: true });
    await mkdir(frames, { recursive: true });
    const dir = clipsDir(config.dataDir, walk.id);
    const job: WorkerJob = {
      walkId: walk.id,
      clips: clips.map((c) => ({
        position: c.position,
        path: path.join(dir, c.file_name),
        kind: c.kind,
        width: c.width,
        height: c.height,
        durationSeconds: c.duration_s,
      })),
      options: { ...DEFAULT_OPTIONS, ...(JSON.parse(walk.options) as Partial<ScoringOptions>) },
      detector,
      detectThreads: this.options.detectThreads ?? 0,
      framesDir: frames,
    };
    // A TypeScript worker needs the parent's loader (tsx, or tap's): execArgv carries it, the boot file registers tsx when it is missing.
    // A heap cap of its own: a walk that runs away with memory ends that process (and fails the walk), not the API.
    const execArgv = [...process.execArgv.filter((a) => !a.startsWith('--max-old-space-size')), `--max-old-space-size=${WORKER_HEAP_MB}`];
    // A process group of its own (detached), which its ffmpeg processes join: the worker can end
    // them all at once when the box is gone, and the lock names the group to the next start. The
    // walk's id in its arguments lets that start tell it from an unrelated process with a reused id.
    const worker = fork(BOOT, [walk.id], {
      execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      detached: true,
    });
    worker.send({ entry: ENTRY.href, job });
    if (worker.pid !== undefined) await writeWorkerLock(walkDir(config.dataDir, walk.id), worker.pid).catch(() => undefined);
    let resolveFinished!: () => void;
    const active: Active = {
      walk,
      worker,
      startedAt: Date.now(),
      detector: null,
      frames: 0,
      chain: Promise.resolve(),
      terminal: null,
      stopRequested: false,
      pendingProgress: null,
      lastProgressWrite: 0,
      progressTimer: null,
      workerError: null,
      finished: new Promise<void>((r) => (resolveFinished = r)),
    };
    this.active.set(walk.id, active);
    log.info('walk started', {
      job_id: walk.id,
      step: 'started',
      attempt: walk.attempts,
      clips: clips.length,
      detector: detector.manifest === null ? 'builtin' : path.basename(detector.manifest),
      queued_ms: Date.parse(walk.started_at ?? '') - Date.parse(walk.created_at) || 0,
    });

    const handle = (fn: () => Promise<void>) => {
      active.chain = active.chain
        .then(fn)
        .catch((err) => log.error('walk runner could not store a worker report', { job_id: walk.id, error: err as Error }));
    };
    worker.on('message', (m: WorkerMessage) => handle(() => this.onMessage(active, m)));
    worker.on('error', (err) => {
      active.workerError = err;
    });
    worker.once('exit', (code, signal) => {
      handle(() => removeWorkerLock(walkDir(config.dataDir, walk.id)));
      handle(() => this.onExit(active, code ?? (signal ? 128 : 1)));
      handle(() => this.dropIfDeleted(walk.id));
      void active.chain.then(() => {
        this.active.delete(walk.id);
        resolveFinished();
        this.wake();
        retentionOf(this.services)?.nudge();
      });
    });
  }

  private async onMessage(a: Active, m: WorkerMessage): Promise<void> {
    const { store, log } = this.services;
    if (a.terminal) return;
    switch (m.type) {
      case 'started':
        a.detector = m.detector;
        return;
      case 'progress': {
        a.frames = m.frames;
        a.pendingProgress = m;
        const wait = a.lastProgressWrite + this.progressIntervalMs - Date.now();
        if (wait <= 0) await this.flushProgress(a);
        else if (!a.progressTimer) {
          a.progressTimer = setTimeout(() => {
            a.progressTimer = null;
            a.chain = a.chain
              .then(() => this.flushProgress(a))
              .catch((err) => log.error('progress write failed', { job_id: a.walk.id, error: err as Error }));
          }, wait);
        }
        return;
      }
      case 'done': {
        this.clearProgress(a);
        a.terminal = 'done';
        const stored = await store.write(SYSTEM_ACTOR, (w) => finishWalk(w, a.walk.id, m.result));
        if (stored)
          log.info('walk done', {
            job_id: a.walk.id,
            step: 'done',
            duration_ms: Date.now() - a.startedAt,
            frames: m.result.frames.length,
            counts: m.result.counts,
            detector: m.result.detector.name,
            read_ahead: m.readAhead,
          });
        else
          log.warn('walk result dropped', {
            job_id: a.walk.id,
            step: 'done',
            why: 'the walk was deleted or re-queued while it was scored',
          });
        return;
      }
      case 'failed': {
        this.clearProgress(a);
        a.terminal = 'failed';
        await store.write(SYSTEM_ACTOR, (w) => failWalk(w, a.walk.id, m.reason, m.clip ?? undefined));
        log.warn('walk failed', {
          job_id: a.walk.id,
          step: 'failed',
          duration_ms: Date.now() - a.startedAt,
          reason: m.reason,
          clip: m.clip,
        });
        return;
      }
      case 'stopped':
        this.clearProgress(a);
        a.terminal = 'stopped';
        await this.requeue(a);
        return;
    }
  }

  private async onExit(a: Active, code: number): Promise<void> {
    this.clearProgress(a);
    if (a.terminal) return;
    if (a.stopRequested) {
      a.terminal = 'stopped';
      await this.requeue(a);
      return;
    }
    a.terminal = 'failed';
    const reason = `the scoring worker stopped unexpectedly (exit code ${code})${a.workerError ? `: ${a.workerError.message}` : ''}`;
    await this.services.store.write(SYSTEM_ACTOR, (w) => failWalk(w, a.walk.id, reason));
    this.services.log.error('walk failed', { job_id: a.walk.id, step: 'failed', duration_ms: Date.now() - a.startedAt, reason });
  }

  /**
   * A walk deleted while its worker ran, at a moment `forgetWalks` did not see it (claimed but
   * not yet started, say): its folder, which the worker may have written to since, goes now.
   */
  private async dropIfDeleted(id: string): Promise<void> {
    if (await findWalk(this.services.db, id)) return;
    await rm(walkDir(this.services.config.dataDir, id), { recursive: true, force: true });
    this.services.log.info('walk files removed', { job_id: id, why: 'the walk was deleted while it was scored' });
  }

  private async requeue(a: Active): Promise<void> {
    const { store, log, config } = this.services;
    const back = await store.write(SYSTEM_ACTOR, (w) => requeueWalk(w, a.walk.id));
    await rm(framesDir(config.dataDir, a.walk.id), { recursive: true, force: true });
    if (back)
      log.info('walk requeued', { job_id: a.walk.id, step: 'requeued', why: 'stopped by shutdown', duration_ms: Date.now() - a.startedAt });
  }

  private async flushProgress(a: Active): Promise<void> {
    const p = a.pendingProgress;
    if (!p || a.terminal) return;
    a.pendingProgress = null;
    a.lastProgressWrite = Date.now();
    await recordProgress(this.services.db, a.walk.id, p.progress, p.clips);
  }

  private clearProgress(a: Active): void {
    if (a.progressTimer) clearTimeout(a.progressTimer);
    a.progressTimer = null;
    a.pendingProgress = null;
  }

  /**
   * Stops the runner: no new claims, every running walk is told to stop and
   * goes back to the queue (the next start scores it from the beginning). A
   * worker that does not stop in time is terminated.
   */
  async stop(): Promise<void> {
    this.running = false;
    if (this.recoverTimer) clearInterval(this.recoverTimer);
    this.recoverTimer = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.pumping;
    await this.stopWorkers([...this.active.values()]);
  }

  /**
   * After walks were deleted (a crop cycle removed with everything in it): a walk being scored
   * is stopped, since its result has nowhere to go, and the deleted walks' folders are removed,
   * clips and frames with them; left, they would fill the box's disk until its next start. By id,
   * not by sweeping every folder without a row: an upload places its clips before its row commits.
   */
  async forgetWalks(ids: readonly string[]): Promise<void> {
    const { config, log } = this.services;
    const gone = ids.flatMap((id) => this.active.get(id) ?? []);
    for (const a of gone) log.info('walk stopped', { job_id: a.walk.id, why: 'the walk was deleted while it was scored' });
    await this.stopWorkers(gone);
    for (const id of ids) await rm(walkDir(config.dataDir, id), { recursive: true, force: true });
    log.info('walk files removed', { walks: ids.length, why: 'the walks were deleted' });
  }

  /** Tells workers to stop and waits for them; one that does not stop in time is terminated. */
  private async stopWorkers(all: Active[]): Promise<void> {
    for (const a of all) {
      a.stopRequested = true;
      if (a.worker.connected) a.worker.send({ type: 'stop' } satisfies RunnerMessage);
    }
    await Promise.all(
      all.map(async (a) => {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          a.finished.then(() => false),
          new Promise<boolean>((r) => (timer = setTimeout(() => r(true), this.stopTimeoutMs))),
        ]);
        clearTimeout(timer);
        if (timedOut) {
          a.worker.kill('SIGKILL');
          await a.finished;
        }
      }),
    );
  }
}

/** The runner of an app, for the routes and the health check (one per Services). */
const runners = new WeakMap<Services, WalkRunner>();

export function attachRunner(services: Services, runner: WalkRunner): void {
  runners.set(services, runner);
}

export function runnerOf(services: Services): WalkRunner | undefined {
  return runners.get(services);
}

/** After walks were deleted: their files go, through the runner (which stops one being scored) where there is one. */
export async function forgetWalks(services: Services, ids: readonly string[]): Promise<void> {
  const runner = runnerOf(services);
  if (runner) return runner.forgetWalks(ids);
  for (const id of ids) await rm(walkDir(services.config.dataDir, id), { recursive: true, force: true });
}
