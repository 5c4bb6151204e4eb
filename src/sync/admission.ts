import pLimit from 'p-limit';
import { performance } from 'node:perf_hooks';
import { Busy } from '../errors.js';
import type { Services } from '../services.js';

/**
 * Admission control for pushed batches (docs/sync.md, "A busy upstream"). A batch applies only
 * while fewer than SYNC_PUSH_AT_ONCE others do; up to SYNC_PUSH_WAITING more wait their turn;
 * past that the push is answered 503 `upstream_busy` with a Retry-After at once, and the box
 * sends the batch again then. Fifty boxes pushing at once would otherwise all start, share the
 * cores and the database, and each wait for all the others: every batch as slow as the whole
 * burst. A turned-away batch costs the upstream only its body's read.
 */
export class PushGate {
  private readonly limit: pLimit.Limit;
  /** A running mean of a batch's time in the gate, for the Retry-After estimate. */
  private meanMs = 250;
  turnedAway = 0;

  constructor(
    readonly atOnce: number,
    readonly waiting: number,
  ) {
    this.limit = pLimit(atOnce);
  }

  /** Runs `apply` when its turn comes; throws Busy when the line is already full. */
  async run<T>(apply: () => Promise<T>): Promise<T> {
    const ahead = this.limit.activeCount + this.limit.pendingCount;
    if (ahead >= this.atOnce + this.waiting) {
      this.turnedAway++;
      // The line ahead drains atOnce batches per batch time; the box comes back about when its place would have come.
      const seconds = Math.min(60, Math.max(1, Math.ceil(((ahead + 1) / this.atOnce) * (this.meanMs / 1000))));
      throw new Busy(
        'upstream_busy',
        `The upstream is applying ${this.limit.activeCount} batches with ${this.limit.pendingCount} waiting; nothing of this one was applied. Send it again after ${seconds} s.`,
        seconds,
      );
    }
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
