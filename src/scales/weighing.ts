import type { ScaleFrame } from './frames.js';

/**
 * When a scale's readings make a harvest: one per stable weight that follows a return to zero.
 * A crate put on the scale settles, its stable weight is recorded once; it stays recorded however
 * long the crate sits there and whatever more is piled on, until the scale is back at zero (the
 * crate taken off). At start the scale must first read zero: a crate already on it when the
 * service starts may have been recorded before the restart. Pure: fed frames, answers weights.
 */
export interface WeighingOptions {
  /** A stable reading within this many kg of zero is zero (the scale's own drift and dust). */
  zeroKg: number;
  /** A plain frame (no stability flag) is stable once the same weight came this many times in a row. */
  plainRepeats: number;
}

export type WeighingState =
  /** Not yet seen zero since start: nothing is recorded until then. */
  | 'waiting_for_zero'
  /** At zero, ready for the next crate. */
  | 'ready'
  /** A weight is on and not stable yet. */
  | 'settling'
  /** This weight was recorded; the next one needs a return to zero first. */
  | 'recorded'
  /** Over or under the scale's range, or a negative weight: nothing is recorded. */
  | 'out_of_range';

export interface Reading {
  kg: number;
  stable: boolean;
  format: string;
}

export class Weighing {
  private armed = false;
  private recordedSinceZero = false;
  private plainRun: { kg: number; count: number } | null = null;
  state: WeighingState = 'waiting_for_zero';
  last: Reading | null = null;

  constructor(private readonly options: WeighingOptions) {}

  /** The weight to record (kg) when this frame completes a weighing, else null. */
  feed(frame: ScaleFrame): number | null {
    if (frame.kind !== 'weight') {
      if (frame.kind !== 'busy') this.state = 'out_of_range';
      this.plainRun = null;
      return null;
    }
    // A tare frame is what the scale subtracts, not what lies on it.
    if (frame.mode === 'tare') return null;
    let stable = frame.stable;
    if (stable === null) {
      this.plainRun = this.plainRun?.kg === frame.kg ? { kg: frame.kg, count: this.plainRun.count + 1 } : { kg: frame.kg, count: 1 };
      stable = this.plainRun.count >= this.options.plainRepeats;
    } else {
      this.plainRun = null;
    }
    this.last = { kg: frame.kg, stable, format: frame.format };

    const zero = Math.abs(frame.kg) <= this.options.zeroKg;
    if (zero) {
      if (stable) {
        this.armed = true;
        this.recordedSinceZero = false;
        this.state = 'ready';
      }
      return null;
    }
    if (frame.kg < 0) {
      this.state = 'out_of_range';
      return null;
    }
    if (!stable) {
      if (this.armed) this.state = 'settling';
      return null;
    }
    if (!this.armed) {
      this.state = this.recordedSinceZero ? 'recorded' : 'waiting_for_zero';
      return null;
    }
    this.armed = false;
    this.recordedSinceZero = true;
    this.state = 'recorded';
    return frame.kg;
  }

  /**
   * After a disconnect the state is kept: a crate recorded before the cable came out and still on
   * the scale after is not recorded twice, and a scale that was at zero is still ready. Only a
   * plain frame's run of repeats starts again (the reading before the gap is not the one after).
   */
  disconnected(): void {
    this.plainRun = null;
  }
}
