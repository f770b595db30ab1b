import { existsSync } from 'node:fs';
import path from 'node:path';
import { requireFeature, versionAtLeast } from '../../broker-versions.js';
import { amqpUrl, type FeatureFlagSet, managementUrl, NODE_COUNTS, type NodeCount, type PartitionHandling } from '../../config.js';
import { maskUrl } from '../../url.js';
import type { ClusterContext } from '../cluster-ctx.js';
import { loadDefinitions } from './definitions.js';
import { clearAlarmsLeftBehind, healFaultsLeftBehind } from './heal.js';
import { ensureImage, type ImageResult, imageNow } from '../docker/image.js';
import { checkPorts } from './ports.js';
import { clusterIsReady, nodeContainers, waitForHealthyAndClustered } from './readiness.js';
import {
  checkFeatureFlags,
  checkLine,
  checkNodeCount,
  checkPublishedPorts,
  dataVolumeKept,
  existingCluster,
  existingNodeCount,
  foreignFiles,
  staleContainers,
  writeClusterRecord,
} from './record.js';
import { waitForReplicated } from './replication.js';
import { repairStreamCoordinator } from './stream-coordinator.js';
import type { WaitOptions } from './wait.js';

export interface NodeEndpoint {
  name: string;
  amqpUrl: string;
  managementUrl: string;
}

export interface UpResult {
  alreadyUp: boolean;
  /** How many nodes the cluster runs (3 or 5). */
  nodeCount: number;
  elapsedMs: number;
  image: ImageResult | undefined;
  composeTool: string | undefined;
  /** The RabbitMQ line asked for (3.10, 4.0, 4.3). */
  rabbitmq: string;
  /** What the nodes report (4.3.6). */
  version: string | undefined;
  /** cluster_partition_handling as configured (null: the broker's default). */
  partitionHandling: PartitionHandling | null;
  /** Which feature flags the nodes enabled on their first boot (config.ts, FEATURE_FLAG_SETS). */
  featureFlags: FeatureFlagSet;
  nodes: NodeEndpoint[];
  prometheusUrl: string;
  /** What was done to make the stream coordinator whole again, a line each (stream-coordinator.ts); empty: nothing. */
  streamCoordinatorRepairs: string[];
}

export function endpoints(ctx: ClusterContext): NodeEndpoint[] {
  return ctx.config.nodes.map((n) => ({ name: n.container, amqpUrl: maskUrl(amqpUrl(ctx.config, n)), managementUrl: managementUrl(ctx.config, n) }));
}

