import { InvalidArgumentError, Option } from 'commander';
import type { PrefetchDemoOptions } from '../../scenarios/demos/prefetch-demo.js';
import { defineCommand } from '../command.js';
import { countOption, durationOption, htmlOption, jsonOption, prefetchCount, queueOption } from '../options.js';

/** `rmq-bench prefetch-demo`: a fast and a slow consumer at several prefetch values. */
type PrefetchDemoCliOptions = PrefetchDemoOptions & { json: boolean; html: string | undefined };

function prefetchList(value: string): number[] {
  const list = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (list.length === 0) throw new InvalidArgumentError('no prefetch value given');
  return list.map(prefetchCount);
}

export const prefetchDemo = defineCommand({
  name: 'prefetch-demo',
  examples: ['prefetch-demo', 'prefetch-demo --prefetch 1,50 --slow-work 50ms'],
  register: (command, dispatch: (o: PrefetchDemoCliOptions) => Promise<void>) =>
    command
      .summary('a fast and a slow consumer at prefetch 1, 10, 0')
      .description('a fast and a slow consumer at prefetch 1, 10 and 0: how the messages are split, how long it takes, how many each hoards')
      .addOption(countOption('messages per prefetch value', 300))
      .addOption(new Option('--prefetch <list>', 'comma-separated prefetch values (0 = unlimited)').argParser(prefetchList).default([1, 10, 0], '1,10,0'))
      .addOption(durationOption('--fast-work <duration>', 'work per message, fast consumer', '1ms'))
      .addOption(durationOption('--slow-work <duration>', 'work per message, slow consumer', '20ms'))
      .addOption(queueOption('queue (purged before each value)'))
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string; count: number; prefetch: number[]; fastWork: number; slowWork: number; queue: string }) =>
        dispatch({
          json: o.json,
          html: o.html,
          queue: o.queue,
          exchange: o.queue === 'demo.orders' ? 'demo.orders' : '',
          count: o.count,
          prefetches: o.prefetch,
          fastWorkMs: o.fastWork,
          slowWorkMs: o.slowWork,
        }),
      ),
  async run(ctx, o) {
    const { json, html, ...options } = o;
    const { runPrefetchDemo } = await import('../../scenarios/demos/prefetch-demo.js');
    const { emit } = await import('../output.js');
    const r = await runPrefetchDemo(ctx, options);
    emit({ json, html, broker: await ctx.broker() }, 'prefetch-demo', r);
  },
});
