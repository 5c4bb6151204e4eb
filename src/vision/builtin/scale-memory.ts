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

  /** What the last frame of this size was recorded as; undefined before the first. */
  last(width: number, height: number): boolean | undefined {
    return this.recent.get(`${width}x${height}`)?.at(-1);
  }

  /** An independent copy: what the memory would become after frames not yet recorded. */
  clone(): ScaleMemory {
    const copy = new ScaleMemory(this.frames);
    for (const [key, r] of this.recent) copy.recent.set(key, [...r]);
    return copy;
  }

  record(width: number, height: number, small: boolean): void {
    const key = `${width}x${height}`;
    const r = this.recent.get(key) ?? [];
    r.push(small);
    if (r.length > this.frames) r.shift();
    this.recent.set(key, r);
  }
}

/** The settings the small-fruit gate reads (BuiltinParams has them all). */
export interface SmallFruitGateParams {
  smallFruitRadius: number;
  smallFruitSceneRadius: number;
  sceneCloseUpMinFruit: number;
  sceneCloseUpSingleRadius: number;
}

/**
 * Whether a frame is analysed again as small fruit, from the radii (working px) of its confident
 * fruit hypotheses in the close-up analysis and what the walk's recent frames were (`smallLikely`,
 * ScaleMemory). Without that memory (a photo, a walk's first frames) a frame is small when its
 * largest hypothesis is under smallFruitRadius. After frames of small fruit the close-up analysis
 * has to be credible to be kept: its largest hypothesis reaches smallFruitSceneRadius, and either
 * at least sceneCloseUpMinFruit hypotheses reach smallFruitRadius (a close view shows several fruit
 * of close-up size) or the largest reaches sceneCloseUpSingleRadius (one fruit too large for a
 * clump of small ones). One large circle among small ones is a clump of touching small fruit
 * merged into one blob; the frame is then a small-fruit frame, and is remembered as one, so the
 * memory holds through a run of such frames and lets go only on frames that are close-ups.
 */
export function smallFruitGate(radii: readonly number[], smallLikely: boolean, q: SmallFruitGateParams): boolean {
  let largest = 0;
  let closeUpSized = 0;
  for (const r of radii) {
    if (r > largest) largest = r;
    if (r >= q.smallFruitRadius) closeUpSized++;
  }
  if (!smallLikely) return largest < q.smallFruitRadius;
  if (largest < q.smallFruitSceneRadius) return true;
  if (largest >= q.sceneCloseUpSingleRadius) return false;
  return closeUpSized < q.sceneCloseUpMinFruit;
}
