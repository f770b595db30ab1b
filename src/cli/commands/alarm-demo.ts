import { Option } from 'commander';
import { ALARM_KINDS, type AlarmKind } from '../../cluster/broker/alarms.js';
import { UsageError } from '../../errors.js';
import type { AlarmDemoOptions } from '../../scenarios/demos/alarm-plan.js';
import { formatDuration } from '../../util/duration.js';
import { defineCommand } from '../command.js';
import { autoOption, durationOption, timeoutOption, htmlOption, jsonOption, nodeName, nonNegativeInt, rateOption, sizeOption } from '../options.js';
import { createStepper } from '../steps.js';

/** `rmq-bench alarm-demo`: a memory or disk alarm on one node, as publishers and a consumer see it. */
type AlarmDemoCliOptions = AlarmDemoOptions & { json: boolean; html: string | undefined; auto: boolean };

interface RawOptions {
  json: boolean;
  html?: string;
  auto: boolean;
  alarm: AlarmKind;
  node: string;
  before: number;
  hold: number;
  after: number;
  rate: number;
  size: number;
  blockedTimeout: number;
  killAfter?: number;
  flushTimeout: number;
  backlog: number;
  idleTimeout: number;
  tolerance: number;
}

export function alarmDemoOptions(o: RawOptions): AlarmDemoCliOptions {
  if (o.rate <= 0) throw new UsageError('--rate must be above 0: the demo measures what publishers send during the alarm');
  const d = formatDuration;
  if (o.blockedTimeout >= o.hold)
    throw new UsageError(`--blocked-timeout ${d(o.blockedTimeout)} is not shorter than --hold ${d(o.hold)}: the deadline publisher would never give up`);
  const killAfterMs = o.killAfter ?? Math.round(o.hold / 2);
  if (killAfterMs >= o.hold) throw new UsageError(`--kill-after ${d(killAfterMs)} is not within the alarm (--hold ${d(o.hold)})`);
  if (killAfterMs + o.flushTimeout >= o.hold)
    throw new UsageError(
      `--kill-after ${d(killAfterMs)} + --flush-timeout ${d(o.flushTimeout)} reach past --hold ${d(o.hold)}: the SIGTERM child would still be flushing when the alarm clears`,
    );
  return {
    json: o.json,
    html: o.html,
    auto: o.auto,
    alarm: o.alarm,
    node: o.node,
    beforeMs: o.before,
    holdMs: o.hold,
    afterMs: o.after,
    ratePerSec: o.rate,
    sizeBytes: o.size,
    deadlineMs: o.blockedTimeout,
    killAfterMs,
    flushTimeoutMs: o.flushTimeout,
    backlog: o.backlog,
    quietMs: o.idleTimeout,
    toleranceMs: o.tolerance,
  };
}

export const alarmDemo = defineCommand({
  name: 'alarm-demo',
  examples: ['alarm-demo --auto', 'alarm-demo --alarm disk --hold 20s --html alarm.html'],
  register: (command, dispatch: (o: AlarmDemoCliOptions) => Promise<void>) =>
    command
      .summary('a memory or disk alarm: publishers blocked')
      .description('a memory or disk alarm on one node: publishers on every node blocked, what each reports, what arrives; consumers go on')
      .addOption(new Option('--alarm <kind>', 'the resource alarm raised').choices([...ALARM_KINDS]).default('memory'))
      .addOption(new Option('--node <name>', 'the node whose limit is changed').argParser(nodeName).default('rabbit1'))
      .addOption(durationOption('--before <duration>', 'publishing before the alarm', '2s'))
      .addOption(durationOption('--hold <duration>', 'how long the alarm stays on', '8s'))
      .addOption(durationOption('--after <duration>', 'publishing after the alarm cleared', '2s'))
      .addOption(rateOption('messages per second, per publisher', 100))
      .addOption(sizeOption())
      .addOption(
        timeoutOption(
          '--blocked-timeout <duration>',
          "the deadline publisher's --blocked-timeout: it gives up when blocked this long (shorter than --hold)",
          '3s',
        ),
      )
      .addOption(durationOption('--kill-after <duration>', 'when the two producer children are stopped, into the alarm (default: half of --hold)'))
      .addOption(durationOption('--flush-timeout <duration>', "the SIGTERM child's --flush-timeout", '2s'))
      .addOption(new Option('--backlog <n>', 'confirmed messages in the queue before the alarm, for the consumer').argParser(nonNegativeInt).default(300))
      .addOption(durationOption('--idle-timeout <duration>', 'the end: no delivery for this long', '3s'))
      .addOption(durationOption('--tolerance <duration>', 'accepted lateness of a give-up past its deadline, and of an unblock past the clear', '2s'))
      .addOption(autoOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: RawOptions) => dispatch(alarmDemoOptions(o))),
  async run(ctx, o) {
    const { json, html, auto, ...options } = o;
    const { runAlarmDemo } = await import('../../scenarios/demos/alarm-demo.js');
    const { emit } = await import('../output.js');
    const r = await runAlarmDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
    emit({ json, html, broker: await ctx.broker() }, 'alarm-demo', r);
    return { ok: r.ok };
  },
});
