import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { captureOutput, parse } from './program-harness.js';

/** `cluster up|down|reset|status|logs` take the cluster's name and ports as flags too (RMQ_BENCH_NAME and the port variables otherwise). */

const { stderr } = captureOutput();

const b = ['--name', 'rmq-bench-b', '--amqp-port', '6672', '--management-port', '16672', '--prometheus-port', '16692'];
const bChoice = { name: 'rmq-bench-b', amqpPort: 6672, managementPort: 16672, prometheusPort: 16692 };

describe('cluster commands: --name and the ports', () => {
  it.each([
    [['cluster', 'up', ...b], { command: 'cluster up', options: { json: false, timeoutMs: 180_000, ...bChoice } }],
    [['cluster', 'status', '--json', ...b], { command: 'cluster status', options: { json: true, ...bChoice } }],
    [['cluster', 'down', ...b], { command: 'cluster down', options: { json: false, volumes: false, ...bChoice } }],
    [['cluster', 'reset', ...b], { command: 'cluster reset', options: { json: false, hard: false, timeoutMs: 180_000, ...bChoice } }],
    [['cluster', 'logs', 'rabbit2', ...b], { command: 'cluster logs', options: { node: 'rabbit2', follow: false, tail: undefined, ...bChoice } }],
    [['cluster', 'status', '--amqp-port', '7672'], { command: 'cluster status', options: { json: false, amqpPort: 7672 } }],
  ])('%j', async (args, expected) => {
    const { calls, err } = await parse(args);
    expect(err).toBeUndefined();
    expect(calls).toEqual([expected]);
  });

  it('without the flags, nothing is chosen: the environment decides', async () => {
    const { calls } = await parse(['cluster', 'status']);
    const o = calls[0]!.options as Record<string, unknown>;
    expect([o.name, o.amqpPort, o.managementPort, o.prometheusPort]).toEqual([undefined, undefined, undefined, undefined]);
  });

  it.each([
    [['cluster', 'up', '--name', 'B'], "'B' is not a name of lower-case letters"],
    [['cluster', 'status', '--name', 'a/b'], "'a/b' is not a name"],
    [['cluster', 'up', '--amqp-port', '65534'], "'65534' is not a port from 1 to 65531"],
    [['cluster', 'up', '--management-port', '0'], "'0' is not a port from 1 to 65531"],
    [['cluster', 'down', '--amqp-port', '5672.5'], 'is not a port'],
    [['cluster', 'status', '--prometheus-port', '65536'], "'65536' is not a port from 1 to 65535"],
  ])('%j: a usage error before anything runs', async (args, text) => {
    const { calls, err } = await parse(args);
    expect(err).toBeInstanceOf(CommanderError);
    expect((err as CommanderError).code).toBe('commander.invalidArgument');
    expect(calls).toEqual([]);
    expect(stderr.join('')).toContain(text);
  });
});
