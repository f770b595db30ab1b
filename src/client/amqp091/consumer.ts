import type { ConsumeMessage, GetMessage } from 'amqplib';
import { InterruptedError, NotFoundError, errorMessage } from '../../errors.js';
import { maskUrl } from '../../url.js';
import { systemClock } from '../../util/retry.js';
import { NoBrokerError } from '../../errors.js';
import { closeChannelWithin, closeWithin, connectAny, type Connected } from './connect.js';
import { type FailureAction, shouldFail } from '../consumer-failures.js';
import type { ConsumerHooks, ConsumerOptions } from '../consumer-options.js';
import type { ConsumerResult, DeliveryOutcome } from '../consumer-result.js';
import { ConsumerTally, type DeliveryFacts, workMsFor } from '../consumer-tally.js';
import { deathSummary, numberHeader } from '../delivery-headers.js';
import { Subscription } from './subscription.js';

/**
 * The consumer: manual ack or autoack, prefetch, simulated work, simulated failures, and an
 * optional durable (idempotent) record of what it processed. Returns data; never prints.
 */

/** Polling: the pause after a get that found the queue empty, and while the held deliveries are at the limit. */
const POLL_EMPTY_MS = 50;
const POLL_BUSY_MS = 5;
/** Polling without a prefetch: deliveries held at most. */
const POLL_MAX_HELD = 100;

export async function runConsumer(opts: ConsumerOptions, hooks: ConsumerHooks): Promise<ConsumerResult> {
  const run = new ConsumerRun(opts, hooks);
  await run.consumeAll();
  return run.result();
}

/**
 * One runConsumer call: connect, subscribe, process deliveries until the connection goes (then
 * connect again) or the run stops (count, idle, Ctrl+C, gave up).
 */
class ConsumerRun {
  readonly #opts: ConsumerOptions;
  readonly #hooks: ConsumerHooks;
  readonly #tally = new ConsumerTally();
  readonly #random: () => number;
  readonly #prefetch: number;

  constructor(opts: ConsumerOptions, hooks: ConsumerHooks) {
    this.#opts = opts;
    this.#hooks = hooks;
    this.#random = opts.random ?? Math.random;
    this.#prefetch = opts.crashOnDelivery ? 1 : opts.prefetch;
  }

  /** Connection after connection until the run stops. A queue that does not exist throws NotFoundError. */
  async consumeAll(): Promise<void> {
    let startIndex = this.#opts.startIndex ?? 0;
    while (!this.#tally.stoppedBecause) {
      if (this.#hooks.signal.aborted) {
        this.#tally.stoppedBecause = 'interrupted';
        break;
      }
      const c = await this.#connect(startIndex);
      if (!c) break;
      startIndex = c.index;
      this.#tally.connected();
      this.#hooks.onEvent?.(`connected to ${maskUrl(c.url)}`);
      const sub = new Subscription(c.connection);
      if (!(await this.#openChannel(sub)) || !(await this.#subscribe(sub))) continue;
      this.#hooks.onSubscribed?.();
      await this.#processDeliveries(sub);
      await this.#leave(sub);
    }
  }

  result(): ConsumerResult {
    return this.#tally.result(this.#opts, this.#prefetch);
  }

  /** The first node that answers, from startIndex on; undefined when the run stops instead (Ctrl+C, or gave up). No broker at the run's first connection throws NoBrokerError. */
  async #connect(startIndex: number): Promise<Connected | undefined> {
    try {
      return await connectAny(this.#opts.urls, startIndex, {
        heartbeatS: this.#opts.heartbeatS,
        timeoutMs: this.#opts.reconnectTimeoutMs,
        signal: this.#hooks.signal,
        connectionName: 'rmq-bench consumer',
      });
    } catch (err) {
      if (err instanceof InterruptedError) {
        this.#tally.stoppedBecause = 'interrupted';
        return undefined;
      }
      if (err instanceof NoBrokerError) throw err;
      this.#tally.gaveUp = errorMessage(err);
      this.#tally.stoppedBecause = 'gave-up';
      return undefined;
    }
  }

