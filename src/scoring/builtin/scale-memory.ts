/**
 * What the last frames of one size were analysed as. A walk is filmed from one distance, so its
 * fruit are about one size from frame to frame; when most of the recent frames of a size were
 * frames of small fruit, the next one almost surely is too, even where touching fruit merged into
 * one large blob make its own gate say otherwise (docs/builtin-detector.md). One memory per
 * detector, and the job runner opens a detector per walk.
 */
export class ScaleMemory {
  private readonly recent = new Map<string, boolean[]>();

  constructor(private readonly frames = 6) {}

  /** Whether most of the last frames of this size (at least three of them) were small-fruit frames. */
  smallLikely(width: number, height: number): boolean {
    const r = this.recent.get(`${width}x${height}`);
    if (!r || r.length < 3) return false;
    return 2 * r.filter(Boolean).length > r.length;
  }

  record(width: number, height: number, small: boolean): void {
    const key = `${width}x${height}`;
    const r = this.recent.get(key) ?? [];
    r.push(small);
    if (r.length > this.frames) r.shift();
    this.recent.set(key, r);
  }
}
