import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { clusterRecordFile, type Config, DEFAULT_CLUSTER_NAME, NODE_COUNTS, type NodeCount, nodesFor } from '../config.js';
import { UsageError } from '../errors.js';
import { inspectContainer, type Docker } from './engine.js';

/**
 * What `cluster up` records about a cluster on this machine, so that every later command (which
 * reads RMQ_BENCH_* and no cluster flags) finds all of its nodes: today, how many there are
 * (config.ts reads it back in loadConfig). `cluster down` forgets it.
 */

export async function writeClusterRecord(config: Config): Promise<void> {
  if (config.stateDir === undefined) return;
  const file = clusterRecordFile(config.stateDir, config.clusterName);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify({ name: config.clusterName, nodes: config.nodes.length }, null, 2)}\n`);
}

export async function removeClusterRecord(config: Config): Promise<void> {
  if (config.stateDir === undefined) return;
  await rm(clusterRecordFile(config.stateDir, config.clusterName), { force: true });
}

/** How many of the cluster's possible nodes have a container now (0: none, a cluster not created yet). */
export async function existingNodeCount(docker: Docker, config: Config): Promise<number> {
  const most = nodesFor(config.clusterName, 1, 1, NODE_COUNTS[NODE_COUNTS.length - 1]!);
  const states = await Promise.all(most.map((n) => inspectContainer(docker, n.container).then((c) => c.state)));
  return states.filter((s) => s !== 'missing').length;
}

/**
 * A cluster is not resized in place (its quorum queues' members and the peer lists would have
 * to follow): asking for another node count than its containers have is refused with the way to
 * a fresh cluster of that size.
 */
export function checkNodeCount(existing: number, wanted: NodeCount, clusterName: string): void {
  if (existing === 0 || existing === wanted) return;
  const name = clusterName === DEFAULT_CLUSTER_NAME ? '' : ` --name ${clusterName}`;
  throw new UsageError(`the cluster${name ? ` ${clusterName}` : ''} has ${existing} nodes, not ${wanted}: it is not resized in place`, {
    hint: `'rmq-bench cluster reset --hard --nodes ${wanted}${name}' makes a fresh ${wanted}-node cluster (its data is removed), or leave --nodes out`,
  });
}
