import { type Command, Option } from 'commander';
import type { FaultKind } from '../faults/kinds.js';
import type { Config } from '../config.js';
import type { ContextOverrides } from '../context.js';
import { EnvironmentError, UsageError } from '../errors.js';
import { maskUrlsIn } from '../url.js';
import { loadExeca } from '../util/exec.js';
import { managementOverride } from './command.js';
import { htmlOption, jsonOption, managementUrlOption, urlsOption } from './options.js';

/**
 * A cluster that is not ours: --fault-cmd and --restore-cmd fault its nodes with the user's
 * shell commands (kubectl, ssh, a cloud CLI) instead of dockerode. Shared by every command that
 * takes --fault (compare, chaos).
 */

const faultCmdOption = (): Option =>
  new Option(
    '--fault-cmd <command>',
    "fault a node of a cluster that is not ours with this shell command ({node}, {host}, {fault} are filled in), e.g. 'kubectl delete pod {host}'",
  );

const restoreCmdOption = (): Option => new Option('--restore-cmd <command>', 'undo --fault-cmd (without it, the platform is expected to heal the node)');

/** --fault-cmd needs a fault to apply; --restore-cmd needs --fault-cmd. */
export function checkedFault(fault: FaultKind | 'none', faultCmd: string | undefined, restoreCmd: string | undefined): FaultKind | 'none' {
  if (restoreCmd !== undefined && faultCmd === undefined) throw new UsageError('--restore-cmd needs --fault-cmd');
  if (faultCmd !== undefined && fault === 'none') throw new UsageError('--fault-cmd with --fault none applies nothing');
  return fault;
}

/** Run a user's fault or restore command; a non-zero exit is an EnvironmentError with its last line. */
async function runShell(command: string): Promise<void> {
  const execa = await loadExeca();
  const r = await execa('sh', ['-c', command], { reject: false, stdin: 'ignore', all: true, timeout: 120_000 });
  if (r.exitCode !== 0) {
    throw new EnvironmentError(
      `'${maskUrlsIn(command)}' failed (exit ${r.exitCode ?? 'timeout'}): ${
        String(r.all ?? '')
          .trim()
          .split('\n')
          .pop() ?? ''
      }`,
    );
  }
}

/** What compare and chaos take besides their own options: the outputs, and a cluster that is not ours. */
export interface ReportAndClusterOptions {
  json: boolean;
  /** --html: also write a self-contained HTML report here. */
  html: string | undefined;
  /** A cluster that is not ours: its management API... */
  managementUrls: string[] | undefined;
  /** ...and how to fault (and restore) one of its nodes: '{node}', '{host}', '{fault}' are filled in. */
  faultCmd: string | undefined;
  restoreCmd: string | undefined;
}

/**
 * The options behind ReportAndClusterOptions, last on the command in this order (--help lists
 * them so): --urls, --management-urls, --fault-cmd, --restore-cmd, --json, --html.
 */
export function addReportAndClusterOptions(command: Command): Command {
  return command
    .addOption(urlsOption())
    .addOption(managementUrlOption('management API of a cluster that is not ours (http://user:pass@host:15672, comma-separated)'))
    .addOption(faultCmdOption())
    .addOption(restoreCmdOption())
    .addOption(jsonOption())
    .addOption(htmlOption());
}

/** A cluster that is not ours (compare, chaos): its management API, and with --fault-cmd the context's fault injector instead of dockerode. */
export async function otherClusterOverride(o: ReportAndClusterOptions, config: Config): Promise<ContextOverrides> {
  const overrides = await managementOverride(o.managementUrls, config);
  if (!o.faultCmd) return overrides;
  const { commandInjector } = await import('../faults/injector.js');
  return { ...overrides, faults: commandInjector(o.faultCmd, o.restoreCmd, runShell) };
}
