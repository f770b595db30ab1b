import { CommanderError } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { reportError } from '../../src/cli/main.js';
import { parseDefinitions } from '../../src/cluster/lifecycle/definitions.js';
import { envFlag } from '../../src/config.js';
import {
  AmqpError,
  BrokerUnavailableError,
  DataError,
  DeadlineError,
  EnvironmentError,
  ExitCode,
  InterruptedError,
  NotFoundError,
  OutputError,
  PortTakenError,
  UsageError,
  verdictExit,
} from '../../src/errors.js';

function report(err: unknown): { code: number; lines: string[]; writes: number } {
  const written: string[] = [];
  const code = reportError(err, (s) => written.push(s));
  const text = written.join('');
  return { code, lines: text === '' ? [] : text.replace(/\n$/, '').split('\n'), writes: written.length };
}

beforeEach(() => {
  vi.stubEnv('RMQ_BENCH_DEBUG', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('reportError: RmqBenchError → its exit code and one line', () => {
  const cases: { name: string; err: Error; code: number; line: string }[] = [
    { name: 'UsageError', err: new UsageError("--hold: '5x' is not a duration"), code: 2, line: "rmq-bench: --hold: '5x' is not a duration" },
    {
      name: 'DataError',
      err: new DataError('cluster/definitions.json: "queues" must be an array'),
      code: 65,
      line: 'rmq-bench: cluster/definitions.json: "queues" must be an array',
    },
    { name: 'NotFoundError', err: new NotFoundError('no queue demo.nope in vhost /'), code: 66, line: 'rmq-bench: no queue demo.nope in vhost /' },
    {
      name: 'BrokerUnavailableError with a password in the URL',
      err: new BrokerUnavailableError('no node answered at amqp://demo:s3cret@127.0.0.1:5672,amqp://demo:s3cret@127.0.0.1:5673'),
      code: 68,
      line: 'rmq-bench: no node answered at amqp://demo:***@127.0.0.1:5672,amqp://demo:***@127.0.0.1:5673',
    },
    {
      name: 'AmqpError keeps the broker code out of the exit code',
      err: new AmqpError('PRECONDITION_FAILED - inequivalent arg x-queue-type', 406, 50),
      code: 68,
      line: 'rmq-bench: PRECONDITION_FAILED - inequivalent arg x-queue-type',
    },
    {
      name: 'EnvironmentError with a hint, password in the hint masked',
      err: new EnvironmentError('no Docker engine answers', { hint: 'or point RMQ_BENCH_URLS at amqp://demo:hunter2@rabbit.example.org:5672' }),
      code: 69,
      line: 'rmq-bench: no Docker engine answers (or point RMQ_BENCH_URLS at amqp://demo:***@rabbit.example.org:5672)',
    },
    {
      name: 'PortTakenError with its default hint',
      err: new PortTakenError(5672, 'rabbit1'),
      code: 73,
      line: "rmq-bench: port 5672 on 127.0.0.1 is taken by another process (needed for rabbit1) (free the port (e.g. 'ss -ltnp sport = :5672' shows who holds it) or stop the other broker)",
    },
    {
      name: 'DeadlineError',
      err: new DeadlineError('node rabbit2 not healthy after 60000 ms (last state: starting)', 60_000),
      code: 75,
      line: 'rmq-bench: node rabbit2 not healthy after 60000 ms (last state: starting)',
    },
    {
      name: 'OutputError: a file that could not be written at the end',
      err: new OutputError('could not write --ledger /mnt/full/run.json (ENOSPC)', { hint: 'the result above is complete; only the file is missing' }),
      code: 74,
      line: 'rmq-bench: could not write --ledger /mnt/full/run.json (ENOSPC) (the result above is complete; only the file is missing)',
    },
    { name: 'InterruptedError', err: new InterruptedError(), code: 130, line: 'rmq-bench: interrupted' },
  ];

  it.each(cases)('$name → $code', ({ err, code, line }) => {
    const r = report(err);
    expect(r.code).toBe(code);
    expect(r.writes).toBe(1);
    expect(r.lines).toEqual([line]);
  });

  it('a DataError from a broken definitions file is still one line', () => {
    let err: unknown;
    try {
      parseDefinitions('{\n  "exchanges": [\n    { "name": "demo.orders", "type": direct }\n  ]\n}', 'cluster/definitions.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DataError);
    const r = report(err);
    expect(r.code).toBe(65);
    expect(r.lines).toHaveLength(1);
  });
});

describe('reportError: commander errors (commander has printed already)', () => {
  const cases: { code: string; exitCode: number; expected: number }[] = [
    { code: 'commander.helpDisplayed', exitCode: 0, expected: 0 },
    { code: 'commander.help', exitCode: 0, expected: 0 },
    { code: 'commander.version', exitCode: 0, expected: 0 },
    { code: 'commander.unknownCommand', exitCode: 1, expected: 2 },
    { code: 'commander.invalidArgument', exitCode: 1, expected: 2 },
    { code: 'commander.conflictingOption', exitCode: 1, expected: 2 },
    { code: 'commander.missingArgument', exitCode: 1, expected: 2 },
  ];

  it.each(cases)('$code → $expected, nothing written', ({ code, exitCode, expected }) => {
    const r = report(new CommanderError(exitCode, code, 'message'));
    expect(r.code).toBe(expected);
    expect(r.writes).toBe(0);
  });
});

describe('reportError: anything else is an internal error (70)', () => {
  const cases: { name: string; err: unknown; line: string }[] = [
    { name: 'a plain Error', err: new Error('boom'), line: 'rmq-bench: internal error: boom' },
    {
      name: 'only the first line of a multi-line message',
      err: new TypeError("Cannot read properties of undefined (reading 'leader')\n    at x"),
      line: "rmq-bench: internal error: Cannot read properties of undefined (reading 'leader')",
    },
    {
      name: 'a password in the message is masked',
      err: new Error('socket closed: amqp://demo:s3cret@127.0.0.1:5674'),
      line: 'rmq-bench: internal error: socket closed: amqp://demo:***@127.0.0.1:5674',
    },
    { name: 'a thrown string', err: 'kaputt', line: 'rmq-bench: internal error: kaputt' },
  ];

  it.each(cases)('$name', ({ err, line }) => {
    const r = report(err);
    expect(r.code).toBe(70);
    expect(r.lines).toEqual([line]);
  });

  it('with RMQ_BENCH_DEBUG the stack follows, masked', () => {
    vi.stubEnv('RMQ_BENCH_DEBUG', '1');
    const err = new Error('socket closed: amqp://demo:s3cret@127.0.0.1:5674');
    const r = report(err);
    expect(r.code).toBe(70);
    expect(r.lines[0]).toBe('rmq-bench: internal error: socket closed: amqp://demo:***@127.0.0.1:5674');
    expect(r.lines.length).toBeGreaterThan(1);
    expect(r.lines.join('\n')).not.toContain('s3cret');
  });
});

describe('RMQ_BENCH_DEBUG: on or off as a user means it', () => {
  it.each([
    ['1', true],
    ['true', true],
    ['yes', true],
    ['0', false],
    ['false', false],
    ['FALSE', false],
    ['off', false],
    ['no', false],
    ['', false],
  ])('RMQ_BENCH_DEBUG=%j: stack %s', (value, stack) => {
    vi.stubEnv('RMQ_BENCH_DEBUG', value);
    const r = report(new Error('boom'));
    expect(r.code).toBe(70);
    expect(r.lines.length > 1).toBe(stack);
  });

  it.each([
    [undefined, false],
    ['', false],
    ['0', false],
    [' false ', false],
    ['1', true],
    ['on', true],
  ])('envFlag(%j) → %s (RMQ_BENCH_QUIET reads the same way)', (value, on) => {
    expect(envFlag(value)).toBe(on);
  });
});

describe('verdictExit: how a run that throws nothing ends', () => {
  it('a passed verdict (or none) is 0, a failed one ExitCode.verdict (1)', () => {
    expect(verdictExit(true)).toBe(ExitCode.ok);
    expect(verdictExit(false)).toBe(ExitCode.verdict);
    expect(ExitCode.verdict).toBe(1);
  });
});
