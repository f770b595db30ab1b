import { Option } from 'commander';
import type { DurabilityDemoOptions } from '../../scenarios/demos/durability-demo.js';
import { RESTART_HOW, type RestartHow } from '../../scenarios/demos/restart-how.js';
import { defineCommand } from '../command.js';
import { autoOption, countOption, durationOption, timeoutOption, htmlOption, jsonOption } from '../options.js';
import { createStepper } from '../steps.js';

/** `rmq-bench durability-demo`: transient and persistent messages, classic and quorum, every node restarted. */
type DurabilityDemoCliOptions = DurabilityDemoOptions & { json: boolean; html: string | undefined; auto: boolean };

export const durabilityDemo = defineCommand({
  name: 'durability-demo',
  examples: ['durability-demo -n 1000', 'durability-demo --how kill --queue-age 0'],
  register: (command, dispatch: (o: DurabilityDemoCliOptions) => Promise<void>) =>
    command
      .summary('transient vs persistent, every node restarted')
      .description('transient and persistent messages in a durable classic queue and a quorum queue, every node restarted: what survived')
      .addOption(countOption('messages of each delivery mode, per queue', 1_000))
      .addOption(new Option('--how <how>', 'stop (clean shutdown) or kill (a crash) the nodes').choices(RESTART_HOW).default('stop'))
      .addOption(timeoutOption('--restart-timeout <duration>', 'how long the nodes may take to come back', '3m'))
      .addOption(
        durationOption(
          '--queue-age <duration>',
          'how long the new queues exist before publishing (0 with --how kill: see what a crash does to a queue declared a moment before)',
          '10s',
        ),
      )
      .addOption(autoOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string; auto: boolean; count: number; how: RestartHow; restartTimeout: number; queueAge: number }) =>
        dispatch({ json: o.json, html: o.html, auto: o.auto, count: o.count, how: o.how, restartTimeoutMs: o.restartTimeout, queueAgeMs: o.queueAge }),
      ),
  async run(ctx, o) {
    const { json, html, auto, ...options } = o;
    const { runDurabilityDemo } = await import('../../scenarios/demos/durability-demo.js');
    const { emit } = await import('../output.js');
    const r = await runDurabilityDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
    emit({ json, html, broker: await ctx.broker() }, 'durability-demo', r);
    return { ok: r.ok };
  },
});
