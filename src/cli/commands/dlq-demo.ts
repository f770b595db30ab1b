import { InvalidArgumentError, Option } from 'commander';
import { renderDlqDemo } from '../../report/dlq.js';
import { DLQ_REASONS, runDlqDemo, type DlqDemoOptions, type DlqReason } from '../../scenarios/dlq-demo.js';
import { defineCommand } from '../command.js';
import { autoOption, countOption, durationOption, htmlOption, jsonOption, positiveInt } from '../options.js';
import { emit } from '../output.js';
import { createStepper } from '../steps.js';

/** `rmq-bench dlq-demo`: every way a message reaches demo.dlq, verified by x-first-death-reason. */
export type DlqDemoCliOptions = DlqDemoOptions & { json: boolean; html: string | undefined; auto: boolean };

/** --reason: a comma-separated list of reasons, or all (in the demo's order). */
function dlqReasons(value: string): DlqReason[] {
  const parts = value.split(',').map((x) => x.trim());
  if (parts.includes('all')) return [...DLQ_REASONS];
  for (const p of parts) {
    if (!(DLQ_REASONS as readonly string[]).includes(p)) throw new InvalidArgumentError(`'${p}' is not one of ${DLQ_REASONS.join(', ')}, all`);
  }
  return DLQ_REASONS.filter((r) => parts.includes(r));
}

export const dlqDemo = defineCommand({
  name: 'dlq-demo',
  register: (command, dispatch: (o: DlqDemoCliOptions) => Promise<void>) =>
    command
      .description('every way a message reaches demo.dlq (delivery limit, reject, TTL, max-length), verified by x-first-death-reason')
      .addOption(
        new Option('--reason <reasons>', `which ways, comma-separated: ${DLQ_REASONS.join(', ')}, or all`)
          .argParser(dlqReasons)
          .default(['delivery_limit'], 'delivery_limit'),
      )
      .addOption(countOption('messages per reason', 3))
      .addOption(durationOption('--ttl <duration>', 'expired: per-message expiration', '1s'))
      .addOption(new Option('--max-length <n>', 'maxlen: x-max-length of the temporary policy').argParser(positiveInt).default(2))
      .addOption(autoOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string; auto: boolean; reason: DlqReason[]; count: number; ttl: number; maxLength: number }) =>
        dispatch({ json: o.json, html: o.html, auto: o.auto, reasons: o.reason, count: o.count, ttlMs: o.ttl, maxLength: o.maxLength }),
      ),
  async run(ctx, o) {
    const { json, html, auto, ...options } = o;
    const r = await runDlqDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
    emit({ json, html }, 'dlq-demo', r, renderDlqDemo(r));
    return { ok: r.ok };
  },
});
