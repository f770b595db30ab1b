import { errorMessage } from '../../errors.js';
import { retryUntil } from '../../util/retry.js';
import type { ClusterContext } from '../cluster-ctx.js';
import { quorumQueues, type Definitions } from './definitions.js';
import { execIn, type Docker } from '../docker/engine.js';
import type { QueueLeadership } from '../broker/queue-leadership.js';
import type { ManagementClient } from '../broker/management.js';
import { stopwatch, type WaitOptions } from './wait.js';

/** The queues a definitions file declares as quorum queues, with their leadership now. */
export async function quorumState(mgmt: ManagementClient, defs: Definitions, exclude?: readonly string[]): Promise<QueueLeadership[]> {
  return Promise.all(quorumQueues(defs).map((q) => mgmt.queue(q.vhost, q.name, exclude)));
}

/** Every queue has a leader and at least `size` members, all of them online. */
export function fullyReplicated(queues: QueueLeadership[], size: number): boolean {
  return queues.every((q) => q.leader !== undefined && q.members.length >= size && q.online.length >= size);
}

/**
 * Add missing quorum queue members. A queue declared from the definitions while only one
 * node had booted has fewer members than the cluster has nodes; `rabbitmq-queues grow`
 * adds them (continuous membership reconciliation would too, but later).
 */
async function growQueues(ctx: ClusterContext, docker: Docker): Promise<void> {
  const first = ctx.config.nodes[0]!;
  for (const node of ctx.config.nodes) {
    const r = await execIn(docker, first.container, ['rabbitmq-queues', 'grow', node.nodeName, 'all'], 60_000);
    if (r.exitCode !== 0) ctx.log(`rabbitmq-queues grow ${node.nodeName} failed (exit ${r.exitCode}): ${r.output.trim().split('\n').pop() ?? ''}`);
  }
}

/** Grow quorum queues that have fewer members than the cluster has nodes. */
export async function ensureReplicated(ctx: ClusterContext, defs: Definitions): Promise<void> {
  const size = ctx.config.nodes.length;
  const now = await retryUntil(
    () => quorumState(ctx.management, defs),
    () => true,
    { timeoutMs: 30_000, intervalMs: 1_000, signal: ctx.signal, describe: (l) => `the definitions' queues are not there (${errorMessage(l.error)})` },
  );
  if (now.every((q) => q.members.length >= size)) return;
  ctx.progress.update('adding quorum queue members on every node (rabbitmq-queues grow)');
  await growQueues(ctx, await ctx.docker());
}

/** Wait until every quorum queue of the definitions has a leader and all its members online. */
export async function waitForReplicated(ctx: ClusterContext, defs: Definitions, options: WaitOptions): Promise<QueueLeadership[]> {
  const size = ctx.config.nodes.length;
  const secs = stopwatch();
  const label = (q: QueueLeadership): string => `${q.name} ${q.online.length}/${q.members.length}${q.leader ? '' : ' no leader'}`;
  return retryUntil(
    () => quorumState(ctx.management, defs),
    (qs) => {
      ctx.progress.update(`waiting for the quorum queues to have ${size} online members (${qs.map(label).join(', ')}) ${secs()}`);
      return fullyReplicated(qs, size);
    },
    {
      timeoutMs: options.timeoutMs,
      intervalMs: 500,
      signal: ctx.signal,
      describe: (last) => `quorum queues not fully replicated (last state: ${last.value?.map(label).join(', ') ?? errorMessage(last.error)})`,
    },
  );
}
