import { Option } from 'commander';
import { UsageError } from '../../errors.js';
import type { RetryDemoOptions } from '../../scenarios/demos/retry-demo.js';
import { defineCommand } from '../command.js';
import { autoOption, durationList, durationOption, htmlOption, jsonOption, nonNegativeInt, positiveNumber } from '../options.js';
import { createStepper } from '../steps.js';

/** `rmq-bench retry-demo`: the TTL retry loop, or with --backoff a ladder of retry queues. */
type RetryDemoCliOptions = RetryDemoOptions & {
  json: boolean;
  html: string | undefined;
  auto: boolean;
  /** --backoff: the rungs' TTLs, already multiplied by --time-scale. */
  ladder: { backoffMs: number[]; timeScale: number } | undefined;
};

interface RawOptions {
  json: boolean;
  html?: string;
  auto: boolean;
  failures: number;
  tolerance: number;
  backoff?: number[];
  timeScale: number;
}

function retryDemoOptions(o: RawOptions): RetryDemoCliOptions {
  if (o.backoff === undefined && o.timeScale !== 1) throw new UsageError('--time-scale needs --backoff');
  const ladder = o.backoff === undefined ? undefined : { backoffMs: o.backoff.map((ms) => Math.max(1, Math.round(ms * o.timeScale))), timeScale: o.timeScale };
  if (ladder && o.failures > ladder.backoffMs.length) {
    throw new UsageError(
      `--failures ${o.failures} is more than the ${ladder.backoffMs.length} rungs of --backoff: the message would end in demo.dlq (the poison message already shows that)`,
    );
  }
  return { json: o.json, html: o.html, auto: o.auto, failures: o.failures, toleranceMs: o.tolerance, ladder };
}

export const retryDemo = defineCommand({
  name: 'retry-demo',
  examples: ['retry-demo --auto', 'retry-demo --backoff 5s,30s,5m --time-scale 0.05'],
  register: (command, dispatch: (o: RetryDemoCliOptions) => Promise<void>) =>
    command
      .summary('the TTL retry loop, or a ladder of retry queues')
      .description(
        'the TTL retry loop demo.orders → demo.dlx → demo.retry → demo.orders, with each gap measured and checked; --backoff: a ladder of retry queues ending in demo.dlq',
      )
      .addOption(new Option('--failures <k>', 'attempts that fail before one succeeds').argParser(nonNegativeInt).default(2))
      .addOption(durationOption('--tolerance <duration>', 'accepted lateness of each retry over the TTL', '2s'))
      .addOption(
        new Option('--backoff <durations>', 'a ladder of retry queues with these TTLs (e.g. 5s,30s,5m), routed by attempt; exhausted → demo.dlq').argParser(
          durationList,
        ),
      )
      .addOption(
        new Option('--time-scale <factor>', 'multiply the --backoff TTLs (0.1 shrinks 5s,30s,5m to 0.5s,3s,30s for a workshop)')
          .argParser(positiveNumber)
          .default(1),
      )
      .addOption(autoOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: RawOptions) => dispatch(retryDemoOptions(o))),
  async run(ctx, o) {
    const { json, html, auto, ladder, ...options } = o;
    const { emit } = await import('../output.js');
    const step = createStepper({ auto, progress: ctx.progress, signal: ctx.signal });
    if (ladder) {
      const { runRetryLadder } = await import('../../scenarios/demos/retry-ladder.js');
      const r = await runRetryLadder(ctx, { ...ladder, failures: options.failures, toleranceMs: options.toleranceMs }, step);
      emit({ json, html, broker: await ctx.broker() }, 'retry-demo', r);
      return { ok: r.ok };
    }
    const { runRetryDemo } = await import('../../scenarios/demos/retry-demo.js');
    const r = await runRetryDemo(ctx, options, step);
    emit({ json, html, broker: await ctx.broker() }, 'retry-demo', r);
    return { ok: r.ok };
  },
});
