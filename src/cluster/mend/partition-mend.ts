import { versionAtLeast } from '../../broker-versions.js';
import { type Config, managementUrl } from '../../config.js';
import { errorMessage } from '../../errors.js';
import type { Docker } from '../docker/engine.js';
import type { ManagementClient } from '../broker/management.js';
import {
  answerFromOwnView,
  describeStep,
  longOverMemory,
  type MendMemory,
  type MendStep,
  type NodeAnswer,
  type NodeViews,
  observe,
  planMend,
  readViews,
  restarted,
  startMemory,
} from './mend-plan.js';
import { autohealState, ownClusterView, rabbitState } from './rabbit-state.js';

/**
 * A partition that outlives its network fault. RabbitMQ before 4.3 keeps its metadata in Mnesia,
 * and with `cluster_partition_handling = ignore` (its default) a partition stays after the
 * network is back: each side carries on alone and the nodes report each other in `partitions`
 * until an operator restarts the nodes of the side they trust less ("Recovering from a network
 * partition" in RabbitMQ's docs). pause_minority and autoheal end it themselves, and 4.3 has no
 * partitions of this kind (Khepri, Raft). So after a partition fault's rules are removed, on such
 * a cluster rmq-bench does what the operator would: it restarts the nodes of the smaller side,
 * then any node that still reports the partition, until every node runs, sees every other and
 * reports no partition (the steps: mend-plan.ts). What they held alone is discarded by RabbitMQ,
 * as it is for the operator: that is the loss a mirrored queue shows.
 */

/** Whether a partition outlives its network fault on this cluster: Mnesia (before 4.3) with partition handling ignore. Pure. */
export function partitionsOutliveFaults(config: Pick<Config, 'rabbitmq' | 'partitionHandling'>): boolean {
  return !versionAtLeast(`${config.rabbitmq}.0`, '4.3') && (config.partitionHandling ?? 'ignore') === 'ignore';
}

/**
 * How long a partition that is still reported after its rules were removed is left to the
 * broker before rmq-bench restarts the smaller side: at once with ignore (the broker never ends
 * it), a minute with pause_minority or autoheal (they end it themselves; autoheal's rounds are
 * also waited for while one is under way, mend-plan.ts HEALING_MS, and on 3.10 a round was seen
 * to stall, the partition lasting for good); null on 4.3 (Khepri: no such partition). Pure.
 */
export function mendGraceMs(config: Pick<Config, 'rabbitmq' | 'partitionHandling'>): number | null {
  if (versionAtLeast(`${config.rabbitmq}.0`, '4.3')) return null;
  return (config.partitionHandling ?? 'ignore') === 'ignore' ? 0 : AUTOHEAL_GRACE_MS;
}

/** What pause_minority and autoheal are given to end a partition themselves. */
export const AUTOHEAL_GRACE_MS = 60_000;

/**
 * Each node's own answer to /api/nodes; where it gives none, the node's own word on its RabbitMQ,
 * and, if that runs, its own view of the cluster (rabbit-state.ts); read into views.
 */
