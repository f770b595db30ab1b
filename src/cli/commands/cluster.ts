import { clusterDown, clusterLogs, clusterReset, clusterStatus, clusterUp } from '../../cluster/cluster.js';
import { buildImage, ensureImage } from '../../cluster/image.js';
import { renderReset, renderStatus, renderUp } from '../../report/cluster.js';
import { formatMs } from '../../util/duration.js';
import { defineCommand, defineGroup } from '../command.js';
import { htmlOption, timeoutOption, jsonOption, nodeName, positiveInt } from '../options.js';
import { emit } from '../output.js';

/** `rmq-bench cluster up|down|reset|status|logs|image`: the 3-node cluster (docker compose). */

const up = defineCommand({
  name: 'cluster up',
  examples: ['cluster up', 'cluster up --timeout 5m --json'],
  register: (command, dispatch: (o: { json: boolean; timeoutMs: number }) => Promise<void>) =>
    command
      .description('start rabbit1..3 and wait until they form one cluster with the definitions loaded (idempotent)')
      .addOption(timeoutOption('--timeout <duration>', 'deadline for the nodes to be healthy and clustered', '3m'))
      .addOption(jsonOption())
      .action((o: { json: boolean; timeout: number }) => dispatch({ json: o.json, timeoutMs: o.timeout })),
  async run(ctx, o) {
    const r = await clusterUp(ctx, { timeoutMs: o.timeoutMs });
    emit(o, 'cluster-up', r, renderUp(r));
  },
});

const down = defineCommand({
  name: 'cluster down',
  examples: ['cluster down --volumes'],
  register: (command, dispatch: (o: { json: boolean; volumes: boolean }) => Promise<void>) =>
    command
      .description('stop and remove the containers')
      .option('--volumes', 'also remove the nodes’ data volumes', false)
      .addOption(jsonOption())
      .action((o: { json: boolean; volumes: boolean }) => dispatch({ json: o.json, volumes: o.volumes })),
  async run(ctx, o) {
    const r = await clusterDown(ctx, { volumes: o.volumes });
    emit(o, 'cluster-down', r, `cluster down in ${formatMs(r.elapsedMs)}`);
  },
});

const reset = defineCommand({
  name: 'cluster reset',
  examples: ['cluster reset', 'cluster reset --hard'],
  register: (command, dispatch: (o: { json: boolean; hard: boolean; timeoutMs: number }) => Promise<void>) =>
    command
      .description('a clean state for an isolated demo: delete undeclared queues, exchanges and policies, purge the declared queues, re-apply the definitions')
      .option('--hard', 'instead: remove the containers and their volumes and start afresh', false)
      .addOption(timeoutOption('--timeout <duration>', 'deadline for the cluster to be ready again', '3m'))
      .addOption(jsonOption())
      .action((o: { json: boolean; hard: boolean; timeout: number }) => dispatch({ json: o.json, hard: o.hard, timeoutMs: o.timeout })),
  async run(ctx, o) {
    if (o.hard) {
      const d = await clusterDown(ctx, { volumes: true });
      const u = await clusterUp(ctx, { timeoutMs: o.timeoutMs });
      emit(o, 'cluster-reset', { hard: true, elapsedMs: d.elapsedMs + u.elapsedMs, up: u }, renderUp(u));
      return;
    }
    const r = await clusterReset(ctx, { timeoutMs: o.timeoutMs });
    emit(o, 'cluster-reset', r, renderReset(r));
  },
});

const status = defineCommand({
  name: 'cluster status',
  examples: ['cluster status', 'cluster status --json'],
  register: (command, dispatch: (o: { json: boolean; html: string | undefined }) => Promise<void>) =>
    command
      .description('per node: container state, version, alarms; per quorum queue: leader, members, online members')
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string }) => dispatch({ json: o.json, html: o.html })),
  async run(ctx, o) {
    const r = await clusterStatus(ctx);
    emit(o, 'cluster-status', r, renderStatus(r));
  },
});

const logs = defineCommand({
  name: 'cluster logs',
  examples: ['cluster logs rabbit2 -f', 'cluster logs --tail 50'],
  register: (command, dispatch: (o: { node: string | undefined; follow: boolean; tail: number | undefined }) => Promise<void>) =>
    command
      .description('the nodes’ logs (compose logs)')
      .argument('[node]', 'rabbit1, rabbit2 or rabbit3 (default: all)', nodeName)
      .option('-f, --follow', 'keep following', false)
      .option('--tail <lines>', 'only the last lines of each log', positiveInt)
      .action((node: string | undefined, o: { follow: boolean; tail?: number }) => dispatch({ node, follow: o.follow, tail: o.tail })),
  async run(ctx, o) {
    await clusterLogs(ctx, { follow: o.follow, ...(o.node ? { node: o.node } : {}), ...(o.tail ? { tail: o.tail } : {}) });
  },
});

const image = defineCommand({
  name: 'cluster image',
  examples: ['cluster image', 'cluster image --rebuild'],
  register: (command, dispatch: (o: { json: boolean; rebuild: boolean }) => Promise<void>) =>
    command
      .description('make sure the RabbitMQ image exists: pull it, or build it from Debian packages when offline')
      .option('--rebuild', 'build rmq-bench/rabbitmq:4.3 from Debian packages even if it exists', false)
      .addOption(jsonOption())
      .action((o: { json: boolean; rebuild: boolean }) => dispatch({ json: o.json, rebuild: o.rebuild })),
  async run(ctx, o) {
    ctx.progress.start('looking for the RabbitMQ image');
    if (o.rebuild) {
      const r = await buildImage(ctx.config, ctx.progress);
      ctx.progress.succeed(`built ${ctx.config.builtImage} (rabbitmq-server ${r.version}) in ${formatMs(r.elapsedMs)}`);
      emit(o, 'cluster-image', { image: ctx.config.builtImage, how: 'built', ...r }, `image ${ctx.config.builtImage}`);
      return;
    }
    const r = await ensureImage(await ctx.docker(), ctx.config, ctx.progress);
    ctx.progress.succeed(`image ${r.image} ${r.how}${r.how === 'present' ? '' : ` in ${formatMs(r.elapsedMs)}`}`);
    emit(o, 'cluster-image', r, `image ${r.image}`);
  },
});

export const cluster = defineGroup({
  name: 'cluster',
  examples: ['cluster up', 'cluster status'],
  description: 'the 3-node RabbitMQ 4.3 quorum cluster (docker compose): up, down, reset, status, logs, image',
  commands: [up, down, reset, status, logs, image],
});
