import { type Command, Help, type Option } from 'commander';
import { ExitCode } from '../errors.js';
import { FAULT_KINDS, faultDescription } from '../faults/kinds.js';

/**
 * How --help looks: the layout every command's help shares (HELP_LAYOUT), each command's
 * examples, and the root help's tail (notes, the environment variables, the exit codes). Pure
 * text; program.ts attaches it.
 */

/** Every variable rmq-bench reads (src/config.ts, src/cli/main.ts), as the README's Settings table lists them (test/unit/help-docs.test.ts holds them to it). */
export const ENVIRONMENT: readonly (readonly [name: string, meaning: string])[] = [
  ['RMQ_BENCH_NAME', "the cluster's name and compose project; another name runs a second cluster beside it (default: rmq-bench)"],
  ['RMQ_BENCH_NODES', 'the node count, 3 or 5 (default: what cluster up --nodes recorded, else 3)'],
  ['RMQ_BENCH_RABBITMQ', 'the RabbitMQ version the cluster runs, 3.10, 4.0 or 4.3 (default: what cluster up --rabbitmq recorded, else 4.3)'],
  [
    'RMQ_BENCH_PARTITION_HANDLING',
    "ignore, pause_minority or autoheal on the nodes, before 4.3 (default: what cluster up --partition-handling recorded, else the broker's: ignore)",
  ],
  [
    'RMQ_BENCH_FEATURE_FLAGS',
    'stable or required: the feature flags a node enables on its first boot (default: what cluster up --feature-flags recorded, else stable)',
  ],
  ['RMQ_BENCH_AMQP_PORT', "the first node's AMQP port on 127.0.0.1; the others take the next ones (default: what cluster up recorded, else 5672)"],
  ['RMQ_BENCH_MANAGEMENT_PORT', "the first node's management port; the others take the next ones (default: what cluster up recorded, else 15672)"],
  ['RMQ_BENCH_PROMETHEUS_PORT', "the first node's Prometheus port (default: what cluster up recorded, else 15692)"],
  [
    'RMQ_BENCH_STREAM_PORT',
    "the first node's stream protocol port, advertised to stream clients; the others take the next ones (default: the AMQP port - 120)",
  ],
  ['RMQ_BENCH_USER', 'the broker user (default: demo)'],
  ['RMQ_BENCH_PASSWORD', "that user's password (default: demo)"],
  [
    'RMQ_BENCH_WAIT_FOR_BROKER',
    'how long a command waits at the start for a broker that refuses connections (default: 0, fail at once); --wait-for-broker wins',
  ],
  ['RMQ_BENCH_IMAGE', 'run this RabbitMQ image as is'],
  ['RMQ_BENCH_IMAGE_SOURCE', 'auto, pull or build: where the image comes from (default: auto)'],
  ['RMQ_BENCH_BUILT_IMAGE', 'the tag of the image built from Debian packages (default: rmq-bench/rabbitmq:<version>)'],
  ['RMQ_BENCH_DEBIAN_MIRROR', 'the Debian archive for that build'],
  ['RMQ_BENCH_DEBIAN_SUITE', 'the Debian suite for that build (default: sid for 4.3, trixie for 4.0, bookworm for 3.10)'],
  ['RMQ_BENCH_COMPOSE', "'docker compose' or 'docker-compose' (default: detected)"],
  ['RMQ_BENCH_COMPOSE_PROJECT', 'no longer read: refused unless it equals RMQ_BENCH_NAME, which names the compose project'],
  ['RMQ_BENCH_ERLANG_COOKIE', "the nodes' shared Erlang cookie"],
  ['RMQ_BENCH_STATE_DIR', 'where cluster up records node counts and versions (default: $XDG_STATE_HOME/rmq-bench, ~/.local/state/rmq-bench)'],
  ['RMQ_BENCH_PROJECT_ROOT', 'where docker-compose.yml and cluster/ are (default: the package)'],
  ['RMQ_BENCH_QUIET', '1: no progress on stderr (0, false, no, off or empty: progress)'],
  ['RMQ_BENCH_DEBUG', '1: a stack trace after an internal error (0, false, no, off or empty: none)'],
  ['NO_COLOR', 'not empty: no colour anywhere, spinners included; else colour on a terminal only, or anywhere with FORCE_COLOR (0: never)'],
];

