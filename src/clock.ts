/**
 * The one place the wall clock is read. Services, jobs and schedules take the time from
 * `services.clock`, so a test can set it and move it (a day later, across a daylight-saving
 * change, minutes behind another box) and the backtest can replay a past week without
 * anything reading the real time behind its back.
 *
 * Elapsed times (how long a step took) are not the wall clock: they use `performance.now()`,
 * which never steps when NTP corrects the time.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** The same instant as ISO 8601 UTC. */
  iso(): string;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  iso: () => new Date().toISOString(),
};

/**
 * A clock that stands still until told to move. Starts at `start` (an instant or ISO text),
 * or at the real time when none is given.
 */
export class SettableClock implements Clock {
  private ms: number;

  constructor(start: number | string | Date = Date.now()) {
    this.ms = SettableClock.toMs(start);
  }

  now(): number {
    return this.ms;
  }

  iso(): string {
    return new Date(this.ms).toISOString();
  }

  set(to: number | string | Date): void {
    this.ms = SettableClock.toMs(to);
  }

  /** Moves by `ms` (negative goes back, as a box's clock does when NTP corrects it). */
  advance(ms: number): void {
    this.ms += ms;
  }

  private static toMs(t: number | string | Date): number {
    const ms = typeof t === 'number' ? t : typeof t === 'string' ? Date.parse(t) : t.getTime();
    if (!Number.isFinite(ms)) throw new TypeError(`not an instant: ${String(t)}`);
    return ms;
  }
}
