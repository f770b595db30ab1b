import { errorMessage } from '../../errors.js';
import { healAlarms } from '../broker/alarms.js';
import type { ClusterContext } from '../cluster-ctx.js';
import type { Docker } from '../docker/engine.js';
import { rejoinForgottenNodes } from './forgotten-nodes.js';
import { healNetFaults } from '../docker/netns.js';
import { mendPartition } from '../mend/partition-mend.js';
import { rabbitState } from '../mend/rabbit-state.js';

/**
 * What a fault can leave behind when its run is killed before the restore, each of which
 * healFaultsLeftBehind finds and undoes. A fault names its own (src/faults/<kind>.ts).
 */
export const LEFTOVERS = {
  'stopped container': 'started again by compose',
  'paused container': 'unpaused',
  'disconnected container': "reconnected to the project's network",
  'iptables rules': "our rules removed from the node's network namespace",
  qdisc: "our netem or tbf root qdisc removed from the node's interfaces",
  partition: 'a partition that outlived its rules ended (partition-mend.ts)',
  'forgotten node': 'reset, joined to the cluster again, its quorum queue members grown back',
  'stopped application': 'the node restarted (a pause_minority pause that outlived its partition, a stop_app left)',
} as const;
export type Leftover = keyof typeof LEFTOVERS;

/**
 * Undo faults a previous run left behind (failover --no-restore, a killed process): unpause
 * paused nodes, reconnect nodes cut off from the project network, and remove our iptables
 * rules (partition) and netem or tbf qdiscs (latency, slow-link) from the nodes' network
 * namespaces, end a partition that outlived its rules (partition-mend.ts), join again a node
 * whose application was stopped and forgotten (membership), and restart a node whose RabbitMQ is
 * stopped in a running container. Stopped containers are started by compose.
 */
export async function healFaultsLeftBehind(ctx: ClusterContext, docker: Docker): Promise<void> {
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
  // A partition that outlived its rules (RabbitMQ before 4.3): ended at once, whatever the partition handling.
  await mendPartition(
    ctx.config,
    ctx.management,
    docker,
    { faulted: [], cuts: [] },
    {
      timeoutMs: 120_000,
      waitForWhole: false,
      graceMs: 0,
      log: ctx.log,
      info: (line) => ctx.progress.info(line),
      update: (line) => ctx.progress.update(line),
    },
  );
  for (const name of await rejoinForgottenNodes(ctx, docker)) ctx.progress.info(`${name} had left the cluster (membership): joined it again`);
  await restartStoppedNodes(ctx, docker);
}

/**
 * A node whose RabbitMQ application is stopped, by its own word, in a running container: a
 * pause_minority pause that outlived its partition, or a start that failed (3.10.8 was seen to
 * fail one in its management agent after a partition, leaving every node stopped). Restarted
 * (docker restart: a clean stop, then a start). A node the cluster no longer lists is left to
 * rejoinForgottenNodes: restarted, a forgotten node would not rejoin.
 */
async function restartStoppedNodes(ctx: ClusterContext, docker: Docker): Promise<void> {
  const listed = await ctx.management.nodes().catch(() => undefined);
  for (const node of ctx.config.nodes) {
    if (listed && !listed.some((l) => l.name === node.nodeName)) continue;
    if ((await rabbitState(docker, node)) !== 'stopped') continue;
    ctx.progress.info(`RabbitMQ on ${node.name} was stopped with its container running: restarting it`);
    await docker
      .getContainer(node.container)
      .restart({ t: 10 })
      .catch((err: unknown) => ctx.log(`could not restart ${node.name}: ${errorMessage(err)}`));
  }
}

/** A watermark below this is not a real configuration: alarm-demo's 1 MB, left behind. */
const LEFT_BEHIND_WATERMARK_BYTES = 64 * 1024 * 1024;

/**
 * An alarm in force, or a limit that alarm-demo sets (a killed run leaves it): reset to this
 * project's configuration (healAlarms). The management API's node figures lag by up to 5 s; the
 * common case costs that one request.
 */
export async function clearAlarmsLeftBehind(ctx: ClusterContext, docker: Docker): Promise<void> {
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
