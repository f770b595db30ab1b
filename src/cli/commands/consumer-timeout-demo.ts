import { Option } from 'commander';
import { UsageError } from '../../errors.js';
import { TIMEOUT_VIAS, type ConsumerTimeoutDemoOptions, type TimeoutVia } from '../../scenarios/demos/consumer-timeout-plan.js';
import { formatDuration } from '../../util/duration.js';
import { defineCommand } from '../command.js';
import { autoOption, choiceList, countOption, durationOption, htmlOption, jsonOption, positiveInt } from '../options.js';
import { createStepper } from '../steps.js';
import { clustersOption, contextsFor } from '../clusters-option.js';

/** `rmq-bench consumer-timeout-demo`: what RabbitMQ 4.3 does to a consumer that holds a delivery too long. */
type ConsumerTimeoutDemoCliOptions = { slowWorkGiven: boolean; clusters: string[] | undefined } & ConsumerTimeoutDemoOptions & {
    json: boolean;
    html: string | undefined;
    auto: boolean;
  };

interface RawOptions {
  json: boolean;
  html?: string;
  auto: boolean;
  via: TimeoutVia[];
  consumerTimeout: number;
  count: number;
  slow: number;
  work: number;
  slowWork?: number;
  observe: number;
  tolerance: number;
  clusters?: string[];
}

/** --via: a comma-separated list of the ways, or all. */
export function timeoutVias(value: string): TimeoutVia[] {
  if (value.split(',').some((v) => v.trim() === 'all')) return [...TIMEOUT_VIAS];
  const list = choiceList(value, TIMEOUT_VIAS);
  return TIMEOUT_VIAS.filter((v) => list.includes(v));
}

/** The extra work of the slow message over the timeout, unless --slow-work says otherwise. */
const DEFAULT_OVERRUN_MS = 2_000;

export function consumerTimeoutDemoOptions(o: RawOptions): ConsumerTimeoutDemoCliOptions {
  if (o.consumerTimeout < 100)
    throw new UsageError(`--consumer-timeout ${formatDuration(o.consumerTimeout)} is too short to tell a timeout from the work (at least 100ms)`);
  if (o.slow > o.count) throw new UsageError(`--slow ${o.slow} is past the last message (-n ${o.count})`);
  const slowWorkMs = o.slowWork ?? o.consumerTimeout + DEFAULT_OVERRUN_MS;
  if (slowWorkMs <= o.consumerTimeout)
    throw new UsageError(
      `--slow-work ${formatDuration(slowWorkMs)} is not longer than --consumer-timeout ${formatDuration(o.consumerTimeout)}: no delivery would time out`,
    );
  if (o.work >= o.consumerTimeout)
    throw new UsageError(
      `--work ${formatDuration(o.work)} is not shorter than --consumer-timeout ${formatDuration(o.consumerTimeout)}: every delivery would time out`,
    );
  return {
    json: o.json,
    html: o.html,
    auto: o.auto,
    vias: o.via,
    timeoutMs: o.consumerTimeout,
    count: o.count,
    slowIndex: o.slow,
    workMs: o.work,
    slowWorkMs,
    slowWorkGiven: o.slowWork !== undefined,
    clusters: o.clusters,
    observeMs: o.observe,
    toleranceMs: o.tolerance,
  };
}

export const consumerTimeoutDemo = defineCommand({
  name: 'consumer-timeout-demo',
  examples: [
    'consumer-timeout-demo --auto',
    'consumer-timeout-demo --via policy --consumer-timeout 5s',
    'consumer-timeout-demo --clusters v40,rmq-bench --auto',
  ],
  register: (command, dispatch: (o: ConsumerTimeoutDemoCliOptions) => Promise<void>) =>
    command
      .summary('a delivery held past the consumer timeout')
      .description(
        'a consumer that holds a delivery past the quorum queue consumer timeout: what RabbitMQ does (4.3 cancels the consumer; before 4.3 the channel is closed, at a check once a minute), a naive consumer beside one that handles it',
      )
      .addOption(
        new Option('--via <ways>', `how the timeout is set, comma-separated: ${TIMEOUT_VIAS.join(', ')}, or all`)
          .argParser(timeoutVias)
          .default([...TIMEOUT_VIAS], 'all'),
      )
      .addOption(durationOption('--consumer-timeout <duration>', 'the consumer timeout set on the queues', '3s'))
      .addOption(countOption('messages per queue', 5))
      .addOption(new Option('--slow <k>', 'which message (1-based) takes longer than the timeout').argParser(positiveInt).default(2))
      .addOption(durationOption('--work <duration>', 'the work of every other message', '100ms'))
      .addOption(durationOption('--slow-work <duration>', `the work of the slow message (default: the timeout + ${DEFAULT_OVERRUN_MS / 1000}s)`))
      .addOption(durationOption('--observe <duration>', 'how long both consumers are watched once the slow work is over', '4s'))
      .addOption(durationOption('--tolerance <duration>', "accepted lateness of the broker's cancel past the timeout", '2s'))
      .addOption(clustersOption())
      .addOption(autoOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: RawOptions) => dispatch(consumerTimeoutDemoOptions(o))),
  async run(commandCtx, o) {
    const { json, html, auto, slowWorkGiven, clusters, ...given } = o;
    const { requireBrokerFeature } = await import('../../cluster/broker/broker-info.js');
    const { TIMEOUT_CHECK_INTERVAL_MS, timeoutEndingOf, sideBySideTimeouts } = await import('../../scenarios/demos/consumer-timeout-plan.js');
    const { runConsumerTimeoutDemo } = await import('../../scenarios/demos/consumer-timeout-demo.js');
    const { emit } = await import('../output.js');
    const contexts = await contextsFor(commandCtx, clusters);
    for (const ctx of contexts) await requireBrokerFeature(ctx, 'consumer-timeout-policy', 'consumer-timeout-demo (a consumer timeout per queue)');
    const runs = [];
    for (const ctx of contexts) {
      const broker = await ctx.broker();
      if (contexts.length > 1) ctx.progress.info(`consumer-timeout-demo on cluster ${ctx.config.clusterName}`);
      // Before 4.3 the broker looks for timed-out deliveries once a minute: the slow work outlasts that.
      const slowWorkMs =
        !slowWorkGiven && broker && timeoutEndingOf(broker.version) === 'channel-close'
          ? given.timeoutMs + TIMEOUT_CHECK_INTERVAL_MS + DEFAULT_OVERRUN_MS
          : given.slowWorkMs;
      if (slowWorkMs !== given.slowWorkMs)
        ctx.progress.info(
          `RabbitMQ ${broker?.version} checks for timed-out deliveries once a minute: the slow message works ${formatDuration(slowWorkMs)} (--slow-work sets another)`,
        );
      const result = await runConsumerTimeoutDemo(ctx, { ...given, slowWorkMs }, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
      runs.push({ cluster: ctx.config.clusterName, result });
    }
    const r = runs.length === 1 ? runs[0]!.result : sideBySideTimeouts(runs);
    emit({ json, html, broker: await contexts[0]!.broker() }, 'consumer-timeout-demo', r);
    return { ok: r.ok };
  },
});
