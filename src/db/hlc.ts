/**
 * Hybrid logical clock. A stamp is `<13-digit ms>.<6-digit counter>.<node>`: it
 * sorts as text, only grows on this node even when the wall clock steps back
 * (NTP, a box without an RTC battery), and orders writes across nodes for sync.
 */
export class HybridLogicalClock {
  private lastMs = 0;
  private counter = 0;

  constructor(
    readonly node: string,
    private readonly wallClock: () => number = Date.now,
  ) {}

  /** Continue after the highest stamp already stored, so a restart never goes back. */
  seed(stamp: string | null | undefined): void {
    if (!stamp) return;
    const parsed = HybridLogicalClock.parse(stamp);
    if (parsed.ms > this.lastMs || (parsed.ms === this.lastMs && parsed.counter > this.counter)) {
      this.lastMs = parsed.ms;
      this.counter = parsed.counter;
    }
  }

  now(): string {
    const wall = this.wallClock();
    if (wall > this.lastMs) {
      this.lastMs = wall;
      this.counter = 0;
    } else {
      this.counter += 1;
    }
    return HybridLogicalClock.format(this.lastMs, this.counter, this.node);
  }

  /** Merge a stamp received from another node (sync), keeping ours ahead of it. */
  receive(stamp: string): string {
    this.seed(stamp);
    return this.now();
  }

  static format(ms: number, counter: number, node: string): string {
    return `${String(ms).padStart(13, '0')}.${String(counter).padStart(6, '0')}.${node}`;
  }

  /** Whether a stored version is a stamp of this clock (rows written by hand or by old tests may hold anything). */
  static isStamp(stamp: unknown): stamp is string {
    return typeof stamp === 'string' && /^\d{13}\.\d{6}\..+$/.test(stamp);
  }

  static parse(stamp: string): { ms: number; counter: number; node: string } {
    const m = /^(\d{13})\.(\d{6})\.(.+)$/.exec(stamp);
    if (!m) throw new Error(`not an HLC stamp: ${stamp}`);
    return { ms: Number(m[1]), counter: Number(m[2]), node: m[3]! };
  }
}
