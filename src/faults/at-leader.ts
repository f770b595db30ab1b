import { errorMessage } from '../errors.js';
import { retryUntil } from '../util/retry.js';
import { currentLeader, type QueueRef } from '../cluster/broker/queue-leader-lookup.js';
import { shortNodeName, type QueueLeadership } from '../cluster/broker/queue-leadership.js';
import type { AppliedFault, FaultContext, FaultOptions } from './applied.js';
import type { FaultKind } from './kinds.js';
import { FAULTS } from './registry.js';

/** A fault on a queue's leader, as applied: the first step of the sequence in leader-fault-run.ts. */
export interface LeaderFault {
  /** Short name (container) of the faulted leader: rabbit2. */
  oldLeader: string;
  /** Other nodes faulted with it, short names (quorum-loss: the follower killed too; kill-all: every other node). */
  alsoFaulted: string[];
  before: QueueLeadership & { leader: string };
  fault: AppliedFault;
  /** Erlang name of the faulted node when it is not before.leader (chaos faults followers too). */
  node?: string;
}

/**
 * How long a fault waits for every member of the queue to be online before it is refused: a
 * member of a queue declared just after a heal on a loaded 5-node cluster was seen to take over
 * 30 s.
 */
const HEALTHY_TIMEOUT_MS = 60_000;

/**
 * Aim a fault at the queue's current leader (its spec's apply, registry.ts). First waits (up to
 * healthyTimeoutMs) until every member is online, so that the fault never takes away a majority
 * by accident.
 */
export async function faultLeader(
  ctx: FaultContext,
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
        timeoutMs: options.healthyTimeoutMs ?? HEALTHY_TIMEOUT_MS,
        intervalMs: 500,
        signal: ctx.signal,
        describe: (last) =>
          last.value
            ? `queue '${ref.queue}' has ${last.value.online.length} of ${last.value.members.length} members online; a leader fault now could lose the majority`
            : `queue '${ref.queue}' has no leader (${errorMessage(last.error)})`,
        hint: "wait for the cluster to heal, or run 'rmq-bench cluster up'",
      });
  const { fault, alsoFaulted } = await FAULTS[kind].apply(ctx, {
    node: before.leader,
    members: before.members,
    vhost: ref.vhost,
    options: options.faultOptions ?? {},
    onLine: (line) => ctx.progress.info(line),
  });
  return { oldLeader: shortNodeName(before.leader), alsoFaulted: alsoFaulted.map(shortNodeName), before, fault };
}
