import net from 'node:net';
import { amqpUrl, managementUrl, type NodeSpec } from '../config.js';
import type { Context } from '../context.js';
import { BrokerUnavailableError, PortTakenError, errorMessage } from '../errors.js';
import { maskUrl } from '../url.js';
import { retryUntil } from '../util/retry.js';
import { loadDefinitions, quorumQueues, type Definitions } from './definitions.js';
import { healAlarms } from './alarms.js';
import { execIn, inspectContainer, type ContainerInfo, type Docker } from './engine.js';
import { ensureImage, type ImageResult } from './image.js';
import { healNetFaults } from './netfaults.js';
import type { QueueLeadership } from './leader.js';
import type { ManagementClient } from './management.js';

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

export function endpoints(ctx: Context): NodeEndpoint[] {
  return ctx.config.nodes.map((n) => ({ name: n.container, amqpUrl: maskUrl(amqpUrl(ctx.config, n)), managementUrl: managementUrl(ctx.config, n) }));
}

/** Resolves true when nothing listens on host:port. */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * The nodes' containers. docker-compose.yml has no healthcheck: one every 5 s cost a docker exec
 * per node (dockerd, runc and the check: about 65 ms of CPU each, and a whole second each while it
 * was `rabbitmq-diagnostics ping`), a tax on every figure measured beside it. A running node
 * without one is healthy once its own management API answers (the listeners open at the end of
 * the boot). A container from an older docker-compose.yml keeps docker's health status.
 */
async function containers(ctx: Context, docker: Docker, nodes: readonly NodeSpec[]): Promise<ContainerInfo[]> {
  return Promise.all(
    nodes.map(async (n): Promise<ContainerInfo> => {
      const c = await inspectContainer(docker, n.container);
      if (c.state !== 'running' || c.health !== 'none') return c;
      return { ...c, health: (await answers(ctx, n)) ? 'healthy' : 'starting' };
    }),
  );
}

/** Whether the node's own management API answers (not another node's, as ctx.management.get would). */
async function answers(ctx: Context, node: NodeSpec): Promise<boolean> {
  try {
    await ctx.management.requestOn(managementUrl(ctx.config, node), 'GET', '/api/whoami');
    return true;
  } catch {
    return false;
  }
}

/** The queues a definitions file declares as quorum queues, with their leadership now. */
async function quorumState(mgmt: ManagementClient, defs: Definitions, exclude?: readonly string[]): Promise<QueueLeadership[]> {
  return Promise.all(quorumQueues(defs).map((q) => mgmt.queue(q.vhost, q.name, exclude)));
}

function fullyReplicated(queues: QueueLeadership[], size: number): boolean {
  return queues.every((q) => q.leader !== undefined && q.members.length >= size && q.online.length >= size);
}

/** Everything `cluster up` waits for, checked once: all containers healthy, 3 running nodes, queues replicated. */
export async function clusterIsReady(ctx: Context, defs: Definitions): Promise<boolean> {
  const docker = await ctx.docker();
  const cs = await containers(ctx, docker, ctx.config.nodes);
  if (!cs.every((c) => c.state === 'running' && (c.health === 'healthy' || c.health === 'none'))) return false;
  try {
    const nodes = await ctx.management.nodes();
    if (nodes.filter((n) => n.running).length < ctx.config.nodes.length) return false;
    return fullyReplicated(await quorumState(ctx.management, defs), ctx.config.nodes.length);
  } catch {
    return false;
  }
}

/**
 * Undo faults a previous run left behind (failover --no-restore, a killed process): unpause
 * paused nodes, reconnect nodes cut off from the project network, and remove our iptables
 * rules (partition) and netem qdiscs (latency) from the nodes' network namespaces. Stopped
 * nodes are started by compose.
 */
