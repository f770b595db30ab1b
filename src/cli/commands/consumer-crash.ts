import { type Command, Option } from 'commander';
import type { ConsumerCrashOptions } from '../../scenarios/crashes/consumer-crash.js';
import { CRASH_MODES, type CrashMode } from '../../scenarios/crashes/consumer-crash-modes.js';
import { checkpointCmdOption, checkpointOverride } from '../checkpoint-option.js';
import { defineCommand } from '../command.js';
import { addVerdictOptions, emitVerdict, type VerdictOptions, verdictOptions } from '../verdict-options.js';
import {
  choiceList,
  countOption,
  givenOptions,
  htmlOption,
  jsonOption,
  multiAckEveryOption,
  prefetchOption,
  queueOption,
  refuseWith,
  runsOption,
  share,
  workOption,
} from '../options.js';

/** `rmq-bench consumer-crash`: SIGKILL a consumer mid-run, autoack vs manual ack vs idempotent. */
type ConsumerCrashCliOptions = ConsumerCrashOptions & {
  json: boolean;
  html: string | undefined;
  /** --checkpoint-cmd: the user's command before and after each run's consumers. */
  checkpointCmd: string | undefined;
  /** --max-lost, --max-duplicates, --junit. */
  verdict: VerdictOptions;
};

interface RawOptions {
  json: boolean;
  html?: string;
  count: number;
  prefetch: number;
  work: number;
  killAt: number;
  multiAckEvery: number;
  runs: number;
  modes: CrashMode[];
  queue: string;
  checkpointCmd?: string;
}

export const consumerCrash = defineCommand({
  name: 'consumer-crash',
  examples: ['consumer-crash', 'consumer-crash --modes manual,idempotent --runs 3 --work 5ms'],
  register: (command, dispatch: (o: ConsumerCrashCliOptions) => Promise<void>) =>
    addVerdictOptions(
      command
        .summary('SIGKILL a consumer: autoack, manual, idempotent')
        .description('SIGKILL a consumer mid-run: autoack vs manual ack vs manual ack with an idempotent store, every message reconciled')
        .addOption(countOption('messages per run', 2_000))
        .addOption(prefetchOption('manual ack: unacked deliveries at most', 50))
        .addOption(workOption('2ms'))
        .addOption(new Option('--kill-at <share>', 'share of the messages processed before the SIGKILL: 0.3 or 30%').argParser(share).default(0.3))
        .addOption(multiAckEveryOption('manual modes: one multiple-ack every N messages (the unacked tail is what a crash redelivers)', 10))
        .addOption(runsOption('repeat each mode K times'))
        .addOption(
          new Option('--modes <list>', 'comma-separated: autoack, manual, idempotent')
            .argParser((v) => choiceList(v, CRASH_MODES))
            .default([...CRASH_MODES], 'all three'),
        )
        .addOption(queueOption('queue (purged before each run)'))
        .addOption(checkpointCmdOption('once the messages are published, before the first consumer (before-consume), and after the last one (after-consume)'))
        .addOption(jsonOption())
        .addOption(htmlOption()),
      'consumer-crash',
    ).action((o: RawOptions, command: Command) => {
      if (!o.modes.some((m) => m !== 'autoack'))
        refuseWith(givenOptions(command), ['--prefetch', '--multi-ack-every'], 'is for the manual ack modes, which --modes autoack leaves out');
      return dispatch({
        json: o.json,
        html: o.html,
        queue: o.queue,
        exchange: o.queue === 'demo.orders' ? 'demo.orders' : '',
        count: o.count,
        prefetch: o.prefetch,
        workMs: o.work,
        ackEvery: o.multiAckEvery,
        killAt: o.killAt,
        runs: o.runs,
        modes: o.modes,
        idleTimeoutMs: 3_000,
        checkpointCmd: o.checkpointCmd,
        verdict: verdictOptions(o, 'consumer-crash'),
      });
    }),
  overrides: async (o) => checkpointOverride(o.checkpointCmd),
  async run(ctx, o) {
    const { json, html, checkpointCmd: _c, verdict, ...options } = o;
    const { runConsumerCrash } = await import('../../scenarios/crashes/consumer-crash.js');
    const r = await runConsumerCrash(ctx, options);
    return { ok: await emitVerdict({ json, html, broker: await ctx.broker() }, verdict, 'consumer-crash', r) };
  },
});