/** The RabbitMQ version the first node that answers reports, or undefined when none does. */
async function versionOf(ctx: ClusterContext): Promise<string | undefined> {
  for (const n of ctx.config.nodes) {
    try {
      return (await ctx.management.overviewOn(managementUrl(ctx.config, n))).rabbitmq_version;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/**
 * The node count `cluster up` brings up: the one asked for (refused when the cluster's containers
 * exist with another count), else the count of the containers that exist, else the configured one.
 */
export async function chooseNodeCount(ctx: ClusterContext, asked: NodeCount | undefined): Promise<NodeCount> {
  const existing = await existingNodeCount(await ctx.docker(), ctx.config);
  if (asked !== undefined) {
    checkNodeCount(existing, asked, ctx.config.clusterName);
    return asked;
  }
  return (NODE_COUNTS as readonly number[]).includes(existing) ? (existing as NodeCount) : (ctx.config.nodes.length as NodeCount);
}

/**
 * What a cluster with only the required feature flags does to the quorum queues grown as its
 * nodes join, where quorum_queue_non_voters is a stable flag (4.0 to 4.2; 4.3 requires it), or
 * undefined. Measured on 4.0.5: the new members start as non-voters (quorum_status: promotable)
 * while the leader adds them as voters; a consumer on their nodes is delivered nothing, and when
 * the leader's node fails no leader is elected, also once the flags are enabled. Pure.
 */
export function nonVoterMembersWarning(version: string): string | undefined {
  if (!versionAtLeast(version, '4.0') || versionAtLeast(version, '4.3')) return undefined;
  return `with quorum_queue_non_voters disabled, RabbitMQ ${version} made the members grown as the nodes joined (the definitions' quorum queues) followers that count themselves non-voters: a consumer on their nodes is delivered nothing, and no leader is elected when the leader's node fails. Measure on a quorum queue declared now that the cluster is whole (compare --queue <it>)`;
}

/** rabbit1..3, rabbit1..5. */
const nodeRange = (ctx: ClusterContext): string => `rabbit1..${ctx.config.nodes.length}`;

/**
 * Bring the cluster up and wait until it is usable: 3 (or 5) healthy nodes in one cluster, the
 * definitions loaded, every quorum queue with a member online on every node, and the stream
 * coordinator's member running on every node it lists (stream-coordinator.ts). Idempotent: a cluster
 * that is already so is left alone, in well under a second. It records the node count for the
 * commands after it (record.ts).
 */
export async function clusterUp(ctx: ClusterContext, options: WaitOptions): Promise<UpResult> {
  const started = performance.now();
  const { progress, config } = ctx;
  progress.start('checking cluster/definitions.json');
  const defs = await loadDefinitions(config.definitionsFile);
  progress.update('connecting to the Docker engine');
  if (config.partitionHandling !== undefined) requireFeature(config.rabbitmq, 'partition-handling', '--partition-handling', 'the cluster is RabbitMQ');
  if (config.featureFlags === 'required') requireFeature(config.rabbitmq, 'required-feature-flags', '--feature-flags required', 'the cluster is RabbitMQ');
  const docker = await ctx.docker();
  const existing = await existingCluster(docker, config);
  checkLine(existing, config.rabbitmq, config.clusterName);
  checkFeatureFlags(
    existing,
    existing.count === 0 && config.featureFlags === 'required' && (await dataVolumeKept(docker, config)),
    config.featureFlags,
    config.clusterName,
  );
  checkPublishedPorts(existing, config);
  // Containers made from another checkout's files, or from files deleted since: made again from ours.
  const tags = new Map<string, Awaited<ReturnType<typeof imageNow>>>();
  for (const c of existing.madeWith) if (c.image !== undefined && !tags.has(c.image)) tags.set(c.image, await imageNow(docker, config, c.image));
  const foreign =
    foreignFiles(existing, path.join(config.projectRoot, 'cluster'), existsSync) ??
    staleContainers(existing, config.nodes[0]!.streamPort, (tag) => tags.get(tag) ?? { id: undefined, stale: undefined });
  if (foreign !== undefined) progress.info(`${foreign}: making the cluster's containers again from ${config.projectRoot} (the data volumes stay)`);
  if (existing.count > 0 && existing.featureFlags === 'required' && config.featureFlags === 'stable')
    progress.info(
      "the nodes keep the feature flags they booted with (the required ones, and those enabled since): 'rabbitmqctl enable_feature_flag all' enables the rest",
    );
  // Another partition handling than the containers were made with: compose makes them again (the data volumes stay).
  const settingsChanged =
    foreign !== undefined ||
    (existing.count > 0 &&
      ((existing.partitionHandling ?? '') !== (config.partitionHandling ?? '') || (existing.featureFlags ?? 'stable') !== config.featureFlags));
  const base = {
    nodeCount: config.nodes.length,
    rabbitmq: config.rabbitmq,
    partitionHandling: config.partitionHandling ?? null,
    featureFlags: config.featureFlags,
    nodes: endpoints(ctx),
    prometheusUrl: `http://${config.host}:${config.prometheusPort}/metrics`,
  };

  // A running cluster: what a killed run left is undone, and nothing is started.
  const upAgain = async (healed: boolean): Promise<UpResult> => {
    await clearAlarmsLeftBehind(ctx, docker);
    const repaired = await repairStreamCoordinator(ctx, docker);
    await writeClusterRecord(config);
    const also = repaired.length === 0 ? '' : 'the stream coordinator made whole';
    const why = [healed ? 'faults left behind were undone' : '', also].filter((w) => w !== '').join('; ');
    progress.succeed(why === '' ? 'cluster already up' : `cluster up again (${why})`);
    const version = await versionOf(ctx);
    const alreadyUp = why === '';
    return {
      alreadyUp,
      elapsedMs: performance.now() - started,
      image: undefined,
      composeTool: undefined,
      version,
      ...base,
      streamCoordinatorRepairs: repaired,
    };
  };
  if (!settingsChanged && (await clusterIsReady(ctx, defs))) return upAgain(false);

  // Containers from other files are made again whatever they show; their faults are undone by the new ones.
  if (foreign === undefined) await healFaultsLeftBehind(ctx, docker);
  if (!settingsChanged && (await clusterIsReady(ctx, defs))) return upAgain(true);

  progress.update('looking for a compose tool');
  const compose = await ctx.compose();
  progress.update('looking for the RabbitMQ image');
  const image = await ensureImage(docker, config, progress);
  if (image.how !== 'present') progress.succeed(`image ${image.image} ${image.how} in ${Math.round(image.elapsedMs / 1000)} s`);
  progress.start('checking ports');
  await checkPorts(ctx, await nodeContainers(ctx, docker, config.nodes));
  progress.update(`starting ${nodeRange(ctx)} (${compose.kind === 'v2' ? 'docker compose' : 'docker-compose'} ${compose.version}, image ${image.image})`);
  await compose.up({ RMQ_BENCH_IMAGE: image.image }, { recreate: foreign !== undefined });

  const waitStarted = performance.now();
  const remaining = (): WaitOptions => ({ timeoutMs: Math.max(1_000, options.timeoutMs - (performance.now() - waitStarted)) });
  await waitForHealthyAndClustered(ctx, remaining());
  await waitForReplicated(ctx, defs, remaining());
  // A node compose did not restart keeps a limit a killed run set (a restarted one reads rabbitmq.conf again).
  await clearAlarmsLeftBehind(ctx, docker);
  const repaired = await repairStreamCoordinator(ctx, docker);
  const version = await versionOf(ctx);
  await writeClusterRecord(config);
  const warning = config.featureFlags === 'required' && version !== undefined ? nonVoterMembersWarning(version) : undefined;
  if (warning !== undefined) progress.warn(warning);
  progress.succeed(
    `cluster up: ${config.nodes.length} nodes, RabbitMQ ${version ?? '?'}${config.partitionHandling ? `, partition handling ${config.partitionHandling}` : ''}${config.featureFlags === 'required' ? ', only the required feature flags enabled' : ''}, in ${Math.round((performance.now() - started) / 1000)} s`,
  );
  return {
    alreadyUp: false,
    elapsedMs: performance.now() - started,
    image,
    composeTool: `${compose.kind === 'v2' ? 'docker compose' : 'docker-compose'} ${compose.version}`,
    version,
    ...base,
    streamCoordinatorRepairs: repaired,
  };
}
