import { CommanderError } from 'commander';
import { loadExeca } from '../util/exec.js';
import { commandInjector } from '../cluster/faults.js';
import { ManagementClient } from '../cluster/management.js';
import { loadConfig, type Config } from '../config.js';
import { createContext, type ContextOverrides } from '../context.js';
import { EnvironmentError, ExitCode, RmqBenchError } from '../errors.js';
import { createProgress } from './progress.js';
import { maskUrlsIn } from '../url.js';
import * as clusterCommands from './commands/cluster.js';
import { compare } from './commands/compare.js';
import { consumer, consumerCrash, prefetchDemo } from './commands/consumer.js';
import { delayedRetryDemo, durabilityDemo, dlqDemo, dlqInspect, dlqReplay, retryDemo } from './commands/demos.js';
import { audit } from './commands/audit.js';
import { bench } from './commands/bench.js';
import { failover } from './commands/failover.js';
import { watch } from './commands/watch.js';
import { producer, verify } from './commands/producer.js';
import { producerCrash } from './commands/producer-crash.js';
import { createProgram, type Invocation } from './program.js';

async function run(invocation: Invocation, signal: AbortSignal): Promise<number> {
  const config = loadConfig();
  const progress = createProgress({ quiet: process.env.RMQ_BENCH_QUIET === '1' });
  const ctx = createContext(config, progress, signal, overridesFor(invocation, config));
  try {
    switch (invocation.command) {
      case 'cluster up':
        return await clusterCommands.up(ctx, invocation.options);
      case 'cluster down':
        return await clusterCommands.down(ctx, invocation.options);
      case 'cluster reset':
        return await clusterCommands.reset(ctx, invocation.options);
      case 'cluster status':
        return await clusterCommands.status(ctx, invocation.options);
      case 'cluster logs':
        return await clusterCommands.logs(ctx, invocation.options);
      case 'cluster image':
        return await clusterCommands.image(ctx, invocation.options);
      case 'failover':
        return await failover(ctx, invocation.options);
      case 'producer':
        return await producer(ctx, invocation.options);
      case 'verify':
        return await verify(ctx, invocation.options);
      case 'compare':
        return await compare(ctx, invocation.options);
      case 'consumer':
        return await consumer(ctx, invocation.options);
      case 'consumer-crash':
        return await consumerCrash(ctx, invocation.options);
      case 'prefetch-demo':
        return await prefetchDemo(ctx, invocation.options);
      case 'dlq-demo':
        return await dlqDemo(ctx, invocation.options);
      case 'retry-demo':
        return await retryDemo(ctx, invocation.options);
      case 'durability-demo':
        return await durabilityDemo(ctx, invocation.options);
      case 'delayed-retry-demo':
        return await delayedRetryDemo(ctx, invocation.options);
      case 'dlq inspect':
        return await dlqInspect(ctx, invocation.options);
      case 'dlq replay':
        return await dlqReplay(ctx, invocation.options);
      case 'bench':
        return await bench(ctx, invocation.options);
      case 'audit':
        return await audit(ctx, invocation.options);
      case 'watch':
        return await watch(ctx, invocation.options);
      case 'producer-crash':
        return await producerCrash(ctx, invocation.options);
    }
  } finally {
    progress.stop();
  }
}

/** compare against a cluster that is not ours: its management API and a fault command. */
function overridesFor(invocation: Invocation, config: Config): ContextOverrides {
  if ((invocation.command === 'audit' || invocation.command === 'watch') && invocation.options.managementUrls) return { management: ManagementClient.fromUrls(invocation.options.managementUrls, config.user, config.password) };
  if (invocation.command !== 'compare') return {};
  const o = invocation.options;
  return {
    ...(o.managementUrls ? { management: ManagementClient.fromUrls(o.managementUrls, config.user, config.password) } : {}),
    ...(o.faultCmd ? { faults: commandInjector(o.faultCmd, o.restoreCmd, runShell) } : {}),
  };
}

async function runShell(command: string): Promise<void> {
  const execa = await loadExeca();
  const r = await execa('sh', ['-c', command], { reject: false, stdin: 'ignore', all: true, timeout: 120_000 });
  if (r.exitCode !== 0) {
    throw new EnvironmentError(`'${maskUrlsIn(command)}' failed (exit ${r.exitCode ?? 'timeout'}): ${String(r.all ?? '').trim().split('\n').pop() ?? ''}`);
  }
}

/** One line on stderr for an error; the exit code it maps to. The only place that knows exit codes. */
export function reportError(err: unknown, write: (s: string) => void = (s) => process.stderr.write(s)): number {
  if (err instanceof CommanderError) {
    // commander has already printed its message (and help when asked).
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return ExitCode.ok;
    return ExitCode.usage;
  }
  if (err instanceof RmqBenchError) {
    write(`rmq-bench: ${maskUrlsIn(err.message)}${err.hint ? ` (${maskUrlsIn(err.hint)})` : ''}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  write(`rmq-bench: internal error: ${maskUrlsIn(message.split('\n')[0] ?? message)}\n`);
  if (process.env.RMQ_BENCH_DEBUG && err instanceof Error && err.stack) write(`${maskUrlsIn(err.stack)}\n`);
  return ExitCode.internal;
}

export async function main(argv: string[]): Promise<void> {
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts += 1;
    if (interrupts === 1) {
      process.stderr.write('\nrmq-bench: interrupted; undoing faults and cleaning up (Ctrl+C again to quit at once)\n');
      controller.abort();
    } else {
      process.exit(ExitCode.interrupted);
    }
  };
  process.on('SIGINT', onSigint);
  // A CI job's timeout or `kill` sends SIGTERM: clean up the same way (faults, temporary policies).
  process.on('SIGTERM', onSigint);
  let code: number = ExitCode.ok;
  const program = createProgram(async (invocation) => {
    code = await run(invocation, controller.signal);
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    code = controller.signal.aborted ? ExitCode.interrupted : reportError(err);
    if (controller.signal.aborted && err instanceof RmqBenchError && err.exitCode !== ExitCode.interrupted) reportError(err);
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  }
  process.exitCode = code;
}
