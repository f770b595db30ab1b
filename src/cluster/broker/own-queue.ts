import { errorMessage, UsageError } from '../../errors.js';
import { type BrokerInfo, requireBrokerFeature } from './broker-info.js';
import { retryUntil } from '../../util/retry.js';
import type { ClusterContext } from '../cluster-ctx.js';
import { type QueueLeadership, shortNodeName } from './queue-leadership.js';
import { HttpError } from './management.js';
import { BROKER_QUEUE_TYPE, exactPattern, mirrorPolicy, QUEUE_TYPE_TRAITS, type QueueType } from './queue-types.js';

/**
 * A queue a scenario declares for itself, of the type asked (queue-types.ts), and removes again:
 * a durable queue declared through the management API, for `mirrored` with its `ha-mode: all`
 * policy set first, so that the queue has a mirror on every node from the start. It is ready
 * once every member is online (a mirrored queue: every mirror synchronised). The scenario calls
 * remove() on every way out; a queue a killed run left is replaced at the next declare.
 */
interface OwnQueue {
  readonly name: string;
  readonly type: QueueType;
  /** The policy set for it (mirrored), or null. */
  readonly policy: string | null;
  /** Delete the queue and its policy; never throws (a line on the log instead). */
  remove(): Promise<void>;
  /** Empty it for the next run: purged, or (a stream, which cannot be purged) declared afresh. */
  empty(): Promise<void>;
}

/**
 * How long a declaration may take. A stream's waits on the stream coordinator, which tries each
 * of its members for 30 s; given up after the usual 3 s, the declaration would be sent to the next
 * node, which answers at once that the queue exists, while it has no writer yet (or never gets one).
 */
const DECLARE_TIMEOUT_MS = 65_000;

/** The policy's name for a queue: one per queue, so that two scenarios never share one. */
const mirrorPolicyName = (queue: string): string => `rmq-bench-mirror-${queue}`;

async function declareOwnQueue(
  ctx: ClusterContext,
  ref: { vhost: string; queue: string },
  type: QueueType,
  options: { readyTimeoutMs?: number } = {},
): Promise<OwnQueue> {
  const vh = encodeURIComponent(ref.vhost);
  const path = `/api/queues/${vh}/${encodeURIComponent(ref.queue)}`;
  const policy = type === 'mirrored' ? mirrorPolicyName(ref.queue) : null;
  const policyPath = policy === null ? null : `/api/policies/${vh}/${encodeURIComponent(policy)}`;
  const gone = (err: unknown): void => {
    if (!(err instanceof HttpError && err.status === 404)) throw err;
  };
  const remove = async (): Promise<void> => {
    await ctx.management.request('DELETE', path).catch((err: unknown) => {
      if (!(err instanceof HttpError && err.status === 404)) ctx.log(`could not delete queue ${ref.queue}: ${errorMessage(err)}`);
    });
    if (policyPath)
      await ctx.management.request('DELETE', policyPath).catch((err: unknown) => {
        if (!(err instanceof HttpError && err.status === 404)) ctx.log(`could not remove policy ${policy}: ${errorMessage(err)}`);
      });
  };
  const declare = async (): Promise<void> => {
    // A leftover of a killed run (perhaps of another type) goes first.
    await ctx.management.request('DELETE', path).catch(gone);
    try {
      if (policyPath) await ctx.management.request('PUT', policyPath, { body: mirrorPolicy(exactPattern(ref.queue)) });
      await ctx.management.request('PUT', path, {
        body: { durable: true, auto_delete: false, arguments: { 'x-queue-type': BROKER_QUEUE_TYPE[type] } },
        timeoutMs: DECLARE_TIMEOUT_MS,
      });
      const size = type === 'classic' ? 1 : ctx.config.nodes.length;
      const label = (q: QueueLeadership): string =>
        `${q.online.length} of ${q.members.length} members online${q.leader ? ` (leader ${shortNodeName(q.leader)})` : ', no leader'}`;
      await retryUntil(
        () => ctx.management.queue(ref.vhost, ref.queue),
        (q) => q.leader !== undefined && q.members.length >= size && q.online.length >= q.members.length,
        {
          timeoutMs: options.readyTimeoutMs ?? 30_000,
          intervalMs: 250,
          signal: ctx.signal,
          describe: (last) => `${type} queue ${ref.queue} not ready: ${last.value ? label(last.value) : errorMessage(last.error)}`,
          hint: type === 'mirrored' ? 'mirrored queues need every node running (rmq-bench cluster status)' : "see 'rmq-bench cluster status'",
        },
      );
    } catch (err) {
      await remove();
      throw err;
    }
  };
  await declare();
  const empty = async (): Promise<void> => {
    if (QUEUE_TYPE_TRAITS[type].readByOffset) await declare();
    else await purgeQueue(ctx, ref);
  };
  return { name: ref.queue, type, policy, remove, empty };
}

/** Every message of the queue removed (a stream cannot be purged: see OwnQueue.empty). */
export async function purgeQueue(ctx: ClusterContext, ref: { vhost: string; queue: string }): Promise<void> {
  await ctx.management.request('DELETE', `/api/queues/${encodeURIComponent(ref.vhost)}/${encodeURIComponent(ref.queue)}/contents`);
}

/**
 * The queue a leader-fault scenario runs against, by --queue-type: its own queue of that type
 * when the user named none (declared here; the caller removes it on every way out), else the
 * user's queue, refused at once when it is of another type. A mirrored queue is refused on a
 * broker without them (4.0 and later), before anything is declared.
 */
export async function queueForRun(
  ctx: ClusterContext & { broker(): Promise<BrokerInfo | null> },
  ref: { vhost: string; queue: string },
  type: QueueType,
  own: boolean,
): Promise<OwnQueue | null> {
  if (type === 'mirrored') await requireBrokerFeature(ctx, 'mirrored-queues', '--queue-type mirrored');
  if (own) {
    ctx.progress.start(`declaring the ${type} queue ${ref.queue}`);
    return declareOwnQueue(ctx, ref, type);
  }
  if (QUEUE_TYPE_TRAITS[type].readByOffset)
    throw new UsageError(`--queue-type ${type} runs against a ${type} rmq-bench declares afresh for each run: leave --queue out`, {
      hint: `a ${type} cannot be purged, and a run reads it from its first message`,
    });
  const q = await ctx.management.queue(ref.vhost, ref.queue);
  if (q.type !== BROKER_QUEUE_TYPE[type]) throw new UsageError(`queue '${ref.queue}' is a ${q.type} queue, not ${type} (--queue-type ${type})`);
  if (type === 'mirrored' && q.members.length < 2)
    throw new UsageError(`queue '${ref.queue}' has no mirrors: a mirrored queue needs an 'ha-mode' policy`, {
      hint: 'leave --queue out: rmq-bench then declares a mirrored queue of its own',
    });
  return null;
}
