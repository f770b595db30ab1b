import type { Connection, Delivery, EventContext, Message, Receiver } from 'rhea';
import { NotFoundError, errorMessage } from '../../errors.js';
import { systemClock } from '../../util/retry.js';
import { closeWithin10, connectAny10 } from './connection.js';
import type { Settlement10 } from './consumer-failures10.js';

/**
 * One AMQP 1.0 connection with one receiver link, as the consumer uses it: the deliveries waiting
 * to be processed, the accepts not sent yet, and the link credit. The credit is explicit (rhea's
 * credit_window 0): the link keeps `creditWindow` deliveries outstanding, what the broker may
 * still send plus what is held here unsettled, and is topped up as deliveries are settled (or,
 * pre-settled, as they arrive). That is the 0-9-1 prefetch: the broker never has more than
 * `creditWindow` unsettled deliveries out to this consumer.
 */

/** One delivery as rhea hands it over. */
export interface Received10 {
  readonly message: Message;
  readonly delivery: Delivery;
}

interface OpenReceiveOptions {
  urls: readonly string[];
  startIndex: number;
  /** The queue's address (queueAddress). */
  address: string;
  /** Deliveries outstanding at most (the prefetch). */
  creditWindow: number;
  /** The broker sends every delivery settled (snd_settle_mode 1): at-most-once, the 0-9-1 autoack. */
  preSettled: boolean;
  heartbeatS: number;
  reconnectTimeoutMs: number;
  signal: AbortSignal;
  /** A delivery went into the inbox. */
  onDelivery: () => void;
}

/** How long the broker may take to attach the link. */
const ATTACH_TIMEOUT_MS = 10_000;

/** Connect to the first URL that answers, attach a receiver to the queue, grant its credit. A queue that does not exist is a NotFoundError. */
export async function openReceiveLink(o: OpenReceiveOptions): Promise<ReceiveLink> {
  const c = await connectAny10(o.urls, o.startIndex, { heartbeatS: o.heartbeatS, timeoutMs: o.reconnectTimeoutMs, signal: o.signal });
  c.connection.on('error', () => undefined);
  const receiver = c.connection.open_receiver({
    source: { address: o.address },
    credit_window: 0,
    autoaccept: false,
    snd_settle_mode: o.preSettled ? 1 : 0,
    rcv_settle_mode: 0,
  });
  const link = new ReceiveLink(c.connection, receiver, c.url, c.index, o);
  try {
    await attached(c.connection, receiver, o.address);
  } catch (err) {
    link.markClosed('attach failed');
    await closeWithin10(c.connection);
    throw err;
  }
  link.topUp();
  return link;
}

export class ReceiveLink {
  /** Deliveries are processed one at a time, in order: a local FIFO fed by rhea. */
  readonly inbox: Received10[] = [];
  /** The connection or the link went: no more deliveries, nothing more to settle here. */
  closed = false;
  /** Why it closed (for the consumer's event line). */
  closedBecause = '';
  /** The broker detached the link (the queue deleted, or a consumer timeout): no deliveries here, subscribe again. */
  detachedByBroker = false;
  /** Left on purpose: --nack, or --on-failure close. */
  crashed = false;
  /** A delivery taken from the inbox and not settled yet. */
  inProcess = false;
  readonly #creditWindow: number;
  readonly #preSettled: boolean;
  readonly #onDelivery: () => void;
  readonly #closedP: Promise<void>;
  #resolveClosed!: () => void;
  #wake: (() => void) | undefined;
  /** Processed, their accepts waiting for one disposition (rhea sends a run of accepts as one range). */
  #unaccepted: Delivery[] = [];
  /** Credit granted that the broker has not used yet. */
  #credit = 0;
  #topUpScheduled = false;

