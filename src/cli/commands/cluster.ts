import { type Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_RABBITMQ_LINE, LINE_SPECS, lineProblem, RABBITMQ_LINES, type RabbitmqLine } from '../../broker-versions.js';
import {
  type ClusterChoice,
  clusterNameProblem,
  FEATURE_FLAG_SETS,
  NODE_COUNTS,
  type NodeCount,
  nodeCountProblem,
  PARTITION_HANDLINGS,
  portProblem,
  withCluster,
} from '../../config.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { formatMs } from '../../util/duration.js';
import { defineCommand, defineGroup } from '../command.js';
import { htmlOption, timeoutOption, jsonOption, nodeName, positiveInt } from '../options.js';

/** `rmq-bench cluster up|down|reset|status|logs|image`: the 3- or 5-node cluster (docker compose). */

const clusterName = (value: string): string => {
  const problem = clusterNameProblem(value);
  if (problem) throw new InvalidArgumentError(`'${value}' ${problem}`);
  return value;
};
const nodeCount = (value: string): NodeCount => {
  const problem = nodeCountProblem(value);
  if (problem) throw new InvalidArgumentError(`'${value}' ${problem}`);
  return Number(value) as NodeCount;
};
/** --nodes: up and reset --hard. */
const nodesOption = (): Option =>
  new Option(
    '--nodes <n>',
    `how many nodes: ${NODE_COUNTS.join(' or ')} (default: the count of the cluster's containers, else RMQ_BENCH_NODES, else 3); recorded for the other commands`,
  ).argParser(nodeCount);
const line = (value: string): RabbitmqLine => {
  const problem = lineProblem(value);
  if (problem) throw new InvalidArgumentError(`'${value}' ${problem}`);
  return value as RabbitmqLine;
};
/** --rabbitmq: up, reset --hard and image. */
const rabbitmqOption = (): Option =>
  new Option(
    '--rabbitmq <version>',
    `the RabbitMQ version: ${RABBITMQ_LINES.join(', ')} (default: the cluster's, else RMQ_BENCH_RABBITMQ, else ${DEFAULT_RABBITMQ_LINE}); its image is built from Debian ${RABBITMQ_LINES.map((l) => `${LINE_SPECS[l].debianSuite} (${l})`).join(', ')} when missing; recorded for the other commands`,
  ).argParser(line);
/** --partition-handling: up. */
const partitionHandlingOption = (): Option =>
  new Option(
    '--partition-handling <mode>',
    "cluster_partition_handling on every node, RabbitMQ before 4.3 (default: the cluster's, else the broker's: ignore); recorded",
  ).choices(PARTITION_HANDLINGS);
/** --feature-flags: up and reset --hard. */
const featureFlagsOption = (): Option =>
  new Option(
    '--feature-flags <which>',
    "the feature flags a node enables on its first boot: stable (every stable one, the broker's default) or required (only those the broker requires, the others left disabled for --fault feature-flags; RabbitMQ 3.11 and later); a cluster whose nodes have booted keeps its flags (default: the cluster's, else stable); recorded",
  ).choices(FEATURE_FLAG_SETS);
const firstPort =
  (span: number) =>
  (value: string): number => {
    const problem = portProblem(value, span);
    if (problem) throw new InvalidArgumentError(`'${value}' ${problem}`);
    return Number(value);
  };

/**
 * Which cluster: --name and the three first ports, each instead of its RMQ_BENCH_* variable (the
 * other commands read the variables). Commander names them name, amqpPort, managementPort and
 * prometheusPort: a ClusterChoice.
 */
function clusterOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--name <name>',
        'the cluster: compose project <name>, containers <name>-rabbit1..N, or rabbit1..N for rmq-bench (default: RMQ_BENCH_NAME, else rmq-bench)',
      ).argParser(clusterName),
    )
    .addOption(
      new Option('--amqp-port <port>', "rabbit1's AMQP port on 127.0.0.1, the other nodes the next ones (RMQ_BENCH_AMQP_PORT)").argParser(firstPort(5)),
    )
    .addOption(
      new Option('--management-port <port>', "rabbit1's management port, the other nodes the next ones (RMQ_BENCH_MANAGEMENT_PORT)").argParser(firstPort(5)),
    )
    .addOption(new Option('--prometheus-port <port>', "rabbit1's Prometheus port (RMQ_BENCH_PROMETHEUS_PORT)").argParser(firstPort(1)));
}

/** What clusterOptions' flags gave (commander leaves an unset one undefined), beside a command's own options. */
const choiceOf = (o: ClusterChoice): ClusterChoice => ({
  name: o.name,
  amqpPort: o.amqpPort,
  managementPort: o.managementPort,
  prometheusPort: o.prometheusPort,
  nodes: o.nodes,
  rabbitmq: o.rabbitmq,
  partitionHandling: o.partitionHandling,
  featureFlags: o.featureFlags,
});

/** The context for the chosen cluster: the command's own when nothing was chosen. */
async function forCluster(ctx: Context, choice: ClusterChoice): Promise<Context> {
  const config = withCluster(ctx.config, choice);
  if (config === ctx.config) return ctx;
  const { createContext } = await import('../../context.js');
  return createContext(config, ctx.progress, ctx.signal);
}

/** The chosen cluster at the node count `cluster up` brings up (chooseNodeCount). */
async function sizedCluster(ctx: Context, choice: ClusterChoice): Promise<Context> {
  const { chooseNodeCount } = await import('../../cluster/lifecycle/up.js');
  const chosen = await forCluster(ctx, choice);
  const count = await chooseNodeCount(chosen, choice.nodes);
  return count === chosen.config.nodes.length ? chosen : forCluster(chosen, { nodes: count });
}

type UpOptions = { json: boolean; timeoutMs: number } & ClusterChoice;

const up = defineCommand({
  name: 'cluster up',
  examples: ['cluster up', 'cluster up --nodes 5', 'cluster up --rabbitmq 3.10 --name legacy --amqp-port 6672', 'cluster up --feature-flags required'],
  register: (command, dispatch: (o: UpOptions) => Promise<void>) =>
    clusterOptions(
      command
        .summary('start rabbit1..3 (or ..5) and wait until they form one cluster')
        .description('start rabbit1..3 (--nodes 5: rabbit1..5) and wait until they form one cluster with the definitions loaded (idempotent)'),
    )
      .addOption(nodesOption())
      .addOption(rabbitmqOption())
      .addOption(partitionHandlingOption())
      .addOption(featureFlagsOption())
      .addOption(timeoutOption('--timeout <duration>', 'deadline for the nodes to be healthy and clustered', '3m'))
      .addOption(jsonOption())
      .action((o: { json: boolean; timeout: number } & ClusterChoice) => dispatch({ json: o.json, timeoutMs: o.timeout, ...choiceOf(o) })),
  async run(ctx, o) {
    const { clusterUp } = await import('../../cluster/lifecycle/up.js');
    const { emit } = await import('../output.js');
    const chosen = await sizedCluster(ctx, o);
    const r = await clusterUp(chosen, { timeoutMs: o.timeoutMs });
    emit({ ...o, broker: await chosen.broker() }, 'cluster-up', r);
  },
});

const down = defineCommand({
  name: 'cluster down',
  examples: ['cluster down --volumes'],
  register: (command, dispatch: (o: { json: boolean; volumes: boolean } & ClusterChoice) => Promise<void>) =>
    clusterOptions(command.description('stop and remove the containers'))
      .option('--volumes', 'also remove the nodes’ data volumes', false)
      .addOption(jsonOption())
      .action((o: { json: boolean; volumes: boolean } & ClusterChoice) => dispatch({ json: o.json, volumes: o.volumes, ...choiceOf(o) })),
  async run(ctx, o) {
    const { clusterDown } = await import('../../cluster/lifecycle/down.js');
    const { emit } = await import('../output.js');
    const chosen = await forCluster(ctx, o);
    // The version of what is taken down, asked while it still answers.
    const broker = await chosen.broker();
    const r = await clusterDown(chosen, { volumes: o.volumes });
    emit({ ...o, broker }, 'cluster-down', r);
  },
});

