import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { errorMessage } from '../../errors.js';
import { systemClock } from '../../util/retry.js';

/**
 * One connection's subscription: the channel, the deliveries waiting to be processed, the acks not
 * sent yet. The connection's close listener is in place from the start (before the channel opens).
 */
export class Subscription {
  /** Opened after the close listener (openChannel). */
  channel!: Channel;
  /** The connection closed, or the broker cancelled the consumer: no more deliveries here. */
  closed = false;
  /** The broker cancelled this consumer: no more deliveries, and no acks on this channel (see ConsumerRun.#onMessage in consumer.ts). */
  cancelled = false;
  /**
   * The broker closed the channel while the connection stays (its reason, "PRECONDITION_FAILED -
   * delivery acknowledgement on channel 1 timed out", as a consumer timeout does before 4.3), or
   * null: no more deliveries here, and no acks (see openChannel).
   */
  channelClosedBy: string | null = null;
  /** ConsumerRun is leaving this connection itself: a channel closing now is its own doing. */
  leaving = false;
  /** Left on purpose: --nack, or --on-failure close. */
  crashed = false;
  /** Deliveries are processed one at a time, in order: a local FIFO fed by amqplib. */
  readonly inbox: ConsumeMessage[] = [];
  /** A message taken from the inbox and not yet settled. */
  inProcess = false;
  readonly #closedP: Promise<void>;
  #resolveClosed!: () => void;
  #wake: (() => void) | undefined;
  /** The last message processed and not acked yet: one multiple-ack covers it and those before it. */
  #unacked: ConsumeMessage | undefined;
  #unackedCount = 0;

  constructor(readonly connection: ChannelModel) {
    connection.on('error', () => undefined);
    this.#closedP = new Promise<void>((r) => (this.#resolveClosed = r));
    connection.on('close', () => this.markClosed());
  }

  /**
   * The channel. The broker closing it alone (its channel.close, with a reason) ends the
   * subscription as a cancel does, and onClosedByBroker gets the reason: a consumer timeout
   * before 4.3 closes the channel (PRECONDITION_FAILED), and the connection stays open with
   * nothing to consume on it.
   */
  async openChannel(onClosedByBroker: (reason: string) => void): Promise<Channel> {
    const ch = await this.connection.createChannel();
    this.channel = ch;
    let serverReason: string | null = null;
    ch.on('error', (err: unknown) => {
      const text = errorMessage(err);
      if (/closed by server/i.test(text)) serverReason = text.replace(/^Channel closed by server: /, '');
    });
    ch.on('close', () => {
      if (this.leaving || this.closed || serverReason === null) return;
      this.channelClosedBy = serverReason;
      this.markClosed();
      onClosedByBroker(serverReason);
    });
    return ch;
  }

  /** No more deliveries on this connection: a waitForDelivery ends. */
  markClosed(): void {
    this.closed = true;
    this.#resolveClosed();
  }

  /** Deliveries held by this consumer: waiting, processed but unacked, and the one in process. */
  get held(): number {
    return this.inbox.length + this.#unackedCount + (this.inProcess ? 1 : 0);
  }

  /** A delivery arrived: end the wait for one. */
  wake(): void {
    this.#wake?.();
  }

  /** Until a delivery arrives, the connection closes, or timeoutMs has passed. */
  async waitForDelivery(timeoutMs: number): Promise<void> {
    await Promise.race([new Promise<void>((r) => (this.#wake = r)), this.#closedP, systemClock.sleep(timeoutMs)]);
    this.#wake = undefined;
  }

  /** msg processed: its ack waits for the next flushAcks. Returns how many wait. */
  holdAck(msg: ConsumeMessage): number {
    this.#unacked = msg;
    return ++this.#unackedCount;
  }

  /** One multiple-ack for the messages held (none once the connection is closed): how many it acked. */
  flushAcks(): number {
    let n = 0;
    if (this.#unacked && !this.closed) {
      this.channel.ack(this.#unacked, true);
      n = this.#unackedCount;
    }
    this.#unacked = undefined;
    this.#unackedCount = 0;
    return n;
  }
}
