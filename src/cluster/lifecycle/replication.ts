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

/** How often a wait asks again to grow queues short of members. */
const GROW_EVERY_MS = 10_000;
/** The least time one grow is given, even at the end of the wait. */
const GROW_MIN_MS = 5_000;

/** The nodes on which some queue has no member. Pure. */
export function nodesMissing(queues: readonly QueueLeadership[], nodeNames: readonly string[]): string[] {
  return nodeNames.filter((n) => queues.some((q) => !q.members.includes(n)));
}

/**
 * Add missing quorum queue members. A queue declared from the definitions while only some
 * nodes had booted has fewer members than the cluster has nodes; `rabbitmq-queues grow`, run on
 * each node that lacks a member, adds it there (continuous membership reconciliation would too,
 * but later). A node still booting refuses the command (its rabbit app is not running yet: 3.10
 * keeps it so while it imports the definitions): the refusal is returned, and the caller asks
 * again later. Returns null when every grow was taken.
 */
async function growQueues(ctx: ClusterContext, docker: Docker, queues: readonly QueueLeadership[], timeoutMs: number): Promise<string | null> {
  const missing = new Set(
    nodesMissing(
      queues,
      ctx.config.nodes.map((n) => n.nodeName),
    ),
  );
  let refused: string | null = null;
  for (const node of ctx.config.nodes.filter((n) => missing.has(n.nodeName))) {
    const r = await execIn(docker, node.container, ['rabbitmq-queues', 'grow', node.nodeName, 'all'], timeoutMs);
    if (r.exitCode === 0) continue;
    // The reason comes first; the usage text that may follow says nothing of this node.
    const reason =
      r.output
        .trim()
        .split('\n')
        .find((l) => l.trim() !== '') ?? '';
    refused = `${node.nodeName} refused (exit ${r.exitCode}): ${reason}`;
    ctx.log(`rabbitmq-queues grow ${refused}`);
  }
  return refused;
}

/** Wait until every quorum queue of the definitions has a leader and all its members online, growing those short of members. */
export async function waitForReplicated(ctx: ClusterContext, defs: Definitions, options: WaitOptions): Promise<QueueLeadership[]> {
  const size = ctx.config.nodes.length;
  const secs = stopwatch();
  const label = (q: QueueLeadership): string => `${q.name} ${q.online.length}/${q.members.length}${q.leader ? '' : ' no leader'}`;
  const started = performance.now();
  let grownAt = Number.NEGATIVE_INFINITY;
  let refused: string | null = null;
  // A queue short of members is grown, and grown again every GROW_EVERY_MS while a node refuses.
  const look = async (): Promise<QueueLeadership[]> => {
    const qs = await quorumState(ctx.management, defs);
    if (qs.some((q) => q.members.length < size) && performance.now() - grownAt >= GROW_EVERY_MS) {
      ctx.progress.update('adding quorum queue members on the nodes that lack them (rabbitmq-queues grow)');
      grownAt = performance.now();
      // Each grow within what is left of the wait (at least GROW_MIN_MS, at most a minute).
      const leftMs = options.timeoutMs - (grownAt - started);
      refused = await growQueues(ctx, await ctx.docker(), qs, Math.min(60_000, Math.max(GROW_MIN_MS, leftMs)));
    }
    return qs;
  };
  return retryUntil(
    look,
    (qs) => {
      ctx.progress.update(`waiting for the quorum queues to have ${size} online members (${qs.map(label).join(', ')}) ${secs()}`);
      return fullyReplicated(qs, size);
    },
    {
      timeoutMs: options.timeoutMs,
      intervalMs: 500,
      signal: ctx.signal,
      describe: (last) =>
        `quorum queues not fully replicated (last state: ${last.value?.map(label).join(', ') ?? errorMessage(last.error)})${refused === null ? '' : `; rabbitmq-queues grow: ${refused}`}`,
    },
  );
}
