import type { Connection, Delivery, EventContext, Message, Receiver } from 'rhea';
import { queueAddress } from '../../client/amqp10/connection.js';
import { BrokerUnavailableError, DeadlineError, InterruptedError, errorMessage } from '../../errors.js';
import { systemClock } from '../../util/retry.js';
import type { Action10, SeenDelivery } from './delivery-limit-plan.js';

/**
 * delivery-limit-demo over AMQP 1.0: one receiver link a trial on /queues/<queue> (credit 1 at a
 * time, autoaccept off, rcv-settle-mode first), each delivery settled with the trial's outcome.
 * The link is closed, and the broker's detach awaited, before the trial looks at the queue: the
 * broker reads the disposition before the detach, and returns anything still unsettled on it.
 */

/** How long the broker may take to attach or detach the link. */
const LINK_TIMEOUT_MS = 10_000;
/** How often the wait for a delivery looks again. */
const POLL_MS = 20;

/** One AMQP 1.0 delivery as the broker sent it: the header's delivery-count preferred, the x-delivery-count annotation beside it. Pure. */
export function seenOf10(message: Pick<Message, 'delivery_count' | 'first_acquirer' | 'message_annotations'>): SeenDelivery {
  const header = typeof message.delivery_count === 'number' ? message.delivery_count : null;
  const raw: unknown = (message.message_annotations as Record<string, unknown> | undefined)?.['x-delivery-count'];
  const annotation = typeof raw === 'number' ? raw : null;
  return {
    deliveryCount: header ?? annotation,
    redelivered: message.first_acquirer === false,
    from: header !== null ? 'header' : annotation !== null ? 'annotation' : null,
    annotation,
  };
}

/**
 * Settle one delivery with the action's outcome. rhea's release() with arguments sends modified,
 * and without them released; modified() always sends modified, with the fields as given.
 */
export function settle10(delivery: Pick<Delivery, 'accept' | 'release' | 'reject' | 'modified'>, action: Action10): void {
  if (action === 'amqp10:accepted') delivery.accept();
  else if (action === 'amqp10:released') delivery.release();
  else if (action === 'amqp10:rejected') delivery.reject();
  else
    delivery.modified({
      delivery_failed: action === 'amqp10:modified-failed',
      undeliverable_here: action === 'amqp10:modified-undeliverable',
    });
}

/** A receiver link on one queue, opened for one trial; close() on every way out. */
export class Receiver10 {
  private readonly arrived: EventContext[] = [];
  /** Set during loop(): each delivery is handed to it instead of queued for next(). */
  private onDelivery: ((ctx: EventContext) => void) | undefined;
  private failure: Error | undefined;
  private closing = false;
  private readonly onDisconnected = (ctx: EventContext): void =>
    this.fail(`the AMQP 1.0 connection dropped: ${ctx.error ? errorMessage(ctx.error) : 'disconnected'}`);

  private constructor(
    private readonly connection: Connection,
    private readonly receiver: Receiver,
    private readonly queue: string,
  ) {
    receiver.on('message', (ctx: EventContext) => (this.onDelivery ? this.onDelivery(ctx) : this.arrived.push(ctx)));
    receiver.on('receiver_error', (ctx: EventContext) => this.fail(`the broker detached the link on ${queue}: ${errorMessage(ctx.receiver?.error)}`));
    receiver.on('receiver_close', () => {
      if (!this.closing) this.fail(`the broker detached the link on ${queue}`);
    });
    connection.on('disconnected', this.onDisconnected);
  }

  private fail(why: string): void {
    this.failure ??= new BrokerUnavailableError(why);
  }

  /** Attach the link; resolves on the broker's attach, within LINK_TIMEOUT_MS. */
  static async open(connection: Connection, queue: string, signal: AbortSignal): Promise<Receiver10> {
    const receiver = connection.open_receiver({
      source: { address: queueAddress(queue) },
      credit_window: 0,
      autoaccept: false,
      rcv_settle_mode: 0,
    });
    const r = new Receiver10(connection, receiver, queue);
    try {
      await r.until(() => receiver.is_open(), LINK_TIMEOUT_MS, signal, `the broker did not attach a link to ${queueAddress(queue)}`);
    } catch (err) {
      await r.close();
      throw err;
    }
    return r;
  }

  /** Grant one credit and wait for the delivery, or null after waitMs. */
  async next(waitMs: number, signal: AbortSignal): Promise<EventContext | null> {
    this.receiver.add_credit(1);
    try {
      await this.until(() => this.arrived.length > 0, waitMs, signal);
    } catch (err) {
      if (err instanceof DeadlineError) return null;
      throw err;
    }
    return this.arrived.shift() ?? null;
  }

  /**
   * For windowMs, settle each delivery at once with the action and grant the next credit (one at
   * a time): the deliveries counted in the window and the time it took. A delivery after the
   * window is settled the same way, not counted, and given no more credit.
   */
  async loop(action: Action10, windowMs: number, signal: AbortSignal): Promise<{ deliveries: number; elapsedMs: number }> {
    let deliveries = 0;
    let open = true;
    this.onDelivery = (ctx) => {
      if (ctx.delivery) settle10(ctx.delivery, action);
      if (!open) return;
      deliveries++;
      this.receiver.add_credit(1);
    };
    const started = performance.now();
    this.receiver.add_credit(1);
    try {
      // Nothing ends the wait but the window, a link failure or the signal.
      await this.until(() => false, windowMs, signal);
    } catch (err) {
      if (!(err instanceof DeadlineError)) throw err;
    } finally {
      open = false;
    }
    return { deliveries, elapsedMs: performance.now() - started };
  }

  /** Detach the link and wait for the broker's detach (the connection stays open for the next trial). */
  async close(): Promise<void> {
    this.closing = true;
    try {
      if (this.receiver.is_open() && this.connection.is_open()) {
        this.receiver.close();
        await this.until(
          () => this.receiver.is_closed() || !this.connection.is_open(),
          LINK_TIMEOUT_MS,
          new AbortController().signal,
          `the broker did not detach the link on ${this.queue}`,
        );
      }
    } finally {
      this.connection.removeListener('disconnected', this.onDisconnected);
    }
  }

  /** Wait until done() holds: a link or connection failure throws it, and so does the deadline (a DeadlineError naming what). */
  private async until(done: () => boolean, waitMs: number, signal: AbortSignal, what = 'no delivery'): Promise<void> {
    const deadline = performance.now() + waitMs;
    for (;;) {
      if (done()) return;
      if (this.failure && !this.closing) throw this.failure;
      if (signal.aborted) throw new InterruptedError();
      if (performance.now() >= deadline) throw new DeadlineError(`${what} within ${waitMs} ms`, waitMs);
      await systemClock.sleep(POLL_MS, signal).catch(() => undefined);
    }
  }
}
