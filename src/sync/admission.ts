import pLimit from 'p-limit';
import { performance } from 'node:perf_hooks';
import { Busy } from '../errors.js';
import type { Services } from '../services.js';

/**
 * Admission control for pushed batches (docs/sync.md, "A busy upstream"). A push is counted from
 * the moment it is let in, before its body is read, until it is answered: at most
 * SYNC_PUSH_AT_ONCE apply at once and SYNC_PUSH_WAITING more are read or wait their turn; a push
 * beyond those is answered 503 `upstream_busy` with a Retry-After before its body is read, and
 * the box sends the batch again then. Without it fifty boxes pushing at once all start, share the
 * cores, the event loop and the database, and each waits for all the others: every batch as slow
 * as the whole burst. On SQLite, whose writes hold the event loop, only a count from arrival
 * bounds the wait: the line forms in front of the loop, not in front of the database.
 */
export class PushGate {
  private readonly limit: pLimit.Limit;
  /** A running mean of a batch's apply, for the Retry-After estimate. */
  private meanMs = 250;
  inFlight = 0;
  turnedAway = 0;

  constructor(
    readonly atOnce: number,
    readonly waiting: number,
  ) {
    this.limit = pLimit(atOnce);
  }

  /** Lets a push in, or throws Busy when the line is full; the release is to be called once it is answered (again: nothing). */
  admit(): () => void {
    if (this.inFlight >= this.atOnce + this.waiting) {
      this.turnedAway++;
      // The line drains atOnce batches per batch time; the box comes back about when its place would have come.
      const seconds = Math.min(60, Math.max(1, Math.ceil(((this.inFlight + 1) / this.atOnce) * (this.meanMs / 1000))));
      throw new Busy(
        'upstream_busy',
        `The upstream is taking ${this.inFlight} batches (${this.atOnce} at once); nothing of this one was read or applied. Send it again after ${seconds} s.`,
        seconds,
      );
    }
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
    };
  }

  /** Applies a batch when one of the atOnce places is free. */
  async run<T>(apply: () => Promise<T>): Promise<T> {
    return this.limit(async () => {
      const t0 = performance.now();
      try {
        return await apply();
      } finally {
        this.meanMs += (performance.now() - t0 - this.meanMs) * 0.2;
      }
    });
  }
}

const gates = new WeakMap<Services, PushGate>();

/** The instance's gate, made from its settings on first use. */
export function pushGateOf(services: Services): PushGate {
  let gate = gates.get(services);
  if (!gate) {
    gate = new PushGate(Math.max(1, services.config.syncPushAtOnce), services.config.syncPushWaiting);
    gates.set(services, gate);
  }
  return gate;
}