async function heal(ctx: Context, docker: Docker): Promise<void> {
  const network = `${ctx.config.composeProject.replace(/[^a-z0-9_-]/gi, '').toLowerCase()}_default`;
  for (const node of ctx.config.nodes) {
    const c = docker.getContainer(node.container);
    let info: Awaited<ReturnType<typeof c.inspect>>;
    try {
      info = await c.inspect();
    } catch {
      continue;
    }
    if (info.State.Paused) {
      ctx.progress.info(`${node.name} was paused: unpausing it`);
      await c.unpause();
    }
    const attached = Object.keys(info.NetworkSettings.Networks ?? {});
    if (info.State.Running && attached.length === 0) {
      ctx.progress.info(`${node.name} was cut off from ${network}: reconnecting it`);
      await docker
        .getNetwork(network)
        .connect({ Container: info.Id, EndpointConfig: { Aliases: [node.name] } })
        .catch((err: unknown) => ctx.log(`could not reconnect ${node.name} to ${network}: ${errorMessage(err)}`));
    }
  }
  await healNetFaults(
    docker,
    ctx.config.nodes.map((n) => n.container),
    ctx.log,
    (line) => ctx.progress.info(line),
  );
}

/** A watermark below this is not a real configuration: alarm-demo's 1 MB, left behind. */
const LEFT_BEHIND_WATERMARK_BYTES = 64 * 1024 * 1024;

/**
 * An alarm in force, or a limit that alarm-demo sets (a killed run leaves it): reset to this
 * project's configuration (healAlarms). The management API's node figures lag by up to 5 s; the
 * common case costs that one request.
 */
async function clearAlarmsLeftBehind(ctx: Context, docker: Docker): Promise<void> {
  const nodes = await ctx.management.nodes().catch(() => []);
  const suspect = nodes.some(
    (n) =>
      n.mem_alarm === true ||
      n.disk_free_alarm === true ||
      (n.mem_limit !== undefined && n.mem_limit < LEFT_BEHIND_WATERMARK_BYTES) ||
      (n.disk_free_limit !== undefined && n.disk_free !== undefined && n.disk_free_limit > n.disk_free),
  );
  if (suspect) await healAlarms(docker, ctx.management, ctx.config.nodes, ctx.log, (line) => ctx.progress.info(line));
}

/** Ports the cluster needs that another process holds (ports of our own running containers are fine). */
async function checkPorts(ctx: Context, cs: ContainerInfo[]): Promise<void> {
  for (const node of ctx.config.nodes) {
    const c = cs.find((x) => x.name === node.container);
    if (c && (c.state === 'running' || c.state === 'paused')) continue;
    const ports: [number, string][] = [
      [node.amqpPort, `${node.name} AMQP`],
      [node.managementPort, `${node.name} management`],
    ];
    if (node.name === ctx.config.nodes[0]?.name) ports.push([ctx.config.prometheusPort, `${node.name} prometheus`]);
    for (const [port, purpose] of ports) {
      if (!(await portIsFree(port))) throw new PortTakenError(port, purpose);
    }
  }
}

/**
 * Add missing quorum queue members. A queue declared from the definitions while only one
 * node had booted has fewer members than the cluster has nodes; `rabbitmq-queues grow`
 * adds them (continuous membership reconciliation would too, but later).
 */
async function growQueues(ctx: Context, docker: Docker): Promise<void> {
  const first = ctx.config.nodes[0]!;
  for (const node of ctx.config.nodes) {
    const r = await execIn(docker, first.container, ['rabbitmq-queues', 'grow', node.nodeName, 'all'], 60_000);
    if (r.exitCode !== 0) ctx.log(`rabbitmq-queues grow ${node.nodeName} failed (exit ${r.exitCode}): ${r.output.trim().split('\n').pop() ?? ''}`);
  }
}

export interface WaitOptions {
  timeoutMs: number;
}

function stopwatch(): () => string {
  const started = performance.now();
  return () => `${Math.round((performance.now() - started) / 1000)} s`;
}

