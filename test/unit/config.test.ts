import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { amqpUrl, composeEnv, loadConfig, managementUrl, nodeByName, recordedCluster, withCluster } from '../../src/config.js';
import { UsageError } from '../../src/errors.js';

/** RMQ_BENCH_NAME and the RMQ_BENCH_*_PORT variables: a cluster on other ports, beside the default one. */

describe('loadConfig: the cluster name and ports', () => {
  it('by default: containers rabbit1..3, project rmq-bench, ports 5672-5674, 15672-15674, 15692', () => {
    const c = loadConfig({});
    expect(c.clusterName).toBe('rmq-bench');
    expect(c.composeProject).toBe('rmq-bench');
    expect(c.nodes.map((n) => [n.name, n.container, n.nodeName, n.amqpPort, n.managementPort])).toEqual([
      ['rabbit1', 'rabbit1', 'rabbit@rabbit1', 5672, 15672],
      ['rabbit2', 'rabbit2', 'rabbit@rabbit2', 5673, 15673],
      ['rabbit3', 'rabbit3', 'rabbit@rabbit3', 5674, 15674],
    ]);
    expect(c.prometheusPort).toBe(15692);
  });

  it('a second cluster: its own containers and compose project, the same host and Erlang node names, other ports', () => {
    const c = loadConfig({ RMQ_BENCH_NAME: 'b2', RMQ_BENCH_AMQP_PORT: '6672', RMQ_BENCH_MANAGEMENT_PORT: '16672', RMQ_BENCH_PROMETHEUS_PORT: '16692' });
    expect(c.composeProject).toBe('b2');
    expect(c.nodes.map((n) => [n.name, n.container, n.nodeName, n.amqpPort, n.managementPort])).toEqual([
      ['rabbit1', 'b2-rabbit1', 'rabbit@rabbit1', 6672, 16672],
      ['rabbit2', 'b2-rabbit2', 'rabbit@rabbit2', 6673, 16673],
      ['rabbit3', 'b2-rabbit3', 'rabbit@rabbit3', 6674, 16674],
    ]);
    expect(amqpUrl(c, c.nodes[1]!)).toBe('amqp://demo:demo@127.0.0.1:6673');
    expect(managementUrl(c, c.nodes[2]!)).toBe('http://127.0.0.1:16674');
    // The broker names its nodes by host: rabbit@rabbit2 is this cluster's second node.
    expect(nodeByName(c, 'rabbit@rabbit2')?.container).toBe('b2-rabbit2');
    expect(composeEnv(c)).toEqual({
      RMQ_BENCH_CONTAINER_1: 'b2-rabbit1',
      RMQ_BENCH_CONTAINER_2: 'b2-rabbit2',
      RMQ_BENCH_CONTAINER_3: 'b2-rabbit3',
      RMQ_BENCH_AMQP_PORT_1: '6672',
      RMQ_BENCH_AMQP_PORT_2: '6673',
      RMQ_BENCH_AMQP_PORT_3: '6674',
      RMQ_BENCH_MANAGEMENT_PORT_1: '16672',
      RMQ_BENCH_MANAGEMENT_PORT_2: '16673',
      RMQ_BENCH_MANAGEMENT_PORT_3: '16674',
      // rabbit4 and rabbit5 are named too (cluster down removes every node), and left out of the profile.
      RMQ_BENCH_CONTAINER_4: 'b2-rabbit4',
      RMQ_BENCH_CONTAINER_5: 'b2-rabbit5',
      RMQ_BENCH_AMQP_PORT_4: '6675',
      RMQ_BENCH_AMQP_PORT_5: '6676',
      RMQ_BENCH_MANAGEMENT_PORT_4: '16675',
      RMQ_BENCH_MANAGEMENT_PORT_5: '16676',
      RMQ_BENCH_NODES: '3',
      COMPOSE_PROFILES: '',
      RMQ_BENCH_PROMETHEUS_PORT: '16692',
      RMQ_BENCH_RABBITMQ: '4.3',
      RMQ_BENCH_PARTITION_HANDLING: '',
      // The stream ports: 120 below the AMQP ports; rabbitN advertises RMQ_BENCH_STREAM_PORT + N - 1.
      RMQ_BENCH_STREAM_PORT: '6552',
      RMQ_BENCH_STREAM_PORT_1: '6552',
      RMQ_BENCH_STREAM_PORT_2: '6553',
      RMQ_BENCH_STREAM_PORT_3: '6554',
      RMQ_BENCH_STREAM_PORT_4: '6555',
      RMQ_BENCH_STREAM_PORT_5: '6556',
      RMQ_BENCH_FEATURE_FLAGS: 'stable',
    });
  });

  it.each([
    [{}, [5552, 5553, 5554]],
    [{ RMQ_BENCH_AMQP_PORT: '26672' }, [26552, 26553, 26554]],
    [{ RMQ_BENCH_AMQP_PORT: '11672', RMQ_BENCH_NODES: '5' }, [11552, 11553, 11554, 11555, 11556]],
    [{ RMQ_BENCH_AMQP_PORT: '28672', RMQ_BENCH_STREAM_PORT: '40000' }, [40000, 40001, 40002]],
  ])('%o: the stream ports of the nodes', (env, ports) => {
    expect(loadConfig({ RMQ_BENCH_STATE_DIR: '/nonexistent', ...env }).nodes.map((n) => n.streamPort)).toEqual(ports);
  });

  it('--amqp-port moves the stream ports with it; the same AMQP port keeps them', () => {
    const c = loadConfig({ RMQ_BENCH_STATE_DIR: '/nonexistent', RMQ_BENCH_STREAM_PORT: '40000' });
    expect(withCluster(c, { name: 'x', amqpPort: 7672 }).nodes[0]!.streamPort).toBe(7552);
    expect(withCluster(c, { name: 'x', amqpPort: 5672 }).nodes[0]!.streamPort).toBe(40000);
  });

  it('RMQ_BENCH_COMPOSE_PROJECT is refused unless it says what RMQ_BENCH_NAME says (a project apart from the containers cannot start)', () => {
    expect(() => loadConfig({ RMQ_BENCH_NAME: 'b2', RMQ_BENCH_COMPOSE_PROJECT: 'other' })).toThrow(UsageError);
    expect(() => loadConfig({ RMQ_BENCH_COMPOSE_PROJECT: 'other' })).toThrow(
      'RMQ_BENCH_COMPOSE_PROJECT=other is no longer read: RMQ_BENCH_NAME names the compose project and the containers (rmq-bench now)',
    );
    expect(loadConfig({ RMQ_BENCH_NAME: 'b2', RMQ_BENCH_COMPOSE_PROJECT: 'b2' }).composeProject).toBe('b2');
    expect(loadConfig({ RMQ_BENCH_COMPOSE_PROJECT: '' }).composeProject).toBe('rmq-bench');
  });

  it.each([
    [{ RMQ_BENCH_NAME: 'B2' }, 'RMQ_BENCH_NAME=B2 is not a name'],
    [{ RMQ_BENCH_NAME: '-x' }, 'RMQ_BENCH_NAME=-x is not a name'],
    [{ RMQ_BENCH_NAME: 'a/b' }, 'RMQ_BENCH_NAME=a/b is not a name'],
    [{ RMQ_BENCH_AMQP_PORT: 'x' }, 'RMQ_BENCH_AMQP_PORT=x is not a port from 1 to 65533'],
    [{ RMQ_BENCH_AMQP_PORT: '65534' }, 'RMQ_BENCH_AMQP_PORT=65534 is not a port from 1 to 65533'],
    [{ RMQ_BENCH_MANAGEMENT_PORT: '0' }, 'RMQ_BENCH_MANAGEMENT_PORT=0 is not a port'],
    [{ RMQ_BENCH_PROMETHEUS_PORT: '70000' }, 'RMQ_BENCH_PROMETHEUS_PORT=70000 is not a port from 1 to 65535'],
    [{ RMQ_BENCH_AMQP_PORT: '5672.5' }, 'is not a port'],
    [{ RMQ_BENCH_STREAM_PORT: '65534' }, 'RMQ_BENCH_STREAM_PORT=65534 is not a port from 1 to 65533'],
    [{ RMQ_BENCH_AMQP_PORT: '100' }, 'the stream ports below RMQ_BENCH_AMQP_PORT=100 (-20) are no ports: set RMQ_BENCH_STREAM_PORT'],
  ])('%o: one line, a UsageError', (env, message) => {
    expect(() => loadConfig(env)).toThrow(UsageError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe("withCluster: the cluster commands' --name and port flags over the environment", () => {
  const env = loadConfig({ RMQ_BENCH_NAME: 'b2', RMQ_BENCH_AMQP_PORT: '6672', RMQ_BENCH_MANAGEMENT_PORT: '16672', RMQ_BENCH_PROMETHEUS_PORT: '16692' });

  it('nothing chosen: the same config', () => {
    expect(withCluster(env, {})).toBe(env);
    expect(withCluster(env, { name: undefined, amqpPort: undefined })).toBe(env);
  });

  it('a name: its containers and compose project, the ports as configured', () => {
    const c = withCluster(env, { name: 'c3' });
    expect([c.clusterName, c.composeProject, c.prometheusPort]).toEqual(['c3', 'c3', 16692]);
    expect(c.nodes.map((n) => [n.container, n.amqpPort, n.managementPort])).toEqual([
      ['c3-rabbit1', 6672, 16672],
      ['c3-rabbit2', 6673, 16673],
      ['c3-rabbit3', 6674, 16674],
    ]);
    expect(composeEnv(c).RMQ_BENCH_CONTAINER_3).toBe('c3-rabbit3');
  });

  it('ports: each one given moves its three (or one), the rest stays', () => {
    const c = withCluster(loadConfig({}), { amqpPort: 7672, prometheusPort: 17692 });
    expect(c.clusterName).toBe('rmq-bench');
    expect(c.nodes.map((n) => [n.container, n.amqpPort, n.managementPort])).toEqual([
      ['rabbit1', 7672, 15672],
      ['rabbit2', 7673, 15673],
      ['rabbit3', 7674, 15674],
    ]);
    expect(c.prometheusPort).toBe(17692);
    expect(amqpUrl(c, c.nodes[0]!)).toBe('amqp://demo:demo@127.0.0.1:7672');
  });

  it('back to the default name: the default containers rabbit1..3', () => {
    expect(withCluster(env, { name: 'rmq-bench' }).nodes.map((n) => n.container)).toEqual(['rabbit1', 'rabbit2', 'rabbit3']);
  });
});

describe('the RabbitMQ version and partition handling: variables, the record, --rabbitmq', () => {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-config-'));
  const record = (name: string, doc: object): void => {
    mkdirSync(path.join(stateDir, 'clusters'), { recursive: true });
    writeFileSync(path.join(stateDir, 'clusters', `${name}.json`), JSON.stringify(doc));
  };

  it('4.3 by default: the sid image, the official 4.3 tag, no partition handling', () => {
    const c = loadConfig({});
    expect([c.rabbitmq, c.debianSuite, c.builtImage, c.defaultImage, c.partitionHandling]).toEqual([
      '4.3',
      'sid',
      'rmq-bench/rabbitmq:4.3',
      'rabbitmq:4.3-management',
      undefined,
    ]);
  });

  it('RMQ_BENCH_RABBITMQ picks the line, its suite and images; a bad one is a usage error naming the variable', () => {
    const c = loadConfig({ RMQ_BENCH_RABBITMQ: '3.10', RMQ_BENCH_PARTITION_HANDLING: 'pause_minority' });
    expect([c.rabbitmq, c.debianSuite, c.builtImage, c.defaultImage, c.partitionHandling]).toEqual([
      '3.10',
      'bookworm',
      'rmq-bench/rabbitmq:3.10',
      'rabbitmq:3.10-management',
      'pause_minority',
    ]);
    expect(composeEnv(c)).toMatchObject({ RMQ_BENCH_RABBITMQ: '3.10', RMQ_BENCH_PARTITION_HANDLING: 'pause_minority' });
    expect(() => loadConfig({ RMQ_BENCH_RABBITMQ: '3.13' })).toThrow('RMQ_BENCH_RABBITMQ=3.13 is not a RabbitMQ version rmq-bench runs (3.10, 4.0, 4.3)');
    expect(() => loadConfig({ RMQ_BENCH_PARTITION_HANDLING: 'heal' })).toThrow(UsageError);
  });

  it("a cluster's record gives its line and partition handling; the variable wins; a broken record reads as none", () => {
    record('legacy', { name: 'legacy', nodes: 3, rabbitmq: '3.10', partitionHandling: 'autoheal' });
    record('broken', { rabbitmq: '9.9', partitionHandling: 'sometimes', nodes: 4 });
    const env = { RMQ_BENCH_STATE_DIR: stateDir };
    expect(recordedCluster(stateDir, 'legacy')).toEqual({ nodes: 3, rabbitmq: '3.10', partitionHandling: 'autoheal' });
    expect(recordedCluster(stateDir, 'broken')).toEqual({});
    expect(recordedCluster(stateDir, 'absent')).toEqual({});
    const legacy = loadConfig({ ...env, RMQ_BENCH_NAME: 'legacy' });
    expect([legacy.rabbitmq, legacy.debianSuite, legacy.partitionHandling]).toEqual(['3.10', 'bookworm', 'autoheal']);
    expect(loadConfig({ ...env, RMQ_BENCH_NAME: 'legacy', RMQ_BENCH_RABBITMQ: '4.0' }).rabbitmq).toBe('4.0');
    expect(loadConfig({ ...env, RMQ_BENCH_NAME: 'broken' }).rabbitmq).toBe('4.3');
    // --name legacy from the default cluster's config: that cluster's own line.
    const chosen = withCluster(loadConfig(env), { name: 'legacy' });
    expect([chosen.rabbitmq, chosen.builtImage, chosen.partitionHandling]).toEqual(['3.10', 'rmq-bench/rabbitmq:3.10', 'autoheal']);
    // --rabbitmq 4.0 on the default cluster.
    const v40 = withCluster(loadConfig(env), { rabbitmq: '4.0' });
    expect([v40.rabbitmq, v40.builtImage, v40.debianSuite, v40.defaultImage]).toEqual(['4.0', 'rmq-bench/rabbitmq:4.0', 'trixie', 'rabbitmq:4.0-management']);
    // Its recorded ports, unless the variables or the flags say otherwise.
    record('ported', { name: 'ported', nodes: 3, rabbitmq: '4.0', amqpPort: 32672, managementPort: 42672, prometheusPort: 42692 });
    const ported = loadConfig({ ...env, RMQ_BENCH_NAME: 'ported' });
    expect([ported.nodes[0]!.amqpPort, ported.nodes[2]!.managementPort, ported.prometheusPort]).toEqual([32672, 42674, 42692]);
    expect(loadConfig({ ...env, RMQ_BENCH_NAME: 'ported', RMQ_BENCH_AMQP_PORT: '6672' }).nodes[0]!.amqpPort).toBe(6672);
    const byName = withCluster(loadConfig(env), { name: 'ported' });
    expect([byName.nodes[0]!.amqpPort, byName.nodes[0]!.managementPort, byName.prometheusPort, byName.rabbitmq]).toEqual([32672, 42672, 42692, '4.0']);
    expect(withCluster(loadConfig(env), { name: 'ported', amqpPort: 7000 }).nodes[0]!.amqpPort).toBe(7000);
    // A tag or suite set by a variable stays when the line changes.
    const own = withCluster(loadConfig({ ...env, RMQ_BENCH_BUILT_IMAGE: 'mine:1', RMQ_BENCH_DEBIAN_SUITE: 'trixie' }), { rabbitmq: '3.10' });
    expect([own.builtImage, own.debianSuite]).toEqual(['mine:1', 'trixie']);
  });
});
