import { BrokerUnavailableError, NotFoundError } from '../../errors.js';
import type { ClusterContext } from '../cluster-ctx.js';
import type { QueueLeadership } from './queue-leadership.js';

/** A queue by vhost and name. */
export interface QueueRef {
  vhost: string;
  queue: string;
}

/**
 * The queue's leadership now; throws when the queue is unknown, of a type without a leader, or
 * leaderless. A classic queue's leader is its node (a mirrored queue's master); a stream's, its
 * writer.
 */
export async function currentLeader(ctx: ClusterContext, ref: QueueRef, exclude?: readonly string[]): Promise<QueueLeadership & { leader: string }> {
  const q = await ctx.management.queue(ref.vhost, ref.queue, exclude);
  if (q.type !== 'quorum' && q.type !== 'classic' && q.type !== 'stream')
    throw new NotFoundError(`queue '${ref.queue}' is a ${q.type} queue; leader faults need a quorum, classic (mirrored) queue or a stream`);
  if (q.leader === undefined) throw new BrokerUnavailableError(`queue '${ref.queue}' has no leader right now`);
  return q as QueueLeadership & { leader: string };
}
