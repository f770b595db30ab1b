import { InvalidArgumentError, Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { durationMs } from './options.js';
import { managementUrlOption } from './program-audit.js';

/** `rmq-bench watch`: its commander definition and typed invocation (kept out of program.ts). */
export interface WatchCliOptions {
  json: boolean;
  once: boolean;
  intervalMs: number;
  /** Only queues whose name matches this regular expression. */
  match: string | undefined;
  /** The management API of any cluster; undefined: ours. */
  managementUrls: string[] | undefined;
}

export type WatchInvocation = { command: 'watch'; options: WatchCliOptions };

function regex(value: string): string {
  try {
    new RegExp(value);
  } catch {
    throw new InvalidArgumentError(`'${value}' is not a regular expression`);
  }
  return value;
}

function interval(value: string): number {
  const ms = durationMs(value);
  if (ms < 200) throw new InvalidArgumentError(`'${value}' is shorter than 200ms`);
  return ms;
}

export function registerWatch(program: Command, dispatch: (invocation: WatchInvocation) => Promise<void>): void {
  program
    .command('watch')
    .description('live view, refreshed every second: per queue ready/unacked/delayed, rates, leader, online members; node states; alerts (Ctrl+C stops)')
    .option('--once', 'take one snapshot and exit (with --json: one JSON document for scripts)', false)
    .addOption(new Option('--interval <duration>', 'time between refreshes').argParser(interval).default(1_000, '1s'))
    .addOption(new Option('--match <regex>', 'only queues whose name matches').argParser(regex))
    .addOption(managementUrlOption())
    .addOption(new Option('--json', 'with --once: print the snapshot as one JSON document on stdout').default(false))
    .action((o: { json: boolean; once: boolean; interval: number; match?: string; managementUrl?: string[] }) => {
      if (o.json && !o.once) throw new UsageError('--json needs --once (one snapshot, one JSON document)');
      return dispatch({ command: 'watch', options: { json: o.json, once: o.once, intervalMs: o.interval, match: o.match, managementUrls: o.managementUrl } });
    });
}
