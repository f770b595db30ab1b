import { InvalidArgumentError, Option } from 'commander';
import { UsageError } from '../../errors.js';
import type { DlqDemoOptions } from '../../scenarios/demos/dlq-demo.js';
import { DLQ_REASONS, type DlqReason } from '../../scenarios/demos/dlq-reasons.js';
import {
  DLX_VARIANTS,
  STRATEGY_FAULTS,
  strategyVariants,
  type DlxStrategyOptions,
  type DlxVariant,
  type StrategyFault,
} from '../../scenarios/demos/dlx-strategy-plan.js';
import { checkpointCmdOption, checkpointOverride } from '../checkpoint-option.js';
import { defineCommand } from '../command.js';
import { autoOption, countOption, durationOption, htmlOption, jsonOption, positiveInt } from '../options.js';
import { createStepper } from '../steps.js';

/**
 * `rmq-bench dlq-demo`: every way a message reaches demo.dlq, verified by x-first-death-reason;
 * with --strategy, dead letters sent while the DLQ's leader is faulted, per dead-lettering strategy.
 */
type DlqDemoCliOptions = DlqDemoOptions & {
  json: boolean;
  html: string | undefined;
  auto: boolean;
  /** --strategy: the dead-lettering strategies under a fault, instead of the reasons. */
  strategy?: DlxStrategyOptions;
  /** --checkpoint-cmd: the user's command once a reason's dead letters are in demo.dlq, or before a strategy run's DLQ is read out. */
  checkpointCmd: string | undefined;
};

/** --reason: a comma-separated list of reasons, or all (in the demo's order). */
function dlqReasons(value: string): DlqReason[] {
  const parts = value.split(',').map((x) => x.trim());
  if (parts.includes('all')) return [...DLQ_REASONS];
  for (const p of parts) {
    if (!(DLQ_REASONS as readonly string[]).includes(p)) throw new InvalidArgumentError(`'${p}' is not one of ${DLQ_REASONS.join(', ')}, all`);
  }
  return DLQ_REASONS.filter((r) => parts.includes(r));
}

function strategyList(value: string): DlxVariant[] {
  const v = strategyVariants(value.trim());
  if (!v) throw new InvalidArgumentError(`'${value}' is not one of ${DLX_VARIANTS.join(', ')}, both, all`);
  return v;
}

interface RawOptions {
  json: boolean;
  html?: string;
  auto: boolean;
  reason?: DlqReason[];
  count?: number;
  ttl: number;
  maxLength: number;
  strategy?: DlxVariant[];
  fault?: StrategyFault;
  hold?: number;
  runs?: number;
  checkpointCmd?: string;
}

const REASON_COUNT = 3;
const STRATEGY_COUNT = 200;

export function dlqDemoOptions(o: RawOptions): DlqDemoCliOptions {
  const base = { json: o.json, html: o.html, auto: o.auto, ttlMs: o.ttl, maxLength: o.maxLength, checkpointCmd: o.checkpointCmd };
  if (o.strategy === undefined) {
    const stray = (['fault', 'hold', 'runs'] as const).filter((k) => o[k] !== undefined);
    if (stray.length > 0) throw new UsageError(`${stray.map((k) => `--${k}`).join(', ')} go(es) with --strategy`);
    return { ...base, reasons: o.reason ?? ['delivery_limit'], count: o.count ?? REASON_COUNT };
  }
  if (o.reason !== undefined) throw new UsageError('--reason and --strategy are two demos: give one');
  const count = o.count ?? STRATEGY_COUNT;
  return {
    ...base,
    reasons: [],
    count,
    strategy: { variants: o.strategy, fault: o.fault ?? 'pause', count, holdMs: o.hold ?? 15_000, runs: o.runs ?? 1 },
  };
}

export const dlqDemo = defineCommand({
  name: 'dlq-demo',
  examples: ['dlq-demo --reason all --auto', 'dlq-demo --strategy both --fault pause --hold 15s'],
  register: (command, dispatch: (o: DlqDemoCliOptions) => Promise<void>) =>
    command
      .summary('every way a message reaches demo.dlq')
      .description(
        "every way a message reaches demo.dlq (delivery limit, reject, TTL, max-length), verified by x-first-death-reason; --strategy: dead letters sent while the DLQ's leader is faulted, at-most-once against at-least-once",
      )
      .addOption(
        new Option('--reason <reasons>', `which ways, comma-separated: ${DLQ_REASONS.join(', ')}, or all (default: delivery_limit)`).argParser(dlqReasons),
      )
      .addOption(countOption(`messages per reason, or with --strategy per run (default: ${REASON_COUNT}, with --strategy ${STRATEGY_COUNT})`))
      .addOption(durationOption('--ttl <duration>', 'expired: per-message expiration', '1s'))
      .addOption(new Option('--max-length <n>', 'maxlen: x-max-length of the temporary policy').argParser(positiveInt).default(2))
      .addOption(
        new Option(
          '--strategy <which>',
          `dead-lettering under a fault of the DLQ's leader: ${DLX_VARIANTS.join(', ')}, both (the two strategies) or all (the three)`,
        ).argParser(strategyList),
      )
      .addOption(new Option('--fault <kind>', "with --strategy: what happens to the DLQ's leader (default: pause)").choices(STRATEGY_FAULTS))
      .addOption(durationOption('--hold <duration>', 'with --strategy: how long the fault lasts; the messages are rejected within it (default: 15s)'))
      .addOption(new Option('--runs <k>', 'with --strategy: runs of each strategy (default: 1)').argParser(positiveInt))
      .addOption(
        checkpointCmdOption(
          "once a reason's dead letters are in demo.dlq (dead-lettered), or, with --strategy, before each run reads its DLQ out (before-drain)",
        ),
      )
      .addOption(autoOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: RawOptions) => dispatch(dlqDemoOptions(o))),
  overrides: async (o) => checkpointOverride(o.checkpointCmd),
  async run(ctx, o) {
    const { json, html, auto, strategy, checkpointCmd: _c, ...options } = o;
    const { emit } = await import('../output.js');
    const step = createStepper({ auto, progress: ctx.progress, signal: ctx.signal });
    if (strategy) {
      const { runDlxStrategy } = await import('../../scenarios/demos/dlx-strategy.js');
      const r = await runDlxStrategy(ctx, strategy, step);
      emit({ json, html, broker: await ctx.broker() }, 'dlq-demo', r);
      return { ok: r.ok };
    }
    const { runDlqDemo } = await import('../../scenarios/demos/dlq-demo.js');
    const r = await runDlqDemo(ctx, options, step);
    emit({ json, html, broker: await ctx.broker() }, 'dlq-demo', r);
    return { ok: r.ok };
  },
});
