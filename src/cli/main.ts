import { CommanderError } from 'commander';
import { brokerWait } from '../client/connect-any.js';
import { envFlag, loadConfig } from '../config.js';
import { ExitCode, RmqBenchError, UsageError, verdictExit } from '../errors.js';
import { maskUrlsIn } from '../url.js';
import { commandPath } from './help.js';
import { commandOf, createProgram, type Invocation } from './program.js';
import { PLAIN, type Palette } from '../report/palette.js';
import { paintLine, paletteFor } from './colour.js';
import { errorDocument, jsonRequested, stdoutDocument } from './error-document.js';
import { takeGlobalFlags } from './global-flags.js';
import { renameFlags } from './renamed-flags.js';

/**
 * Run one invocation: its command's definition, a context, the verdict → an exit code. The
 * context and the progress (ora on a TTY) are loaded here, not at import: --help and a usage
 * error never need them.
 */
async function run(invocation: Invocation, signal: AbortSignal): Promise<number> {
  const def = commandOf(invocation);
  const config = loadConfig();
  // How long the first AMQP connection waits for a broker that refuses it: --wait-for-broker, else RMQ_BENCH_WAIT_FOR_BROKER.
  brokerWait.waitMs = invocation.waitForBrokerMs ?? config.waitForBrokerMs;
  const { createProgress } = await import('./progress.js');
  const progress = createProgress({ quiet: envFlag(process.env.RMQ_BENCH_QUIET) });
  const overrides = (await def.overrides?.(invocation.options, config)) ?? {};
  const { createContext } = await import('../context.js');
  const ctx = createContext(config, progress, signal, overrides);
  try {
    const verdict = await def.run(ctx, invocation.options);
    return verdictExit(verdict?.ok ?? true);
  } finally {
    progress.stop();
  }
}

/**
 * What is said of an error: its exit code, and its line's parts (what, the hint), credentials
 * masked; no message when commander has said it already (or printed help). Pure.
 */
export interface ErrorSaid {
  readonly exitCode: number;
  readonly message?: string;
  readonly hint?: string;
}

/**
 * What to say of an error, and the exit code it maps to. The only place that knows exit codes.
 * A usage error's hint, when it has none of its own, is the command's help (`helpFor`:
 * 'rmq-bench producer').
 */
export function describeError(err: unknown, helpFor?: string): ErrorSaid {
  if (err instanceof CommanderError) {
    // commander has already printed its message (and help when asked).
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return { exitCode: ExitCode.ok };
    // `rmq-bench cluster` alone: its help on stderr, then 1, as git does (`rmq-bench help cluster` is 0).
    if (err.code === 'commander.help')
      return err.exitCode === 0 ? { exitCode: ExitCode.ok } : { exitCode: ExitCode.noSubcommand, message: 'no subcommand given' };
    return { exitCode: ExitCode.usage };
  }
  if (err instanceof RmqBenchError) {
    const hint = err.hint ?? (err instanceof UsageError && helpFor !== undefined ? `run ${helpFor} --help` : undefined);
    return { exitCode: err.exitCode, message: maskUrlsIn(err.message), ...(hint ? { hint: maskUrlsIn(hint) } : {}) };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { exitCode: ExitCode.internal, message: `internal error: ${maskUrlsIn(message.split('\n')[0] ?? message)}` };
}

/**
 * One line on stderr for an error; the exit code it maps to. Every line has one shape,
 * `rmq-bench: <what> (<hint>)`, commander's (printed by the program, see createProgram) as ours.
 */
export function reportError(err: unknown, write: (s: string) => void = (s) => process.stderr.write(s), helpFor?: string): number {
  const said = describeError(err, helpFor);
  // commander's own line is out already; `rmq-bench cluster` alone has printed its help.
  if (said.message !== undefined && !(err instanceof CommanderError)) write(`rmq-bench: ${said.message}${said.hint ? ` (${said.hint})` : ''}\n`);
  if (!(err instanceof RmqBenchError) && !(err instanceof CommanderError) && envFlag(process.env.RMQ_BENCH_DEBUG) && err instanceof Error && err.stack)
    write(`${maskUrlsIn(err.stack)}\n`);
  return said.exitCode;
}

/** After an internal error: how long the clean-up (undoing faults) may take before the process exits. */
const CRASH_CLEANUP_MS = 60_000;

/** A write to a pipe whose reader has gone: `rmq-bench --help | head -1` once head has its line. */
const isClosedPipe = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'EPIPE';

/**
 * A closed stdout or stderr ends rmq-bench the way SIGPIPE ends git or ls: no message, no stack,
 * exit 141 (128 + 13, what a shell reports for SIGPIPE), after --help as after a run. Not 0: the
 * reader stopped before the end, so what it got may be cut short (a --json document, a table);
 * under `set -o pipefail` the pipeline fails as it does with git or ls. Node ignores SIGPIPE and
 * reports the failed write as an 'error' event on the stream, which unhandled is a crash with a
 * stack. The event often comes after main() has returned (the help printed, the failure reported
 * on a later tick), so this listener stays for the life of the process, added once per stream.
 * Any other error on the stream is thrown, as an unhandled 'error' event would be.
 */
function onOutputError(err: unknown): void {
  if (!isClosedPipe(err)) throw err;
  process.exitCode = ExitCode.closedPipe;
}

function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (!stream.listeners('error').includes(onOutputError)) stream.on('error', onOutputError);
  }
}

