import { Option } from 'commander';
import { UsageError } from '../../errors.js';
import type { DelayedRetryDemoOptions } from '../../scenarios/demos/delayed-retry-plan.js';
import { DELAYED_RETRY_TYPES, DELAYED_RETRY_VIA, type DelayedRetryType, type DelayedRetryVia } from '../../scenarios/demos/delayed-retry-settings.js';
import { defineCommand } from '../command.js';
import { formatDuration } from '../../util/duration.js';
import { autoOption, countOption, durationOption, htmlOption, jsonOption, positiveDurationMs, positiveInt } from '../options.js';
import { createStepper } from '../steps.js';

/** `rmq-bench delayed-retry-demo`: RabbitMQ 4.3 native delayed retry, each redelivery delay measured. */
type DelayedRetryDemoCliOptions = DelayedRetryDemoOptions & { json: boolean; html: string | undefined; auto: boolean };

interface RawOptions {
  json: boolean;
  html?: string;
  auto: boolean;
  type: DelayedRetryType;
  min: number;
  max: number;
  count: number;
  returns: number;
  via: DelayedRetryVia;
  tolerance: number;
  skipSetup?: boolean;
}

function delayedRetryDemoOptions(o: RawOptions): DelayedRetryDemoCliOptions {
  if (o.max < o.min) throw new UsageError(`--max ${formatDuration(o.max)} is below --min ${formatDuration(o.min)}`);
  return {
    json: o.json,
    html: o.html,
    auto: o.auto,
    type: o.type,
    minMs: o.min,
    maxMs: o.max,
    count: o.count,
    returns: o.returns,
    via: o.via,
    toleranceMs: o.tolerance,
    skipSetup: o.skipSetup === true,
  };
}

export const delayedRetryDemo = defineCommand({
  name: 'delayed-retry-demo',
  examples: ['delayed-retry-demo --auto', 'delayed-retry-demo --type failed --min 500ms --max 1200ms'],
  register: (command, dispatch: (o: DelayedRetryDemoCliOptions) => Promise<void>) =>
    command
      .summary("RabbitMQ 4.3's native delayed retry, measured")
      .description('RabbitMQ 4.3 native delayed retry: each redelivery delay measured against min(min × x-delivery-count, max)')
      .addOption(new Option('--type <type>', 'which returns are delayed').choices(DELAYED_RETRY_TYPES).default('all'))
      .addOption(durationOption('--min <duration>', 'delayed-retry-min: the first redelivery delay', '2s', positiveDurationMs))
      .addOption(durationOption('--max <duration>', 'delayed-retry-max: the longest delay', '10s', positiveDurationMs))
      .addOption(countOption('messages', 3))
      .addOption(new Option('--returns <k>', 'returns of the kinds the type delays, per message').argParser(positiveInt).default(5))
      .addOption(
        new Option('--via <how>', 'set it by a temporary policy on demo.orders, or by queue arguments on demo.delayed-retry')
          .choices(DELAYED_RETRY_VIA)
          .default('policy'),
      )
      .addOption(durationOption('--tolerance <duration>', 'accepted lateness of each redelivery', '1s'))
      .addOption(new Option('--skip-setup', 'testing: leave delayed retry off; the verdict must fail').hideHelp())
      .addOption(autoOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: RawOptions) => dispatch(delayedRetryDemoOptions(o))),
  async run(ctx, o) {
    const { json, html, auto, ...options } = o;
    const { requireBrokerFeature } = await import('../../cluster/broker/broker-info.js');
    await requireBrokerFeature(ctx, 'delayed-retry', 'delayed-retry-demo (native delayed retry)');
    const { runDelayedRetryDemo } = await import('../../scenarios/demos/delayed-retry-demo.js');
    const { emit } = await import('../output.js');
    const r = await runDelayedRetryDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
    emit({ json, html, broker: await ctx.broker() }, 'delayed-retry-demo', r);
    return { ok: r.ok };
  },
});
