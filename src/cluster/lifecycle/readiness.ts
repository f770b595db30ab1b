import net from 'node:net';
import { managementUrl, type NodeSpec } from '../../config.js';
import { BrokerUnavailableError, errorMessage } from '../../errors.js';
import { retryUntil, withDeadline } from '../../util/retry.js';
import type { ClusterContext } from '../cluster-ctx.js';
import type { Definitions } from './definitions.js';
import { inspectContainer, type ContainerInfo, type Docker } from '../docker/engine.js';
import { planExited, whyExited } from './exited-nodes.js';
import { mendGraceMs, nodeViews } from '../mend/partition-mend.js';
import { fullyReplicated, quorumState } from './replication.js';
import { stopwatch, type WaitOptions } from './wait.js';

/**
 * The nodes' containers, with their health. docker-compose.yml declares no healthcheck: a
 * periodic check costs a docker exec per node (dockerd, runc and the check itself), CPU taken
 * from every figure measured beside it. So a running node without one is healthy once its own
 * management API answers and its AMQP listener opens a connection: the listener opens at the
 * end of the boot, while the management API can answer long before (3.10 opens it before it
 * imports the definitions, which can take a minute while another node joins). A container made
 * from a docker-compose.yml that declares a healthcheck keeps docker's health status.
 */
export async function nodeContainers(ctx: ClusterContext, docker: Docker, nodes: readonly NodeSpec[]): Promise<ContainerInfo[]> {
  return Promise.all(
    nodes.map(async (n): Promise<ContainerInfo> => {
      const c = await inspectContainer(docker, n.container);
      if (c.state !== 'running' || c.health !== 'none') return c;
      const healthy = (await answers(ctx, n)) && (await amqpAnswers(ctx.config.host, n.amqpPort, ctx.signal));
      return { ...c, health: healthy ? 'healthy' : 'starting' };
    }),
  );
}

/** Whether the node's own management API answers (not another node's, as ctx.management.get would). */
async function answers(ctx: ClusterContext, node: NodeSpec): Promise<boolean> {
  try {
    await ctx.management.requestOn(managementUrl(ctx.config, node), 'GET', '/api/whoami');
    return true;
  } catch {
    return false;
  }
}

/** The protocol header of AMQP 0-9-1: a broker's listener answers it with connection.start. */
const AMQP_HEADER = Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1]);
const AMQP_PROBE_TIMEOUT_MS = 3_000;

/**
 * Whether a broker's AMQP listener is open at host:port: it answers the protocol header with a
 * frame. A connection alone proves nothing: docker's port proxy accepts it whether or not the
 * node listens, and then closes it.
 */
export function amqpAnswers(host: string, port: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (answered: boolean): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      socket.destroy();
      resolve(answered);
    };
    const abort = (): void => done(false);
    const timer = setTimeout(abort, AMQP_PROBE_TIMEOUT_MS);
    signal?.addEventListener('abort', abort, { once: true });
    socket.once('connect', () => socket.write(AMQP_HEADER));
    socket.once('data', () => done(true));
    socket.once('error', abort);
    socket.once('close', abort);
  });
}

/** Everything `cluster up` waits for, checked once: all containers healthy, 3 running nodes, no partition reported, queues replicated. */
export async function clusterIsReady(ctx: ClusterContext, defs: Definitions): Promise<boolean> {
  const docker = await ctx.docker();
  const cs = await nodeContainers(ctx, docker, ctx.config.nodes);
  if (!cs.every((c) => c.state === 'running' && (c.health === 'healthy' || c.health === 'none'))) return false;
  try {
    const nodes = await ctx.management.nodes();
    if (nodes.filter((n) => n.running).length < ctx.config.nodes.length) return false;
    // A partition the nodes still report (RabbitMQ before 4.3 keeps one with partition handling ignore).
    if (nodes.some((n) => (n.partitions?.length ?? 0) > 0)) return false;
    // Before 4.3, each node's own view as well, and no autoheal round under way: the mend's (what cluster status calls whole).
    if (mendGraceMs(ctx.config) !== null) {
      const views = await nodeViews(ctx.config, ctx.management, docker);
      if (!views.whole || views.healing.length > 0) return false;
    }
    return fullyReplicated(await quorumState(ctx.management, defs), ctx.config.nodes.length);
  } catch {
    return false;
  }
}

