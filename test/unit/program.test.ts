import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CompareCliOptions } from '../../src/cli/commands/compare.js';
import type { ConsumerCliOptions } from '../../src/cli/commands/consumer.js';
import type { ProducerCliOptions } from '../../src/cli/commands/producer.js';
import { commandOf, createProgram, type Invocation } from '../../src/cli/program.js';
import { PRODUCER_CRASH_CLI_DEFAULTS } from './fixtures/producer-crash.js';
import { COMPARE_CLI_DEFAULTS } from './fixtures/runs.js';
import { captureOutput, invocationOf, leaves, parse, recorder } from './program-harness.js';

/** A verdict command given no threshold and no --junit. */
const NO_VERDICT = { thresholds: {}, junit: undefined };

const failoverDefaults = {
  json: false,
  html: undefined,
  queue: 'demo.orders',
  queueType: 'quorum',
  ownQueue: false,
  vhost: '/',
  fault: 'kill',
  restoreAfterMs: 0,
  electionTimeoutMs: 60_000,
  rejoinTimeoutMs: 180_000,
  netem: undefined,
  bandwidth: undefined,
  verdict: { thresholds: {}, junit: undefined },
} as const;

const producerDefaults: ProducerCliOptions = {
  json: false,
  html: undefined,
  count: 100,
  protocol: 'amqp091',
  urls: undefined,
  queue: 'demo.orders',
  exchange: 'demo.orders',
  routingKey: 'demo.orders',
  ratePerSec: 20,
  mode: 'async',
  window: 256,
  batchSize: 100,
  mandatory: false,
  persistent: true,
  sizeBytes: 100,
  confirmTimeoutMs: 5_000,
  heartbeatS: 5,
  reconnectTimeoutMs: 60_000,
  blockedTimeoutMs: 60_000,
  flushTimeoutMs: 15_000,
  reportFile: undefined,
};

const consumerDefaults: ConsumerCliOptions = {
  json: false,
  html: undefined,
  urls: undefined,
  protocol: 'amqp091',
  queue: 'demo.orders',
  prefetch: 10,
  autoAck: false,
  crashOnDelivery: false,
  failure: undefined,
  workMs: 0,
  ackEvery: 1,
  count: undefined,
  idleTimeoutMs: 5_000,
  idempotent: false,
  storeFile: undefined,
  heartbeatS: 5,
  reconnectTimeoutMs: 60_000,
};

// commander's own output, captured so that the test log stays clean.
const { stderr, stdout } = captureOutput();

/** Each command line is refused by commander with its code, a non-zero exit and the text on stderr; nothing runs. */
function itRefuses(cases: readonly { args: string[]; code: string; stderrText: string }[]): void {
  it.each(cases)('$args → $code', async ({ args, code, stderrText }) => {
    const { calls, err } = await parse(args);
    expect(err).toBeInstanceOf(CommanderError);
    expect((err as CommanderError).code).toBe(code);
    expect((err as CommanderError).exitCode).not.toBe(0);
    expect(calls).toEqual([]);
    expect(stderr.join('')).toContain(stderrText);
  });
}

