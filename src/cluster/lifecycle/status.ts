import { managementUrl } from '../../config.js';
import type { ClusterContext } from '../cluster-ctx.js';
import type { ContainerInfo } from '../docker/engine.js';
import type { QueueLeadership } from '../broker/queue-leadership.js';
import type { MendWhy } from '../mend/mend-plan.js';
import { mendAdvice, mendGraceMs } from '../mend/partition-mend.js';
import { nodeContainers } from './readiness.js';
import { type CoordinatorState, coordinatorState, coordinatorViews } from './stream-coordinator.js';

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
  /**
   * RabbitMQ before 4.3 (a partition can outlive its fault): whether the cluster is whole by
   * every node's own answer, and what `cluster up` does to end a split (the same plan,
   * mend-plan.ts). null on 4.3, where no partition outlives its fault.
   */
  mend: StatusMend | null;
  /** The stream coordinator by every node's own word (stream-coordinator.ts): its members, and those stranded. */
  streamCoordinator: CoordinatorState;
}

export interface StatusMend {
  /** Every node answers, sees every other running, and none reports a partition. */
  whole: boolean;
  /** The nodes `cluster up` restarts (empty: none now). */
  restart: string[];
  why: MendWhy | null;
  /** For people: what the nodes report and what up does. */
  text: string;
}

/** Per node: container state, version, alarms. Per quorum queue: leader, members, online. Asks any live node. */
export async function clusterStatus(ctx: ClusterContext): Promise<StatusResult> {
  const docker = await ctx.docker();
  const { config, management } = ctx;
  const cs = await nodeContainers(ctx, docker, config.nodes);
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
  let mend: StatusMend | null = null;
  if (mendGraceMs(config) !== null) {
    const advice = await mendAdvice(config, management, docker);
    mend = {
      whole: advice.views.whole && advice.views.healing.length === 0,
      restart: advice.step.action === 'restart' ? advice.step.nodes : [],
      why: advice.step.action === 'restart' ? advice.step.why : null,
      text: advice.step.action === 'wait' && advice.step.why !== 'healing' ? 'not every node answers and sees every other running yet' : advice.text,
    };
  }
  const streamCoordinator = coordinatorState(await coordinatorViews(ctx, docker));
  return {
    mend,
    streamCoordinator,
    cluster: config.clusterName,
    prometheusPort: config.prometheusPort,
    reachable,
    nodes,
    queues: queues.map(({ name, type, leader, members, online, messages }) => ({ name, type, leader, members, online, messages })),
  };
}
