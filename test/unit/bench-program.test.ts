import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { modeList, windowList, type BenchCliOptions } from '../../src/cli/commands/bench.js';
import { UsageError } from '../../src/errors.js';
import { BENCH_CLI_DEFAULTS } from './fixtures/bench.js';
import { captureOutput, parse } from './program-harness.js';

/** `rmq-bench bench <args>` parsed. */
const parseBench = (args: string[]) => parse(['bench', ...args]);

const { stderr } = captureOutput();

describe('bench: argv → options', () => {
  const cases: { args: string[]; expected: Partial<BenchCliOptions> }[] = [
    { args: [], expected: {} },
    { args: ['--confirm-mode', 'async', '--window', '256'], expected: { modes: ['async'], windows: [256] } },
    { args: ['--confirm-mode', 'sync,none,sync'], expected: { modes: ['sync', 'none'] } },
    { args: ['--confirm-mode', ' batch , tx '], expected: { modes: ['batch', 'tx'] } },
    { args: ['--window', '64,256,1024,256'], expected: { windows: [64, 256, 1024] } },
    { args: ['--confirm-mode', 'tx,batch', '--batch-size', '50'], expected: { modes: ['tx', 'batch'], batchSize: 50 } },
    { args: ['-x', '3', '-y', '2', '-s', '1024'], expected: { producers: 3, consumers: 2, sizeBytes: 1024 } },
    { args: ['--producers', '2', '--consumers', '0'], expected: { producers: 2, consumers: 0 } },
    { args: ['--queues', '3', '-x', '3', '-y', '3'], expected: { queues: 3, producers: 3, consumers: 3 } },
    { args: ['--queues', '3', '-x', '4', '-y', '0'], expected: { queues: 3, producers: 4, consumers: 0 } },
    // -z takes a duration with a unit (PerfTest's bare seconds are refused, see below); -C alone drops the default time bound.
    { args: ['-z', '30s'], expected: { durationMs: 30_000 } },
    { args: ['--duration', '1m30s'], expected: { durationMs: 90_000 } },
    { args: ['-C', '5000'], expected: { durationMs: undefined, count: 5_000 } },
    { args: ['-C', '5000', '-z', '20s'], expected: { durationMs: 20_000, count: 5_000 } },
    { args: ['-r', '500'], expected: { ratePerSec: 500 } },
    { args: ['--prefetch', '0', '--multi-ack-every', '10'], expected: { prefetch: 0, ackEvery: 10 } },
    {
      args: ['--drain-timeout', '2m', '--confirm-timeout', '5s', '--heartbeat', '200ms'],
      expected: { drainTimeoutMs: 120_000, confirmTimeoutMs: 5_000, heartbeatS: 1 },
    },
    { args: ['--urls', 'amqp://u:p@h:5672,amqp://u:p@h:5673'], expected: { urls: ['amqp://u:p@h:5672', 'amqp://u:p@h:5673'] } },
    { args: ['--csv', 'out.csv', '--json'], expected: { csvFile: 'out.csv', json: true } },
    { args: ['--metrics-port', '9464'], expected: { metricsPort: 9464 } },
    { args: ['--metrics-port', '0'], expected: { metricsPort: 0 } },
  ];

  it.each(cases)('$args', async ({ args, expected }) => {
    const { calls, err } = await parseBench(args);
    expect(err).toBeUndefined();
    expect(calls).toStrictEqual([{ command: 'bench', options: { ...BENCH_CLI_DEFAULTS, ...expected } }]);
    expect(stderr).toEqual([]);
  });
});

describe('bench: rejected at the edge', () => {
  const invalid: { args: string[]; stderrText: string }[] = [
    { args: ['--confirm-mode', 'turbo'], stderrText: "'turbo' is not one of none, tx, sync, batch, async" },
    { args: ['--confirm-mode', ','], stderrText: 'no value given' },
    { args: ['--window', '0'], stderrText: "'0' is not a positive whole number" },
    { args: ['--window', '64,x'], stderrText: "'x' is not a positive whole number" },
    { args: ['-x', '0'], stderrText: "'0' is not a positive whole number" },
    { args: ['--queues', '0'], stderrText: "'0' is not a positive whole number" },
    { args: ['-y', '-1'], stderrText: "'-1' is not a whole number >= 0" },
    { args: ['-z', '0'], stderrText: "'0' is not a duration above zero" },
    { args: ['-z', 'soon'], stderrText: "'soon' is not a duration" },
    { args: ['-z', '30'], stderrText: "'30' has no unit: write 30ms or 30s" },
    { args: ['-C', '0'], stderrText: "'0' is not a positive whole number" },
    { args: ['--prefetch', '70000'], stderrText: 'is not a prefetch count' },
    { args: ['--urls', 'http://u:secret@h'], stderrText: 'not an amqp:// or amqps:// URL' },
  ];

  it.each(invalid)('$args', async ({ args, stderrText }) => {
    const { calls, err } = await parseBench(args);
    expect(err).toBeInstanceOf(CommanderError);
    expect((err as CommanderError).code).toBe('commander.invalidArgument');
    expect(calls).toEqual([]);
    expect(stderr.join('')).toContain(stderrText);
    expect(stderr.join('')).not.toContain('secret');
  });

  const conflicts: { args: string[]; message: string }[] = [
    { args: ['--confirm-mode', 'sync', '--window', '64'], message: '--window applies to async confirms: add async to --confirm-mode' },
    { args: ['--confirm-mode', 'async,sync', '--batch-size', '10'], message: '--batch-size applies to batch and tx: add one of them to --confirm-mode' },
    { args: ['-y', '0', '--prefetch', '10'], message: '--prefetch, --multi-ack-every and --drain-timeout apply to consumers: -y is 0' },
    { args: ['-y', '0', '--multi-ack-every', '10'], message: '--prefetch, --multi-ack-every and --drain-timeout apply to consumers: -y is 0' },
    { args: ['-y', '0', '--drain-timeout', '5s'], message: '--prefetch, --multi-ack-every and --drain-timeout apply to consumers: -y is 0' },
    { args: ['--queues', '3'], message: '--queues 3 needs a producer per queue: give -x 3 or more (-x is 1)' },
    { args: ['--queues', '3', '-x', '3'], message: '--queues 3 needs a consumer per queue: give -y 3 or more, or -y 0 for none (-y is 1)' },
  ];

  it.each(conflicts)('$args → UsageError', async ({ args, message }) => {
    const { calls, err } = await parseBench(args);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toBe(message);
    expect(calls).toEqual([]);
  });

  it('--window with async among the modes, --batch-size with tx: accepted', async () => {
    expect((await parseBench(['--confirm-mode', 'sync,async', '--window', '8'])).err).toBeUndefined();
    expect((await parseBench(['--confirm-mode', 'tx', '--batch-size', '8'])).err).toBeUndefined();
  });
});

describe('list parsers', () => {
  it.each([
    ['async', ['async']],
    ['none,tx,sync,batch,async', ['none', 'tx', 'sync', 'batch', 'async']],
    ['async,none,async', ['async', 'none']],
  ] as const)('modeList(%j)', (text, expected) => {
    expect(modeList(text)).toEqual(expected);
  });

  it.each([
    ['256', [256]],
    ['1,8, 64', [1, 8, 64]],
    ['8,8', [8]],
  ] as const)('windowList(%j)', (text, expected) => {
    expect(windowList(text)).toEqual(expected);
  });
});