describe('createProgram: argv → invocation', () => {
  const cases: { args: string[]; expected: Invocation }[] = [
    { args: ['cluster', 'up'], expected: { command: 'cluster up', options: { json: false, timeoutMs: 180_000 } } },
    { args: ['cluster', 'up', '--timeout', '90s', '--json'], expected: { command: 'cluster up', options: { json: true, timeoutMs: 90_000 } } },
    { args: ['cluster', 'up', '--timeout', '1m30s'], expected: { command: 'cluster up', options: { json: false, timeoutMs: 90_000 } } },
    { args: ['cluster', 'down'], expected: { command: 'cluster down', options: { json: false, volumes: false } } },
    { args: ['cluster', 'down', '--volumes'], expected: { command: 'cluster down', options: { json: false, volumes: true } } },
    { args: ['cluster', 'reset'], expected: { command: 'cluster reset', options: { json: false, hard: false, timeoutMs: 180_000 } } },
    { args: ['cluster', 'reset', '--hard'], expected: { command: 'cluster reset', options: { json: false, hard: true, timeoutMs: 180_000 } } },
    { args: ['cluster', 'status', '--json'], expected: { command: 'cluster status', options: { json: true, html: undefined } } },
    { args: ['cluster', 'logs'], expected: { command: 'cluster logs', options: { node: undefined, follow: false, tail: undefined } } },
    { args: ['cluster', 'logs', 'rabbit2', '-f', '--tail', '50'], expected: { command: 'cluster logs', options: { node: 'rabbit2', follow: true, tail: 50 } } },
    { args: ['cluster', 'logs', '--follow', 'rabbit3'], expected: { command: 'cluster logs', options: { node: 'rabbit3', follow: true, tail: undefined } } },
    { args: ['cluster', 'image', '--rebuild'], expected: { command: 'cluster image', options: { json: false, rebuild: true, rabbitmq: undefined } } },
    { args: ['cluster', 'image', '--rabbitmq', '3.10'], expected: { command: 'cluster image', options: { json: false, rebuild: false, rabbitmq: '3.10' } } },
    { args: ['failover'], expected: { command: 'failover', options: failoverDefaults } },
    {
      args: ['failover', '--queue-type', 'mirrored', '--fault', 'partition'],
      expected: {
        command: 'failover',
        options: {
          ...failoverDefaults,
          queueType: 'mirrored',
          ownQueue: true,
          queue: 'rmq-bench.failover.mirrored',
          fault: 'partition',
          electionTimeoutMs: 150_000,
        },
      },
    },
    {
      args: ['failover', '--fault', 'pause', '--hold', '10s'],
      expected: { command: 'failover', options: { ...failoverDefaults, fault: 'pause', restoreAfterMs: 10_000 } },
    },
    { args: ['failover', '--no-restore'], expected: { command: 'failover', options: { ...failoverDefaults, restoreAfterMs: null } } },
    { args: ['failover', '--fault', 'partition'], expected: { command: 'failover', options: { ...failoverDefaults, fault: 'partition' } } },
    {
      args: ['failover', '--fault', 'slow-link'],
      expected: { command: 'failover', options: { ...failoverDefaults, fault: 'slow-link', bandwidth: '256kbit' } },
    },
    {
      args: ['failover', '--fault', 'slow-link', '--bandwidth', '2Mbit'],
      expected: { command: 'failover', options: { ...failoverDefaults, fault: 'slow-link', bandwidth: '2mbit' } },
    },
    {
      args: ['failover', '--fault', 'latency'],
      expected: { command: 'failover', options: { ...failoverDefaults, fault: 'latency', netem: { delayMs: 200, jitterMs: 0, lossPct: 0 } } },
    },
    {
      args: ['failover', '--fault', 'latency', '--latency', '1s', '--jitter', '50ms', '--loss', '5%', '--hold', '20s'],
      expected: {
        command: 'failover',
        options: { ...failoverDefaults, fault: 'latency', restoreAfterMs: 20_000, netem: { delayMs: 1_000, jitterMs: 50, lossPct: 5 } },
      },
    },
    {
      args: [
        'failover',
        '--queue',
        'bench.q1',
        '--vhost',
        'bench',
        '--fault',
        'disconnect',
        '--election-timeout',
        '30s',
        '--rejoin-timeout',
        '5m',
        '--json',
        '--max-election',
        '5s',
      ],
      expected: {
        command: 'failover',
        options: {
          json: true,
          html: undefined,
          queue: 'bench.q1',
          queueType: 'quorum',
          ownQueue: false,
          vhost: 'bench',
          fault: 'disconnect',
          restoreAfterMs: 0,
          electionTimeoutMs: 30_000,
          rejoinTimeoutMs: 300_000,
          netem: undefined,
          bandwidth: undefined,
          verdict: { thresholds: { election: 5_000 }, junit: undefined },
        },
      },
    },
    // The producer has landed (issue #3): the article's first command is a real invocation now.
    { args: ['producer', '-n', '200', '--confirms=false'], expected: { command: 'producer', options: { ...producerDefaults, count: 200, mode: 'none' } } },
    { args: ['consumer', '--autoack'], expected: { command: 'consumer', options: { ...consumerDefaults, autoAck: true } } },
    { args: ['consumer', '--nack'], expected: { command: 'consumer', options: { ...consumerDefaults, crashOnDelivery: true, prefetch: 1 } } },
    {
      args: ['consumer', '--on-failure', 'reject-requeue', '--fail-every', '3', '--prefetch', '0', '--work', '5ms', '-n', '10', '--multi-ack-every', '4'],
      expected: {
        command: 'consumer',
        options: { ...consumerDefaults, prefetch: 0, failure: { action: 'reject-requeue', every: 3, rate: undefined }, workMs: 5, count: 10, ackEvery: 4 },
      },
    },
    {
      args: ['consumer', '--idempotent'],
      expected: { command: 'consumer', options: { ...consumerDefaults, idempotent: true, storeFile: '.rmq-bench/consumer.sqlite' } },
    },
    {
      args: ['consumer', '--idempotent', '--store', '/tmp/s.db'],
      expected: { command: 'consumer', options: { ...consumerDefaults, idempotent: true, storeFile: '/tmp/s.db' } },
    },
    {
      args: ['delayed-retry-demo'],
      expected: {
        command: 'delayed-retry-demo',
        options: {
          json: false,
          html: undefined,
          auto: false,
          type: 'all',
          minMs: 2000,
          maxMs: 10000,
          count: 3,
          returns: 5,
          via: 'policy',
          toleranceMs: 1000,
          skipSetup: false,
        },
      },
    },
    {
      args: ['delayed-retry-demo', '--type', 'failed', '--min', '2s', '--max', '5s', '-n', '1', '--via', 'arguments', '--returns', '3'],
      expected: {
        command: 'delayed-retry-demo',
        options: {
          json: false,
          html: undefined,
          auto: false,
          type: 'failed',
          minMs: 2000,
          maxMs: 5000,
          count: 1,
          returns: 3,
          via: 'arguments',
          toleranceMs: 1000,
          skipSetup: false,
        },
      },
    },
    {
      args: ['retry-demo', '--backoff', '5s,30s,5m', '--time-scale', '0.1'],
      expected: {
        command: 'retry-demo',
        options: { json: false, html: undefined, auto: false, failures: 2, toleranceMs: 2000, ladder: { backoffMs: [500, 3000, 30000], timeScale: 0.1 } },
      },
    },
    {
      args: ['dlq-demo', '--html', 'report.html'],
      expected: {
        command: 'dlq-demo',
        options: { json: false, checkpointCmd: undefined, html: 'report.html', auto: false, reasons: ['delivery_limit'], count: 3, ttlMs: 1000, maxLength: 2 },
      },
    },
    {
      args: ['dlq-demo', '--reason', 'maxlen,rejected'],
      expected: {
        command: 'dlq-demo',
        options: { json: false, checkpointCmd: undefined, html: undefined, auto: false, reasons: ['rejected', 'maxlen'], count: 3, ttlMs: 1000, maxLength: 2 },
      },
    },
    {
      args: ['dlq-demo', '--reason', 'all'],
      expected: {
        command: 'dlq-demo',
        options: {
          json: false,
          checkpointCmd: undefined,
          html: undefined,
          auto: false,
          reasons: ['delivery_limit', 'rejected', 'expired', 'maxlen'],
          count: 3,
          ttlMs: 1000,
          maxLength: 2,
        },
      },
    },
    {
      args: ['durability-demo', '--how', 'kill', '-n', '10'],
      expected: {
        command: 'durability-demo',
        options: { json: false, html: undefined, auto: false, count: 10, how: 'kill', restartTimeoutMs: 180_000, queueAgeMs: 10_000 },
      },
    },
    {
      args: ['retry-demo'],
      expected: { command: 'retry-demo', options: { json: false, html: undefined, auto: false, failures: 2, toleranceMs: 2000, ladder: undefined } },
    },
    // Landed (issue #8): a real invocation, its seed picked by the command when not given.
    { args: ['producer-crash'], expected: { command: 'producer-crash', options: PRODUCER_CRASH_CLI_DEFAULTS } },

    {
      args: ['report', 'smoke-results', 'extra/compare.json', '--html', '/tmp/index.html'],
      expected: { command: 'report', options: { json: false, inputs: ['smoke-results', 'extra/compare.json'], html: '/tmp/index.html' } },
    },
    {
      args: ['report', '--html', '/tmp/r.html', '--json', 'a.json'],
      expected: { command: 'report', options: { json: true, inputs: ['a.json'], html: '/tmp/r.html' } },
    },
  ];

  it.each(cases)('$args', async ({ args, expected }) => {
    expect(await invocationOf(args)).toEqual(expected);
    expect(stderr).toEqual([]);
  });
});

