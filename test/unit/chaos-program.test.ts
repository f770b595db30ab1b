import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import type { ChaosCliOptions } from '../../src/cli/commands/chaos.js';
import { REPEATABLE_FAULT_KINDS } from '../../src/faults/kinds.js';
import { UsageError } from '../../src/errors.js';
import { captureOutput, parse } from './program-harness.js';

/** argv → options for `rmq-bench chaos`, and its usage errors (one line, nothing dispatched). */

/** `rmq-bench chaos <args>` parsed. */
const parseChaos = (args: string[]) => parse(['chaos', ...args]);

const { stderr } = captureOutput();

const defaults: ChaosCliOptions = {
  durationMs: 300_000,
  intervalMs: 20_000,
  holdMs: 8_000,
  faultCount: undefined,
  faults: [...REPEATABLE_FAULT_KINDS],
  faultsGiven: false,
  targets: ['leader', 'random', 'producer'],
  seed: undefined,
  producers: 3,
  consumers: 3,
  polling: 0,
  queues: 3,
  queuePrefix: 'rmq-bench.chaos',
  queueType: 'quorum',
  vhost: '/',
  ratePerSec: 200,
  window: 256,
  sizeBytes: 100,
  confirmTimeoutMs: 5_000,
  heartbeatS: 5,
  prefetch: 100,
  control: false,
  netem: { delayMs: 200, jitterMs: 0, lossPct: 0 },
  bandwidth: '256kbit',
  urls: undefined,
  rejoinTimeoutMs: 180_000,
  drainIdleMs: 5_000,
  storeFile: undefined,
  ledgerFile: undefined,
  metricsPort: undefined,
  protocol: 'amqp091',
  managementUrls: undefined,
  faultCmd: undefined,
  restoreCmd: undefined,
  json: false,
  html: undefined,
  verdict: { thresholds: {}, junit: undefined },
};

describe('chaos: argv → options', () => {
  const cases: { args: string[]; expected: Partial<ChaosCliOptions> }[] = [
    { args: [], expected: {} },
    { args: ['--duration', '10m', '--interval', '15s', '--hold', '5s'], expected: { durationMs: 600_000, intervalMs: 15_000, holdMs: 5_000 } },
    { args: ['--fault-count', '3'], expected: { faultCount: 3 } },
    { args: ['--max-lost', '0', '--max-stall', '10s'], expected: { verdict: { thresholds: { lost: 0, stall: 10_000 }, junit: undefined } } },
    // Naming the faults: a kind this host cannot apply is then refused, not left out.
    { args: ['--faults', 'kill,partition'], expected: { faults: ['kill', 'partition'], faultsGiven: true, netem: undefined, bandwidth: undefined } },
    {
      args: ['--faults', 'latency', '--latency', '50ms', '--loss', '2%'],
      expected: { faults: ['latency'], faultsGiven: true, netem: { delayMs: 50, jitterMs: 0, lossPct: 2 }, bandwidth: undefined },
    },
    { args: ['--targets', 'leader'], expected: { targets: ['leader'] } },
    { args: ['--polling', '2'], expected: { polling: 2 } },
    // rabbitmq/jepsen's schedule: the four partition shapes on a random node, 10 s on, 20 s calm, 180 s.
    {
      args: ['--profile', 'jepsen'],
      expected: {
        durationMs: 180_000,
        holdMs: 10_000,
        intervalMs: 30_000,
        faults: ['partition-halves', 'partition-ring', 'partition-bridge', 'partition'],
        faultsGiven: true,
        targets: ['random'],
        netem: undefined,
        bandwidth: undefined,
      },
    },
    // Its other hold; what is given wins, and the interval follows the hold.
    {
      args: ['--profile', 'jepsen', '--hold', '30s', '--duration', '5m', '--targets', 'leader'],
      expected: {
        durationMs: 300_000,
        holdMs: 30_000,
        intervalMs: 50_000,
        faults: ['partition-halves', 'partition-ring', 'partition-bridge', 'partition'],
        faultsGiven: true,
        targets: ['leader'],
        netem: undefined,
        bandwidth: undefined,
      },
    },
    { args: ['--seed', '42'], expected: { seed: 42 } },
    { args: ['--producers', '5', '--consumers', '4', '--queues', '2'], expected: { producers: 5, consumers: 4, queues: 2 } },
    { args: ['--rate', '50', '--window', '64', '-s', '512', '--prefetch', '10'], expected: { ratePerSec: 50, window: 64, sizeBytes: 512, prefetch: 10 } },
    { args: ['--control', '--json', '--queue-prefix', 'x.y'], expected: { control: true, json: true, queuePrefix: 'x.y' } },
    { args: ['--queue-type', 'mirrored'], expected: { queueType: 'mirrored' } },
    {
      args: ['--faults', 'kill', '--fault-cmd', 'kubectl delete pod {host}', '--management-urls', 'http://u:p@h:15672'],
      expected: {
        faults: ['kill'],
        faultsGiven: true,
        netem: undefined,
        bandwidth: undefined,
        faultCmd: 'kubectl delete pod {host}',
        managementUrls: ['http://u:p@h:15672'],
      },
    },
  ];
  it.each(cases)('chaos $args', async ({ args, expected }) => {
    const { calls, err } = await parseChaos(args);
    expect(err).toBeUndefined();
    expect(calls).toStrictEqual([{ command: 'chaos', options: { ...defaults, ...expected } }]);
    expect(stderr).toEqual([]);
  });
});

describe('chaos: usage errors', () => {
  const cases: { args: string[]; error: 'usage' | 'commander'; text: string }[] = [
    { args: ['--faults', 'kill,nuke'], error: 'commander', text: "'nuke' is not one of kill" },
    { args: ['--targets', 'everyone'], error: 'commander', text: "'everyone' is not one of leader, random, producer" },
    { args: ['--rate', '0'], error: 'commander', text: "'0' is not a number above 0" },
    { args: ['--producers', '0'], error: 'commander', text: "'0' is not a positive whole number" },
    { args: ['--fault-count', '0'], error: 'commander', text: "'0' is not a positive whole number" },
    { args: ['--duration', 'forever'], error: 'commander', text: "'forever' is not a duration" },
    { args: ['--seed', '4294967296'], error: 'commander', text: 'above 4294967295' },
    { args: ['--hold', '20s', '--interval', '20s'], error: 'usage', text: '--hold 20s must be shorter than --interval 20s' },
    { args: ['--duration', '10s'], error: 'usage', text: '--interval 20s is longer than --duration 10s' },
    { args: ['--consumers', '2', '--queues', '3'], error: 'usage', text: '--consumers 2 leaves some of the 3 queues without a consumer' },
    { args: ['--restore-cmd', 'true'], error: 'usage', text: '--restore-cmd needs --fault-cmd' },
    { args: ['--faults', 'kill', '--latency', '10ms'], error: 'usage', text: 'for the latency fault' },
  ];
  it.each(cases)('chaos $args', async ({ args, error, text }) => {
    const { calls, err } = await parseChaos(args);
    expect(calls).toEqual([]);
    if (error === 'usage') {
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toContain(text);
    } else {
      expect(err).toBeInstanceOf(CommanderError);
      expect(stderr.join('')).toContain(text);
    }
  });
});
