import { type Clock, systemClock } from '../util/retry.js';
import type { ConsumerOptions } from './consumer-options.js';
import type { ConsumerResult, DeliveryOutcome, DeliveryRecord } from './consumer-result.js';

/**
 * What a consumer counts as it goes, whatever its protocol: deliveries by outcome and the first
 * MAX_RECORDS of them, the most held at once, its last activity, why it stopped; and the
 * ConsumerResult it makes of them.
 */

/** The most deliveries a result records (ConsumerResult.deliveries). */
export const MAX_RECORDS = 100_000;

/** A delivery as its protocol reads it: its record but for when it ended and how. */
export type DeliveryFacts = Omit<DeliveryRecord, 'atMs' | 'outcome'>;

type StopReason = ConsumerResult['stoppedBecause'];

/**
 * Why a consumer stops before its next delivery, or undefined: Ctrl+C, the count reached (taken:
 * processed and skipped as duplicates), or, with nothing to take (sinceActivityMs given),
 * idleTimeoutMs since its last activity.
 */
export function stopReason(s: {
  aborted: boolean;
  taken: number;
  count: number | undefined;
  sinceActivityMs?: number | undefined;
  idleTimeoutMs: number;
}): StopReason | undefined {
  if (s.aborted) return 'interrupted';
  if (s.count !== undefined && s.taken >= s.count) return 'count';
  if (s.sinceActivityMs !== undefined && s.sinceActivityMs >= s.idleTimeoutMs) return 'idle';
  return undefined;
}

/**
 * The simulated work of one delivery, in ms. None for a message the idempotent store already has
 * (the consumer records it as skipped): a redelivered slow message would otherwise do its slow
 * work again, and time out again.
 */
export function workMsFor(opts: Pick<ConsumerOptions, 'store' | 'workMs' | 'workMsOf'>, id: string): number {
  if (opts.store?.alreadyProcessed(id)) return 0;
  return opts.workMsOf ? opts.workMsOf(id) : opts.workMs;
}

export class ConsumerTally {
  /** The result's counters; a protocol adds its settlements to acked, nacked and rejected. */
  readonly n = {
    received: 0,
    processed: 0,
    duplicatesSkipped: 0,
    acked: 0,
    nacked: 0,
    rejected: 0,
    crashes: 0,
    reconnects: 0,
    cancels: 0,
    channelsClosed: 0,
  };
  /** Set once: the run stops (undefined: it goes on). */
  stoppedBecause: StopReason | undefined;
  gaveUp: string | null = null;
  readonly #clock: Clock;
  readonly #t0: number;
  readonly #byOutcome: Record<string, number> = {};
  readonly #deliveries: DeliveryRecord[] = [];
  #maxHeld = 0;
  #lastProcessedAtMs: number | null = null;
  #connections = 0;
  /** The last delivery taken, the end of its work, or a cancel, a detach or a closed channel: idleTimeoutMs counts from here. */
  #lastActivity: number;

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
    this.#t0 = clock.now();
    this.#lastActivity = this.#t0;
  }

  /** A connection made: each after the first is a reconnect. */
  connected(): void {
    this.#connections++;
    if (this.#connections > 1) this.n.reconnects++;
  }

  /** Deliveries held now (unsettled or, autoack, unprocessed). */
  held(count: number): void {
    this.#maxHeld = Math.max(this.#maxHeld, count);
  }

  /** Activity: idleTimeoutMs counts from now. */
  active(): void {
    this.#lastActivity = this.#clock.now();
  }

  /** A delivery taken to work on: activity; its number in the run (from 1). */
  taken(): number {
    this.active();
    return ++this.n.received;
  }

  /** Processed, or skipped as a duplicate by the idempotent store. */
  processed(outcome: 'processed' | 'duplicate'): void {
    if (outcome === 'duplicate') this.n.duplicatesSkipped++;
    else this.n.processed++;
    this.#lastProcessedAtMs = this.#clock.now() - this.#t0;
  }

  /** A delivery's end: counted by outcome, kept (the first MAX_RECORDS), and returned for the hooks. */
  record(facts: DeliveryFacts, outcome: DeliveryOutcome): DeliveryRecord {
    const d: DeliveryRecord = { atMs: this.#clock.now() - this.#t0, ...facts, outcome };
    this.#byOutcome[outcome] = (this.#byOutcome[outcome] ?? 0) + 1;
    if (this.#deliveries.length < MAX_RECORDS) this.#deliveries.push(d);
    return d;
  }

  /**
   * Whether the run stops before its next delivery (stopReason; idle: there is none to take), and
   * stoppedBecause set when it does.
   */
  stops(aborted: boolean, opts: Pick<ConsumerOptions, 'count' | 'idleTimeoutMs'>, idle = false): boolean {
    const why = stopReason({
      aborted,
      taken: this.n.processed + this.n.duplicatesSkipped,
      count: opts.count,
      sinceActivityMs: idle ? this.#clock.now() - this.#lastActivity : undefined,
      idleTimeoutMs: opts.idleTimeoutMs,
    });
    if (why) this.stoppedBecause = why;
    return why !== undefined;
  }

  /** The simulated work: false when Ctrl+C cut it short (the run stops, interrupted). */
  async work(ms: number, signal: AbortSignal): Promise<boolean> {
    if (ms <= 0) return true;
    try {
      await this.#clock.sleep(ms, signal);
      return true;
    } catch {
      this.stoppedBecause = 'interrupted';
      return false;
    }
  }

  result(opts: Pick<ConsumerOptions, 'queue' | 'autoAck'>, prefetch: number): ConsumerResult {
    const n = this.n;
    return {
      queue: opts.queue,
      autoAck: opts.autoAck,
      prefetch,
      received: n.received,
      processed: n.processed,
      duplicatesSkipped: n.duplicatesSkipped,
      acked: n.acked,
      nacked: n.nacked,
      rejected: n.rejected,
      crashes: n.crashes,
      byOutcome: this.#byOutcome,
      reconnects: n.reconnects,
      cancels: n.cancels,
      channelsClosed: n.channelsClosed,
      maxHeld: this.#maxHeld,
      lastProcessedAtMs: this.#lastProcessedAtMs,
      durationMs: this.#clock.now() - this.#t0,
      stoppedBecause: this.stoppedBecause ?? 'idle',
      gaveUp: this.gaveUp,
      deliveries: this.#deliveries,
    };
  }
}