describe('createProgram: composition', () => {
  it('each command commander can dispatch has one definition to run, under the same name', () => {
    const names = leaves(createProgram(recorder().dispatch)).map(([words]) => words.join(' '));
    expect(names).toHaveLength(29);
    for (const name of names) {
      const def = commandOf({ command: name } as Invocation);
      expect(def.name).toBe(name);
      expect(typeof def.run).toBe('function');
    }
  });

  it('two programs are independent (no state shared between them)', async () => {
    const a = recorder();
    const b = recorder();
    const pa = createProgram(a.dispatch);
    createProgram(b.dispatch);
    await pa.parseAsync(['node', 'rmq-bench', 'cluster', 'status']);
    expect(a.calls).toHaveLength(1);
    expect(b.calls).toEqual([]);
  });
});

describe('createProgram: usage errors', () => {
  const cases: { args: string[]; code: string; stderrText: string }[] = [
    { args: ['failover', '--fault', 'nuke'], code: 'commander.invalidArgument', stderrText: 'nuke' },
    { args: ['delayed-retry-demo', '--type', 'sometimes'], code: 'commander.invalidArgument', stderrText: 'sometimes' },
    {
      args: ['compare', '--html', '/no/such/dir/r.html'],
      code: 'commander.invalidArgument',
      stderrText: "directory '/no/such/dir' does not exist or is not writable",
    },
    { args: ['dlq-demo', '--reason', 'expired,bored'], code: 'commander.invalidArgument', stderrText: "'bored' is not one of" },
    { args: ['durability-demo', '--how', 'gently'], code: 'commander.invalidArgument', stderrText: 'gently' },
    { args: ['dlq-demo', '--html', '/tmp'], code: 'commander.invalidArgument', stderrText: "'/tmp' is a directory" },
    { args: ['delayed-retry-demo', '--via', 'magic'], code: 'commander.invalidArgument', stderrText: 'magic' },
    { args: ['delayed-retry-demo', '--min', 'soon'], code: 'commander.invalidArgument', stderrText: 'not a duration' },
    { args: ['retry-demo', '--backoff', '5s,,1m'], code: 'commander.invalidArgument', stderrText: 'not a duration' },
    { args: ['consumer', '--prefetch', '70000'], code: 'commander.invalidArgument', stderrText: 'not a prefetch count' },
    { args: ['consumer', '--prefetch', '-1'], code: 'commander.invalidArgument', stderrText: 'not a prefetch count' },
    { args: ['consumer', '-n', '-5'], code: 'commander.invalidArgument', stderrText: "'-5' is not a positive whole number" },
    { args: ['consumer', '--on-failure', 'explode'], code: 'commander.invalidArgument', stderrText: 'explode' },
    { args: ['consumer', '--on-failure', 'close', '--fail-every', '2', '--fail-rate', '0.5'], code: 'commander.conflictingOption', stderrText: '--fail-rate' },
    { args: ['consumer-crash', '--modes', 'autoack,yolo'], code: 'commander.invalidArgument', stderrText: "'yolo' is not one of autoack, manual, idempotent" },
    { args: ['failover', '--hold', '5x'], code: 'commander.invalidArgument', stderrText: "'5x' is not a duration" },
    { args: ['failover', '--hold', '5s', '--no-restore'], code: 'commander.conflictingOption', stderrText: '--no-restore' },
    { args: ['failover', '--election-timeout', 'soon'], code: 'commander.invalidArgument', stderrText: "'soon' is not a duration" },
    { args: ['cluster', 'up', '--timeout', '-1s'], code: 'commander.invalidArgument', stderrText: "'-1s' is not a duration" },
    { args: ['cluster', 'logs', 'rabbit9'], code: 'commander.invalidArgument', stderrText: "'rabbit9' is not a node of the bench cluster" },
    { args: ['cluster', 'logs', '--tail', '0'], code: 'commander.invalidArgument', stderrText: "'0' is not a positive whole number" },
    { args: ['cluster', 'explode'], code: 'commander.unknownCommand', stderrText: 'explode' },
    { args: ['frobnicate'], code: 'commander.unknownCommand', stderrText: 'frobnicate' },
    { args: ['cluster', 'up', '--bogus'], code: 'commander.unknownOption', stderrText: '--bogus' },
  ];

  itRefuses(cases);

  it('--version: a CommanderError with code commander.version and exit code 0, printed on stdout', async () => {
    const { calls, err } = await parse(['--version']);
    expect(err).toBeInstanceOf(CommanderError);
    expect((err as CommanderError).code).toBe('commander.version');
    expect((err as CommanderError).exitCode).toBe(0);
    expect(stdout.join('')).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(calls).toEqual([]);
  });
});

