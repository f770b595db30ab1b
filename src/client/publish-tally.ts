import type { Ledger } from '../ledger/ledger.js';
import { LatencyRecorder } from '../measure/histogram.js';
import { AdaptiveSamples } from '../measure/samples.js';
import type { Clock } from '../util/retry.js';
import type { FlushOutcome, PublishLoop } from './publish-loop.js';
import type { PublisherOptions } from './publisher-options.js';
import { countFlags, type PublisherResult, type PublisherSample } from './publisher-result.js';

/**
 * What a producer measures as it goes, whatever its protocol: messages written, confirms and
 * their latency, the longest stall, the samples for timelines; and the result it makes of them.
 */

/** The most samples a run keeps (AdaptiveSamples: a 0.1 s run and a 60 s one both read well). */
const MAX_SAMPLES = 1_000;
/** How often the sampler looks; it records a sample when its current interval has passed. */
export const SAMPLER_TICK_MS = 10;

export class PublishTally {
  readonly t0: number;
  readonly startedAtIso = new Date().toISOString();
  readonly samples = new AdaptiveSamples<PublisherSample>(MAX_SAMPLES, SAMPLER_TICK_MS);
  /** Distinct messages written at least once. */
  written = 0;
  /** Publish calls, republishes included. */
  publishes = 0;
  maxInFlight = 0;
  /** Distinct messages confirmed so far. */
  confirmed = 0;
  readonly #latency = new LatencyRecorder();
  readonly #latencyFault = new LatencyRecorder();
  readonly #recordLatency: boolean;
  readonly #clock: Clock;
  #lastProgressAt: number;
  #longestStallMs = 0;

  constructor(clock: Clock, recordLatency: boolean) {
    this.#clock = clock;
    this.t0 = clock.now();
    this.#lastProgressAt = this.t0;
    this.#recordLatency = recordLatency;
  }

  /** A confirm's latency (inFault: it arrived in the window around a fault). */
  latency(ms: number, inFault: boolean): void {
    if (!this.#recordLatency) return;
    this.#latency.recordMs(ms);
    if (inFault) this.#latencyFault.recordMs(ms);
  }

  /** A message written (no confirms) or a confirm received at `at`: the stall, if any, ends. */
  progressed(at: number): void {
    if (at - this.#lastProgressAt > this.#longestStallMs) this.#longestStallMs = at - this.#lastProgressAt;
    this.#lastProgressAt = at;
  }

  sample(inFlight: number): PublisherSample {
    return { tMs: this.#clock.now() - this.t0, written: this.written, confirmed: this.confirmed, inFlight };
  }

  /** The run's figures: these counters, the ledger's flags, the loop's record; amqp10: the outcome counts of an AMQP 1.0 run. */
  result(
    opts: PublisherOptions,
    ledger: Ledger,
    loop: Pick<PublishLoop<never>, 'reconnects' | 'blocks' | 'blockedMs' | 'gaveUp' | 'interrupted' | 'events' | 'connectedTo'>,
    o: { flush: FlushOutcome | undefined; completed: boolean; refusedGivenUp: number; inFlight: number } & Pick<PublisherResult, 'amqp10' | 'stream'>,
  ): PublisherResult {
    this.samples.push(this.sample(o.inFlight));
    const durationMs = this.#clock.now() - this.t0;
    const flags = countFlags(ledger);
    return {
      runId: opts.runId,
      mode: opts.mode,
      count: opts.count,
      written: this.written,
      publishes: this.publishes,
      confirmed: flags.confirmed,
      nacked: flags.nacked,
      returned: flags.returned,
      indeterminate: flags.indeterminate,
      republished: flags.republished,
      reconnects: loop.reconnects,
      maxInFlight: this.maxInFlight,
      startedAtIso: this.startedAtIso,
      durationMs,
      publishRatePerSec: durationMs > 0 ? (this.publishes * 1000) / durationMs : 0,
      confirmLatency: this.#latency.summary(),
      confirmLatencyAroundFault: this.#latencyFault.summary(),
      longestStallMs: this.#longestStallMs,
      blocks: loop.blocks,
      blockedMs: loop.blockedMs,
      flush: o.flush,
      completed: loop.gaveUp === null && !loop.interrupted && o.completed,
      gaveUp: loop.gaveUp,
      interrupted: loop.interrupted,
      events: loop.events,
      connectedTo: loop.connectedTo,
      samples: this.samples.samples,
      ...(o.amqp10 ? { amqp10: o.amqp10 } : {}),
      ...(o.stream ? { stream: o.stream } : {}),
      refusedGivenUp: o.refusedGivenUp,
    };
  }
}