  /** The channel, its prefetch, and the queue checked; false (the connection closed) when that failed. A missing queue throws. */
  async #openChannel(sub: Subscription): Promise<boolean> {
    const queue = this.#opts.queue;
    try {
      const ch = await sub.openChannel((reason) => this.#hooks.onChannelClosed?.(reason));
      if (this.#prefetch > 0) await ch.prefetch(this.#prefetch);
      await ch.checkQueue(queue).catch((err: unknown) => {
        throw new NotFoundError(`queue '${queue}' does not exist (${errorMessage(err)})`);
      });
      return true;
    } catch (err) {
      await closeWithin(sub.connection);
      if (err instanceof NotFoundError) throw err;
      return false;
    }
  }

  /** basic.consume (or, polling, the basic.get loop started); false (the connection closed) when it failed. */
  async #subscribe(sub: Subscription): Promise<boolean> {
    const opts = this.#opts;
    if (opts.polling) {
      void this.#poll(sub);
      return true;
    }
    try {
      await sub.channel.consume(opts.queue, (msg) => this.#onMessage(sub, msg), {
        noAck: opts.autoAck,
        ...(opts.consumeArguments ? { arguments: opts.consumeArguments } : {}),
      });
      return true;
    } catch {
      // The connection went while subscribing (a node killed or cut off just then): connect again.
      await closeWithin(sub.connection);
      this.#hooks.onEvent?.('connection lost while subscribing; reconnecting');
      return false;
    }
  }

  /**
   * Polling: basic.get after basic.get into the same inbox the subscription fills, while at most
   * `prefetch` (or POLL_MAX_HELD) deliveries are held; POLL_EMPTY_MS between gets of an empty
   * queue. Ends with the connection (a failed get closes it) or the run.
   */
  async #poll(sub: Subscription): Promise<void> {
    const limit = this.#prefetch > 0 ? this.#prefetch : POLL_MAX_HELD;
    while (!sub.closed && !sub.crashed && !this.#tally.stoppedBecause && !this.#hooks.signal.aborted) {
      if (sub.held >= limit) {
        await systemClock.sleep(POLL_BUSY_MS);
        continue;
      }
      let msg: GetMessage | false;
      try {
        msg = await sub.channel.get(this.#opts.queue, { noAck: this.#opts.autoAck });
      } catch {
        // The channel or connection went (a node faulted): the subscription's close ends the loop; reconnect as a push consumer does.
        sub.markClosed();
        return;
      }
      if (msg === false) await systemClock.sleep(POLL_EMPTY_MS);
      else this.#onMessage(sub, msg as unknown as ConsumeMessage);
    }
  }

  /** amqplib's consume callback: a delivery into the inbox, or (null) basic.cancel from the broker. */
  #onMessage(sub: Subscription, msg: ConsumeMessage | null): void {
    if (!msg) {
      // basic.cancel from the broker. On 4.3 a quorum queue sends it when a delivery outlives
      // the consumer timeout: that message is back in the queue, and the broker keeps the
      // consumer in a "timeout" state until it is settled. An ack of it would wake the consumer
      // at the broker while amqplib has already forgotten its tag (the next delivery closes the
      // channel: "Unknown consumer"). So: no more acks here; close this connection and subscribe again.
      sub.cancelled = true;
      sub.markClosed();
      this.#hooks.onCancelled?.();
      return;
    }
    sub.inbox.push(msg);
    this.#tally.held(sub.held);
    sub.wake();
  }

  /** Deliveries one at a time until the connection closes, a crash, or the run stops (Ctrl+C, count, idle). */
  async #processDeliveries(sub: Subscription): Promise<void> {
    while (!sub.closed && !sub.crashed) {
      if (this.#tally.stops(this.#hooks.signal.aborted, this.#opts)) break;
      const msg = sub.inbox.shift();
      if (!msg) {
        this.#tally.n.acked += sub.flushAcks();
        if (this.#tally.stops(this.#hooks.signal.aborted, this.#opts, true)) break;
        await sub.waitForDelivery(100);
        continue;
      }
      if (!(await this.#handle(sub, msg))) break;
    }
  }

  /** One delivery: a crash, or the work, then a failure on purpose or the processing. false: leave this connection's loop. */
  async #handle(sub: Subscription, msg: ConsumeMessage): Promise<boolean> {
    const opts = this.#opts;
    const received = this.#tally.taken();
    sub.inProcess = true;
    if (opts.crashOnDelivery) {
      this.#record(msg, 'crash');
      this.#tally.n.crashes++;
      sub.crashed = true;
      return false;
    }
    const id = typeof msg.properties.messageId === 'string' ? msg.properties.messageId : `no-id-${received}`;
    if (!(await this.#tally.work(workMsFor(opts, id), this.#hooks.signal))) return false;
    if (shouldFail(received, opts.failure, this.#random)) this.#fail(sub, msg, opts.failure!.action);
    else this.#processOne(sub, msg, id);
    return true;
  }

  /** A failure on purpose: nack or reject it (manual ack), or (close) leave the connection without acking. */
  #fail(sub: Subscription, msg: ConsumeMessage, action: FailureAction): void {
    sub.inProcess = false;
    this.#record(msg, action);
    if (!this.#opts.autoAck) {
      if (action === 'nack-requeue' || action === 'nack-drop') {
        sub.channel.nack(msg, false, action === 'nack-requeue');
        this.#tally.n.nacked++;
      } else if (action === 'reject-requeue' || action === 'reject-drop') {
        sub.channel.reject(msg, action === 'reject-requeue');
        this.#tally.n.rejected++;
      }
    }
    if (action === 'close') {
      this.#tally.n.crashes++;
      sub.crashed = true;
    }
  }

  /** Processed (or, by the idempotent store, skipped as a duplicate); manual ack: acked every ackEvery messages. */
  #processOne(sub: Subscription, msg: ConsumeMessage, id: string): void {
    const opts = this.#opts;
    const deliveryCount = numberHeader((msg.properties.headers as Record<string, unknown> | undefined)?.['x-delivery-count']) ?? 0;
    const outcome = opts.store ? opts.store.process(id, deliveryCount, () => undefined) : 'processed';
    this.#tally.processed(outcome);
    if (!opts.autoAck && sub.holdAck(msg) >= Math.max(1, opts.ackEvery)) this.#tally.n.acked += sub.flushAcks();
    sub.inProcess = false;
    // Idle counts from the end of the work: a slow message is activity, not silence.
    this.#tally.active();
    this.#record(msg, outcome === 'duplicate' ? 'duplicate-skipped' : 'processed');
  }

  /** Leaving this connection: on purpose (a crash), because the broker cancelled the consumer or closed its channel, because the run stops, or lost. */
  async #leave(sub: Subscription): Promise<void> {
    const hooks = this.#hooks;
    sub.leaving = true;
    if (sub.channelClosedBy !== null) {
      this.#tally.n.channelsClosed++;
      hooks.onEvent?.(`the broker closed the channel (${sub.channelClosedBy}); closing this connection and subscribing again`);
      await closeWithin(sub.connection);
      // As after a cancel: the returned message comes back on the next subscription.
      this.#tally.active();
      return;
    }
    if (sub.crashed) {
      hooks.onEvent?.('closing the connection without acking (simulated crash)');
      await closeWithin(sub.connection, 2_000);
      return;
    }
    if (sub.cancelled) {
      this.#tally.n.cancels++;
      const dropped = sub.inbox.length;
      hooks.onEvent?.(
        `the broker cancelled the consumer (a consumer timeout, or the queue deleted); closing this connection${dropped > 0 ? ` (${dropped} prefetched deliveries go back)` : ''} and subscribing again`,
      );
      await closeWithin(sub.connection);
      // The returned message comes back on the next subscription: the wait for it is not idleness.
      this.#tally.active();
    } else if (!sub.closed) {
      this.#tally.n.acked += sub.flushAcks();
      await closeChannelWithin(sub.channel, 5_000);
      await closeWithin(sub.connection);
    } else if (!this.#tally.stoppedBecause) {
      hooks.onEvent?.('connection lost; reconnecting');
    }
  }

  #record(msg: ConsumeMessage, outcome: DeliveryOutcome): void {
    const d = this.#tally.record(deliveryFacts(msg), outcome);
    this.#hooks.onDelivery?.(d);
  }
}

/** A delivery as AMQP 0-9-1 carries it: the message id, redelivered, x-delivery-count, x-acquired-count, x-death. */
export function deliveryFacts(msg: Pick<ConsumeMessage, 'properties' | 'fields'>): DeliveryFacts {
  const headers = msg.properties.headers as Record<string, unknown> | undefined;
  return {
    messageId: typeof msg.properties.messageId === 'string' ? msg.properties.messageId : undefined,
    redelivered: msg.fields.redelivered,
    deliveryCount: numberHeader(headers?.['x-delivery-count']),
    acquiredCount: numberHeader(headers?.['x-acquired-count']),
    death: deathSummary(headers),
  };
}