describe('producer: argv → options', () => {
  const urls = ['amqp://a:b@127.0.0.1:5672', 'amqp://a:b@127.0.0.1:5673'];
  const cases: { args: string[]; expected: Partial<ProducerCliOptions> }[] = [
    { args: [], expected: {} },
    // The article's spellings.
    { args: ['-n', '200', '--confirms=false'], expected: { count: 200, mode: 'none' } },
    { args: ['--count', '200', '--confirms', 'false'], expected: { count: 200, mode: 'none' } },
    { args: ['--no-confirms'], expected: { mode: 'none' } },
    { args: ['--confirms=true'], expected: { mode: 'async' } },
    { args: ['--confirms'], expected: { mode: 'async' } },
    { args: ['--confirms=0'], expected: { mode: 'none' } },
    { args: ['--confirm-mode', 'sync'], expected: { mode: 'sync' } },
    { args: ['--confirm-mode', 'batch', '--batch-size', '50'], expected: { mode: 'batch', batchSize: 50 } },
    { args: ['--tx'], expected: { mode: 'tx' } },
    { args: ['--tx', '--batch-size', '10'], expected: { mode: 'tx', batchSize: 10 } },
    { args: ['--window', '32'], expected: { window: 32 } },
    { args: ['--routing-key', 'nowhere', '--mandatory'], expected: { routingKey: 'nowhere', mandatory: true } },
    { args: ['--queue', 'bench.q1'], expected: { queue: 'bench.q1', routingKey: 'bench.q1' } },
    {
      args: ['--exchange', 'amq.direct', '--queue', 'bench.q1', '--routing-key', 'k'],
      expected: { exchange: 'amq.direct', queue: 'bench.q1', routingKey: 'k' },
    },
    { args: ['--rate', '0'], expected: { ratePerSec: 0 } },
    { args: ['-r', '500'], expected: { ratePerSec: 500 } },
    { args: ['--urls', urls.join(',')], expected: { urls } },
    { args: ['--urls', ` ${urls[0]} , ${urls[1]} `], expected: { urls } },
    { args: ['--persistent=false'], expected: { persistent: false } },
    { args: ['--persistent'], expected: { persistent: true } },
    { args: ['-s', '1024'], expected: { sizeBytes: 1024 } },
    { args: ['--size', '0'], expected: { sizeBytes: 0 } },
    { args: ['--ledger', '/tmp/x.json'], expected: { reportFile: '/tmp/x.json' } },
    {
      args: ['--confirm-timeout', '2s', '--heartbeat', '10s', '--reconnect-timeout', '2m', '--json'],
      expected: { confirmTimeoutMs: 2_000, heartbeatS: 10, reconnectTimeoutMs: 120_000, json: true },
    },
    { args: ['--heartbeat', '0'], expected: { heartbeatS: 0 } },
    { args: ['--protocol', 'amqp10'], expected: { protocol: 'amqp10' } },
    { args: ['--protocol', 'amqp10', '--confirms=false'], expected: { protocol: 'amqp10', mode: 'none' } },
    { args: ['--protocol', 'amqp10', '--confirm-mode', 'sync'], expected: { protocol: 'amqp10', mode: 'sync' } },
  ];

  it.each(cases)('producer $args', async ({ args, expected }) => {
    const invocation = await invocationOf(['producer', ...args]);
    // Strict: urls and reportFile must be present (as undefined) when not given.
    expect(invocation).toStrictEqual({ command: 'producer', options: { ...producerDefaults, ...expected } });
    expect(stderr).toEqual([]);
  });

  // heartbeat=0 in AMQP turns heartbeats off: a short heartbeat must not round down to "none".
  it('a sub-second --heartbeat never becomes 0 (heartbeats off)', async () => {
    const { calls, err } = await parse(['producer', '--heartbeat', '200ms']);
    if (err === undefined) {
      const options = calls[0]?.options as ProducerCliOptions;
      expect(options.heartbeatS).toBeGreaterThan(0);
    } else {
      expect(err).toBeInstanceOf(CommanderError);
    }
  });
});

