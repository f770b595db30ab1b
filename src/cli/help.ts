import type { Command, Help, Option } from 'commander';
import { ExitCode } from '../errors.js';

/**
 * What --help says beyond the options: each command's examples, and in the root help the
 * environment variables and the exit codes. Pure text; program.ts attaches it.
 */

/** Every variable rmq-bench reads (src/config.ts, src/cli/main.ts), as the README's Settings table lists them. */
export const ENVIRONMENT: readonly (readonly [name: string, meaning: string])[] = [
  ['RMQ_BENCH_NAME', "the cluster's name (default rmq-bench); another name runs a second cluster beside it"],
  ['RMQ_BENCH_AMQP_PORT', "the first node's AMQP port on 127.0.0.1 (default 5672; the others take the next two)"],
  ['RMQ_BENCH_MANAGEMENT_PORT', "the first node's management port (default 15672)"],
  ['RMQ_BENCH_PROMETHEUS_PORT', "the first node's Prometheus port (default 15692)"],
  ['RMQ_BENCH_USER', 'the broker user (default demo)'],
  ['RMQ_BENCH_PASSWORD', "that user's password (default demo)"],
  ['RMQ_BENCH_IMAGE', 'run this RabbitMQ image as is'],
  ['RMQ_BENCH_IMAGE_SOURCE', 'auto, pull or build: where the image comes from (default auto)'],
  ['RMQ_BENCH_BUILT_IMAGE', 'the tag of the image built from Debian packages (default rmq-bench/rabbitmq:4.3)'],
  ['RMQ_BENCH_DEBIAN_MIRROR', 'the Debian archive for that build'],
  ['RMQ_BENCH_DEBIAN_SUITE', 'the Debian suite for that build (default sid)'],
  ['RMQ_BENCH_COMPOSE', "'docker compose' or 'docker-compose' (default: detected)"],
  ['RMQ_BENCH_COMPOSE_PROJECT', 'the compose project name (default: RMQ_BENCH_NAME)'],
  ['RMQ_BENCH_ERLANG_COOKIE', "the nodes' shared Erlang cookie"],
  ['RMQ_BENCH_PROJECT_ROOT', 'where docker-compose.yml and cluster/ are (default: the package)'],
  ['RMQ_BENCH_QUIET', '1: no progress on stderr (0, false or empty: progress)'],
  ['RMQ_BENCH_DEBUG', '1: a stack trace after an internal error (0, false or empty: none)'],
  ['NO_COLOR', 'set and not empty: no colour anywhere, spinners included'],
];

/** The meaning of each exit code, in the README's words (the table under "Output, errors, exit codes"). */
export const EXIT_CODES: readonly (readonly [code: number, meaning: string])[] = [
  [ExitCode.ok, 'ok'],
  [ExitCode.verdict, "the verdict failed (loss detected, a demo's expectation missed); a group command given alone (rmq-bench cluster)"],
  [ExitCode.usage, 'bad flags or arguments, or options that contradict each other'],
  [ExitCode.dataError, 'a malformed input file (cluster/definitions.json, a report)'],
  [ExitCode.notFound, 'an unknown queue or node; an input file or folder that does not exist'],
  [ExitCode.brokerUnavailable, 'the cluster is not up, no node answers, a producer blocked or unable to flush past its deadline'],
  [ExitCode.unavailable, 'the environment lacks something: no Docker engine, no compose tool, no image'],
  [ExitCode.internal, 'internal error (a bug: RMQ_BENCH_DEBUG=1 prints the stack)'],
  [ExitCode.resourceTaken, 'a port the cluster needs is taken by another process'],
  [ExitCode.outputFailed, 'an output file could not be written at the end (the result was printed first)'],
  [ExitCode.timeout, 'a wait passed its deadline'],
  [ExitCode.interrupted, 'Ctrl+C (the clean-up runs first)'],
  [ExitCode.closedPipe, 'the reader of stdout or stderr stopped early (| head): ends quietly, as on SIGPIPE'],
  [ExitCode.terminated, 'SIGTERM (the same clean-up)'],
];

const table = (rows: readonly (readonly [string | number, string])[]): string => {
  const width = Math.max(...rows.map(([k]) => String(k).length));
  return rows.map(([k, v]) => `  ${String(k).padEnd(width)}  ${v}`).join('\n');
};

/** The examples block under a command's help. */
export function examplesText(examples: readonly string[]): string {
  return examples.length === 0 ? '' : `\nExamples:\n${examples.map((e) => `  $ rmq-bench ${e}`).join('\n')}\n`;
}

/** The root help's tail: examples, durations, the environment, the exit codes. */
export function rootHelpText(): string {
  return `${examplesText(['cluster up', 'compare -n 5000 --html compare.html', 'producer -n 200 --confirms=false'])}
Durations take a unit: 500ms, 5s, 1m30s, 1h (a bare number is refused; 0 is 0).
Human output goes to stderr (save it with 2> out.txt); --json prints one document on stdout.

Environment:
${table(ENVIRONMENT)}

Exit codes:
${table(EXIT_CODES)}
`;
}

/**
 * commander's option description without "(default: false)" on a switch: a switch that is off
 * unless given says nothing by saying it. `base` is commander's own Help.optionDescription.
 */
export function optionDescriptionWithoutFalse(this: Help, option: Option, base: (this: Help, option: Option) => string): string {
  const text = base.call(this, option);
  return option.isBoolean() && option.defaultValue === false ? text.replace(/ \(default: false\)$/, '') : text;
}

/** '-n, --count <n>' → '-n/--count': an option as a message names it (the user typed one of the two). */
function flagName(flags: string): string {
  return flags
    .replace(/\s*[<[].*$/, '')
    .split(/,\s*/)
    .join('/');
}

/**
 * One error line, for commander's messages as for ours: `rmq-bench: <what> (run <command> --help)`.
 * commander's "error: option '-n, --count <n>' argument '0' is invalid. <why>" becomes
 * "-n/--count: <why>", the shape of our own option messages. Pure.
 */
export function usageLine(message: string, command: string): string {
  let m = message.trim().replace(/^error: /, '');
  const option = /^option '(.+?)' argument '(.*?)' is invalid\. (.*)$/s.exec(m);
  const argument = /^command-argument value '(.*?)' is invalid for argument '(.+?)'\. (.*)$/s.exec(m);
  // commander's own "Allowed choices are a, b." does not quote the value: say it as our parsers do.
  const why = (value: string, reason: string): string => reason.replace(/^Allowed choices are (.*?)\.?$/s, `'${value}' is not one of $1`);
  if (option) m = `${flagName(option[1]!)}: ${why(option[2]!, option[3]!)}`;
  else if (argument) m = `<${argument[2]}>: ${why(argument[1]!, argument[3]!)}`;
  return `rmq-bench: ${m} (run ${command} --help)`;
}

/** 'rmq-bench cluster up' for the `up` command under `cluster`. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
