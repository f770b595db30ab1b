import { NotFoundError, errorMessage } from '../errors.js';
import { retryUntil } from '../util/retry.js';
import type { ClusterContext } from '../cluster/cluster-ctx.js';
import type { AppliedFault, FaultKind, FaultOptions } from './injector.js';
import { shortNodeName, type QueueLeadership } from '../cluster/queue-leadership.js';
import { injectQuorumLoss } from './quorum-loss.js';
import { currentLeader, type QueueRef } from '../cluster/queue-leader-lookup.js';
import { injectMembership } from './membership.js';
import { startRollingRestart } from './rolling-restart.js';

/** A rolling restart's deadline for each node to be back and the cluster whole again. */
export const ROLLING_NODE_TIMEOUT_MS = 120_000;

/** A fault on a queue's leader, as applied: the first step of the sequence in leader-fault-run.ts. */
export interface LeaderFault {
  /** Short name (container) of the faulted leader: rabbit2. */
  oldLeader: string;
  /** Other nodes faulted with it (quorum-loss: the follower killed too). */
  alsoFaulted: string[];
  before: QueueLeadership & { leader: string };
  fault: AppliedFault;
  /** Erlang name of the faulted node when it is not before.leader (chaos faults followers too). */
  node?: string;
}

/**
 * Fault the container of the queue's current leader. First waits (up to healthyTimeoutMs) until
 * every member is online, so that the fault never takes away a majority.
 */
export async function faultLeader(
  ctx: ClusterContext,
  ref: QueueRef,
  kind: FaultKind,
  options: { healthyTimeoutMs?: number; faultOptions?: FaultOptions } = {},
): Promise<LeaderFault> {
  // An unknown or non-quorum queue is the user's input: fail at once, not after a wait. A queue
  // with every member online is faulted at once: one lookup between the caller's moment and the
  // fault (compare issues it mid-stream, and every lookup is time the producer keeps writing).
  const first = await currentLeader(ctx, ref);
  const healthy = (q: QueueLeadership): boolean => q.online.length >= q.members.length;
  const before = healthy(first)
    ? first
    : await retryUntil(() => currentLeader(ctx, ref), healthy, {
        timeoutMs: options.healthyTimeoutMs ?? 30_000,
        intervalMs: 500,
        signal: ctx.signal,
        describe: (last) =>
          last.value
            ? `queue '${ref.queue}' has ${last.value.online.length} of ${last.value.members.length} members online; a leader fault now could lose the majority`
            : `queue '${ref.queue}' has no leader (${errorMessage(last.error)})`,
        hint: "wait for the cluster to heal, or run 'rmq-bench cluster up'",
      });
  if (kind === 'quorum-loss') {
    const follower = before.members.find((m) => m !== before.leader);
    if (follower === undefined) throw new NotFoundError(`queue '${ref.queue}' has no follower: quorum-loss needs at least 2 members`);
    const fault = await injectQuorumLoss(ctx, before.leader, follower);
    return { oldLeader: shortNodeName(before.leader), alsoFaulted: [shortNodeName(follower)], before, fault };
  }
  if (kind === 'membership') {
    const fault = await injectMembership(ctx, before.leader);
    return { oldLeader: shortNodeName(before.leader), alsoFaulted: [], before, fault };
  }
  if (kind === 'rolling-restart') {
    const fault = await startRollingRestart(ctx, { vhost: ref.vhost, perNodeTimeoutMs: ROLLING_NODE_TIMEOUT_MS, onLine: (line) => ctx.progress.info(line) });
    return { oldLeader: shortNodeName(before.leader), alsoFaulted: [], before, fault };
  }
  const fault = await ctx.faults.inject(before.leader, kind, options.faultOptions);
  return { oldLeader: shortNodeName(before.leader), alsoFaulted: [], before, fault };
}
