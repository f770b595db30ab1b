import { Command, CommanderError, Option } from 'commander';
import { createRequire } from 'node:module';
import type { CommandDef, CommandGroup } from './command.js';
import { alarmDemo } from './commands/alarm-demo.js';
import { audit } from './commands/audit.js';
import { bench } from './commands/bench.js';
import { cluster } from './commands/cluster.js';
import { chaos } from './commands/chaos.js';
import { compare } from './commands/compare.js';
import { completion } from './commands/completion.js';
import { consumerCrash } from './commands/consumer-crash.js';
import { consumer } from './commands/consumer.js';
import { consumerTimeoutDemo } from './commands/consumer-timeout-demo.js';
import { delayedRetryDemo } from './commands/delayed-retry-demo.js';
import { deliveryLimitDemo } from './commands/delivery-limit-demo.js';
import { dlqDemo } from './commands/dlq-demo.js';
import { dlq } from './commands/dlq.js';
import { durabilityDemo } from './commands/durability-demo.js';
import { failover } from './commands/failover.js';
import { prefetchDemo } from './commands/prefetch-demo.js';
import { producerCrash } from './commands/producer-crash.js';
import { producer } from './commands/producer.js';
import { report } from './commands/report.js';
import { retryDemo } from './commands/retry-demo.js';
import { verify } from './commands/verify.js';
import { watch } from './commands/watch.js';
import { commandPath, examplesText, HELP_LAYOUT, helpWidth, rootHelpText, usageParts } from './help.js';
import { maskCredentialsLoosely, waitForBrokerOption } from './options.js';
import { GLOBAL_FLAGS } from './global-flags.js';

/**
 * Every command, under the heading the root --help lists it under, in that order. Each is
 * declared and run in its own file under commands/; its summary there is its line in this list.
 */
const HELP_GROUPS = [
  { heading: 'Cluster commands:', commands: [cluster] },
  { heading: 'Traffic commands:', commands: [producer, consumer, verify, bench] },
  { heading: 'Fault commands:', commands: [compare, failover, chaos, producerCrash, consumerCrash] },
  {
    heading: 'Demo commands:',
    commands: [durabilityDemo, prefetchDemo, dlqDemo, retryDemo, delayedRetryDemo, consumerTimeoutDemo, deliveryLimitDemo, alarmDemo],
  },
  { heading: 'Inspect commands:', commands: [watch, audit, dlq] },
  { heading: 'Report and other commands:', commands: [report, completion] },
] as const;

type Entry = (typeof HELP_GROUPS)[number]['commands'][number];

const COMMANDS: readonly Entry[] = HELP_GROUPS.flatMap<Entry>((g) => g.commands);

type Leaf<E> = E extends CommandGroup<infer D> ? D : E;
type InvocationOf<D> = D extends CommandDef<infer N, infer O> ? { command: N; options: O } : never;

/** argv → one typed invocation: a command's name and its options. No side effects: main.ts runs it. */
export type Invocation = InvocationOf<Leaf<Entry>> & {
  /** --wait-for-broker, only when given (main.ts hands it to connect-any.ts's brokerWait). */
  waitForBrokerMs?: number;
};

/** The commands whose first contact with the broker is an AMQP connection (no management check first): each takes --wait-for-broker. */
const WAITS_FOR_BROKER: ReadonlySet<string> = new Set<Invocation['command']>(['producer', 'consumer', 'verify', 'bench', 'dlq inspect', 'dlq replay']);

type Dispatch = (invocation: Invocation) => Promise<void>;

const isGroup = (e: CommandDef | CommandGroup): e is CommandGroup => 'commands' in e;

const DEFS: ReadonlyMap<string, CommandDef> = new Map(
  COMMANDS.flatMap((e: CommandDef | CommandGroup) => (isGroup(e) ? e.commands : [e])).map((d) => [d.name, d] as const),
);

