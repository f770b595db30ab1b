import type { Message } from 'rhea';
import { type FailureAction10, type FailureSpec, shouldFail } from '../consumer-failures.js';
import type { ConsumerHooks, ConsumerOptions } from '../consumer-options.js';
import type { ConsumerResult, DeliveryOutcome } from '../consumer-result.js';
import { ConsumerTally, type DeliveryFacts, workMsFor } from '../consumer-tally.js';
import { deathSummary, numberHeader } from '../delivery-headers.js';
import { InterruptedError, NoBrokerError, NotFoundError, UsageError, errorMessage } from '../../errors.js';
import { maskUrl } from '../../url.js';
import { systemClock } from '../../util/retry.js';
import { closeWithin10, queueAddress } from './connection.js';
import { FAILURE_SETTLEMENTS10 } from './consumer-failures10.js';
import { openReceiveLink, type ReceiveLink, type Received10 } from './receive-link.js';

/**
 * The consumer over AMQP 1.0 (rhea): the options, hooks and result of the 0-9-1 consumer
 * (runConsumer), on a receiver link to the queue. --prefetch is the link credit (kept
 * outstanding: topped up as deliveries are settled); --autoack is a pre-settled link (the broker
 * sends every delivery settled: at-most-once). Each delivery is accepted after its work (with
 * --multi-ack-every, a run of accepts as one disposition); a failure on purpose settles it with
 * its --on-failure outcome, or closes the connection with it unsettled. On a lost connection it
 * connects to the next URL; what was unsettled on the lost link is the broker's to redeliver.
 *
 * The result's counters in AMQP 1.0's terms: acked = accepted, nacked = released + modified,
 * rejected = rejected. A delivery's deliveryCount is the header's delivery_count (absent while 0,
 * as x-delivery-count is over 0-9-1), acquiredCount the x-acquired-count annotation, redelivered
 * the header's first_acquirer false; channelsClosed is 0 (AMQP 1.0 has no channel to close apart
 * from its link: a detach is a lost link). Returns data; never prints.
 */

/** The 0-9-1 consumer's options, with AMQP 1.0's failure actions. */
type ConsumerOptions10 = Omit<ConsumerOptions, 'failure'> & { failure: FailureSpec<FailureAction10> | undefined };

/**
 * The credit of --prefetch 0 (unlimited over 0-9-1). rhea keeps at most 2048 unsettled
 * deliveries per session (its incoming window), so more credit than that would not be used.
 */
const UNLIMITED_CREDIT = 2048;

export async function runConsumer10(opts: ConsumerOptions10, hooks: ConsumerHooks): Promise<ConsumerResult> {
  if (opts.consumeArguments !== undefined) throw new UsageError('basic.consume arguments are AMQP 0-9-1: the AMQP 1.0 consumer takes none');
  const run = new Consumer10Run(opts, hooks);
  await run.consumeAll();
  return run.result();
}

class Consumer10Run {
  readonly #opts: ConsumerOptions10;
  readonly #hooks: ConsumerHooks;
  readonly #tally = new ConsumerTally();
  readonly #random: () => number;
  readonly #prefetch: number;
  readonly #address: string;

  constructor(opts: ConsumerOptions10, hooks: ConsumerHooks) {
    this.#opts = opts;
    this.#hooks = hooks;
    this.#random = opts.random ?? Math.random;
    this.#prefetch = opts.crashOnDelivery ? 1 : opts.prefetch;
    this.#address = queueAddress(opts.queue);
  }

  /** Link after link until the run stops. A queue that does not exist throws NotFoundError. */
  async consumeAll(): Promise<void> {
    let startIndex = this.#opts.startIndex ?? 0;
    while (!this.#tally.stoppedBecause) {
      if (this.#hooks.signal.aborted) {
        this.#tally.stoppedBecause = 'interrupted';
        break;
      }
      const link = await this.#open(startIndex);
      if (!link) break;
      startIndex = link.index;
      this.#tally.connected();
      this.#hooks.onEvent?.(`connected to ${maskUrl(link.url)} (AMQP 1.0, link credit ${this.#prefetch === 0 ? UNLIMITED_CREDIT : this.#prefetch})`);
      this.#hooks.onSubscribed?.();
      await this.#processDeliveries(link);
      await this.#leave(link);
    }
  }