describe('verify: argv → options', () => {
  const cases: { args: string[]; expected: Invocation }[] = [
    {
      args: ['verify', '--ledger', 'r.json', '--queue', 'q', '--idle-timeout', '500ms'],
      expected: {
        command: 'verify',
        options: { json: false, html: undefined, ledgers: ['r.json'], queue: 'q', urls: undefined, idleMs: 500, verdict: NO_VERDICT },
      },
    },
    {
      args: ['verify', '--ledger', 'r.json'],
      expected: {
        command: 'verify',
        options: { json: false, html: undefined, ledgers: ['r.json'], queue: undefined, urls: undefined, idleMs: 2_000, verdict: NO_VERDICT },
      },
    },
    {
      args: ['verify', '--ledger', 'r.json', '--max-lost', '0', '--max-duplicates', '10', '--junit', 'verify.xml'],
      expected: {
        command: 'verify',
        options: {
          json: false,
          html: undefined,
          ledgers: ['r.json'],
          queue: undefined,
          urls: undefined,
          idleMs: 2_000,
          verdict: { thresholds: { lost: 0, duplicates: 10 }, junit: 'verify.xml' },
        },
      },
    },
    {
      args: ['verify', '--ledger', 'r.json', '--urls', 'amqps://u:p@h:5671', '--json'],
      expected: {
        command: 'verify',
        options: { json: true, html: undefined, ledgers: ['r.json'], queue: undefined, urls: ['amqps://u:p@h:5671'], idleMs: 2_000, verdict: NO_VERDICT },
      },
    },
  ];

  it.each(cases)('$args', async ({ args, expected }) => {
    expect(await invocationOf(args)).toStrictEqual(expected);
    expect(stderr).toEqual([]);
  });
});

