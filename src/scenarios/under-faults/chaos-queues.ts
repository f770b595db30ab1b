import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import type { Endpoints } from '../../client/amqp091/locate.js';
import { currentLeader, type QueueRef } from '../../cluster/broker/queue-leader-lookup.js';
import { BROKER_QUEUE_TYPE, exactPattern, mirrorPolicy } from '../../cluster/broker/queue-types.js';
import { shortNodeName } from '../../cluster/broker/queue-leadership.js';
import type { Context } from '../../context.js';
import { errorMessage } from '../../errors.js';
import { retryUntil, systemClock } from '../../util/retry.js';
import { type ChaosOptions, type DrainEnd, drainLook, type LeftInQueue, STUCK_UNACKED_MS } from './chaos-plan.js';

/**
 * chaos's queues (quorum by default): their names, their declaration with leaders spread over the nodes, their
 * leaders, the drain at the end, and their removal.
 */

/** The names of one run's queues. */
export interface ChaosQueues {
  /** The confirming producers' queues: queuePrefix.1 .. queuePrefix.N. */
  names: string[];
  /** names, and the control queue last when there is one. */
  all: string[];
  /** names as references for the nemesis. */
  refs: QueueRef[];
}

const queueName = (opts: ChaosOptions, i: number): string => `${opts.queuePrefix}.${i + 1}`;
export const controlQueue = (opts: ChaosOptions): string => `${opts.queuePrefix}.control`;

export function chaosQueues(opts: ChaosOptions): ChaosQueues {
  const names = Array.from({ length: opts.queues }, (_, i) => queueName(opts, i));
  const all = opts.control ? [...names, controlQueue(opts)] : names;
  const refs: QueueRef[] = names.map((queue) => ({ vhost: opts.vhost, queue }));
  return { names, all, refs };
}

/** The policy that mirrors chaos's queues (--queue-type mirrored). */
const mirrorPolicyPath = (opts: ChaosOptions): string =>
  `/api/policies/${encodeURIComponent(opts.vhost)}/${encodeURIComponent(`rmq-bench-mirror-${opts.queuePrefix}`)}`;

/**
 * Fresh queues of opts.queueType, each declared through a connection to node i (mod the node
 * count) with the client-local leader locator (a classic queue's default), so that their leaders
 * start spread over the nodes; then awaited until every member is online (a mirrored queue: a
 * mirror on every node, in sync). A mirrored queue's `ha-mode: all` policy is set first.
 */
export async function declareQueues(ctx: Context, opts: ChaosOptions, endpoints: Endpoints, names: readonly string[]): Promise<void> {
  if (opts.queueType === 'mirrored') await ctx.management.request('PUT', mirrorPolicyPath(opts), { body: mirrorPolicy(exactPattern(...names)) });
  const args =
    opts.queueType === 'quorum'
      ? { 'x-queue-type': 'quorum', 'x-queue-leader-locator': 'client-local' }
      : { 'x-queue-type': BROKER_QUEUE_TYPE[opts.queueType] };
  const size = opts.queueType === 'mirrored' ? ctx.config.nodes.length : 1;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    await ctx.management.request('DELETE', `/api/queues/${encodeURIComponent(opts.vhost)}/${encodeURIComponent(name)}`).catch((err: unknown) => {
      if (!/404|not found/i.test(errorMessage(err))) throw err;
    });
    const c = await connectAny(endpoints.urls, i % endpoints.urls.length, { heartbeatS: opts.heartbeatS, timeoutMs: 15_000, signal: ctx.signal });
    try {
      const ch = await c.connection.createChannel();
      await ch.assertQueue(name, { durable: true, arguments: args });
      await ch.close();
    } finally {
      await closeWithin(c.connection);
    }
  }
  for (const name of names) {
    await retryUntil(
      () => currentLeader(ctx, { vhost: opts.vhost, queue: name }),
      (q) => q.online.length >= q.members.length && q.members.length >= size,
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        signal: ctx.signal,
        describe: (l) =>
          `queue '${name}' not ready (${l.value ? `${l.value.online.length} of ${l.value.members.length} members online` : errorMessage(l.error)})`,
      },
    );
  }
}

export async function deleteQueues(ctx: Context, opts: ChaosOptions, names: readonly string[]): Promise<void> {
  for (const name of names)
    await ctx.management.request('DELETE', `/api/queues/${encodeURIComponent(opts.vhost)}/${encodeURIComponent(name)}`).catch((err: unknown) => {
      ctx.log(`could not delete queue ${name}: ${errorMessage(err)}`);
    });
  if (opts.queueType === 'mirrored')
    await ctx.management.request('DELETE', mirrorPolicyPath(opts)).catch((err: unknown) => ctx.log(`could not remove the mirror policy: ${errorMessage(err)}`));
}

