import type { Detection, ReadAheadStats, RgbImage } from '../types.js';
import type { FrameDetections } from './detector.js';
import type { FrameTask } from './detect-threads.js';
import type { ScaleMemory } from './scale-memory.js';

/** Detects one frame under a given memory, wherever it runs (a thread, or inline). */
export type FrameRunner = (image: RgbImage, conf: number, smallLikely: boolean) => FrameTask;

interface Announced {
  conf: number;
  smallLikely: boolean;
  task: FrameTask;
}

/**
 * Frames of a walk detected before their turn, with answers that are exactly those of detecting
 * them one after the other. A frame's analysis reads one thing of the frames before it: the
 * walk's ScaleMemory (whether its recent frames were small-fruit frames). A frame announced
 * ahead is analysed under a guess of that memory (as it is now, with each frame still ahead of
 * it taken to be what the last frame was); when its turn comes its answer stands if the guess
 * was right or the memory did not decide its analysis (FrameAnalysis.memoryDecided), and
 * otherwise the frame is detected again under the true memory. The memory is recorded only
 * here, in walking order, as detecting each frame in turn records it.
 */
export class DetectAhead {
  private readonly announced = new Map<RgbImage, Announced>();
  /** The frame whose answer detect() waits for: it is recorded before any frame announced. */
  private current: RgbImage | null = null;
  readonly stats: ReadAheadStats = { ahead: 0, used: 0, redone: 0, discarded: 0 };

  constructor(
    private readonly memory: ScaleMemory,
    private readonly runAhead: FrameRunner,
    private readonly runNow: FrameRunner = runAhead,
  ) {}

  /** Starts detecting a frame that detect() will probably be asked for after those announced before it. */
  announce(image: RgbImage, conf: number): void {
    if (this.announced.has(image)) return;
    const smallLikely = this.guess(image);
    this.announced.set(image, { conf, smallLikely, task: this.runAhead(image, conf, smallLikely) });
    this.stats.ahead++;
  }

  /** The frame will not be detected after all. */
  discard(image: RgbImage): void {
    const a = this.announced.get(image);
    if (!a) return;
    a.task.cancel();
    this.announced.delete(image);
    this.stats.discarded++;
  }

  /** The next frame of the walk's detection order: its detections, and the memory records it. */
  async detect(image: RgbImage, conf: number): Promise<Detection[]> {
    const smallLikely = this.memory.smallLikely(image.width, image.height);
    const a = this.announced.get(image);
    this.announced.delete(image);
    this.current = image;
    try {
      let found: FrameDetections | null = null;
      if (a && a.conf === conf) {
        const ahead = await a.task.result;
        if (a.smallLikely === smallLikely || !ahead.memoryDecided) found = ahead;
        else this.stats.redone++;
      } else if (a) a.task.cancel();
      if (found) this.stats.used++;
      else found = await this.runNow(image, conf, smallLikely).result;
      this.memory.record(image.width, image.height, found.smallFruit);
      return found.detections;
    } finally {
      this.current = null;
    }
  }

  /** Forgets every announced frame (the walk ended or failed). */
  clear(): void {
    for (const image of [...this.announced.keys()]) this.discard(image);
  }

  /** The memory as it will probably be when this frame's turn comes. */
  private guess(image: RgbImage): boolean {
    const { width, height } = image;
    const before = [...(this.current ? [this.current] : []), ...this.announced.keys()].filter(
      (i) => i.width === width && i.height === height,
    );
    if (before.length === 0) return this.memory.smallLikely(width, height);
    const m = this.memory.clone();
    for (let k = 0; k < before.length; k++) m.record(width, height, m.last(width, height) ?? false);
    return m.smallLikely(width, height);
  }
}