const reset = defineCommand({
  name: 'cluster reset',
  examples: ['cluster reset', 'cluster reset --hard', 'cluster reset --hard --nodes 5', 'cluster reset --hard --rabbitmq 4.0 --feature-flags required'],
  register: (command, dispatch: (o: { json: boolean; hard: boolean; timeoutMs: number } & ClusterChoice) => Promise<void>) =>
    clusterOptions(
      command
        .summary('a clean state for a demo (--hard: a fresh cluster)')
        .description(
          'a clean state for an isolated demo: delete undeclared queues, exchanges and policies, purge the declared queues, re-apply the definitions',
        ),
    )
      .option('--hard', 'instead: remove the containers and their volumes and start afresh', false)
      .addOption(nodesOption())
      .addOption(rabbitmqOption())
      .addOption(partitionHandlingOption())
      .addOption(featureFlagsOption())
      .addOption(timeoutOption('--timeout <duration>', 'deadline for the cluster to be ready again', '3m'))
      .addOption(jsonOption())
      .action((o: { json: boolean; hard: boolean; timeout: number } & ClusterChoice) => {
        if (o.nodes !== undefined && !o.hard) throw new UsageError('--nodes needs --hard: a cluster is not resized in place');
        if (o.rabbitmq !== undefined && !o.hard) throw new UsageError('--rabbitmq needs --hard: a cluster is not changed to another version in place');
        if (o.partitionHandling !== undefined && !o.hard)
          throw new UsageError("--partition-handling needs --hard here ('cluster up --partition-handling' changes it and keeps the data)");
        if (o.featureFlags !== undefined && !o.hard) throw new UsageError("--feature-flags needs --hard: a node's feature flags are chosen on its first boot");
        return dispatch({ json: o.json, hard: o.hard, timeoutMs: o.timeout, ...choiceOf(o) });
      }),
  async run(commandCtx, o) {
    const { clusterDown } = await import('../../cluster/lifecycle/down.js');
    const { clusterReset } = await import('../../cluster/lifecycle/reset.js');
    const { clusterUp } = await import('../../cluster/lifecycle/up.js');
    const { emit } = await import('../output.js');
    if (o.hard) {
      // Every node goes, whatever the count and version; the fresh cluster has the count and version asked for (else the same).
      const ctx = await forCluster(commandCtx, { ...o, nodes: undefined, rabbitmq: undefined, partitionHandling: undefined, featureFlags: undefined });
      const d = await clusterDown(ctx, { volumes: true });
      const fresh = await forCluster(ctx, { nodes: o.nodes, rabbitmq: o.rabbitmq, partitionHandling: o.partitionHandling, featureFlags: o.featureFlags });
      const u = await clusterUp(fresh, { timeoutMs: o.timeoutMs });
      emit({ ...o, broker: await fresh.broker() }, 'cluster-reset', { hard: true, elapsedMs: d.elapsedMs + u.elapsedMs, up: u });
      return;
    }
    const chosen = await forCluster(commandCtx, o);
    const r = await clusterReset(chosen, { timeoutMs: o.timeoutMs });
    emit({ ...o, broker: await chosen.broker() }, 'cluster-reset', r);
  },
});

