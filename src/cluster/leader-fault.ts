import { nodeByName } from '../config.js';
import type { Context } from '../context.js';
import { BrokerUnavailableError, NotFoundError, errorMessage } from '../errors.js';
import { retryUntil } from '../util/retry.js';
import { inspectContainer } from './engine.js';
import { injectFault, type AppliedFault, type FaultKind } from './faults.js';
import { shortNodeName, type QueueLeadership } from './leader.js';

/**
 * The reusable fault piece: find a quorum queue's leader, fault that node's container, watch
 * the election, restore the node and wait until it is back. Scenarios inject faults mid-run
 * through it.
 */

export interface QueueRef {
  vhost: string;
  queue: string;
}

/** The queue's leadership now; throws when the queue is unknown, not quorum, or leaderless. */
export async function currentLeader(ctx: Context, ref: QueueRef, exclude?: readonly string[]): Promise<QueueLeadership & { leader: string }> {
  const q = await ctx.management.queue(ref.vhost, ref.queue, exclude);
  if (q.type !== 'quorum') throw new NotFoundError(`queue '${ref.queue}' is a ${q.type} queue; leader faults need a quorum queue`);
  if (q.leader === undefined) throw new BrokerUnavailableError(`queue '${ref.queue}' has no leader right now`);
  return q as QueueLeadership & { leader: string };
}

export interface LeaderFault {
  /** Short name (container) of the faulted leader: rabbit2. */
  oldLeader: string;
  before: QueueLeadership;
  fault: AppliedFault;
}

/** Fault the container of the queue's current leader. Requires all members online first. */
export async function faultLeader(ctx: Context, ref: QueueRef, kind: FaultKind): Promise<LeaderFault> {
  const before = await currentLeader(ctx, ref);
  if (before.online.length < before.members.length) {
    throw new BrokerUnavailableError(
      `queue '${ref.queue}' has ${before.online.length} of ${before.members.length} members online; a leader fault now could lose the majority`,
      { hint: "wait for the cluster to heal, or run 'rmq-bench cluster up'" },
    );
  }
  const node = nodeByName(ctx.config, before.leader);
  if (!node) throw new NotFoundError(`the leader ${before.leader} is not one of this cluster's containers (${ctx.config.nodes.map((n) => n.name).join(', ')})`);
  const fault = await injectFault(await ctx.docker(), node.name, kind);
  return { oldLeader: node.name, before, fault };
}

export interface Election {
  newLeader: string;
  /** performance.now() when the new leader was first seen. */
  electedAt: number;
  electionMs: number;
}

/**
 * Poll the survivors' management API (every pollMs) until the queue reports a leader other
 * than oldLeader. electionMs runs from the fault to the first poll that saw the new leader,
 * so it is an upper bound, within one poll and one request.
 */
export async function waitForNewLeader(
  ctx: Context,
  ref: QueueRef,
  lf: LeaderFault,
  options: { timeoutMs: number; pollMs?: number },
): Promise<Election> {
  const q = await retryUntil(
    () => ctx.management.queue(ref.vhost, ref.queue, [lf.oldLeader]),
    (x) => x.leader !== undefined && shortNodeName(x.leader) !== lf.oldLeader,
    {
      timeoutMs: options.timeoutMs,
      intervalMs: options.pollMs ?? 100,
      signal: ctx.signal,
      describe: (last) =>
        `no new leader for '${ref.queue}' after '${lf.fault.kind}' of ${lf.oldLeader} (last seen: ${last.value ? (last.value.leader ?? 'none') : errorMessage(last.error)})`,
    },
  );
  const electedAt = performance.now();
  return { newLeader: shortNodeName(q.leader!), electedAt, electionMs: electedAt - lf.fault.appliedAt };
}

export interface Rejoin {
  restoredAt: number;
  rejoinedAt: number;
  /** From the restore call to the node being back: running in the cluster, and every queue member online. */
  rejoinMs: number;
  members: string[];
  online: string[];
}

/** Undo the fault, then wait until the node runs in the cluster again and the queue has all members online. */
export async function restoreAndRejoin(ctx: Context, ref: QueueRef, lf: LeaderFault, options: { timeoutMs: number }): Promise<Rejoin> {
  await lf.fault.restore();
  const restoredAt = performance.now();
  const node = nodeByName(ctx.config, lf.oldLeader)!;
  const docker = await ctx.docker();
  const q = await retryUntil(
    async () => {
      const c = await inspectContainer(docker, node.name);
      if (c.state !== 'running') return { ok: false, why: `container ${c.state}`, q: undefined };
      const nodes = await ctx.management.nodes([node.name]);
      if (!nodes.find((n) => n.name === node.nodeName)?.running) return { ok: false, why: `${node.nodeName} not running in the cluster`, q: undefined };
      const queue = await ctx.management.queue(ref.vhost, ref.queue, [node.name]);
      const ok = queue.leader !== undefined && queue.online.includes(node.nodeName) && queue.online.length >= queue.members.length;
      return { ok, why: `${queue.online.length} of ${queue.members.length} members online`, q: queue };
    },
    (r) => r.ok,
    {
      timeoutMs: options.timeoutMs,
      intervalMs: 250,
      signal: ctx.signal,
      describe: (last) => `${node.name} did not rejoin after '${lf.fault.kind}' was undone (last state: ${last.value?.why ?? errorMessage(last.error)})`,
      hint: "see 'rmq-bench cluster logs " + node.name + "'",
    },
  );
  const rejoinedAt = performance.now();
  return { restoredAt, rejoinedAt, rejoinMs: rejoinedAt - restoredAt, members: q.q!.members, online: q.q!.online };
}