  constructor(
    readonly connection: Connection,
    readonly receiver: Receiver,
    readonly url: string,
    readonly index: number,
    o: Pick<OpenReceiveOptions, 'creditWindow' | 'preSettled' | 'onDelivery'>,
  ) {
    this.#creditWindow = o.creditWindow;
    this.#preSettled = o.preSettled;
    this.#onDelivery = o.onDelivery;
    this.#closedP = new Promise<void>((r) => (this.#resolveClosed = r));
    receiver.on('message', (ctx: EventContext) => this.#onMessage(ctx));
    receiver.on('receiver_error', (ctx: EventContext) => this.#detached(`link error: ${amqpErrorText(ctx.receiver?.error)}`));
    receiver.on('receiver_close', () => this.#detached('the broker detached the link'));
    connection.on('connection_error', (ctx: EventContext) => this.markClosed(`connection error: ${amqpErrorText(ctx.connection.error)}`));
    connection.on('connection_close', () => this.markClosed('the broker closed the connection'));
    connection.on('disconnected', (ctx: EventContext) => this.markClosed(ctx.error ? errorMessage(ctx.error) : 'disconnected'));
  }

  /** No more deliveries here: a waitForDelivery ends. */
  markClosed(why: string): void {
    if (this.closed) return;
    this.closed = true;
    this.closedBecause = why;
    this.#resolveClosed();
  }

  /** Deliveries held by this consumer: waiting, processed but not accepted yet, and the one in process. */
  get held(): number {
    return this.inbox.length + this.#unaccepted.length + (this.inProcess ? 1 : 0);
  }

  /** Until a delivery arrives, the link closes, or timeoutMs has passed. */
  async waitForDelivery(timeoutMs: number): Promise<void> {
    await Promise.race([new Promise<void>((r) => (this.#wake = r)), this.#closedP, systemClock.sleep(timeoutMs)]);
    this.#wake = undefined;
  }

  /** A processed delivery: its accept waits for the next flushAccepts. Returns how many wait. */
  holdAccept(delivery: Delivery): number {
    this.#unaccepted.push(delivery);
    return this.#unaccepted.length;
  }

  /** Accept the deliveries held (none once the link is gone: the broker redelivers them): how many were accepted. */
  flushAccepts(): number {
    const held = this.#unaccepted;
    this.#unaccepted = [];
    if (this.closed || held.length === 0) return 0;
    for (const d of held) d.accept();
    this.topUp();
    return held.length;
  }

  /**
   * Settle one delivery with a failure's outcome, in a disposition of its own (see
   * dispositionsWritten); false when the link is gone (nothing sent).
   */
  async settle(delivery: Delivery, s: Settlement10): Promise<boolean> {
    if (this.closed || s.outcome === null) return false;
    await dispositionsWritten();
    if (this.closed) return false;
    if (s.outcome === 'released') delivery.release();
    else if (s.outcome === 'rejected') delivery.reject({ condition: 'amqp:internal-error', description: 'rmq-bench: a simulated failure' });
    else delivery.modified({ delivery_failed: s.deliveryFailed, undeliverable_here: s.undeliverableHere });
    await dispositionsWritten();
    this.topUp();
    return true;
  }

  /**
   * Release what is still in the inbox (taken from the queue, never worked on): back to the queue,
   * not a failed delivery. Returns how many. Pre-settled ones are the broker's no more: gone.
   */
  async releaseInbox(): Promise<number> {
    const left = this.inbox.splice(0);
    if (this.closed || this.#preSettled || left.length === 0) return 0;
    // The accepts before them in a disposition of their own (see dispositionsWritten).
    await dispositionsWritten();
    if (this.closed) return 0;
    for (const r of left) r.delivery.release();
    return left.length;
  }

  /** Detach the link (the broker answers once it has taken the settlements before it), within timeoutMs. */
  async detachWithin(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.receiver.once('receiver_close', () => {
        clearTimeout(timer);
        resolve();
      });
      void this.#closedP.then(() => {
        clearTimeout(timer);
        resolve();
      });
      try {
        this.receiver.close();
      } catch {
        resolve();
      }
    });
  }

  /**
   * Keep creditWindow outstanding: the credit not used yet plus what is held unsettled. Once per
   * turn of the event loop, so that a run of settlements costs one flow frame.
   */
  topUp(): void {
    if (this.#topUpScheduled) return;
    this.#topUpScheduled = true;
    setImmediate(() => {
      this.#topUpScheduled = false;
      if (this.closed) return;
      const unsettled = this.#preSettled ? 0 : this.held;
      const deficit = this.#creditWindow - this.#credit - unsettled;
      if (deficit <= 0) return;
      this.#credit += deficit;
      this.receiver.add_credit(deficit);
    });
  }

  #onMessage(ctx: EventContext): void {
    const { message, delivery } = ctx;
    if (!message || !delivery) return;
    if (this.#credit > 0) this.#credit--;
    // A pre-settled delivery: settled here too, so that rhea forgets it (its session window counts the ones it keeps).
    if (this.#preSettled || delivery.remote_settled) {
      delivery.update(true);
      this.topUp();
    }
    this.inbox.push({ message, delivery });
    this.#onDelivery();
    this.#wake?.();
  }

  #detached(why: string): void {
    if (this.closed) return;
    this.detachedByBroker = true;
    this.markClosed(why);
  }
}

/**
 * Until rhea has written the dispositions asked for so far. rhea (3.0.5, write_dispositions in
 * session.js) sends the settlements of one turn as ranges, and puts the delivery after a range of
 * one into that range whatever its outcome: an accept followed by a release would release both
 * (or accept both). rhea writes on process.nextTick, queued at the first settlement: a tick
 * queued after it runs once that is done.
 */
function dispositionsWritten(): Promise<void> {
  return new Promise<void>((resolve) => process.nextTick(resolve));
}

/** An AMQP 1.0 error (a link's or the connection's) as text: its condition and description. */
function amqpErrorText(error: unknown): string {
  const e = error as { condition?: unknown; description?: unknown } | undefined;
  const condition = typeof e?.condition === 'string' ? e.condition : errorMessage(error);
  return typeof e?.description === 'string' && e.description !== '' ? `${condition}: ${e.description}` : condition;
}

/**
 * The broker's attach, or its refusal (amqp:not-found is for good: NotFoundError), within
 * ATTACH_TIMEOUT_MS. RabbitMQ refuses a link with an attach whose source is null, then a detach
 * with the error: that attach is not an open.
 */
function attached(connection: Connection, receiver: Receiver, address: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`the broker did not attach a link to ${address} within ${ATTACH_TIMEOUT_MS} ms`)), ATTACH_TIMEOUT_MS);
    const done = (err?: Error): void => {
      clearTimeout(timer);
      receiver.removeListener('receiver_open', opened);
      receiver.removeListener('receiver_error', refused);
      receiver.removeListener('receiver_close', refused);
      connection.removeListener('disconnected', dropped);
      if (err) reject(err);
      else resolve();
    };
    const opened = (ctx: EventContext): void => {
      // A refusal's source is an AMQP null (rhea hands it over as a typed value), with no address.
      const source = (ctx.receiver as unknown as { remote?: { attach?: { source?: { address?: unknown } } } } | undefined)?.remote?.attach?.source;
      if (typeof source?.address === 'string') done();
    };
    const refused = (ctx: EventContext): void => {
      const e = ctx.receiver?.error as { condition?: unknown } | undefined;
      const text = e ? amqpErrorText(e) : 'link refused';
      done(e?.condition === 'amqp:not-found' ? new NotFoundError(`cannot consume from ${address}: ${text}`) : new Error(text));
    };
    const dropped = (ctx: EventContext): void => done(new Error(ctx.error ? errorMessage(ctx.error) : 'disconnected while attaching'));
    receiver.on('receiver_open', opened);
    receiver.on('receiver_error', refused);
    receiver.on('receiver_close', refused);
    connection.on('disconnected', dropped);
  });
}