describe('compare: argv → options', () => {
  const cases: { args: string[]; expected: Partial<CompareCliOptions> }[] = [
    { args: [], expected: {} },
    { args: ['--confirms', 'on'], expected: { modes: ['confirms-on'] } },
    { args: ['--confirms', 'off'], expected: { modes: ['confirms-off'] } },
    { args: ['--confirms', 'both'], expected: { modes: ['confirms-on', 'confirms-off'] } },
    // What producer's --confirms takes means the same here: false is off, true and the bare flag on.
    { args: ['--confirms=false'], expected: { modes: ['confirms-off'] } },
    { args: ['--confirms', 'no'], expected: { modes: ['confirms-off'] } },
    { args: ['--no-confirms'], expected: { modes: ['confirms-off'] } },
    { args: ['--confirms=true'], expected: { modes: ['confirms-on'] } },
    { args: ['--confirms', '-n', '100'], expected: { modes: ['confirms-on'], count: 100 } },
    { args: ['--confirms', 'BOTH'], expected: { modes: ['confirms-on', 'confirms-off'] } },
    { args: ['--fault', 'none'], expected: { fault: 'none' } },
    { args: ['--fault', 'pause', '--hold', '10s'], expected: { fault: 'pause', restoreAfterMs: 10_000, reconnectTimeoutMs: 190_000 } },
    { args: ['--fault-at', '0.5', '--runs', '5'], expected: { faultAt: 0.5, runs: 5 } },
    { args: ['--fault-at', '0'], expected: { faultAt: 0 } },
    { args: ['--fault-at', '1'], expected: { faultAt: 1 } },
    { args: ['--fault-at', '30%'], expected: { faultAt: 0.3 } },
    { args: ['--fault-at', '100%'], expected: { faultAt: 1 } },
    { args: ['-n', '5000', '-r', '1000', '-s', '512', '--window', '64'], expected: { count: 5_000, ratePerSec: 1_000, sizeBytes: 512, window: 64 } },
    // Another queue goes through the default exchange, unless --exchange names one.
    { args: ['--queue', 'bench.q1', '--vhost', 'bench', '--json'], expected: { queue: 'bench.q1', exchange: '', vhost: 'bench', json: true } },
    { args: ['--queue', 'bench.q1', '--exchange', 'amq.direct'], expected: { queue: 'bench.q1', exchange: 'amq.direct' } },
    { args: ['--confirm-timeout', '1s', '--heartbeat', '3s'], expected: { confirmTimeoutMs: 1_000, heartbeatS: 3 } },
    { args: ['--fault', 'partition'], expected: { fault: 'partition' } },
    { args: ['--fault', 'latency', '--loss', '5%'], expected: { fault: 'latency', netem: { delayMs: 200, jitterMs: 0, lossPct: 5 } } },
    { args: ['--fault', 'slow-link', '--bandwidth', '100kbit'], expected: { fault: 'slow-link', bandwidth: '100kbit' } },
    // Thresholds: counts and durations, validated here; those not given are absent.
    { args: ['--max-lost', '0'], expected: { verdict: { thresholds: { lost: 0 }, junit: undefined } } },
    { args: ['--junit', 'out.xml'], expected: { verdict: { thresholds: {}, junit: 'out.xml' } } },
    {
      args: ['--max-lost', '12', '--max-duplicates', '3', '--max-stall', '1m30s', '--max-election', '500ms'],
      expected: { verdict: { thresholds: { lost: 12, duplicates: 3, stall: 90_000, election: 500 }, junit: undefined } },
    },
    // Another queue type without --queue: compare's own queue of that type, through the default exchange.
    {
      args: ['--queue-type', 'mirrored'],
      expected: { queueType: 'mirrored', ownQueue: true, queue: 'rmq-bench.compare.mirrored', exchange: '', electionTimeoutMs: 150_000 },
    },
    {
      args: ['--queue-type', 'classic', '--fault', 'pause'],
      expected: { queueType: 'classic', ownQueue: true, queue: 'rmq-bench.compare.classic', exchange: '', fault: 'pause' },
    },
    // A queue of the user's: used as it is (its type is checked when the run starts).
    { args: ['--queue-type', 'mirrored', '--queue', 'ha.q'], expected: { queueType: 'mirrored', queue: 'ha.q', exchange: '', electionTimeoutMs: 150_000 } },
  ];

  it.each(cases)('compare $args', async ({ args, expected }) => {
    expect(await invocationOf(['compare', ...args])).toStrictEqual({ command: 'compare', options: { ...COMPARE_CLI_DEFAULTS, ...expected } });
    expect(stderr).toEqual([]);
  });
});

