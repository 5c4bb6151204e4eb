/**
 * Slows down key guessing: a client (by address) that presents more than
 * `perMinute` failed credentials in a sliding minute has its further failures
 * answered 429 until the window clears; a valid credential is never held back
 * (src/http/pipeline.ts, refuseCredentials). Kept in memory: the box has one process, and a restart
 * forgetting the window costs an attacker nothing useful against 256-bit keys.
 */
export class FailureLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  private recent(client: string): number[] {
    const known = this.hits.get(client);
    if (!known) return [];
    const cutoff = this.now() - 60_000;
    const list = known.filter((t) => t > cutoff);
    if (list.length) this.hits.set(client, list);
    else this.hits.delete(client);
    return list;
  }

  /** Failures remembered for a client in the current window. */
  remembered(client: string): number {
    return this.hits.get(client)?.length ?? 0;
  }

  /** Seconds until the client may try again, or 0 when it may try now. */
  retryAfter(client: string): number {
    if (this.perMinute <= 0) return 0;
    const list = this.recent(client);
    if (list.length < this.perMinute) return 0;
    return Math.max(1, Math.ceil((list[0]! + 60_000 - this.now()) / 1000));
  }

  fail(client: string): void {
    // With the limit off nothing is kept; with it on, only the newest `perMinute` failures
    // decide, so a client hammering past the limit cannot grow the list (each check walks it).
    if (this.perMinute <= 0) return;
    const list = this.recent(client);
    list.push(this.now());
    if (list.length > this.perMinute) list.splice(0, list.length - this.perMinute);
    this.hits.set(client, list);
    if (this.hits.size > 10_000) {
      // Bound memory under a spray of addresses: drop the oldest client.
      const first = this.hits.keys().next().value;
      if (first !== undefined) this.hits.delete(first);
    }
  }
}
