import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import type { RgbImage } from '../types.js';
import type { FrameDetections } from './detector.js';
import type { BuiltinParams } from './params.js';
import type { RipenessThresholds } from './ripeness.js';
import type { StemParams } from './stems.js';

/**
 * Threads that run the built-in detector's frame analysis (detectFrame) beside the scoring
 * process's own thread. Detection is nearly all of a walk's scoring time and a frame's analysis
 * is one long synchronous computation, so on a box of two or four cores the walk is scored
 * faster only when several frames are analysed at once (detect-ahead.ts decides which).
 * The threads start on the first frame handed to them (a photo never starts them), do not keep
 * the process alive, and end with close().
 */

export interface DetectThreadSettings {
  params: BuiltinParams;
  thresholds: RipenessThresholds;
  stemParams: StemParams | null;
}

export type DetectThreadRequest = { id: number; width: number; height: number; data: Uint8Array; conf: number; smallLikely: boolean };
export type DetectThreadReply = { id: number; found: FrameDetections } | { id: number; error: string };

/** One frame handed to the threads: its answer, and a way to drop it while it still waits for a thread. */
export interface FrameTask {
  result: Promise<FrameDetections>;
  cancel(): void;
}

export class DetectionDiscarded extends Error {
  override name = 'DetectionDiscarded';
}

const BOOT = fileURLToPath(new URL('./detect-thread-boot.mjs', import.meta.url));
const ENTRY = new URL('./detect-thread-worker.ts', import.meta.url).href;

interface Job {
  request: DetectThreadRequest;
  resolve(found: FrameDetections): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
}

export class DetectThreads {
  private slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private failure: Error | null = null;
  private closed = false;

  constructor(
    readonly size: number,
    private readonly settings: DetectThreadSettings,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('a detection pool needs at least one thread');
  }

  /** Hands one frame to the next free thread (in the order given). */
  run(image: RgbImage, conf: number, smallLikely: boolean): FrameTask {
    let job!: Job;
    const result = new Promise<FrameDetections>((resolve, reject) => {
      // The image is copied to the thread: the walk keeps its own for the frame's files.
      job = {
        request: { id: this.nextId++, width: image.width, height: image.height, data: image.data, conf, smallLikely },
        resolve,
        reject,
      };
    });
    // A frame read ahead and then dropped is never awaited: its failure is not an unhandled one.
    result.catch(() => undefined);
    if (this.failure || this.closed) job.reject(this.failure ?? new Error('the detection threads are closed'));
    else {
      this.queue.push(job);
      this.pump();
    }
    return {
      result,
      cancel: () => {
        const at = this.queue.indexOf(job);
        if (at >= 0) {
          this.queue.splice(at, 1);
          job.reject(new DetectionDiscarded('the frame was not detected after all'));
        }
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots;
    this.slots = [];
    this.failAll(new Error('the detection threads are closed'));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private start(): void {
    for (let i = 0; i < this.size; i++) {
      const worker = new Worker(BOOT, { workerData: { entry: ENTRY, settings: this.settings } });
      worker.unref();
      const slot: Slot = { worker, job: null };
      worker.on('message', (reply: DetectThreadReply) => {
        const job = slot.job;
        if (!job || job.request.id !== reply.id) return;
        slot.job = null;
        if ('found' in reply) job.resolve(reply.found);
        else job.reject(new Error(reply.error));
        this.pump();
      });
      const broken = (err: Error) => {
        if (this.closed) return;
        this.failure = err;
        this.failAll(err);
      };
      worker.on('error', broken);
      worker.on('exit', (code) => broken(new Error(`a detection thread stopped (exit ${code})`)));
      this.slots.push(slot);
    }
  }

  private pump(): void {
    if (this.closed || this.failure) return;
    if (this.slots.length === 0) this.start();
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      slot.job = job;
      slot.worker.postMessage(job.request);
    }
  }

  private failAll(err: Error): void {
    for (const slot of this.slots) {
      slot.job?.reject(err);
      slot.job = null;
    }
    for (const job of this.queue.splice(0)) job.reject(err);
  }
}