/** The definition an invocation came from (main.ts runs it). */
export function commandOf(invocation: Invocation): CommandDef {
  const def = DEFS.get(invocation.command);
  if (!def) throw new Error(`no command ${invocation.command}`);
  return def;
}

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

function add(parent: Command, def: CommandDef, dispatch: Dispatch): void {
  const leaf = def.name.split(' ').pop()!;
  const command = parent.command(leaf);
  def.register(command, (options) => {
    const waitForBrokerMs = command.getOptionValue('waitForBroker') as number | undefined;
    return dispatch({ command: def.name, options, ...(waitForBrokerMs === undefined ? {} : { waitForBrokerMs }) } as Invocation);
  });
  if (WAITS_FOR_BROKER.has(def.name)) command.addOption(waitForBrokerOption());
  if (def.examples) command.addHelpText('after', examplesText(def.examples));
}

/** A command, or a group (its description is its summary) with its subcommands. */
function addEntry(program: Command, entry: CommandDef | CommandGroup, dispatch: Dispatch): void {
  if (!isGroup(entry)) {
    add(program, entry, dispatch);
    return;
  }
  const group = program.command(entry.name).description(entry.description).exitOverride();
  if (entry.examples) group.addHelpText('after', examplesText(entry.examples));
  for (const def of entry.commands) add(group, def, dispatch);
}

/** Every command under (and including) `c`. */
const everyCommand = (c: Command): Command[] => [c, ...c.commands.flatMap(everyCommand)];

/** What main.ts adds to the usage errors commander reports. */
export interface UsageErrorHooks {
  /** Told each one (its line's parts, credentials masked) once its line is on stderr: the --json error document says it too. */
  onUsageError?(said: { message: string; hint: string }): void;
  /** The line's colour (red on a terminal); none when not given. */
  paintError?(line: string): string;
}

export function createProgram(dispatch: Dispatch, hooks: UsageErrorHooks = {}): Command {
  const program = new Command('rmq-bench')
    .description('Shows, with numbers from a real 3-node RabbitMQ cluster, where messages get lost and what prevents it.')
    .version(version, '-v, --version', 'print the version')
    .option('--quiet', GLOBAL_FLAGS['--quiet'].help)
    .option('--no-color', GLOBAL_FLAGS['--no-color'].help)
    // -V too: commander's own spelling, which scripts may use.
    .addOption(new Option('-V').hideHelp())
    .exitOverride()
    .configureOutput({
      writeOut: (s) => process.stdout.write(s),
      writeErr: (s) => process.stderr.write(s),
    })
    // Inherited by every command created after it (see HELP_LAYOUT).
    .configureHelp(HELP_LAYOUT)
    .addHelpText('after', ({ command, error }) => rootHelpText(helpWidth(command, error)));
  program.on('option:V', () => {
    process.stdout.write(`${version}\n`);
    throw new CommanderError(0, 'commander.version', version);
  });
  for (const { heading, commands } of HELP_GROUPS) {
    program.commandsGroup(heading);
    for (const entry of commands as readonly (CommandDef | CommandGroup)[]) addEntry(program, entry, dispatch);
  }
  // `help` itself, made now, goes under the heading given last (Report and other commands).
  program.helpCommand(true);
  // commander's errors in the shape of ours, one line: `rmq-bench: <what> (run rmq-bench <command> --help)`.
  // It quotes a rejected argument as typed: anything shaped like user:password@ is masked.
  const nested = everyCommand(program)
    .filter((c) => c.parent !== null && c.parent !== program)
    .map(commandPath);
  for (const command of everyCommand(program)) {
    const path = commandPath(command);
    command.configureOutput({
      outputError: (s, write) => {
        const said = usageParts(s, path, nested);
        const masked = { message: maskCredentialsLoosely(said.message), hint: maskCredentialsLoosely(said.hint) };
        const line = `rmq-bench: ${masked.message} (${masked.hint})`;
        write(`${hooks.paintError?.(line) ?? line}\n`);
        hooks.onUsageError?.(masked);
      },
    });
  }
  return program;
}
