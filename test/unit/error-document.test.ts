import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { errorDocument, jsonRequested } from '../../src/cli/error-document.js';
import { describeError } from '../../src/cli/main.js';
import { BrokerUnavailableError, ExitCode, UsageError } from '../../src/errors.js';
import { SCHEMA_VERSION } from '../../src/schema-version.js';

describe('errorDocument: one JSON document, kind error, what the stderr line says', () => {
  const cases: { name: string; exitCode: number; said?: { message?: string; hint?: string }; doc: Record<string, unknown> }[] = [
    {
      name: 'a described error: its message and hint',
      exitCode: 68,
      said: { message: 'no broker at amqp://u:***@127.0.0.1:1', hint: "is the cluster up? 'rmq-bench cluster up' starts it" },
      doc: { exitCode: 68, message: 'no broker at amqp://u:***@127.0.0.1:1', hint: "is the cluster up? 'rmq-bench cluster up' starts it" },
    },
    { name: 'no hint: null', exitCode: 65, said: { message: 'run.json: not JSON' }, doc: { exitCode: 65, message: 'run.json: not JSON', hint: null } },
    { name: 'Ctrl+C, nothing described', exitCode: 130, doc: { exitCode: 130, message: 'interrupted', hint: null } },
    { name: 'SIGTERM', exitCode: 143, doc: { exitCode: 143, message: 'terminated', hint: null } },
    { name: 'a failed verdict without its document', exitCode: 1, doc: { exitCode: 1, message: 'the verdict failed', hint: null } },
    { name: 'another code, nothing described', exitCode: 74, said: {}, doc: { exitCode: 74, message: 'ended with exit code 74', hint: null } },
  ];
  it.each(cases)('$name', ({ exitCode, said, doc }) => {
    const text = errorDocument(exitCode, said);
    expect(JSON.parse(text)).toEqual({ schemaVersion: SCHEMA_VERSION, kind: 'error', broker: null, ...doc });
    // The head first, as in every document.
    expect(Object.keys(JSON.parse(text) as object).slice(0, 3)).toEqual(['schemaVersion', 'kind', 'broker']);
  });
});

describe('jsonRequested: --json before any --', () => {
  const cases: { args: string[]; json: boolean }[] = [
    { args: ['compare', '--json'], json: true },
    { args: ['--json', 'compare'], json: true },
    { args: ['compare'], json: false },
    { args: ['compare', '--jsonx'], json: false },
    { args: ['compare', '--fault-cmd', 'x', '--', '--json'], json: false },
    { args: ['compare', '--json', '--', 'x'], json: true },
  ];
  it.each(cases)('$args → $json', ({ args, json }) => expect(jsonRequested(args)).toBe(json));
});

describe('describeError: the exit code and the line parts an error document carries', () => {
  const cases: { name: string; err: unknown; helpFor?: string; said: object }[] = [
    {
      name: 'a typed error with a hint',
      err: new BrokerUnavailableError('no node answered at amqp://demo:s3cret@127.0.0.1:5672', { hint: 'run rmq-bench cluster up' }),
      said: { exitCode: 68, message: 'no node answered at amqp://demo:***@127.0.0.1:5672', hint: 'run rmq-bench cluster up' },
    },
    {
      name: "a usage error: the command's help as its hint",
      err: new UsageError('--max 2s is below --min 5s'),
      helpFor: 'rmq-bench delayed-retry-demo',
      said: { exitCode: 2, message: '--max 2s is below --min 5s', hint: 'run rmq-bench delayed-retry-demo --help' },
    },
    {
      name: 'anything else: internal',
      err: new TypeError('x is undefined\nat y'),
      said: { exitCode: ExitCode.internal, message: 'internal error: x is undefined' },
    },
    { name: "commander's usage error: said by commander", err: new CommanderError(1, 'commander.unknownOption', 'x'), said: { exitCode: 2 } },
    { name: 'a group alone', err: new CommanderError(1, 'commander.help', '(outputHelp)'), said: { exitCode: 1, message: 'no subcommand given' } },
    { name: '--help', err: new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'), said: { exitCode: 0 } },
  ];
  it.each(cases)('$name', ({ err, helpFor, said }) => expect(describeError(err, helpFor)).toEqual(said));
});
