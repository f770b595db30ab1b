import { Option, type Command } from 'commander';
import { httpUrlList, positiveInt } from './options.js';

/** `rmq-bench audit`: its commander definition and typed invocation (kept out of program.ts). */
export interface AuditCliOptions {
  json: boolean;
  /** The management API of any cluster (credentials in the URL or from the config); undefined: ours. */
  managementUrls: string[] | undefined;
  maxUnacked: number;
  /** List each passing item too, not only a count per check. */
  all: boolean;
}

export type AuditInvocation = { command: 'audit'; options: AuditCliOptions };

export const managementUrlOption = (): Option =>
  new Option('--management-url <list>', 'management API to ask, any cluster (http://user:pass@host:15672, comma-separated: the next is asked when one does not answer)').argParser(
    httpUrlList,
  );

export function registerAudit(program: Command, dispatch: (invocation: AuditInvocation) => Promise<void>): void {
  program
    .command('audit')
    .description('check a live broker against the reliability checklist: pass/warn/fail per item, the object it concerns and the fix (exit 1 on any fail)')
    .addOption(managementUrlOption())
    .addOption(new Option('--max-unacked <n>', 'warn about a queue with this many unacked messages or more').argParser(positiveInt).default(1_000))
    .option('--all', 'list every passing item too (default: a count per check)', false)
    .addOption(new Option('--json', 'print one JSON document on stdout (people-facing output stays on stderr)').default(false))
    .action((o: { json: boolean; managementUrl?: string[]; maxUnacked: number; all: boolean }) =>
      dispatch({ command: 'audit', options: { json: o.json, managementUrls: o.managementUrl, maxUnacked: o.maxUnacked, all: o.all } }),
    );
}
