import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_RABBITMQ_LINE, type RabbitmqLine } from '../../broker-versions.js';
import { clusterRecordFile, type Config, DEFAULT_CLUSTER_NAME, type FeatureFlagSet, NODE_COUNTS, type NodeCount, nodesFor } from '../../config.js';
import { UsageError } from '../../errors.js';
import { type ContainerInfo, inspectContainer, type Docker } from '../docker/engine.js';

/**
 * What `cluster up` records about a cluster on this machine, so that every later command (which
 * reads RMQ_BENCH_* and no cluster flags) finds all of its nodes and knows what it runs: how many
 * nodes, the RabbitMQ line, the partition handling (config.ts reads it back in loadConfig).
 * `cluster down` forgets it.
 */

export async function writeClusterRecord(config: Config): Promise<void> {
  if (config.stateDir === undefined) return;
  const file = clusterRecordFile(config.stateDir, config.clusterName);
  await mkdir(path.dirname(file), { recursive: true });
  const first = config.nodes[0]!;
  const doc = {
    name: config.clusterName,
    nodes: config.nodes.length,
    rabbitmq: config.rabbitmq,
    amqpPort: first.amqpPort,
    managementPort: first.managementPort,
    prometheusPort: config.prometheusPort,
    ...(config.partitionHandling ? { partitionHandling: config.partitionHandling } : {}),
    ...(config.featureFlags === 'stable' ? {} : { featureFlags: config.featureFlags }),
  };
  await writeFile(file, `${JSON.stringify(doc, null, 2)}\n`);
}

export async function removeClusterRecord(config: Config): Promise<void> {
  if (config.stateDir === undefined) return;
  await rm(clusterRecordFile(config.stateDir, config.clusterName), { force: true });
}

/** What the cluster's containers were created with: how many exist (0: a cluster not created yet), the RabbitMQ line, the partition handling and the feature flags. */
interface ExistingCluster {
  count: number;
  /** The line its containers run (RMQ_BENCH_RABBITMQ in their environment; 4.3 for containers made before it was set); undefined when none exists. */
  rabbitmq: string | undefined;
  /** RMQ_BENCH_PARTITION_HANDLING in their environment ('' or absent: the broker's default). */
  partitionHandling: string | undefined;
  /** RMQ_BENCH_FEATURE_FLAGS in their environment ('' or absent: stable, the broker's default). */
  featureFlags: string | undefined;
  /** The host port the first node publishes AMQP on; undefined when none exists or it publishes none. */
  amqpPort: number | undefined;
  /** Per container, the host folder its cluster files (/etc/rmq-bench) are mounted from. */
  filesFrom: readonly { container: string; source: string | undefined }[];
  /** Per container, the image it was made from (its tag and id) and RMQ_BENCH_STREAM_PORT in its environment. */
  madeWith: readonly { container: string; image: string | undefined; imageId: string | undefined; streamPort: string | undefined }[];
}

/** Where a node finds the cluster's files (docker-compose.yml mounts ./cluster there). */
const CLUSTER_FILES_MOUNT = '/etc/rmq-bench';

/** A variable of a container's environment, or undefined. Pure. */
function envValue(env: readonly string[], name: string): string | undefined {
  const entry = env.find((e) => e.startsWith(`${name}=`));
  return entry === undefined ? undefined : entry.slice(name.length + 1);
}

/** The cluster's containers as they exist now (none: count 0). */
export async function existingCluster(docker: Docker, config: Config): Promise<ExistingCluster> {
  const most = nodesFor(config.clusterName, 1, 1, NODE_COUNTS[NODE_COUNTS.length - 1]!);
  const cs: ContainerInfo[] = (await Promise.all(most.map((n) => inspectContainer(docker, n.container)))).filter((c) => c.state !== 'missing');
  const first = cs[0];
  if (!first) return { count: 0, rabbitmq: undefined, partitionHandling: undefined, featureFlags: undefined, amqpPort: undefined, filesFrom: [], madeWith: [] };
  return {
    count: cs.length,
    madeWith: cs.map((c) => ({ container: c.name, image: c.image, imageId: c.imageId, streamPort: envValue(c.env, 'RMQ_BENCH_STREAM_PORT') })),
    filesFrom: cs.map((c) => ({ container: c.name, source: c.binds.find((b) => b.destination === CLUSTER_FILES_MOUNT)?.source })),
    amqpPort: first.hostPorts['5672/tcp'],
    rabbitmq: envValue(first.env, 'RMQ_BENCH_RABBITMQ') ?? DEFAULT_RABBITMQ_LINE,
    partitionHandling: envValue(first.env, 'RMQ_BENCH_PARTITION_HANDLING') || undefined,
    featureFlags: envValue(first.env, 'RMQ_BENCH_FEATURE_FLAGS') || undefined,
  };
}

/** Whether compose kept the first node's data volume of this cluster (a `cluster down` without --volumes): its node has booted. */
export async function dataVolumeKept(docker: Docker, config: Config): Promise<boolean> {
  const labels = [`com.docker.compose.project=${config.composeProject}`, 'com.docker.compose.volume=rabbit1-data'];
  const r = await docker.listVolumes({ filters: { label: labels } });
  return (r.Volumes ?? []).length > 0;
}

/** How many of the cluster's possible nodes have a container now (0: none, a cluster not created yet). */
export async function existingNodeCount(docker: Docker, config: Config): Promise<number> {
  return (await existingCluster(docker, config)).count;
}

