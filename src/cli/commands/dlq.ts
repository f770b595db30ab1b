import { Option } from 'commander';
import type { ReplayOptions } from '../../scenarios/broker-tools/dlq-tools.js';
import { defineCommand, defineGroup } from '../command.js';
import { htmlOption, jsonOption, positiveInt, queueOption } from '../options.js';

/** `rmq-bench dlq inspect|replay`: the dead-letter queue, read without losing anything, replayed safely. */
type DlqInspectCliOptions = { json: boolean; html: string | undefined; queue: string; limit: number };
type DlqReplayCliOptions = ReplayOptions & { json: boolean; html: string | undefined };

/** --limit: at most N of the messages already in the queue (-n/--count is what a command publishes or processes). */
const limitOption = (description: string, defaultLimit: number): Option => new Option('--limit <n>', description).argParser(positiveInt).default(defaultLimit);

const inspect = defineCommand({
  name: 'dlq inspect',
  examples: ['dlq inspect', 'dlq inspect --queue demo.dlq --limit 20 --json'],
  register: (command, dispatch: (o: DlqInspectCliOptions) => Promise<void>) =>
    command
      .summary('list the DLQ’s messages; they stay in the queue')
      .description('a table of the DLQ’s messages (id, reason, source queue, count, death times); they stay in the queue')
      .addOption(queueOption('dead-letter queue', 'demo.dlq'))
      .addOption(limitOption('show at most N messages', 1_000))
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string; queue: string; limit: number }) => dispatch({ json: o.json, html: o.html, queue: o.queue, limit: o.limit })),
  async run(ctx, o) {
    const { inspectDlq } = await import('../../scenarios/broker-tools/dlq-tools.js');
    const { emit } = await import('../output.js');
    const r = await inspectDlq(ctx, o.queue, o.limit);
    emit({ ...o, broker: await ctx.broker() }, 'dlq-inspect', r);
  },
});

const replay = defineCommand({
  name: 'dlq replay',
  examples: ['dlq replay --to demo.orders', 'dlq replay --filter reason=rejected --limit 100'],
  register: (command, dispatch: (o: DlqReplayCliOptions) => Promise<void>) =>
    command
      .summary('republish dead letters, each removed after its confirm')
      .description('republish dead letters with confirms, removing each only after its confirm')
      .addOption(queueOption('dead-letter queue', 'demo.dlq'))
      .option('--to <queue>', 'queue to replay into (through the default exchange)', 'demo.orders')
      .addOption(limitOption('replay at most N messages', 1_000_000))
      .option('--filter <expr>', 'reason=<reason> or queue=<source queue>')
      .addOption(new Option('--crash-after <n>', 'testing: drop the connection after N confirmed replays').argParser(positiveInt).hideHelp())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string; queue: string; to: string; limit: number; filter?: string; crashAfter?: number }) =>
        dispatch({ json: o.json, html: o.html, queue: o.queue, to: o.to, limit: o.limit, filter: o.filter, crashAfter: o.crashAfter }),
      ),
  async run(ctx, o) {
    const { json, html, ...options } = o;
    const { replayDlq } = await import('../../scenarios/broker-tools/dlq-tools.js');
    const { emit } = await import('../output.js');
    ctx.progress.start(`replaying ${o.queue} to ${o.to}`);
    const r = await replayDlq(ctx, options);
    ctx.progress.stop();
    emit({ json, html, broker: await ctx.broker() }, 'dlq-replay', r);
  },
});

export const dlq = defineGroup({
  name: 'dlq',
  examples: ['dlq inspect', 'dlq replay --to demo.orders'],
  description: 'inspect the dead-letter queue, replay it safely',
  commands: [inspect, replay],
});
