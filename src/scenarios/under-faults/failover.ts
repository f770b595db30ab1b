import type { Context } from '../../context.js';
import { queueForRun } from '../../cluster/broker/own-queue.js';
import { ELECTS_A_LEADER, type QueueType } from '../../cluster/broker/queue-types.js';
import { startLeaderFault } from '../../faults/leader-fault-run.js';
import type { FaultKind } from '../../faults/kinds.js';
import { DEFAULT_BANDWIDTH, DEFAULT_NETEM, type NetemSpec } from '../../faults/net/netem.js';

export interface FailoverOptions {
  vhost: string;
  queue: string;
  /** quorum, mirrored (RabbitMQ before 4.0) or classic. */
  queueType: QueueType;
  /** failover declares the queue itself (of queueType) and deletes it at the end: no --queue was given for a type other than quorum. */
  ownQueue: boolean;
  fault: FaultKind;
  /** null: leave the node faulted. Otherwise keep it faulted at least this long after the fault. */
  restoreAfterMs: number | null;
  electionTimeoutMs: number;
  rejoinTimeoutMs: number;
  /** --fault latency: the delay and loss. */
  netem?: NetemSpec | undefined;
  /** --fault slow-link's rate (tc's units). */
  bandwidth?: string | undefined;
}

export interface FailoverResult {
  schemaVersion: 1;
  kind: 'failover';
  queue: string;
  queueType: QueueType;
  vhost: string;
  fault: FaultKind;
  oldLeader: string;
  /** Other nodes faulted with it (quorum-loss: a follower killed too). */
  alsoFaulted: string[];
  /** A partition shape's groups ("rabbit2 rabbit4 | rabbit1 rabbit3 rabbit5"); null for the other faults. */
  shape: string | null;
  /** null: the fault takes no leader away (latency), and none was awaited. */
  newLeader: string | null;
  /** --fault latency: the delay and loss applied; null for the other faults. */
  netem: NetemSpec | null;
  /** --fault slow-link: the rate the node was limited to (tc's units); null for the other faults. */
  bandwidth: string | null;
  membersBefore: string[];
  /** ISO time the fault call returned. */
  faultAt: string;
  /** How long the fault call itself took (a stop waits for the clean shutdown). */
  faultCallMs: number;
  /** Fault issued → first answer that named a different leader (null when none was awaited). */
  electionMs: number | null;
  /** Which watcher saw the new leader first: management (API polled every 100 ms) or cli (quorum_status in a survivor). */
  detectedBy: string | null;
  restored: boolean;
  /** Fault → the restore call's end. */
  downMs: number | null;
  /**
   * How long the restore call took: the fault undone, and on RabbitMQ before 4.3 a partition's
   * mend (the nodes restarted until the cluster is whole). null when not restored.
   */
  restoreMs: number | null;
  /** The restore call's end → node running in the cluster with every queue member online. */
  rejoinMs: number | null;
  membersAfter: string[] | null;
  onlineAfter: string[] | null;
  /** The queue's leader once the node was back (null when not restored). */
  leaderAfter: string | null;
}

/** Fault the queue's leader, measure the election, restore the node and wait until it is back. Never prints. */
export async function runFailover(ctx: Context, opts: FailoverOptions): Promise<FailoverResult> {
  await ctx.faults.check(opts.fault);
  const own = await queueForRun(ctx, { vhost: opts.vhost, queue: opts.queue }, opts.queueType, opts.ownQueue);
  try {
    return await failoverOnce(ctx, opts);
  } finally {
    await own?.remove();
  }
}

async function failoverOnce(ctx: Context, opts: FailoverOptions): Promise<FailoverResult> {
  const ref = { vhost: opts.vhost, queue: opts.queue };
  const { progress } = ctx;
  let elected = false;
  const fault = startLeaderFault(ctx, ref, opts.fault, {
    restoreAfterMs: opts.restoreAfterMs,
    electionTimeoutMs: opts.electionTimeoutMs,
    rejoinTimeoutMs: opts.rejoinTimeoutMs,
    // A classic queue without mirrors is not taken over by another node: nothing to wait for.
    ...(ELECTS_A_LEADER[opts.queueType] ? {} : { awaitElection: false }),
    faultOptions: { ...(opts.netem ? { netem: opts.netem } : {}), ...(opts.bandwidth ? { bandwidth: opts.bandwidth } : {}) },
    onPhase: (phase, t) => {
      // The election's line, once, before whatever follows it.
      if (!elected && t.newLeader !== null) {
        elected = true;
        progress.succeed(`new leader: ${t.newLeader}, seen ${Math.round(t.electionMs ?? 0)} ms after the fault (${t.electionSource})`);
      }
      switch (phase) {
        case 'faulting':
          return progress.start(`finding the leader of ${opts.queue}`);
        case 'electing':
          progress.succeed(`leader of ${opts.queue} was ${t.node}: applied '${opts.fault}' to ${t.node}`);
          return progress.start(`waiting for a new leader of ${opts.queue}`);
        case 'left-faulted':
          return progress.info(`${t.node} left under '${opts.fault}' (--no-restore); 'rmq-bench cluster up' brings it back`);
        case 'holding':
          return progress.start(`keeping ${t.node} down until ${Math.round((opts.restoreAfterMs ?? 0) / 1000)} s after the fault (--hold)`);
        case 'restoring':
          return progress.start(`restoring ${t.node} and waiting until it is back in the cluster`);
        case 'rejoined':
          return progress.succeed(
            `${t.node} back: ${t.onlineAfter?.length} of ${t.membersAfter?.length} members online, ${Math.round(t.rejoinMs ?? 0)} ms after the restore`,
          );
        case 'failed':
          progress.stop(); // the error line says what failed
          if (t.node !== null && opts.restoreAfterMs !== null && !t.restored) progress.info(`restoring ${t.node} ('${opts.fault}' undone)`);
          return;
        default:
          return;
      }
    },
  });
  const { timeline: t, error } = await fault.done;
  if (error !== undefined) throw error;
  return {
    schemaVersion: 1,
    kind: 'failover',
    queue: opts.queue,
    queueType: opts.queueType,
    vhost: opts.vhost,
    fault: opts.fault,
    oldLeader: t.node!,
    alsoFaulted: t.alsoFaulted,
    shape: t.shape,
    newLeader: t.newLeader,
    netem: opts.fault === 'latency' ? (opts.netem ?? DEFAULT_NETEM) : null,
    bandwidth: opts.fault === 'slow-link' ? (opts.bandwidth ?? DEFAULT_BANDWIDTH) : null,
    membersBefore: t.membersBefore!,
    faultAt: t.appliedAtIso!,
    faultCallMs: t.appliedAt! - t.issuedAt!,
    electionMs: t.electionMs,
    detectedBy: t.electionSource,
    restored: t.restored,
    downMs: t.restoredAt === null ? null : t.restoredAt - t.issuedAt!,
    restoreMs: t.restoredAt === null || t.restoreStartedAt === null ? null : t.restoredAt - t.restoreStartedAt,
    rejoinMs: t.rejoinMs,
    membersAfter: t.membersAfter,
    onlineAfter: t.onlineAfter,
    leaderAfter: t.leaderAfter,
  };
}