  result(): ConsumerResult {
    return this.#tally.result(this.#opts, this.#prefetch);
  }

  /**
   * A link on the first node that answers, from startIndex on; undefined when the run stops
   * instead (Ctrl+C, or gave up). A node that answers but does not attach the link (a queue with
   * no leader: a quorum loss, an election) is tried again, the next node first, until
   * reconnectTimeoutMs has passed since the first failure.
   */
  async #open(startIndex: number): Promise<ReceiveLink | undefined> {
    let firstFailureAt: number | undefined;
    let index = startIndex;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#attach(index);
      } catch (err) {
        if (err instanceof InterruptedError) {
          this.#tally.stoppedBecause = 'interrupted';
          return undefined;
        }
        // No broker at the run's first connection, or no such queue: the run's one error.
        if (err instanceof NoBrokerError || err instanceof NotFoundError) throw err;
        const now = performance.now();
        firstFailureAt ??= now;
        if (now - firstFailureAt >= this.#opts.reconnectTimeoutMs) {
          this.#tally.gaveUp = errorMessage(err);
          this.#tally.stoppedBecause = 'gave-up';
          return undefined;
        }
        this.#hooks.onEvent?.(`could not attach to ${this.#opts.queue} (${errorMessage(err)}); trying again`);
        index = (index + 1) % this.#opts.urls.length;
        try {
          await systemClock.sleep(Math.min(2_000, 250 * 2 ** attempt), this.#hooks.signal);
        } catch {
          this.#tally.stoppedBecause = 'interrupted';
          return undefined;
        }
      }
    }
  }

  async #attach(startIndex: number): Promise<ReceiveLink> {
    const opts = this.#opts;
    let link: ReceiveLink | undefined;
    link = await openReceiveLink({
      urls: opts.urls,
      startIndex,
      address: this.#address,
      creditWindow: this.#prefetch === 0 ? UNLIMITED_CREDIT : this.#prefetch,
      preSettled: opts.autoAck,
      heartbeatS: opts.heartbeatS,
      reconnectTimeoutMs: opts.reconnectTimeoutMs,
      signal: this.#hooks.signal,
      onDelivery: () => {
        if (link) this.#tally.held(link.held);
      },
    });
    return link;
  }

  /** Deliveries one at a time until the link goes, a crash, or the run stops (Ctrl+C, count, idle). */
  async #processDeliveries(link: ReceiveLink): Promise<void> {
    while (!link.closed && !link.crashed) {
      if (this.#tally.stops(this.#hooks.signal.aborted, this.#opts)) break;
      const r = link.inbox.shift();
      if (!r) {
        this.#tally.n.acked += link.flushAccepts();
        if (this.#tally.stops(this.#hooks.signal.aborted, this.#opts, true)) break;
        await link.waitForDelivery(100);
        continue;
      }
      if (!(await this.#handle(link, r))) break;
    }
  }

  /** One delivery: a crash, or the work, then a failure on purpose or the processing. false: leave this link's loop. */
  async #handle(link: ReceiveLink, r: Received10): Promise<boolean> {
    const opts = this.#opts;
    const received = this.#tally.taken();
    link.inProcess = true;
    if (opts.crashOnDelivery) {
      this.#record(r.message, 'crash');
      this.#tally.n.crashes++;
      link.crashed = true;
      return false;
    }
    const id = messageIdOf(r.message) ?? `no-id-${received}`;
    if (!(await this.#tally.work(workMsFor(opts, id), this.#hooks.signal))) return false;
    if (shouldFail(received, opts.failure, this.#random)) await this.#fail(link, r, opts.failure!.action);
    else this.#processOne(link, r, id);
    return true;
  }

  /** A failure on purpose: settled with its outcome (pre-settled: nothing to settle), or (close) the connection left with it unsettled. */
  async #fail(link: ReceiveLink, r: Received10, action: FailureAction10): Promise<void> {
    link.inProcess = false;
    this.#record(r.message, action);
    const s = FAILURE_SETTLEMENTS10[action];
    if (!this.#opts.autoAck && s.counter !== null && (await link.settle(r.delivery, s))) this.#tally.n[s.counter]++;
    if (s.outcome === null) {
      this.#tally.n.crashes++;
      link.crashed = true;
    }
  }

  /** Processed (or, by the idempotent store, skipped as a duplicate); manual ack: accepted every ackEvery messages. */
  #processOne(link: ReceiveLink, r: Received10, id: string): void {
    const opts = this.#opts;
    const outcome = opts.store ? opts.store.process(id, r.message.delivery_count ?? 0, () => undefined) : 'processed';
    this.#tally.processed(outcome);
    if (!opts.autoAck && link.holdAccept(r.delivery) >= Math.max(1, opts.ackEvery)) this.#tally.n.acked += link.flushAccepts();
    link.inProcess = false;
    // Idle counts from the end of the work: a slow message is activity, not silence.
    this.#tally.active();
    this.#record(r.message, outcome === 'duplicate' ? 'duplicate-skipped' : 'processed');
  }

  /** Leaving this link: on purpose (a crash), detached by the broker, because the run stops, or lost. */
  async #leave(link: ReceiveLink): Promise<void> {
    const hooks = this.#hooks;
    if (link.crashed) {
      hooks.onEvent?.('closing the connection with the delivery unsettled (simulated crash)');
      await closeWithin10(link.connection);
      return;
    }
    if (link.detachedByBroker) {
      this.#tally.n.cancels++;
      hooks.onEvent?.(`${link.closedBecause}; closing this connection and attaching again`);
      await closeWithin10(link.connection);
      this.#tally.active();
      return;
    }
    if (!link.closed) {
      this.#tally.n.acked += link.flushAccepts();
      // Taken from the queue and never worked on: released, so that they do not count as failed deliveries.
      const released = await link.releaseInbox();
      if (released > 0) hooks.onEvent?.(`${released} deliveries not worked on released back to the queue`);
      await link.detachWithin(5_000);
      await closeWithin10(link.connection);
      return;
    }
    await closeWithin10(link.connection);
    if (!this.#tally.stoppedBecause) hooks.onEvent?.(`connection lost (${link.closedBecause}); reconnecting`);
  }

  #record(message: Message, outcome: DeliveryOutcome): void {
    const d = this.#tally.record(deliveryFacts10(message), outcome);
    this.#hooks.onDelivery?.(d);
  }
}

/**
 * A delivery as AMQP 1.0 carries it: the message id, redelivered (the header's first_acquirer
 * false, or acquired or delivered before), the header's delivery_count (absent while 0), the
 * x-acquired-count annotation, the first of x-opt-deaths.
 */
export function deliveryFacts10(message: Message): DeliveryFacts {
  const annotations = message.message_annotations as Record<string, unknown> | undefined;
  const deliveryCount = message.delivery_count ?? 0;
  const acquiredCount = numberHeader(annotations?.['x-acquired-count']);
  return {
    messageId: messageIdOf(message),
    redelivered: message.first_acquirer === false || (acquiredCount ?? 0) > 0 || deliveryCount > 0,
    deliveryCount: deliveryCount > 0 ? deliveryCount : undefined,
    acquiredCount,
    death: deathSummary({ 'x-death': annotations?.['x-opt-deaths'] }),
  };
}

/** The message id as text: a string as the producer set it, or a number or binary id written out; undefined without one. */
export function messageIdOf(message: Pick<Message, 'message_id'>): string | undefined {
  const id = message.message_id;
  if (typeof id === 'string') return id;
  if (typeof id === 'number') return String(id);
  if (Buffer.isBuffer(id)) return id.toString('hex');
  return undefined;
}