/** Wait until every node's container is healthy and the nodes form one cluster. */
export async function waitForHealthyAndClustered(ctx: Context, options: WaitOptions): Promise<void> {
  const docker = await ctx.docker();
  const { progress, signal, config } = ctx;
  const started = performance.now();
  const left = (): number => Math.max(1_000, options.timeoutMs - (performance.now() - started));
  const secs = stopwatch();
  const label = (c: ContainerInfo): string => `${c.name} ${c.state === 'running' ? c.health : c.state}`;

  await retryUntil(
    () => containers(ctx, docker, config.nodes),
    (cs) => {
      progress.update(`waiting for the nodes to be healthy (${cs.map(label).join(', ')}) ${secs()}`);
      return cs.every((c) => c.state === 'running' && c.health === 'healthy');
    },
    {
      timeoutMs: left(),
      intervalMs: 1_000,
      signal,
      describe: (last) => `nodes not healthy (last state: ${last.value?.map(label).join(', ') ?? errorMessage(last.error)})`,
      hint: "see 'rmq-bench cluster logs'",
    },
  );

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

/** Grow quorum queues that have fewer members than the cluster has nodes. */
export async function ensureReplicated(ctx: Context, defs: Definitions): Promise<void> {
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
export async function waitForReplicated(ctx: Context, defs: Definitions, options: WaitOptions): Promise<QueueLeadership[]> {
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

async function versionOf(ctx: Context): Promise<string | undefined> {
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
export async function clusterUp(ctx: Context, options: WaitOptions): Promise<UpResult> {
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

  await heal(ctx, docker);
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
  await checkPorts(ctx, await containers(ctx, docker, config.nodes));
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

export async function clusterDown(ctx: Context, options: { volumes: boolean }): Promise<{ elapsedMs: number; volumes: boolean }> {
  const started = performance.now();
  await ctx.docker();
  const compose = await ctx.compose();
  ctx.progress.start(`stopping and removing rabbit1..3${options.volumes ? ' and their data volumes' : ''}`);
  await compose.down(options);
  ctx.progress.succeed(`cluster down${options.volumes ? ' (volumes removed)' : ''}`);
  return { elapsedMs: performance.now() - started, volumes: options.volumes };
}

export interface NodeStatus {
  name: string;
  /** Its loopback ports (127.0.0.1). */
  amqpPort: number;
  managementPort: number;
  container: ContainerInfo['state'];
  health: ContainerInfo['health'];
  /** As the cluster sees it (management API), or undefined when no node answered. */
  running: boolean | undefined;
  version: string | undefined;
  erlangVersion: string | undefined;
  alarms: string[];
  partitions: string[];
}

/** A queue's leadership as `cluster status` shows it. */
export type QueueStatus = QueueLeadership;

export interface StatusResult {
  /** Which cluster: RMQ_BENCH_NAME or --name (the compose project; its containers are the nodes' names). */
  cluster: string;
  /** rabbit1's Prometheus port on 127.0.0.1. */
  prometheusPort: number;
  /** Whether any management endpoint answered. */
  reachable: boolean;
  nodes: NodeStatus[];
  queues: QueueStatus[];
}

/** Per node: container state, version, alarms. Per quorum queue: leader, members, online. Asks any live node. */
export async function clusterStatus(ctx: Context): Promise<StatusResult> {
  const docker = await ctx.docker();
  const { config, management } = ctx;
  const cs = await containers(ctx, docker, config.nodes);
  const exclude = config.nodes.filter((_, i) => cs[i]!.state !== 'running').map((n) => n.name);
  let reachable = true;
  const nodeInfos = await management.nodes(exclude).catch(() => {
    reachable = false;
    return [];
  });
  const queues = reachable ? (await management.queues(config.vhost, exclude).catch(() => [])).filter((q) => q.type === 'quorum') : [];
  const nodes = await Promise.all(
    config.nodes.map(async (n, i): Promise<NodeStatus> => {
      const c = cs[i]!;
      const info = nodeInfos.find((x) => x.name === n.nodeName);
      const overview = c.state === 'running' ? await management.overviewOn(managementUrl(config, n)).catch(() => undefined) : undefined;
      const alarms = [...(info?.mem_alarm ? ['memory'] : []), ...(info?.disk_free_alarm ? ['disk'] : [])];
      return {
        name: n.container,
        amqpPort: n.amqpPort,
        managementPort: n.managementPort,
        container: c.state,
        health: c.health,
        running: info ? info.running : undefined,
        version: overview?.rabbitmq_version,
        erlangVersion: overview?.erlang_version,
        alarms,
        partitions: info?.partitions ?? [],
      };
    }),
  );
  return {
    cluster: config.clusterName,
    prometheusPort: config.prometheusPort,
    reachable,
    nodes,
    queues: queues.map(({ name, type, leader, members, online, messages }) => ({ name, type, leader, members, online, messages })),
  };
}

export interface ResetResult {
  hard: boolean;
  deletedQueues: string[];
  purgedQueues: { name: string; messages: number }[];
  deletedExchanges: string[];
  deletedPolicies: string[];
  elapsedMs: number;
}

/**
 * A clean state for an isolated demo, without restarting the nodes: delete queues, exchanges
 * and policies the definitions do not declare, purge the declared queues, re-apply the
 * definitions, and wait until the quorum queues are fully replicated again.
 */
export async function clusterReset(ctx: Context, options: WaitOptions): Promise<ResetResult> {
  const started = performance.now();
  const { management: m, config, progress } = ctx;
  const defs = await loadDefinitions(config.definitionsFile);
  progress.start('resetting the cluster to cluster/definitions.json');
  const vh = encodeURIComponent(config.vhost);
  const declaredQ = new Set(defs.queues.filter((q) => q.vhost === config.vhost).map((q) => q.name));
  const declaredX = new Set(defs.exchanges.filter((x) => x.vhost === config.vhost).map((x) => x.name));
  const declaredP = new Set(defs.policies.filter((p) => p.vhost === config.vhost).map((p) => p.name));

  const queues = (await m.get(`/api/queues/${vh}?disable_stats=true&enable_queue_totals=true`)) as { name: string; messages?: number }[];
  const deletedQueues: string[] = [];
  const purgedQueues: { name: string; messages: number }[] = [];
  for (const q of queues) {
    const path = `/api/queues/${vh}/${encodeURIComponent(q.name)}`;
    if (declaredQ.has(q.name)) {
      await m.request('DELETE', `${path}/contents`);
      purgedQueues.push({ name: q.name, messages: q.messages ?? 0 });
    } else {
      await m.request('DELETE', path);
      deletedQueues.push(q.name);
    }
  }
  const exchanges = (await m.get(`/api/exchanges/${vh}`)) as { name: string }[];
  const deletedExchanges: string[] = [];
  for (const x of exchanges) {
    if (x.name === '' || x.name.startsWith('amq.') || declaredX.has(x.name)) continue;
    await m.request('DELETE', `/api/exchanges/${vh}/${encodeURIComponent(x.name)}`);
    deletedExchanges.push(x.name);
  }
  const policies = (await m.get(`/api/policies/${vh}`)) as { name: string }[];
  const deletedPolicies: string[] = [];
  for (const p of policies) {
    if (declaredP.has(p.name)) continue;
    await m.request('DELETE', `/api/policies/${vh}/${encodeURIComponent(p.name)}`);
    deletedPolicies.push(p.name);
  }
  progress.update('re-applying cluster/definitions.json');
  const { readFile } = await import('node:fs/promises');
  await m.request('POST', '/api/definitions', { body: JSON.parse(await readFile(config.definitionsFile, 'utf8')) });
  await ensureReplicated(ctx, defs);
  await waitForReplicated(ctx, defs, options);
  progress.succeed(
    `reset: ${deletedQueues.length} queues deleted, ${purgedQueues.reduce((a, q) => a + q.messages, 0)} messages purged, ${deletedExchanges.length} exchanges and ${deletedPolicies.length} policies deleted`,
  );
  return { hard: false, deletedQueues, purgedQueues, deletedExchanges, deletedPolicies, elapsedMs: performance.now() - started };
}

export async function clusterLogs(ctx: Context, options: { node?: string; follow: boolean; tail?: number }): Promise<void> {
  await ctx.docker();
  const compose = await ctx.compose();
  await compose.logs({ follow: options.follow, ...(options.node ? { service: options.node } : {}), ...(options.tail ? { tail: options.tail } : {}) });
}

/** Throw a clear error when the cluster is not up (for commands that need it). */
export async function requireCluster(ctx: Context): Promise<void> {
  try {
    await ctx.management.nodes();
  } catch (err) {
    throw new BrokerUnavailableError(`the cluster is not up: ${errorMessage(err)}`, { hint: "start it with 'rmq-bench cluster up'" });
  }
}