const status = defineCommand({
  name: 'cluster status',
  examples: ['cluster status', 'cluster status --json'],
  register: (command, dispatch: (o: { json: boolean; html: string | undefined } & ClusterChoice) => Promise<void>) =>
    clusterOptions(
      command
        .summary('per node its state, version, alarms; per queue its leader')
        .description('the cluster’s name and ports; per node: container state, version, alarms; per quorum queue: leader, members, online members'),
    )
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string } & ClusterChoice) => dispatch({ json: o.json, html: o.html, ...choiceOf(o) })),
  async run(ctx, o) {
    const { clusterStatus } = await import('../../cluster/lifecycle/status.js');
    const { emit } = await import('../output.js');
    const chosen = await forCluster(ctx, o);
    const r = await clusterStatus(chosen);
    emit({ ...o, broker: await chosen.broker() }, 'cluster-status', r);
  },
});

const logs = defineCommand({
  name: 'cluster logs',
  examples: ['cluster logs rabbit2 -f', 'cluster logs --tail 50'],
  register: (command, dispatch: (o: { node: string | undefined; follow: boolean; tail: number | undefined } & ClusterChoice) => Promise<void>) =>
    clusterOptions(command.description('the nodes’ logs (compose logs)'))
      .argument('[node]', 'rabbit1, rabbit2, ... (default: all)', nodeName)
      .option('-f, --follow', 'keep following', false)
      .option('--tail <lines>', 'only the last lines of each log', positiveInt)
      .action((node: string | undefined, o: { follow: boolean; tail?: number } & ClusterChoice) =>
        dispatch({ node, follow: o.follow, tail: o.tail, ...choiceOf(o) }),
      ),
  async run(ctx, o) {
    const { clusterLogs } = await import('../../cluster/lifecycle/logs.js');
    await clusterLogs(await forCluster(ctx, o), { follow: o.follow, ...(o.node ? { node: o.node } : {}), ...(o.tail ? { tail: o.tail } : {}) });
  },
});

const image = defineCommand({
  name: 'cluster image',
  examples: ['cluster image', 'cluster image --rebuild', 'cluster image --rabbitmq 3.10'],
  register: (command, dispatch: (o: { json: boolean; rebuild: boolean; rabbitmq: RabbitmqLine | undefined }) => Promise<void>) =>
    command
      .summary('make sure the RabbitMQ image exists: pull it or build it')
      .description('make sure the RabbitMQ image exists: pull it, or build it from Debian packages when offline')
      .option('--rebuild', 'build rmq-bench/rabbitmq:<version> from Debian packages even if it exists', false)
      .addOption(rabbitmqOption())
      .addOption(jsonOption())
      .action((o: { json: boolean; rebuild: boolean; rabbitmq?: RabbitmqLine }) => dispatch({ json: o.json, rebuild: o.rebuild, rabbitmq: o.rabbitmq })),
  async run(commandCtx, o) {
    const ctx = await forCluster(commandCtx, { rabbitmq: o.rabbitmq });
    const { buildImage, ensureImage } = await import('../../cluster/docker/image.js');
    const { emit } = await import('../output.js');
    ctx.progress.start('looking for the RabbitMQ image');
    if (o.rebuild) {
      const r = await buildImage(ctx.config, ctx.progress);
      ctx.progress.succeed(`built ${ctx.config.builtImage} (rabbitmq-server ${r.version}) in ${formatMs(r.elapsedMs)}`);
      emit({ ...o, broker: await ctx.broker() }, 'cluster-image', { image: ctx.config.builtImage, how: 'built', ...r });
      return;
    }
    const r = await ensureImage(await ctx.docker(), ctx.config, ctx.progress);
    ctx.progress.succeed(`image ${r.image} ${r.how}${r.how === 'present' ? '' : ` in ${formatMs(r.elapsedMs)}`}`);
    emit({ ...o, broker: await ctx.broker() }, 'cluster-image', r);
  },
});

export const cluster = defineGroup({
  name: 'cluster',
  examples: ['cluster up', 'cluster status'],
  description: 'the 3- or 5-node RabbitMQ cluster (4.3, 4.0, 3.10)',
  commands: [up, down, reset, status, logs, image],
});
