import type { Clock } from '../util/retry.js';

/**
 * Messages at ratePerSec at most: each may go 1000/rate ms after the one before, and a producer
 * that fell behind (a reconnect, backpressure) catches up by one interval at most, not in a burst.
 * The arithmetic is pure (waitMs, sent); pace() sleeps on the injected clock.
 */
export class Pacer {
  readonly #intervalMs: number;
  #nextAtMs: number;

  /** ratePerSec 0: no pacing (active is false). */
  constructor(
    readonly ratePerSec: number,
    private readonly clock: Clock,
  ) {
    this.#intervalMs = ratePerSec > 0 ? 1000 / ratePerSec : 0;
    this.#nextAtMs = clock.now();
  }

  get active(): boolean {
    return this.ratePerSec > 0;
  }

  /** How long to wait at nowMs before the next message (≤ 0: now). */
  waitMs(nowMs: number): number {
    return this.#nextAtMs - nowMs;
  }

  /** One message went at nowMs. */
  sent(nowMs: number): void {
    this.#nextAtMs = Math.max(this.#nextAtMs, nowMs - this.#intervalMs) + this.#intervalMs;
  }

  /** Wait for the next slot and take it. Rejects with InterruptedError when signal aborts during a wait. */
  async pace(signal: AbortSignal): Promise<void> {
    if (!this.active) return;
    const wait = this.waitMs(this.clock.now());
    if (wait > 0) await this.clock.sleep(wait, signal);
    this.sent(this.clock.now());
  }
}