/** The meaning of each exit code, in the README's words (its "Exit codes" table). */
export const EXIT_CODES: readonly (readonly [code: number, meaning: string])[] = [
  [ExitCode.ok, 'ok'],
  [ExitCode.verdict, "the verdict failed (loss detected, a demo's expectation missed); a group command given alone (rmq-bench cluster)"],
  [ExitCode.usage, 'bad flags or arguments, or options that contradict each other'],
  [ExitCode.dataError, 'a malformed input file (cluster/definitions.json, a report)'],
  [ExitCode.notFound, 'an unknown queue or node; an input file or folder that does not exist'],
  [ExitCode.brokerUnavailable, 'the cluster is not up, no node answers, a producer blocked or unable to flush past its deadline'],
  [ExitCode.unavailable, "the environment lacks something: no Docker engine, no compose tool, no image; a feature the broker's version lacks"],
  [ExitCode.internal, 'internal error (a bug: RMQ_BENCH_DEBUG=1 prints the stack)'],
  [ExitCode.resourceTaken, 'a port the cluster needs is taken by another process'],
  [ExitCode.outputFailed, 'an output file could not be written at the end (the result was printed first)'],
  [ExitCode.timeout, 'a wait passed its deadline'],
  [ExitCode.interrupted, 'Ctrl+C (the clean-up runs first)'],
  [ExitCode.closedPipe, 'the reader of stdout or stderr stopped early (| head): ends quietly, as on SIGPIPE'],
  [ExitCode.terminated, 'SIGTERM (the same clean-up)'],
];

/** The width help is wrapped to: the terminal's, as commander asks the stream it writes to; 80 when that is not a terminal. */
export function helpWidth(command: Command, error = false): number {
  const output = command.configureOutput();
  return (error ? output.getErrHelpWidth?.() : output.getOutHelpWidth?.()) ?? 80;
}

/**
 * commander's option description without "(default: false)" on a switch: a switch that is off
 * unless given says nothing by saying it. `base` is commander's own Help.optionDescription.
 */
function optionDescriptionWithoutFalse(this: Help, option: Option, base: (this: Help, option: Option) => string): string {
  const text = base.call(this, option);
  return option.isBoolean() && option.defaultValue === false ? text.replace(/ \(default: false\)$/, '') : text;
}

/** How far a description stands in under its term when two columns would be too narrow. */
const STACKED_INDENT = '      ';

/**
 * How every --help is laid out, given to configureHelp by createProgram (the commands inherit
 * it) and used for the root help's own tables:
 * - a subcommand is listed by its name alone: its options and arguments are in its own --help;
 * - a switch has no "(default: false)", and a required option says "(required)" (commander
 *   marks neither);
 * - a description is wrapped to the help's width (commander's); when its column would be narrower
 *   than commander's minWidthToWrap (a long term, a narrow terminal), it goes on the lines under
 *   its term instead of staying one long unwrapped line.
 */
export const HELP_LAYOUT = {
  subcommandTerm(command: Command): string {
    return command.name();
  },
  optionDescription(this: Help, option: Option): string {
    const text = optionDescriptionWithoutFalse.call(this, option, Help.prototype.optionDescription);
    return option.mandatory ? `${text} (required)` : text;
  },
  formatItem(this: Help, term: string, termWidth: number, description: string, helper: Help): string {
    const width = this.helpWidth ?? 80;
    // commander's layout: two spaces, the term padded to termWidth, two spaces, the description.
    const twoColumns = width - termWidth - 4 >= this.minWidthToWrap;
    if (description === '' || twoColumns || helper.preformatted(description)) {
      return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
    }
    const under = helper.boxWrap(description, width - STACKED_INDENT.length).replace(/^/gm, STACKED_INDENT);
    return `  ${term}\n${under}`;
  },
} satisfies Partial<Help>;

/** A Help laid out as every command's, `width` columns wide: for text that commander does not format itself. */
function layoutFor(width: number): Help {
  const help = Object.assign(new Help(), HELP_LAYOUT);
  help.prepareContext({ helpWidth: width });
  return help;
}

