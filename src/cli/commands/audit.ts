import { Option } from 'commander';
import { defineCommand, managementOverride } from '../command.js';
import { htmlOption, jsonOption, managementUrlOption, positiveInt } from '../options.js';

/** `rmq-bench audit`: a live broker against the reliability checklist. */
interface AuditCliOptions {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** The management API of any cluster (credentials in the URL or from the config); undefined: ours. */
  managementUrls: string[] | undefined;
  maxUnacked: number;
  /** List each passing item too, not only a count per check. */
  all: boolean;
}

export const audit = defineCommand({
  name: 'audit',
  examples: ['audit', 'audit --management-urls http://user:pass@mq.example:15672 --json'],
  register: (command, dispatch: (o: AuditCliOptions) => Promise<void>) =>
    command
      .summary('check a broker against the reliability checklist')
      .description('check a live broker against the reliability checklist: pass/warn/fail per item, the object it concerns and the fix (exit 1 on any fail)')
      .addOption(managementUrlOption())
      .addOption(new Option('--max-unacked <n>', 'warn about a queue with this many unacked messages or more').argParser(positiveInt).default(1_000))
      .option('--all', 'list every passing item too (default: a count per check)', false)
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action((o: { json: boolean; html?: string; managementUrls?: string[]; maxUnacked: number; all: boolean }) =>
        dispatch({ json: o.json, html: o.html, managementUrls: o.managementUrls, maxUnacked: o.maxUnacked, all: o.all }),
      ),
  overrides: (o, config) => managementOverride(o.managementUrls, config),
  async run(ctx, o) {
    const { runAudit } = await import('../../scenarios/broker-tools/audit.js');
    const { renderAudit } = await import('../../report/kinds/audit/text.js');
    const { emit } = await import('../output.js');
    ctx.progress.start('reading the broker (management API)');
    const r = await runAudit(ctx, { maxUnacked: o.maxUnacked });
    ctx.progress.stop();
    emit({ ...o, broker: await ctx.broker() }, 'audit', r, { text: renderAudit(r, { all: o.all }) });
    return { ok: r.ok };
  },
});
