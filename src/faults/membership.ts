import { EnvironmentError, errorMessage } from '../errors.js';
import type { ClusterContext } from '../cluster/cluster-ctx.js';
import { retryUntil } from '../util/retry.js';
import type { Docker } from '../cluster/docker/engine.js';
import { containerOf, ctl, rejoin } from '../cluster/lifecycle/forgotten-nodes.js';
import { repairStreamCoordinator } from '../cluster/lifecycle/stream-coordinator.js';
import type { AppliedFault } from './applied.js';
import { shortNodeName } from '../cluster/broker/queue-leadership.js';
import type { FaultSpec } from './spec.js';

/**
 * membership: Jepsen's membership nemesis, as an operator replaces a node. The node's RabbitMQ
 * application is stopped and the node forgotten by the cluster (`rabbitmqctl stop_app`, then
 * `forget_cluster_node` on a peer), which also removes its member from every quorum queue (a
 * member it leaves behind is removed with delete_member: removeMembersLeft); the
 * restore resets it, joins it to the cluster again, starts it and adds its quorum queue members
 * back (`reset`, `join_cluster`, `start_app`, `rabbitmq-queues grow <node> all`): a fresh
 * member that catches up from the others (cluster/lifecycle/forgotten-nodes.ts). Where a stream was
 * ever declared, the restore also waits for the stream coordinator to have the node again. `cluster up` does the
 * same to a node it finds forgotten (a killed run): rejoinForgottenNodes.
 */
export const membership: FaultSpec<'membership'> = {
  kind: 'membership',
  needs: { ownContainers: true },
  leader: 'elected-away',
  nodeDown: false,
  leftovers: ['forgotten node', 'stopped application'],
  color: '#4d7c0f',
  apply: async (ctx, { node }) => ({ fault: await injectMembership(ctx, node), alsoFaulted: [] }),
};

/** How long the quorum queues' records may keep listing a forgotten node while delete_member runs. */
const MEMBERS_LEFT_TIMEOUT_MS = 60_000;

interface QueueRef {
  vhost: string;
  name: string;
}

/**
 * The quorum queues whose record in the metadata store, read on `peerContainer`, still lists
 * `nodeName` as a member (`list_queues members` reads the record; the management API's `members`
 * is a statistic the leader emits every few seconds).
 */
async function queuesListing(docker: Docker, peerContainer: string, nodeName: string, vhosts: string[]): Promise<QueueRef[]> {
  const found: QueueRef[] = [];
  for (const vhost of vhosts) {
    const out = await ctl(docker, peerContainer, ['rabbitmqctl', 'list_queues', '-q', '--formatter', 'json', '-p', vhost, 'name', 'type', 'members']);
    const rows = JSON.parse(out.trim() === '' ? '[]' : out) as { name: string; type: string; members?: unknown }[];
    for (const r of rows) {
      if (r.type === 'quorum' && Array.isArray(r.members) && r.members.includes(nodeName)) found.push({ vhost, name: r.name });
    }
  }
  return found;
}

/**
 * forget_cluster_node removes the node's quorum queue members first (shrink_all), but it gives
 * each queue 15 s and then goes on without a word: on a loaded machine, right after the leader's
 * node stopped, a queue can keep the forgotten node as a member. Each such member is removed with
 * delete_member until no record lists the node, or the deadline passes.
 */
async function removeMembersLeft(ctx: ClusterContext, docker: Docker, peerContainer: string, nodeName: string): Promise<void> {
  const vhosts = ((await ctx.management.get('/api/vhosts')) as { name: string }[]).map((v) => v.name);
  await retryUntil(
    async () => {
      const left = await queuesListing(docker, peerContainer, nodeName, vhosts);
      for (const q of left) {
        ctx.log(`queue '${q.name}' still lists ${nodeName} as a member after forget_cluster_node: delete_member`);
        await ctl(docker, peerContainer, ['rabbitmq-queues', 'delete_member', '-p', q.vhost, q.name, nodeName]).catch((e: unknown) => ctx.log(errorMessage(e)));
      }
      return left;
    },
    (left) => left.length === 0,
    {
      timeoutMs: MEMBERS_LEFT_TIMEOUT_MS,
      intervalMs: 1_000,
      signal: ctx.signal,
      describe: (last) =>
        last.value
          ? `quorum queue${last.value.length === 1 ? '' : 's'} ${last.value.map((q) => `'${q.name}'`).join(', ')} still list${last.value.length === 1 ? 's' : ''} the forgotten ${nodeName} as a member`
          : `could not list the quorum queues' members (${errorMessage(last.error)})`,
    },
  );
}

/** Remove `nodeName` from the cluster (a peer forgets it); restore() joins it again with its queue members. */
async function injectMembership(ctx: ClusterContext, nodeName: string): Promise<AppliedFault> {
  const docker = await ctx.docker();
  const container = containerOf(ctx.config, nodeName);
  const listed = await ctx.management.nodes();
  const running = listed.filter((n) => n.running && n.name !== nodeName).map((n) => n.name);
  // Only from a whole cluster: a node forgotten while another is out could leave no majority of the
  // cluster's own metadata store, and nothing to rejoin.
  if (running.length + 1 < ctx.config.nodes.length || !listed.some((n) => n.name === nodeName && n.running)) {
    throw new EnvironmentError(
      `'membership' removes a node from a whole cluster, and this one has ${listed.filter((n) => n.running).length} of ${ctx.config.nodes.length} nodes running`,
      { hint: "run 'rmq-bench cluster up' first" },
    );
  }
  const peer = running[0]!;
  const issuedAt = performance.now();
  await ctl(docker, container, ['rabbitmqctl', 'stop_app']);
  try {
    await ctl(docker, containerOf(ctx.config, peer), ['rabbitmqctl', 'forget_cluster_node', nodeName]);
  } catch (err) {
    // Not forgotten: it is still a member, and starting it again is the whole undo.
    await ctl(docker, container, ['rabbitmqctl', 'start_app']).catch((e: unknown) => ctx.log(`could not start ${nodeName} again: ${errorMessage(e)}`));
    throw err;
  }
  const appliedAt = performance.now();
  const appliedAtIso = new Date().toISOString();
  try {
    await removeMembersLeft(ctx, docker, containerOf(ctx.config, peer), nodeName);
  } catch (err) {
    // The node is forgotten: joining it again is the undo.
    await rejoin(docker, container, nodeName, peer).catch((e: unknown) => ctx.log(`could not join ${nodeName} to the cluster again: ${errorMessage(e)}`));
    throw err;
  }
  const fault: AppliedFault = {
    kind: 'membership',
    container: shortNodeName(nodeName),
    issuedAt,
    appliedAt,
    appliedAtIso,
    restored: false,
    async restore() {
      if (fault.restored) return;
      await rejoin(docker, container, nodeName, peer);
      // The node's stream coordinator member went with its reset: the coordinator's leader adds it
      // back at a coming tick. Until then a stream call on the node can start a member of its own,
      // outside the coordinator; the restore ends when every node is a running member again.
      await repairStreamCoordinator(ctx, docker);
      fault.restored = true;
    },
  };
  return fault;
}
