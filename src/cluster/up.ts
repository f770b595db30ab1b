import { amqpUrl, managementUrl } from '../config.js';
import { maskUrl } from '../url.js';
import type { ClusterContext } from './cluster-ctx.js';
import { loadDefinitions } from './definitions.js';
import { clearAlarmsLeftBehind, healFaultsLeftBehind } from './heal.js';
import { ensureImage, type ImageResult } from './image.js';
import { checkPorts } from './ports.js';
import { clusterIsReady, nodeContainers, waitForHealthyAndClustered } from './readiness.js';
import { ensureReplicated, waitForReplicated } from './replication.js';
import type { WaitOptions } from './wait.js';

export interface NodeEndpoint {
  name: string;
  amqpUrl: string;
  managementUrl: string;
}

export interface UpResult {
  alreadyUp: boolean;
  elapsedMs: number;
  image: ImageResult | undefined;
  composeTool: string | undefined;
  version: string | undefined;
  nodes: NodeEndpoint[];
  prometheusUrl: string;
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
 * Bring the cluster up and wait until it is usable: 3 healthy nodes in one cluster, the
 * definitions loaded, every quorum queue on 3 online members. Idempotent: a cluster that is
 * already so is left alone, in well under a second.
 */
export async function clusterUp(ctx: ClusterContext, options: WaitOptions): Promise<UpResult> {
  const started = performance.now();
  const { progress, config } = ctx;
  progress.start('checking cluster/definitions.json');
  const defs = await loadDefinitions(config.definitionsFile);
  progress.update('connecting to the Docker engine');
  const docker = await ctx.docker();
  const base = { nodes: endpoints(ctx), prometheusUrl: `http://${config.host}:${config.prometheusPort}/metrics` };

  if (await clusterIsReady(ctx, defs)) {
    await clearAlarmsLeftBehind(ctx, docker);
    progress.succeed('cluster already up');
    return { alreadyUp: true, elapsedMs: performance.now() - started, image: undefined, composeTool: undefined, version: await versionOf(ctx), ...base };
  }

  await healFaultsLeftBehind(ctx, docker);
  if (await clusterIsReady(ctx, defs)) {
    await clearAlarmsLeftBehind(ctx, docker);
    progress.succeed('cluster up again (faults left behind were undone)');
    return { alreadyUp: false, elapsedMs: performance.now() - started, image: undefined, composeTool: undefined, version: await versionOf(ctx), ...base };
  }

  progress.update('looking for a compose tool');
  const compose = await ctx.compose();
  progress.update('looking for the RabbitMQ image');
  const image = await ensureImage(docker, config, progress);
  if (image.how !== 'present') progress.succeed(`image ${image.image} ${image.how} in ${Math.round(image.elapsedMs / 1000)} s`);
  progress.start('checking ports');
  await checkPorts(ctx, await nodeContainers(ctx, docker, config.nodes));
  progress.update(`starting rabbit1..3 (${compose.kind === 'v2' ? 'docker compose' : 'docker-compose'} ${compose.version}, image ${image.image})`);
  await compose.up({ RMQ_BENCH_IMAGE: image.image });

  const waitStarted = performance.now();
  const remaining = (): WaitOptions => ({ timeoutMs: Math.max(1_000, options.timeoutMs - (performance.now() - waitStarted)) });
  await waitForHealthyAndClustered(ctx, remaining());
  await ensureReplicated(ctx, defs);
  await waitForReplicated(ctx, defs, remaining());
  // A node compose did not restart keeps a limit a killed run set (a restarted one reads rabbitmq.conf again).
  await clearAlarmsLeftBehind(ctx, docker);
  const version = await versionOf(ctx);
  progress.succeed(`cluster up: 3 nodes, RabbitMQ ${version ?? '?'}, in ${Math.round((performance.now() - started) / 1000)} s`);
  return {
    alreadyUp: false,
    elapsedMs: performance.now() - started,
    image,
    composeTool: `${compose.kind === 'v2' ? 'docker compose' : 'docker-compose'} ${compose.version}`,
    version,
    ...base,
  };
}
