import { describe, expect, it } from 'vitest';
import { composeCommand, pickCompose, portTakenIn, type ComposeChoice, type ComposeKind, type ComposeProbe } from '../../src/cluster/docker/compose.js';

describe('pickCompose', () => {
  const both: ComposeProbe = { plugin: '2.40.3', standalone: '1.29.2' };
  const pluginOnly: ComposeProbe = { plugin: '2.40.3', standalone: null };
  const v1Only: ComposeProbe = { plugin: null, standalone: '1.29.2' };
  const none: ComposeProbe = { plugin: null, standalone: null };

  const cases: { name: string; probe: ComposeProbe; forced?: ComposeKind; expected: ComposeChoice | null }[] = [
    { name: 'both present: the plugin is preferred', probe: both, expected: { kind: 'v2', version: '2.40.3' } },
    { name: 'plugin only', probe: pluginOnly, expected: { kind: 'v2', version: '2.40.3' } },
    { name: 'no plugin: falls back to docker-compose v1', probe: v1Only, expected: { kind: 'v1', version: '1.29.2' } },
    { name: 'neither present', probe: none, expected: null },
    { name: 'forced v1 while both exist', probe: both, forced: 'v1', expected: { kind: 'v1', version: '1.29.2' } },
    { name: 'forced v2 while both exist', probe: both, forced: 'v2', expected: { kind: 'v2', version: '2.40.3' } },
    { name: 'forced v2 that is missing: no fallback to v1', probe: v1Only, forced: 'v2', expected: null },
    { name: 'forced v1 that is missing: no fallback to v2', probe: pluginOnly, forced: 'v1', expected: null },
    { name: 'forced v2 with nothing installed', probe: none, forced: 'v2', expected: null },
    { name: 'an empty version string still counts as present', probe: { plugin: '', standalone: null }, expected: { kind: 'v2', version: '' } },
  ];

  it.each(cases)('$name', ({ probe, forced, expected }) => {
    expect(pickCompose(probe, forced)).toEqual(expected);
  });
});

describe('composeCommand', () => {
  const cases: { name: string; kind: ComposeKind; args: string[]; expected: [string, string[]] }[] = [
    {
      name: 'v2 runs the docker CLI plugin',
      kind: 'v2',
      args: ['up', '-d', '--no-build'],
      expected: ['docker', ['compose', '-p', 'rmq-bench', '-f', '/srv/rmq-bench/docker-compose.yml', 'up', '-d', '--no-build']],
    },
    {
      name: 'v1 runs docker-compose without the compose word',
      kind: 'v1',
      args: ['down', '--remove-orphans', '--volumes'],
      expected: ['docker-compose', ['-p', 'rmq-bench', '-f', '/srv/rmq-bench/docker-compose.yml', 'down', '--remove-orphans', '--volumes']],
    },
    {
      name: 'v2 with no extra arguments',
      kind: 'v2',
      args: [],
      expected: ['docker', ['compose', '-p', 'rmq-bench', '-f', '/srv/rmq-bench/docker-compose.yml']],
    },
    {
      name: 'v1 logs for one service',
      kind: 'v1',
      args: ['logs', '--no-color', '--tail', '50', 'rabbit2'],
      expected: ['docker-compose', ['-p', 'rmq-bench', '-f', '/srv/rmq-bench/docker-compose.yml', 'logs', '--no-color', '--tail', '50', 'rabbit2']],
    },
  ];

  it.each(cases)('$name', ({ kind, args, expected }) => {
    expect(composeCommand(kind, 'rmq-bench', '/srv/rmq-bench/docker-compose.yml', args)).toEqual(expected);
  });

  it('does not alias the caller’s argument array', () => {
    const args = ['ps'];
    const [, argv] = composeCommand('v1', 'p', 'f.yml', args);
    argv.push('--all');
    expect(args).toEqual(['ps']);
  });
});

describe('portTakenIn', () => {
  const cases: { name: string; output: string; expected: number | null }[] = [
    {
      name: 'compose v2: Bind for 127.0.0.1 … port is already allocated',
      output:
        'Error response from daemon: driver failed programming external connectivity on endpoint rmq-bench-rabbit1-1 (3f2a…): Bind for 127.0.0.1:5672 failed: port is already allocated',
      expected: 5672,
    },
    {
      name: 'Bind for 0.0.0.0 on the second node',
      output:
        'Error response from daemon: driver failed programming external connectivity on endpoint rmq-bench-rabbit2-1: Bind for 0.0.0.0:5673 failed: port is already allocated',
      expected: 5673,
    },
    {
      name: 'userland proxy: listen tcp4 127.0.0.1 … address already in use',
      output: 'Error starting userland proxy: listen tcp4 127.0.0.1:15672: bind: address already in use',
      expected: 15672,
    },
    {
      name: 'listen tcp (no 4) on 0.0.0.0',
      output: 'Error starting userland proxy: listen tcp 0.0.0.0:15692: bind: address already in use',
      expected: 15692,
    },
    {
      name: 'bare listen tcp4 line',
      output: 'listen tcp4 127.0.0.1:15672: bind: address already in use',
      expected: 15672,
    },
    {
      name: 'the error is the last of several compose progress lines',
      output: [
        ' Network rmq-bench_default  Created',
        ' Container rmq-bench-rabbit1-1  Creating',
        ' Container rmq-bench-rabbit1-1  Created',
        ' Container rmq-bench-rabbit1-1  Starting',
        'Error response from daemon: driver failed programming external connectivity on endpoint rmq-bench-rabbit3-1: Bind for 127.0.0.1:15674 failed: port is already allocated',
      ].join('\n'),
      expected: 15674,
    },
    {
      name: 'docker-compose v1 wording',
      output:
        'ERROR: for rabbit1  Cannot start service rabbit1: driver failed programming external connectivity on endpoint rmq-bench_rabbit1_1: Bind for 127.0.0.1:5672 failed: port is already allocated',
      expected: 5672,
    },
    { name: 'unrelated failure', output: 'Error response from daemon: No such image: rabbitmq:4.3-management', expected: null },
    { name: 'a port in a harmless line', output: ' Container rmq-bench-rabbit1-1  Started 127.0.0.1:5672->5672/tcp', expected: null },
    { name: 'empty output', output: '', expected: null },
  ];

  it.each(cases)('$name', ({ output, expected }) => {
    expect(portTakenIn(output)).toBe(expected);
  });
});