/**
 * The cluster's containers publish their ports where they were created: a command for the same
 * name with other ports would mix this cluster's containers with whatever answers on those ports
 * (another cluster's management API). Refused, with the ports to give.
 */
export function checkPublishedPorts(existing: ExistingCluster, config: Config): void {
  const wanted = config.nodes[0]!.amqpPort;
  if (existing.count === 0 || existing.amqpPort === undefined || existing.amqpPort === wanted) return;
  const name = config.clusterName === DEFAULT_CLUSTER_NAME ? '' : ` --name ${config.clusterName}`;
  throw new UsageError(
    `the cluster${name ? ` ${config.clusterName}` : ''} publishes AMQP on ${existing.amqpPort}, not ${wanted}: its containers were made with other ports`,
    {
      hint: `give its ports ('rmq-bench cluster up${name} --amqp-port ${existing.amqpPort} ...', or RMQ_BENCH_AMQP_PORT=${existing.amqpPort}), or 'rmq-bench cluster down${name}' first to move it`,
    },
  );
}

/**
 * A cluster is not upgraded or downgraded in place (its data volumes belong to its version, and
 * RabbitMQ upgrades one minor at a time): asking for another line than its containers run is
 * refused with the way to a fresh cluster of that version.
 */
export function checkLine(existing: ExistingCluster, wanted: RabbitmqLine, clusterName: string): void {
  if (existing.count === 0 || existing.rabbitmq === wanted) return;
  const name = clusterName === DEFAULT_CLUSTER_NAME ? '' : ` --name ${clusterName}`;
  throw new UsageError(`the cluster${name ? ` ${clusterName}` : ''} runs RabbitMQ ${existing.rabbitmq}, not ${wanted}: it is not changed in place`, {
    hint: `'rmq-bench cluster reset --hard --rabbitmq ${wanted}${name}' makes a fresh ${wanted} cluster (its data is removed), or another --name and ports keep this one`,
  });
}

/**
 * Feature flags are decided on a node's first boot, once (RABBITMQ_FEATURE_FLAGS is read then
 * only): asking for the required flags alone of a cluster whose nodes have booted (its containers,
 * or data volumes a `cluster down` kept) would change nothing, so it is refused with the way to a
 * fresh cluster. The stable set asked of a cluster made with the required one is let through: the
 * containers are made again (the data stays), and the nodes keep the flags they have. Pure.
 */
export function checkFeatureFlags(
  existing: Pick<ExistingCluster, 'count' | 'featureFlags'>,
  volumesKept: boolean,
  wanted: FeatureFlagSet,
  clusterName: string,
): void {
  if (wanted !== 'required') return;
  if (existing.count > 0 ? existing.featureFlags === 'required' : !volumesKept) return;
  const name = clusterName === DEFAULT_CLUSTER_NAME ? '' : ` --name ${clusterName}`;
  const what = existing.count > 0 ? 'was made with every stable feature flag enabled' : 'kept its data volumes: its nodes have booted';
  throw new UsageError(
    `feature flags are chosen on a node's first boot, and the cluster${name ? ` ${clusterName}` : ''} ${what}: --feature-flags required changes nothing there`,
    {
      hint: `'rmq-bench cluster reset --hard --feature-flags required${name}' makes a fresh cluster with only the required flags enabled (its data is removed)`,
    },
  );
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

/**
 * Why the cluster's containers are older than what this rmq-bench makes, so that a restart would
 * boot them against cluster files they cannot run (a plugin their image lacks): one was made
 * without the stream port the node advertises now, from an image its tag no longer names (built
 * again since), or from a built image that lacks what cluster/enabled_plugins asks now.
 * undefined when each is as it would be made now. Such containers are made again (the image
 * rebuilt first when stale; the data volumes stay), never trusted as "already up". Pure:
 * `tagNow` tells what a tag names now.
 */
export function staleContainers(
  existing: Pick<ExistingCluster, 'madeWith'>,
  streamPort: number,
  tagNow: (tag: string) => { id: string | undefined; stale: string | undefined },
): string | undefined {
  for (const c of existing.madeWith) {
    if (c.streamPort !== String(streamPort)) return `${c.container} was made without the stream port ${streamPort}`;
    if (c.image === undefined) continue;
    const now = tagNow(c.image);
    if (now.stale !== undefined) return `${c.container} runs ${c.image}, and ${now.stale}`;
    if (now.id !== undefined && c.imageId !== undefined && now.id !== c.imageId) return `${c.container} runs an older build of ${c.image}`;
  }
  return undefined;
}

/**
 * Why the cluster's containers are not this checkout's: one mounts its cluster files from
 * another folder (another clone, the installed package), or from a folder that no longer exists
 * (a deleted clone: its next start fails on the missing mount). undefined when every container
 * mounts `clusterDir`, or none exists. Such containers are made again from this checkout's
 * files (the data volumes stay), never trusted as "already up". Pure: `exists` tells whether a
 * host path exists.
 */
export function foreignFiles(existing: Pick<ExistingCluster, 'filesFrom'>, clusterDir: string, exists: (p: string) => boolean): string | undefined {
  for (const { container, source } of existing.filesFrom) {
    if (source === undefined) return `${container} mounts no cluster files`;
    if (path.resolve(source) === path.resolve(clusterDir)) continue;
    return exists(source) ? `${container} was made from another checkout (${source})` : `${container} was made from ${source}, which no longer exists`;
  }
  return undefined;
}
