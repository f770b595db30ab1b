import type { Command } from 'commander';
import type { Config } from '../config.js';
import type { Context, ContextOverrides } from '../context.js';

/**
 * What a command's run ends with when it throws nothing: its verdict (main.ts maps it to an
 * exit code with verdictExit), or nothing when the command has no verdict (exit 0).
 */
export interface Verdict {
  readonly ok: boolean;
}

/**
 * One command, in one file under src/cli/commands/: how argv becomes its typed options, and
 * how it runs. `register` has no side effects (createProgram only composes); `run` prints
 * people-facing text on stderr and data on stdout, and throws typed errors (src/errors.ts).
 */
export interface CommandDef<N extends string = string, O = unknown> {
  /** The name it is dispatched under: 'producer', or 'cluster up' for a subcommand of a group. */
  readonly name: N;
  /**
   * Declare the options (help texts, defaults, parsers) on `command`, which createProgram
   * made under its parent with the last word of `name`; its action validates what a parser
   * cannot (option combinations, as UsageError) and hands the typed options to `dispatch`.
   */
  register(command: Command, dispatch: (options: O) => Promise<void>): void;
  /** One or two command lines for --help, without the leading `rmq-bench`. */
  readonly examples?: readonly string[];
  /** What the context needs instead of its defaults (another cluster's management API, a fault command); async, so that its clients load only when a command runs. */
  overrides?(options: O, config: Config): Promise<ContextOverrides>;
  // biome-ignore lint/suspicious/noConfusingVoidType: a command without a verdict returns nothing
  run(ctx: Context, options: O): Promise<Verdict | void>;
}

/** Subcommands under one parent (`cluster up`, `dlq replay`). */
export interface CommandGroup<D extends CommandDef = CommandDef> {
  readonly name: string;
  readonly description: string;
  readonly examples?: readonly string[];
  readonly commands: readonly D[];
}

/** Identity, for inference: N (the literal name) and O (the options) come from the definition. */
export function defineCommand<N extends string, O>(def: CommandDef<N, O>): CommandDef<N, O> {
  return def;
}

export function defineGroup<D extends CommandDef>(group: CommandGroup<D>): CommandGroup<D> {
  return group;
}

/** --management-urls given: the context asks that API instead of our cluster's. */
export async function managementOverride(urls: string[] | undefined, config: Config): Promise<ContextOverrides> {
  if (!urls) return {};
  const { ManagementClient } = await import('../cluster/broker/management.js');
  return { management: ManagementClient.fromUrls(urls, config.user, config.password) };
}
