import type { Channel } from 'amqplib';
import { closeWithin, type Connected, connectAny } from '../../client/amqp091/connect.js';
import type { QueueRef } from '../../cluster/broker/queue-leader-lookup.js';
import type { Context } from '../../context.js';
import { errorMessage, InterruptedError } from '../../errors.js';
import { lookAtQueue, stepWatch, type StuckDeliveries, type StuckLook, WATCH_START } from '../../measure/stuck-deliveries.js';
import { systemClock } from '../../util/retry.js';
import { callNode } from '../../cluster/broker/erl-call.js';
import { checkedOutCall, parseCheckedOut } from '../../cluster/broker/checked-out.js';

/**
 * The stuck-deliveries figure of one run (measure/stuck-deliveries.ts says what it means): a
 * small holder consumer, connected to the node that is faulted, takes a few messages with its
 * prefetch and never acknowledges them, so that the fault meets deliveries in flight. Once the
 * fault is healed, the holder lets go (its connection closed, if the fault left it open), and the
 * queue is looked at every LOOK_EVERY_MS until it holds nothing unacknowledged, or until the
 * deadline (--max-stuck). A quorum queue on rmq-bench's own cluster is judged by its own count,
 * read live in its member (checked-out.ts); otherwise by the management API's, only once the
 * queue has reported since the let-go (its figures lag). The holder's messages go back to the
 * queue and are read by the drain.
 */

/** How many messages the holder keeps unacknowledged through the fault. */
export const HOLDER_PREFETCH = 10;

const LOOK_EVERY_MS = 500;

/** The management API's name for the holder's connection: not one of the run's live channels once closed. */
export const HOLDER_CONNECTION_NAME = 'rmq-bench stuck-holder';

export class StuckWatch {
  private held = 0;

  private constructor(
    private readonly ctx: Context,
    private readonly ref: QueueRef,
    /** A quorum queue on rmq-bench's own cluster: its checked-out count is read in its member. */
    private readonly live: boolean,
    private conn: Connected | undefined,
  ) {}

  /**
   * The holder, consuming from the queue through urls[startIndex] (the leader's node). A holder
   * that cannot connect is logged, and the run goes on without it: the queue is still looked at
   * after the fault.
   */
  static async start(ctx: Context, ref: QueueRef, p: { urls: readonly string[]; startIndex: number; heartbeatS: number; live: boolean }): Promise<StuckWatch> {
    let conn: Connected | undefined;
    try {
      conn = await connectAny(p.urls, p.startIndex, {
        heartbeatS: p.heartbeatS,
        timeoutMs: 15_000,
        signal: ctx.signal,
        connectionName: HOLDER_CONNECTION_NAME,
      });
      // The fault may end this connection (a kill): that is what it is for.
      conn.connection.on('error', () => undefined);
      const watch = new StuckWatch(ctx, ref, p.live, conn);
      const ch: Channel = await conn.connection.createChannel();
      ch.on('error', () => undefined);
      await ch.prefetch(HOLDER_PREFETCH);
      await ch.consume(ref.queue, () => {
        watch.held++;
      });
      return watch;
    } catch (err) {
      if (err instanceof InterruptedError) throw err;
      ctx.log(`the stuck-deliveries holder could not consume from ${ref.queue}: ${errorMessage(err)}`);
      if (conn) await closeWithin(conn.connection);
      return new StuckWatch(ctx, ref, p.live, undefined);
    }
  }

  /** The holder lets go (idempotent). */
  async close(): Promise<void> {
    const c = this.conn;
    this.conn = undefined;
    if (c) await closeWithin(c.connection);
  }

  /** After the fault: the holder lets go, then the queue is watched until it holds nothing unacknowledged, or past deadlineMs. */
  async measure(deadlineMs: number): Promise<StuckDeliveries> {
    const { ctx, ref } = this;
    await this.close();
    ctx.progress.update(`stuck deliveries: the holder (${this.held} taken) let go; watching ${ref.queue} for up to ${Math.round(deadlineMs / 1000)} s`);
    const started = performance.now();
    let state = WATCH_START;
    let leader: string | null = null;
    for (;;) {
      const [look, liveHeld]: [StuckLook | undefined, number | null] = await Promise.all([this.look(), this.live ? this.liveHeld(leader) : null]);
      leader = look?.leader ?? leader;
      const elapsedMs = performance.now() - started;
      const step = stepWatch(state, { stats: look ?? null, liveHeld }, elapsedMs, deadlineMs);
      state = step.state;
      if (step.next !== 'wait') {
        return {
          queue: ref.queue,
          outcome: step.next,
          afterMs: Math.round(elapsedMs),
          deadlineMs,
          holderTook: this.held,
          mostHeld: state.mostHeld,
          holders: state.seen?.holders ?? [],
          leader: state.seen?.leader ?? look?.leader ?? null,
          liveCount: liveHeld !== null,
        };
      }
      await systemClock.sleep(LOOK_EVERY_MS, ctx.signal);
    }
  }

  /**
   * The quorum queue's own count of messages checked out, read in its member on the leader's node
   * (the management API's, else the first node's): null when it did not answer.
   */
  private async liveHeld(leader: string | null): Promise<number | null> {
    const { ctx, ref } = this;
    const nodes = ctx.config.nodes;
    const node = nodes.find((n) => n.name === leader) ?? nodes[0];
    if (!node) return null;
    try {
      const counts = parseCheckedOut(await callNode(await ctx.docker(), node.container, node.nodeName, checkedOutCall(ref), 5_000));
      return counts?.checkedOut ?? null;
    } catch (err) {
      if (err instanceof InterruptedError) throw err;
      ctx.log(`stuck deliveries: ${node.name} did not say what ${ref.queue} has checked out: ${errorMessage(err)}`);
      return null;
    }
  }

  /** One look through the management API; undefined when it did not answer. */
  private async look(): Promise<StuckLook | undefined> {
    const { ctx, ref } = this;
    try {
      const [queue, channels] = await Promise.all([
        ctx.management.queue(ref.vhost, ref.queue),
        ctx.management.get('/api/channels?columns=name,node,messages_unacknowledged'),
      ]);
      return lookAtQueue(queue.raw, Array.isArray(channels) ? channels : []);
    } catch (err) {
      ctx.log(`stuck deliveries: could not look at ${ref.queue}: ${errorMessage(err)}`);
      return undefined;
    }
  }
}

/**
 * fn (the producer under the fault) with the holder consuming, then the figure when measureIf
 * holds for fn's value (not after Ctrl+C); without a holder (a stream), null. The holder is
 * closed whatever happens.
 */
export async function withStuckWatch<T>(
  ctx: Context,
  ref: QueueRef,
  holder: { urls: readonly string[]; startIndex: number; heartbeatS: number; deadlineMs: number; live: boolean } | undefined,
  fn: () => Promise<T>,
  { measureIf }: { measureIf: (value: T) => boolean },
): Promise<{ value: T; stuck: StuckDeliveries | null }> {
  if (!holder) return { value: await fn(), stuck: null };
  const watch = await StuckWatch.start(ctx, ref, holder);
  try {
    const value = await fn();
    return { value, stuck: measureIf(value) ? await watch.measure(holder.deadlineMs) : null };
  } finally {
    await watch.close();
  }
}