export async function nodeViews(config: Config, management: ManagementClient, docker: Docker): Promise<NodeViews> {
  const answers = new Map<string, NodeAnswer>();
  await Promise.all(
    config.nodes.map(async (n) => {
      try {
        const nodes = (await management.requestOn(managementUrl(config, n), 'GET', '/api/nodes')) as {
          name?: string;
          running?: boolean;
          partitions?: unknown;
        }[];
        answers.set(n.name, {
          nodes: nodes.map((x) => ({
            name: String(x.name ?? ''),
            running: x.running === true,
            partitions: Array.isArray(x.partitions) ? x.partitions.map(String) : [],
          })),
        });
      } catch {
        const state = await rabbitState(docker, n);
        // Running, but its management API silent: the node's own view, where it gives one.
        const own = state === 'running' ? await ownClusterView(docker, n) : undefined;
        if (own)
          answers.set(
            n.name,
            answerFromOwnView(
              config.nodes.map((x) => x.nodeName),
              n.nodeName,
              own,
            ),
          );
        else answers.set(n.name, { failed: state === 'stopped' || state === 'booting' ? state : 'other' });
      }
    }),
  );
  // Under autoheal, the nodes whose autoheal round is under way: the broker is ending the partition itself.
  const healing =
    config.partitionHandling === 'autoheal' && mendGraceMs(config) !== null
      ? (await Promise.all(config.nodes.map(async (n) => ((await autohealState(docker, n)) === 'healing' ? n.name : undefined)))).filter(
          (n): n is string => n !== undefined,
        )
      : [];
  return readViews(answers, healing);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What `cluster up` would do to a cluster as it is now, and what the nodes say (cluster status): the plan of a fault long over. */
export async function mendAdvice(config: Config, management: ManagementClient, docker: Docker): Promise<{ views: NodeViews; step: MendStep; text: string }> {
  const views = await nodeViews(config, management, docker);
  const now = performance.now();
  const step = planMend(longOverMemory(views, now), views, now, { graceMs: 0, nodes: config.nodes.map((n) => n.name) });
  return { views, step, text: describeStep(step, views, { longOver: true }) };
}

/** How long the mend watches, past its grace, before it says the cluster is not whole: rounds of restarts under load. */
const MEND_TIMEOUT_MS = 360_000;

/**
 * After a partition's rules are removed, on a cluster where a partition can outlive its fault
 * (RabbitMQ before 4.3): look at every node once a second and carry out mend-plan.ts's steps
 * (restart a side with docker restart: a clean stop, then a start) until the cluster is whole or
 * `timeoutMs` past the grace has passed. `fault`: the nodes it was aimed at (short names),
 * restarted first on a tie, and the links it cut (a reported partition is read as their split). Returns the nodes restarted, in order (none: the partition ended by
 * itself). Never throws: a cluster left split is a line on `log`, and the rejoin wait that follows
 * reports it.
 */
export async function mendPartition(
  config: Config,
  management: ManagementClient,
  docker: Docker,
  fault: { faulted: readonly string[]; cuts: readonly (readonly [string, string])[] },
  options: {
    timeoutMs?: number;
    /**
     * false (cluster up's heal): the fault is long over (what the nodes show now has been so for
     * long), and a cluster with nothing to act on now is left to the start that follows (its
     * nodes may be stopped or booting).
     */
    waitForWhole?: boolean;
    /** Instead of mendGraceMs (cluster up: 0, the fault is long over). */
    graceMs?: number;
    log: (line: string) => void;
    info: (line: string) => void;
    /** The step waited on, with the time so far (a spinner's text). */
    update?: (line: string) => void;
  },
): Promise<string[]> {
  const defaultGrace = mendGraceMs(config);
  if (defaultGrace === null) return [];
  const graceMs = options.graceMs ?? defaultGrace;
  const handling = config.partitionHandling ?? 'ignore';
  const longOver = options.waitForWhole === false;
  const nodes = config.nodes.map((n) => n.name);
  const restartedNodes: string[] = [];
  const timeoutMs = (options.timeoutMs ?? MEND_TIMEOUT_MS) + graceMs;
  const started = performance.now();
  const deadline = started + timeoutMs;
  let memory: MendMemory | undefined = longOver ? undefined : startMemory(started);
  let lastWait = '';
  while (performance.now() < deadline) {
    const views = await nodeViews(config, management, docker);
    const now = performance.now();
    memory = memory === undefined ? longOverMemory(views, now) : observe(memory, views, now);
    const step = planMend(memory, views, now, { graceMs, nodes, faulted: fault.faulted, cuts: fault.cuts });
    if (step.action === 'done') {
      if (restartedNodes.length > 0)
        options.info(
          `the cluster is whole again, ${Math.round((now - started) / 1000)} s after ${longOver ? 'cluster up began to mend it' : "the partition's rules were removed"}`,
        );
      return restartedNodes;
    }
    if (step.action === 'wait') {
      // cluster up: nothing to act on now, and nothing restarted; the start that follows waits for the nodes.
      if (longOver && memory.restarts.length === 0) return restartedNodes;
      const line = describeStep(step, views, { longOver });
      options.update?.(`${line} (${Math.round((now - started) / 1000)} s)`);
      if (step.why === 'exhausted' && lastWait !== line) options.log(line);
      lastWait = line;
      await sleep(1_000);
      continue;
    }
    options.info(`${describeStep(step, views, { longOver })} (RabbitMQ ${config.rabbitmq}, partition handling ${handling})`);
    const results = await Promise.all(
      step.nodes.map(async (name) => {
        const node = config.nodes.find((n) => n.name === name);
        if (!node) return false;
        try {
          await docker.getContainer(node.container).restart({ t: 10 });
          return true;
        } catch (err) {
          options.log(`could not restart ${name} to end the partition: ${errorMessage(err)}`);
          return false;
        }
      }),
    );
    if (results.includes(false)) return restartedNodes;
    restartedNodes.push(...step.nodes);
    memory = restarted(memory, step.nodes, step.why, performance.now());
  }
  options.log(
    `the cluster is not whole ${Math.round(timeoutMs / 1000)} s after the partition's rules were removed (restarted: ${restartedNodes.join(', ') || 'none'}): 'rmq-bench cluster status' shows what each node reports, 'rmq-bench cluster up' ends a partition left behind`,
  );
  return restartedNodes;
}
