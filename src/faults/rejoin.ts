import { nodeByName } from '../config.js';
import { errorMessage } from '../errors.js';
import { retryUntil } from '../util/retry.js';
import type { FaultContext } from './applied.js';
import { inspectContainer } from '../cluster/docker/engine.js';
import type { LeaderFault } from './at-leader.js';
import { shortNodeName, type QueueLeadership } from '../cluster/broker/queue-leadership.js';
import type { QueueRef } from '../cluster/broker/queue-leader-lookup.js';

/** A faulted node back in the cluster after its fault was undone. */
export interface Rejoin {
  restoredAt: number;
  rejoinedAt: number;
  /** From the restore call to the start of the stable stretch: running in the cluster, every queue member online. */
  rejoinMs: number;
  /** Of the first queue watched. */
  members: string[];
  online: string[];
  /** Short name of the (first) queue's leader once the node is back. */
  leaderAfter: string | null;
  /** Every queue watched → short name of its leader once the node is back. */
  leaders?: Record<string, string | null>;
}

/**
 * Wait until a node whose fault was undone at restoredAt is back: its container (and those
 * faulted with it) runs, the cluster lists it as running, no node reports a partition, and every
 * queue in refs has a leader and every member online, all of it unchanged for stableMs (a
 * restarting node shows up as online once before its queues recover).
 */
export async function waitForRejoin(
  ctx: FaultContext,
  refs: QueueRef | readonly QueueRef[],
  lf: LeaderFault,
  options: { timeoutMs: number; restoredAt: number; stableMs?: number },
): Promise<Rejoin> {
  const { restoredAt } = options;
  const queues: readonly QueueRef[] = Array.isArray(refs) ? refs : [refs as QueueRef];
  const stableMs = options.stableMs ?? 3_000;
  const nodeName = lf.node ?? lf.before.leader;
  const container = ctx.faults.kind === 'docker' ? nodeByName(ctx.config, nodeName)?.container : undefined;
  const docker = container ? await ctx.docker() : undefined;
  const node = { name: lf.oldLeader, nodeName };
  let streakSince: number | undefined;
  const check = async (): Promise<{ ok: boolean; why: string; qs: QueueLeadership[] }> => {
    if (docker && container) {
      for (const name of [container, ...lf.alsoFaulted.map((n) => nodeByName(ctx.config, n)?.container ?? n)]) {
        const c = await inspectContainer(docker, name);
        if (c.state !== 'running') return { ok: false, why: `container ${name} ${c.state}`, qs: [] };
      }
    }
    const nodes = await ctx.management.nodes([node.name]);
    if (!nodes.find((n) => n.name === node.nodeName)?.running) return { ok: false, why: `${node.nodeName} not running in the cluster`, qs: [] };
    // Before 4.3 the nodes can be back and running on each side of a partition that did not end:
    // each side then serves its own copy of a classic queue. Whole means no node reports one.
    const split = nodes.find((n) => (n.partitions?.length ?? 0) > 0);
    if (split)
      return {
        ok: false,
        why: `a partition is still reported (${shortNodeName(split.name)} sees ${split.partitions!.map(shortNodeName).join(', ')} apart)`,
        qs: [],
      };
    const qs: QueueLeadership[] = [];
    for (const ref of queues) {
      const q = await ctx.management.queue(ref.vhost, ref.queue, [node.name]);
      qs.push(q);
      const whole = q.leader !== undefined && q.online.includes(node.nodeName) && q.online.length >= q.members.length;
      if (!whole) return { ok: false, why: `${ref.queue}: ${q.online.length} of ${q.members.length} members online`, qs };
    }
    return { ok: true, why: 'every member online', qs };
  };
  const r = await retryUntil(
    async () => {
      const v = await check().catch((err: unknown) => ({ ok: false, why: errorMessage(err), qs: [] }));
      if (!v.ok) streakSince = undefined;
      else streakSince ??= performance.now();
      return v;
    },
    (v) => v.ok && streakSince !== undefined && performance.now() - streakSince >= stableMs,
    {
      timeoutMs: options.timeoutMs,
      intervalMs: 250,
      signal: ctx.signal,
      describe: (last) => `${node.name} did not rejoin after '${lf.fault.kind}' was undone (last state: ${last.value?.why ?? errorMessage(last.error)})`,
      hint: `see 'rmq-bench cluster logs ${node.name}'`,
    },
  );
  const rejoinedAt = streakSince!;
  const first = r.qs[0]!;
  const short = (leader: string | undefined): string | null => (leader === undefined ? null : shortNodeName(leader));
  return {
    restoredAt,
    rejoinedAt,
    rejoinMs: rejoinedAt - restoredAt,
    members: first.members,
    online: first.online,
    leaderAfter: short(first.leader),
    leaders: Object.fromEntries(queues.map((ref, i) => [ref.queue, short(r.qs[i]?.leader)])),
  };
}