describe('producer, verify, compare: usage errors', () => {
  const cases: { args: string[]; code: string; stderrText: string }[] = [
    { args: ['producer', '-n', '0'], code: 'commander.invalidArgument', stderrText: "'0' is not a positive whole number" },
    { args: ['producer', '-n', 'abc'], code: 'commander.invalidArgument', stderrText: "'abc' is not a positive whole number" },
    { args: ['producer', '-n', '1.5'], code: 'commander.invalidArgument', stderrText: "'1.5' is not a positive whole number" },
    { args: ['producer', '--confirms=maybe'], code: 'commander.invalidArgument', stderrText: "'maybe' is not true or false" },
    { args: ['producer', '--persistent=perhaps'], code: 'commander.invalidArgument', stderrText: "'perhaps' is not true or false" },
    { args: ['producer', '--confirm-mode', 'turbo'], code: 'commander.invalidArgument', stderrText: 'turbo' },
    { args: ['producer', '--urls', 'http://x'], code: 'commander.invalidArgument', stderrText: 'the URL is not an amqp:// or amqps:// URL' },
    { args: ['producer', '--urls', ''], code: 'commander.invalidArgument', stderrText: 'no URL given' },
    { args: ['producer', '--rate', '-1'], code: 'commander.invalidArgument', stderrText: "'-1' is not a whole number >= 0" },
    { args: ['producer', '--window', '0'], code: 'commander.invalidArgument', stderrText: "'0' is not a positive whole number" },
    { args: ['producer', '--confirm-timeout', 'soon'], code: 'commander.invalidArgument', stderrText: "'soon' is not a duration" },
    { args: ['verify'], code: 'commander.missingMandatoryOptionValue', stderrText: '--ledger' },
    { args: ['verify', '--ledger', 'r.json', '--idle-timeout', 'forever'], code: 'commander.invalidArgument', stderrText: "'forever' is not a duration" },
    { args: ['compare', '--fault-at', '1.5'], code: 'commander.invalidArgument', stderrText: "'1.5' is not a share between 0 and 1" },
    { args: ['compare', '--fault-at', 'x'], code: 'commander.invalidArgument', stderrText: "'x' is not a share between 0 and 1" },
    { args: ['compare', '--fault-at', '-0.1'], code: 'commander.invalidArgument', stderrText: "'-0.1' is not a share between 0 and 1" },
    { args: ['compare', '--fault-at', '130%'], code: 'commander.invalidArgument', stderrText: "'130%' is not a share between 0 and 1 or a percentage" },
    { args: ['compare', '--fault-at', '%'], code: 'commander.invalidArgument', stderrText: "'%' is not a share" },
    { args: ['compare', '--runs', '0'], code: 'commander.invalidArgument', stderrText: "'0' is not a positive whole number" },
    { args: ['compare', '--confirms', 'sideways'], code: 'commander.invalidArgument', stderrText: 'sideways' },
    { args: ['compare', '--fault', 'nuke'], code: 'commander.invalidArgument', stderrText: 'nuke' },
    { args: ['compare', '--queue-type', 'lazy'], code: 'commander.invalidArgument', stderrText: 'lazy' },
    { args: ['chaos', '--queue-type', 'stream'], code: 'commander.invalidArgument', stderrText: 'stream' },
    { args: ['producer', '--protocol', 'amqp11'], code: 'commander.invalidArgument', stderrText: 'amqp11' },
  ];

  itRefuses(cases);

  // commander prints its own message for a bad option value; a password must not reach stderr.
  it.each([
    { name: 'producer --urls http://u:secret@h:15672', args: ['producer', '--urls', 'http://u:secret@h:15672'] },
    { name: 'producer --urls amqp//u:secret@h', args: ['producer', '--urls', 'amqp//u:secret@h'] },
    { name: 'verify --urls <good>,<http>', args: ['verify', '--ledger', 'r.json', '--urls', 'amqp://u:secret@h:5672,http://u:secret@h:15672'] },
  ])('$name: rejected without printing the password', async ({ args }) => {
    const { calls, err } = await parse(args);
    expect(err).toBeInstanceOf(CommanderError);
    expect(calls).toEqual([]);
    expect(stderr.join('')).not.toBe('');
    expect(stderr.join('')).not.toContain('secret');
  });
});
