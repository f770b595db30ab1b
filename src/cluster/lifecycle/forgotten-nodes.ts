import { type Config, nodeByName } from '../../config.js';
import { EnvironmentError, errorMessage } from '../../errors.js';
import type { ClusterContext } from '../cluster-ctx.js';
import { type Docker, execIn } from '../docker/engine.js';

/**
 * A node removed from the cluster (the membership fault: `stop_app`, then `forget_cluster_node`
 * on a peer) and joined again: `reset`, `join_cluster`, `start_app`, `rabbitmq-queues grow <node>
 * all`, a fresh member that catches up from the others. The fault (src/faults/membership.ts)
 * restores with it; `cluster up` does the same to a node it finds forgotten (a killed run).
 */

/** Each rabbitmqctl call's deadline (a node's reset and join take a few seconds). */
const CTL_TIMEOUT_MS = 60_000;

export async function ctl(docker: Docker, container: string, args: string[]): Promise<string> {
  const r = await execIn(docker, container, args, CTL_TIMEOUT_MS);
  if (r.exitCode !== 0) {
    throw new EnvironmentError(`${args.join(' ')} in ${container} exited ${r.exitCode}: ${r.output.trim().split('\n').pop() ?? ''}`);
  }
  return r.output;
}

export function containerOf(config: Config, nodeName: string): string {
  const node = nodeByName(config, nodeName);
  if (!node) throw new EnvironmentError(`${nodeName} is not one of this cluster's containers`);
  return node.container;
}

/** reset, join_cluster through `peer`, start_app, then every quorum queue grown back onto the node. */
export async function rejoin(docker: Docker, container: string, nodeName: string, peer: string): Promise<void> {
  await ctl(docker, container, ['rabbitmqctl', 'reset']);
  await ctl(docker, container, ['rabbitmqctl', 'join_cluster', peer]);
  await ctl(docker, container, ['rabbitmqctl', 'start_app']);
  await ctl(docker, container, ['rabbitmq-queues', 'grow', nodeName, 'all']);
}

/**
 * For `cluster up`: a node the cluster no longer lists (a membership fault a killed run left: it
 * was forgotten) whose container runs with its RabbitMQ application stopped is reset, joined
 * through a running node and started, its quorum queue members added back. A node that is only
 * booting is listed, and left alone. Returns the nodes rejoined.
 */
export async function rejoinForgottenNodes(ctx: ClusterContext, docker: Docker): Promise<string[]> {
  const listed = await ctx.management.nodes().catch(() => undefined);
  if (listed === undefined) return [];
  const peer = listed.find((n) => n.running)?.name;
  const forgotten = ctx.config.nodes.filter((n) => !listed.some((l) => l.name === n.nodeName));
  const stopped: typeof forgotten = [];
  for (const n of forgotten) {
    const r = await execIn(docker, n.container, ['rabbitmqctl', '-q', 'eval', 'rabbit:is_running().'], CTL_TIMEOUT_MS).catch(() => undefined);
    if (r?.exitCode === 0 && r.output.trim() === 'false') stopped.push(n);
  }
  if (stopped.length === 0 || peer === undefined) return [];
  const done: string[] = [];
  for (const n of stopped) {
    try {
      await rejoin(docker, n.container, n.nodeName, peer);
      done.push(n.name);
    } catch (err) {
      ctx.log(`could not rejoin ${n.name} to the cluster: ${errorMessage(err)}`);
    }
  }
  return done;
}