/** Wait until every node's container is healthy and the nodes form one cluster. */
export async function waitForHealthyAndClustered(ctx: ClusterContext, options: WaitOptions): Promise<void> {
  const docker = await ctx.docker();
  const { progress, signal, config } = ctx;
  const started = performance.now();
  const left = (): number => Math.max(1_000, options.timeoutMs - (performance.now() - started));
  const secs = stopwatch();
  const label = (c: ContainerInfo): string => `${c.name} ${c.state === 'running' ? c.health : c.state}`;

  // A container that exited never becomes healthy by itself: started again, a few times (exited-nodes.ts).
  const starts = new Map<string, number>();
  let gaveUp: string | undefined;
  const look = async (): Promise<ContainerInfo[]> => {
    const cs = await nodeContainers(ctx, docker, config.nodes);
    const plan = planExited(
      cs.filter((c) => c.state === 'stopped').map((c) => c.name),
      starts,
    );
    if (plan.gaveUp !== undefined) {
      gaveUp = `${plan.gaveUp} exited again after ${starts.get(plan.gaveUp)} starts (${await whyExited(docker, plan.gaveUp)})`;
      return cs;
    }
    for (const name of plan.start) {
      progress.info(`${name} exited (${await whyExited(docker, name)}); starting it again`);
      starts.set(name, (starts.get(name) ?? 0) + 1);
      await withDeadline(() => docker.getContainer(name).start(), 30_000, `docker start ${name}`);
    }
    return cs;
  };
  await retryUntil(
    look,
    (cs) => {
      progress.update(`waiting for the nodes to be healthy (${cs.map(label).join(', ')}) ${secs()}`);
      return gaveUp !== undefined || cs.every((c) => c.state === 'running' && c.health === 'healthy');
    },
    {
      timeoutMs: left(),
      intervalMs: 1_000,
      signal,
      describe: (last) => `nodes not healthy (last state: ${last.value?.map(label).join(', ') ?? errorMessage(last.error)})`,
      hint: "see 'rmq-bench cluster logs'",
    },
  );
  if (gaveUp !== undefined) throw new BrokerUnavailableError(gaveUp, { hint: "see 'rmq-bench cluster logs'" });

  const running = (ns: { running: boolean }[]): string => `${ns.filter((n) => n.running).length} of ${config.nodes.length} nodes running`;
  await retryUntil(
    () => ctx.management.nodes(),
    (ns) => {
      progress.update(`waiting for the cluster to form (${running(ns)}) ${secs()}`);
      return ns.filter((n) => n.running).length >= config.nodes.length;
    },
    {
      timeoutMs: left(),
      intervalMs: 1_000,
      signal,
      describe: (last) => `the cluster did not form (last state: ${last.value ? running(last.value) : errorMessage(last.error)})`,
      hint: "see 'rmq-bench cluster logs'",
    },
  );
}

/** Throw a clear error when the cluster is not up (for commands that need it). */
export async function requireCluster(ctx: ClusterContext): Promise<void> {
  try {
    await ctx.management.nodes();
  } catch (err) {
    if (ctx.management.named)
      throw new BrokerUnavailableError(`the broker named by --management-urls does not answer: ${errorMessage(err)}`, {
        hint: 'check the address, and that its management plugin is enabled',
      });
    throw new BrokerUnavailableError(`the cluster is not up: ${errorMessage(err)}`, { hint: "start it with 'rmq-bench cluster up'" });
  }
}
