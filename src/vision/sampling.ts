// Which decoded frames of a clip are scored. A fruit must be seen in several samples to be
// counted once and counted at all (the tracker confirms a track on its second sighting and
// its ripeness is a vote): at a slow walk a sample every half second sees each fruit about
// eight times, but a walker twice as fast leaves about four, and a fruit missed in one of
// them is lost. So the decoder reads at the fast interval and the sampler scores a frame
// every regular interval, or every frame while the camera moves fast.

export interface SamplingOptions {
  /** Seconds between scored frames at a walking pace. */
  regularSeconds: number;
  /** Seconds between scored frames while the walker is fast; the decoder reads at this interval. */
  fastSeconds: number;
  /**
   * The walk is fast when the camera moves more than this share of the frame (along its
   * direction of travel) per regular interval: each fruit is then in view for fewer than
   * about 1 / fastShare regular samples.
   */
  fastShare: number;
  /** Fast sampling ends when the share falls below fastShare × this (hysteresis: a noisy measurement does not flip it). */
  slowFactor: number;
}

/** Fast from a sixth of the frame per regular interval: below it a fruit crossing the frame is seen about six times or more. */
export const DEFAULT_SAMPLING: Omit<SamplingOptions, 'regularSeconds' | 'fastSeconds'> = { fastShare: 1 / 6, slowFactor: 0.8 };

export class AdaptiveSampler {
  private lastTaken = Number.NEGATIVE_INFINITY;
  private fastNow = false;
  private readonly o: SamplingOptions;

  constructor(options: Pick<SamplingOptions, 'regularSeconds' | 'fastSeconds'> & Partial<SamplingOptions>) {
    this.o = { ...DEFAULT_SAMPLING, ...options };
    if (!(this.o.fastSeconds > 0 && this.o.fastSeconds <= this.o.regularSeconds))
      throw new RangeError('fastSeconds must be within (0, regularSeconds]');
  }

  /** Whether the walk is being sampled at the fast interval. */
  get fast(): boolean {
    return this.fastNow;
  }

  /**
   * A copy in the same state, to ask which frames would be taken next if the pace held (the
   * walk reads ahead on that guess); what the copy is told does not reach this sampler.
   */
  preview(): AdaptiveSampler {
    const copy = new AdaptiveSampler(this.o);
    copy.lastTaken = this.lastTaken;
    copy.fastNow = this.fastNow;
    return copy;
  }

  /** A new clip: its times start again at 0. The pace carries over (the walker is the same). */
  startClip(): void {
    this.lastTaken = Number.NEGATIVE_INFINITY;
  }

  /** Whether the decoded frame at `timeSeconds` (into its clip) is scored. */
  take(timeSeconds: number): boolean {
    // Half a fast interval of slack: decoders place samples on their own grid.
    const due = timeSeconds - this.lastTaken >= this.o.regularSeconds - this.o.fastSeconds / 2;
    if (!due && !this.fastNow) return false;
    this.lastTaken = timeSeconds;
    return true;
  }

  /**
   * The camera's motion between the last two scored frames of a clip, in pixels, and the
   * time between them. Null motion (too few fruit matched to measure it) keeps the pace.
   */
  observe(motion: readonly [number, number] | null, seconds: number, width: number, height: number): void {
    if (!motion || !(seconds > 0)) return;
    const share = cameraShare(motion, seconds, width, height, this.o.regularSeconds);
    if (this.fastNow) this.fastNow = share >= this.o.fastShare * this.o.slowFactor;
    else this.fastNow = share > this.o.fastShare;
  }
}

/** Share of the frame the camera crosses per regular interval: the larger of the horizontal and vertical shares. */
export function cameraShare(
  motion: readonly [number, number],
  seconds: number,
  width: number,
  height: number,
  regularSeconds: number,
): number {
  return Math.max(Math.abs(motion[0]) / width, Math.abs(motion[1]) / height) * (regularSeconds / seconds);
}