export async function main(argv: string[]): Promise<void> {
  endQuietlyOnClosedPipe();
  stdoutDocument.written = false;
  /** --json on the command line: a failure puts an error document on stdout (see endJson). */
  let json = false;
  /** What was said of the error the run ends with (the stderr line's parts), for the error document. */
  let said: ErrorSaid | undefined;
  /** Under --json, a non-zero exit without the command's own document: the error document, once. */
  const endJson = (exitCode: number): void => {
    if (!json || exitCode === ExitCode.ok || exitCode === ExitCode.closedPipe || stdoutDocument.written) return;
    stdoutDocument.written = true;
    process.stdout.write(`${errorDocument(exitCode, said?.exitCode === exitCode ? said : undefined)}\n`);
  };
  const controller = new AbortController();
  let interrupts = 0;
  /** The first signal: Ctrl+C ends with 130, SIGTERM with 143, a closed pipe with 141, as shells report them. */
  let signalled: 'SIGINT' | 'SIGTERM' | 'SIGPIPE' | undefined;
  const signalExit = (): number => (signalled === 'SIGTERM' ? ExitCode.terminated : signalled === 'SIGPIPE' ? ExitCode.closedPipe : ExitCode.interrupted);
  const onSignal = (sig: 'SIGINT' | 'SIGTERM'): void => {
    interrupts += 1;
    signalled ??= sig;
    if (interrupts === 1) {
      process.stderr.write(`\nrmq-bench: ${sig === 'SIGTERM' ? 'terminated' : 'interrupted'}; undoing faults and cleaning up (Ctrl+C again to quit at once)\n`);
      controller.abort();
    } else {
      process.exit(signalExit());
    }
  };
  const onSigint = (): void => onSignal('SIGINT');
  // A CI job's timeout or `kill` sends SIGTERM: clean up the same way (faults, temporary policies).
  const onSigterm = (): void => onSignal('SIGTERM');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  // The reader gone while a command runs (`watch 2>&1 | head -3`): stop it quietly, with the same clean-up as Ctrl+C (faults undone), then 141.
  const onClosedPipe = (err: unknown): void => {
    if (!isClosedPipe(err)) return;
    signalled ??= 'SIGPIPE';
    controller.abort();
  };
  process.stdout.on('error', onClosedPipe);
  process.stderr.on('error', onClosedPipe);
  // A bug that escapes every handler (an unhandled rejection, an uncaught exception): one line,
  // then the same clean-up as Ctrl+C (a fault left on would outlive the run), exit 70.
  let crashed = false;
  const onCrash = (err: unknown): void => {
    if (crashed) return;
    crashed = true;
    said = describeError(err);
    reportError(err);
    process.stderr.write('rmq-bench: undoing faults and cleaning up after the internal error\n');
    controller.abort();
    // The clean-up has a deadline too.
    setTimeout(() => {
      endJson(ExitCode.internal);
      process.exit(ExitCode.internal);
    }, CRASH_CLEANUP_MS).unref();
  };
  process.on('unhandledRejection', onCrash);
  process.on('uncaughtException', onCrash);
  let code: number = ExitCode.ok;
  /** stderr's colours (error lines red, notices yellow), once the global flags are in the environment. */
  let palette: Palette = PLAIN;
  /** While a command checks its options (before it runs): the command whose --help a usage error points to. */
  let helpFor: string | undefined;
  const program = createProgram(
    async (invocation) => {
      helpFor = undefined;
      code = await run(invocation, controller.signal);
    },
    {
      onUsageError: (usage) => {
        said = { exitCode: ExitCode.usage, ...usage };
      },
      paintError: (line) => palette.error(line),
    },
  );
  program.hook('preAction', (_root, action) => {
    helpFor = commandPath(action);
  });
  try {
    // argv: node, the script, then the command line: the global flags set their variables (for
    // this process and the ones it starts), a renamed flag's old spelling is rewritten.
    const global = takeGlobalFlags(argv.slice(2));
    Object.assign(process.env, global.env);
    palette = paletteFor(process.stderr);
    const renamed = renameFlags(global.args);
    json = jsonRequested(renamed.args);
    for (const notice of renamed.notices) process.stderr.write(`${palette.warning(notice)}\n`);
    await program.parseAsync([...argv.slice(0, 2), ...renamed.args]);
  } catch (err) {
    const write = (s: string): void => void process.stderr.write(paintLine(palette.error, s));
    code = controller.signal.aborted ? ExitCode.interrupted : reportError(err, write, helpFor);
    if (controller.signal.aborted && err instanceof RmqBenchError && err.exitCode !== ExitCode.interrupted) reportError(err);
    if (!controller.signal.aborted && !(err instanceof CommanderError && said?.exitCode === ExitCode.usage)) said = describeError(err, helpFor);
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
    process.stdout.off('error', onClosedPipe);
    process.stderr.off('error', onClosedPipe);
    process.off('unhandledRejection', onCrash);
    process.off('uncaughtException', onCrash);
  }
  process.exitCode = crashed ? ExitCode.internal : code === ExitCode.interrupted || signalled === 'SIGPIPE' ? signalExit() : code;
  endJson(process.exitCode);
}
