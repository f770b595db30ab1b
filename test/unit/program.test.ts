import { CommanderError } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProgram, type Invocation } from '../../src/cli/program.js';

function recorder(): { dispatch: (i: Invocation) => Promise<void>; calls: Invocation[] } {
  const calls: Invocation[] = [];
  return {
    calls,
    dispatch: async (i) => {
      calls.push(i);
    },
  };
}

async function invocationOf(args: string[]): Promise<Invocation> {
  const r = recorder();
  await createProgram(r.dispatch).parseAsync(['node', 'rmq-bench', ...args]);
  expect(r.calls).toHaveLength(1);
  return r.calls[0]!;
}

const failoverDefaults = {
  json: false,
  queue: 'demo.orders',
  vhost: '/',
  fault: 'kill',
  restoreAfterMs: 0,
  electionTimeoutMs: 60_000,
  rejoinTimeoutMs: 180_000,
} as const;

// commander's own output, captured so that the test log stays clean.
let stderr: string[];
let stdout: string[];
beforeEach(() => {
  stderr = [];
  stdout = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => stdout.push(String(chunk)) > 0);
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('createProgram: argv → invocation', () => {
  const cases: { args: string[]; expected: Invocation }[] = [
    { args: ['cluster', 'up'], expected: { command: 'cluster up', options: { json: false, timeoutMs: 180_000 } } },
    { args: ['cluster', 'up', '--timeout', '90s', '--json'], expected: { command: 'cluster up', options: { json: true, timeoutMs: 90_000 } } },
    { args: ['cluster', 'up', '--timeout', '1m30s'], expected: { command: 'cluster up', options: { json: false, timeoutMs: 90_000 } } },
    { args: ['cluster', 'down'], expected: { command: 'cluster down', options: { json: false, volumes: false } } },
    { args: ['cluster', 'down', '--volumes'], expected: { command: 'cluster down', options: { json: false, volumes: true } } },
    { args: ['cluster', 'reset'], expected: { command: 'cluster reset', options: { json: false, hard: false, timeoutMs: 180_000 } } },
    { args: ['cluster', 'reset', '--hard'], expected: { command: 'cluster reset', options: { json: false, hard: true, timeoutMs: 180_000 } } },
    { args: ['cluster', 'status', '--json'], expected: { command: 'cluster status', options: { json: true } } },
    { args: ['cluster', 'logs'], expected: { command: 'cluster logs', options: { node: undefined, follow: false, tail: undefined } } },
    { args: ['cluster', 'logs', 'rabbit2', '-f', '--tail', '50'], expected: { command: 'cluster logs', options: { node: 'rabbit2', follow: true, tail: 50 } } },
    { args: ['cluster', 'logs', '--follow', 'rabbit3'], expected: { command: 'cluster logs', options: { node: 'rabbit3', follow: true, tail: undefined } } },
    { args: ['cluster', 'image', '--rebuild'], expected: { command: 'cluster image', options: { json: false, rebuild: true } } },
    { args: ['failover'], expected: { command: 'failover', options: failoverDefaults } },
    {
      args: ['failover', '--fault', 'pause', '--restore-after', '10s'],
      expected: { command: 'failover', options: { ...failoverDefaults, fault: 'pause', restoreAfterMs: 10_000 } },
    },
    { args: ['failover', '--no-restore'], expected: { command: 'failover', options: { ...failoverDefaults, restoreAfterMs: null } } },
    {
      args: ['failover', '--queue', 'bench.q1', '--vhost', 'bench', '--fault', 'disconnect', '--election-timeout', '30s', '--rejoin-timeout', '5m', '--json'],
      expected: {
        command: 'failover',
        options: { json: true, queue: 'bench.q1', vhost: 'bench', fault: 'disconnect', restoreAfterMs: 0, electionTimeoutMs: 30_000, rejoinTimeoutMs: 300_000 },
      },
    },
    // Not landed yet (issue #3): this expectation changes when the producer lands.
    { args: ['producer', '-n', '200', '--confirms=false'], expected: { command: 'not-landed', options: { name: 'producer', issue: 3 } } },
    { args: ['delayed-retry-demo'], expected: { command: 'not-landed', options: { name: 'delayed-retry-demo', issue: 5 } } },
  ];

  it.each(cases)('$args', async ({ args, expected }) => {
    expect(await invocationOf(args)).toEqual(expected);
    expect(stderr).toEqual([]);
  });
});

describe('createProgram: usage errors', () => {
  const cases: { args: string[]; code: string; stderrText: string }[] = [
    { args: ['failover', '--fault', 'nuke'], code: 'commander.invalidArgument', stderrText: 'nuke' },
    { args: ['failover', '--restore-after', '5x'], code: 'commander.invalidArgument', stderrText: "'5x' is not a duration" },
    { args: ['failover', '--restore-after', '5s', '--no-restore'], code: 'commander.conflictingOption', stderrText: '--no-restore' },
    { args: ['failover', '--election-timeout', 'soon'], code: 'commander.invalidArgument', stderrText: "'soon' is not a duration" },
    { args: ['cluster', 'up', '--timeout', '-1s'], code: 'commander.invalidArgument', stderrText: "'-1s' is not a duration" },
    { args: ['cluster', 'logs', 'rabbit9'], code: 'commander.invalidArgument', stderrText: "'rabbit9' is not a node of the bench cluster" },
    { args: ['cluster', 'logs', '--tail', '0'], code: 'commander.invalidArgument', stderrText: "'0' is not a positive whole number" },
    { args: ['cluster', 'explode'], code: 'commander.unknownCommand', stderrText: 'explode' },
    { args: ['frobnicate'], code: 'commander.unknownCommand', stderrText: 'frobnicate' },
    { args: ['cluster', 'up', '--bogus'], code: 'commander.unknownOption', stderrText: '--bogus' },
  ];

  it.each(cases)('$args → $code', async ({ args, code, stderrText }) => {
    const r = recorder();
    const err = await createProgram(r.dispatch)
      .parseAsync(['node', 'rmq-bench', ...args])
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(CommanderError);
    expect((err as CommanderError).code).toBe(code);
    expect((err as CommanderError).exitCode).not.toBe(0);
    expect(r.calls).toEqual([]);
    expect(stderr.join('')).toContain(stderrText);
  });

  it('--version: a CommanderError with code commander.version and exit code 0, printed on stdout', async () => {
    const r = recorder();
    const err = await createProgram(r.dispatch)
      .parseAsync(['node', 'rmq-bench', '--version'])
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(CommanderError);
    expect((err as CommanderError).code).toBe('commander.version');
    expect((err as CommanderError).exitCode).toBe(0);
    expect(stdout.join('')).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(r.calls).toEqual([]);
  });
});