/** Rows of a term and its meaning, as commander lays out options: aligned, each meaning wrapped. */
function table(rows: readonly (readonly [string | number, string])[], help: Help): string {
  const termWidth = Math.max(...rows.map(([k]) => String(k).length));
  return rows.map(([k, v]) => help.formatItem(String(k), termWidth, v, help)).join('\n');
}

/** The examples block under a command's help. Never wrapped (a command line is copied whole): each fits in 80 columns. */
export function examplesText(examples: readonly string[]): string {
  return examples.length === 0 ? '' : `\nExamples:\n${examples.map((e) => `  $ rmq-bench ${e}`).join('\n')}\n`;
}

/** The faults a command takes, each with what it does (src/faults/kinds.ts), wrapped to `width`: under the help of the commands with --fault. */
export function faultsHelpText(width = 80): string {
  return `\nFaults:\n${table(
    FAULT_KINDS.map((k) => [k, faultDescription(k)]),
    layoutFor(width),
  )}`;
}

/** The root help's tail, wrapped to `width`: examples, durations, where output goes, the environment, the exit codes. */
export function rootHelpText(width = 80): string {
  const help = layoutFor(width);
  const notes = [
    'Durations take a unit: 500ms, 5s, 1m30s, 1h (a bare number is refused; 0 is 0).',
    'The report (tables, verdict) goes to stdout, progress and hints to stderr; with --json, stdout holds the one JSON document (on a failure, one of kind error) and the report goes to stderr.',
  ];
  return `${examplesText(['cluster up', 'compare -n 5000 --html compare.html', 'producer -n 200 --confirms=false'])}
${notes.map((n) => help.boxWrap(n, width)).join('\n')}

Environment:
${table(ENVIRONMENT, help)}

Exit codes:
${table(EXIT_CODES, help)}
`;
}

/** '-n, --count <n>' → '-n/--count': an option as a message names it (the user typed one of the two). */
function flagName(flags: string): string {
  return flags
    .replace(/\s*[<[].*$/, '')
    .split(/,\s*/)
    .join('/');
}

/**
 * One error line's parts, for commander's messages as for ours: `rmq-bench: <what> (run <command> --help)`.
 * commander's "error: option '-n, --count <n>' argument '0' is invalid. <why>" becomes
 * "-n/--count: <why>", the shape of our own option messages; a suggestion stays on the line, and
 * an unknown command that names a command of a group (`nested`: 'rmq-bench cluster status', ...)
 * suggests that one. Pure.
 */
export function usageParts(message: string, command: string, nested: readonly string[] = []): { message: string; hint: string } {
  let m = message.trim().replace(/^error: /, '');
  // commander puts its suggestion on a line of its own: "(Did you mean compare?)". One line, ours.
  const suggested = /^(.*?)\s*\n\(Did you mean (.+?)\?\)$/s.exec(m);
  if (suggested) m = `${suggested[1]}: did you mean ${suggested[2]}?`;
  else {
    // A command that exists under a group (`status` for `cluster status`): commander knows only its own level.
    const unknown = /^unknown command '(.+)'$/.exec(m);
    const under = unknown ? nested.filter((p) => p.endsWith(` ${unknown[1]}`)) : [];
    if (under.length > 0) m = `${m}: did you mean ${under.map((p) => `'${p}'`).join(' or ')}?`;
  }
  const option = /^option '(.+?)' argument '(.*?)' is invalid\. (.*)$/s.exec(m);
  const argument = /^command-argument value '(.*?)' is invalid for argument '(.+?)'\. (.*)$/s.exec(m);
  // commander's own "Allowed choices are a, b." does not quote the value: say it as our parsers do.
  const why = (value: string, reason: string): string => reason.replace(/^Allowed choices are (.*?)\.?$/s, `'${value}' is not one of $1`);
  if (option) m = `${flagName(option[1]!)}: ${why(option[2]!, option[3]!)}`;
  else if (argument) m = `<${argument[2]}>: ${why(argument[1]!, argument[3]!)}`;
  return { message: m, hint: `run ${command} --help` };
}

/** 'rmq-bench cluster up' for the `up` command under `cluster`. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