async function leaderOrNull(ctx: Context, ref: QueueRef): Promise<string | null> {
  try {
    return shortNodeName((await currentLeader(ctx, ref)).leader);
  } catch {
    return null;
  }
}

/** Each queue's leader now (short name), asked of all of them at once; null where none answered. */
export function leadersOf(ctx: Context, vhost: string, queues: readonly string[]): Promise<(string | null)[]> {
  return Promise.all(queues.map((queue) => leaderOrNull(ctx, { vhost, queue })));
}

/** The drain's deadline: past it, what is still queued counts as unread. */
const DRAIN_DEADLINE_MS = 300_000;

/** A queue's figures from its management record; a queue that did not answer counts as empty. */
function leftIn(queue: string, raw: Record<string, unknown>): LeftInQueue {
  const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    queue,
    ready: num(raw.messages_ready),
    unacknowledged: num(raw.messages_unacknowledged),
    consumersCounted: num(raw.consumers),
    consumersListed: Array.isArray(raw.consumer_details) ? raw.consumer_details.length : 0,
  };
}

/**
 * The end of the drain: nothing delivered for drainIdleMs and every queue empty; or messages held
 * unacknowledged by consumers that receive nothing for STUCK_UNACKED_MS (seen after partitions: a
 * quorum queue counting a consumer more than the channels it lists, its messages held for it);
 * or a 5-minute deadline. What is still queued then counts as unread. Empty by the management API
 * (ready and unacked) and by a passive declare on a node that answers (ready, as the queue's
 * leader counts them): after a quorum loss the API's statistics can say a queue is empty for
 * many seconds while it holds hundreds of messages.
 */
export async function drained(
  ctx: Context,
  opts: ChaosOptions,
  endpoints: Endpoints,
  queues: readonly string[],
  lastDeliveryAt: () => number,
): Promise<DrainEnd> {
  const started = performance.now();
  const deadline = started + DRAIN_DEADLINE_MS;
  let heldSince: number | undefined;
  let left: LeftInQueue[] = [];
  const end = (ended: DrainEnd['ended']): DrainEnd => ({
    ended,
    waitedMs: Math.round(performance.now() - started),
    left: ended === 'empty' ? [] : left.filter((q) => q.ready + q.unacknowledged > 0),
  });
  while (performance.now() < deadline) {
    await systemClock.sleep(500, ctx.signal);
    const idle = performance.now() - lastDeliveryAt() >= opts.drainIdleMs;
    if (!idle) {
      heldSince = undefined;
      continue;
    }
    left = await Promise.all(queues.map(async (q) => leftIn(q, (await ctx.management.queue(opts.vhost, q).catch(() => undefined))?.raw ?? {})));
    // The passive declare only when the management API has nothing ready: it is what settles 'empty' and 'held'.
    const look = drainLook(left, left.every((q) => q.ready === 0) ? await readyByDeclare(ctx, opts, endpoints, queues) : -1, idle);
    if (look === 'empty') return end('empty');
    if (look !== 'held') {
      heldSince = undefined;
      continue;
    }
    heldSince ??= performance.now();
    if (performance.now() - heldSince >= STUCK_UNACKED_MS) {
      const held = left.filter((q) => q.unacknowledged > 0);
      ctx.log(
        `the drain ended with ${held.map((q) => `${q.unacknowledged} unacknowledged in ${q.queue}`).join(', ')} and nothing delivered for ${Math.round(STUCK_UNACKED_MS / 1000)} s: the broker holds them for consumers that do not receive them (${held.map((q) => `${q.queue} counts ${q.consumersCounted} consumers, ${q.consumersListed} on live channels`).join('; ')}); a confirmed message among them that was never read counts as lost`,
      );
      return end('stuck');
    }
  }
  ctx.log('the queues were not empty after 5 minutes of draining: what is still queued counts as unread');
  return end('deadline');
}

/** The queues' ready messages by a passive declare on the first node that answers; unknown (-1) when none answered. */
async function readyByDeclare(ctx: Context, opts: ChaosOptions, endpoints: Endpoints, queues: readonly string[]): Promise<number> {
  try {
    const c = await connectAny(endpoints.urls, 0, { heartbeatS: opts.heartbeatS, timeoutMs: 10_000, signal: ctx.signal });
    c.connection.on('error', () => undefined);
    try {
      const ch = await c.connection.createChannel();
      let ready = 0;
      for (const q of queues) ready += (await ch.checkQueue(q)).messageCount;
      return ready;
    } finally {
      await closeWithin(c.connection);
    }
  } catch (err) {
    ctx.log(`could not count the queues with a passive declare: ${errorMessage(err)}`);
    return -1;
  }
}
