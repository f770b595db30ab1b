import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { parseWorkshop, splitArgs } from '../../scripts/workshop.mjs';
import { captureOutput, invocationOf, parse } from './program-harness.js';

/**
 * Every command line the integration tests, the scripts, the workshop, the help examples and the
 * scenarios' child processes run, parsed by createProgram with a dispatch that only records: when
 * a flag's syntax changes, a caller that was not updated fails here, without a cluster. Values the
 * tests compute (queue names, files in a temporary folder) stand in as samples.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const TMP = os.tmpdir();
const f = (name: string): string => path.join(TMP, name);
const q = 'it.queue';
const AMQP = 'amqp://demo:demo@127.0.0.1:5673';

/** test/integration/*.test.ts: each runCli / execa argv (the ones that must run). */
const INTEGRATION: string[][] = [
  ['producer', '--queue', q, '--exchange', '', '--urls', AMQP, '--json', '-n', '200', '--rate', '100', '--blocked-timeout', '2s', '--confirm-timeout', '500ms'],
  ['producer', '--queue', q, '--exchange', '', '--urls', AMQP, '--json', '-n', '300', '--rate', '100', '--confirm-timeout', '1s'],
  ['producer', '--queue', q, '--exchange', '', '--urls', AMQP, '--json', '-n', '1000', '--rate', '100', '--confirms=false', '--flush-timeout', '1s'],
  ['alarm-demo', '--auto', '--hold', '60s', '--deadline', '3s', '--kill-after', '30s'],
  ['audit', '--json'],
  ['audit', '--management-url', 'http://demo:s3cret@127.0.0.1:1'],
  ['audit', '--json', '--management-url', 'http://demo:demo@127.0.0.1:1,http://127.0.0.1:15674'],
  ['bench', '-C', '300', '-x', '2', '-y', '2', '--batch-size', '50', '--window', '16,64', '--multi-ack-every', '10', '--json', '--csv', f('samples.csv')],
  ['bench', '--mode', 'tx,batch,async', '--batch-size', '30', '-z', '3s', '-r', '500', '-y', '0', '--json'],
  ['bench', '--mode', 'async,sync', '-z', '60s', '-r', '200', '--json'],
  [
    'chaos',
    '--duration',
    '3m',
    '--interval',
    '2m',
    '--hold',
    '90s',
    '--faults',
    'pause',
    '--producers',
    '1',
    '--consumers',
    '1',
    '--queues',
    '1',
    '--rate',
    '100',
    '--queue-prefix',
    'it.chaos',
    '--json',
  ],
  ['cluster', 'status', '--json'],
  ['cluster', 'up', '--json'],
  ['cluster', 'up'],
  ['failover', '--queue', 'no.such.queue'],
  ['compare', '--mode', 'on', '--queue', q, '-n', '100000', '--rate', '500', '--fault', 'pause', '--fault-at', '0.01', '--restore-after', '30s', '--json'],
  [
    'compare',
    '--mode',
    'on',
    '--queue',
    q,
    '-n',
    '3000',
    '--fault',
    'kill',
    '--urls',
    AMQP,
    '--management-url',
    'http://127.0.0.1:15672',
    '--fault-cmd',
    'docker kill {host}',
    '--restore-cmd',
    'docker start {host}',
    '--json',
  ],
  ['consumer-timeout-demo', '--via', 'policy', '--timeout', '20s', '--slow-work', '30s', '--auto'],
  ['consumer', '--queue', q, '--nack', '--idle-timeout', '3s', '--json'],
  ['consumer', '--queue', q, '--on-failure', 'reject-requeue', '--fail-first', '3', '-n', '1', '--idle-timeout', '3s', '--json'],
  ['consumer', '--queue', q, '--idempotent', '--store', f('idem.sqlite'), '--idle-timeout', '2s', '--json'],
  ['consumer', '--queue', 'no.such.queue.here', '--idle-timeout', '1s'],
  ['consumer', '--queue', q, '--work', '50ms', '--prefetch', '20', '--json'],
  ['consumer', '--queue', q, '--urls', AMQP, '--work', '10ms', '--store', f('resilience.sqlite'), '--idle-timeout', '4s', '--heartbeat', '2s', '--json'],
  ['delayed-retry-demo', '--type', 'failed', '--min', '500ms', '--max', '1200ms', '-n', '2', '--returns', '4', '--auto', '--json'],
  ['delayed-retry-demo', '--type', 'returned', '--via', 'arguments', '--min', '400ms', '--max', '1000ms', '-n', '2', '--returns', '3', '--auto', '--json'],
  ['delayed-retry-demo', '--skip-setup', '--min', '500ms', '--max', '1000ms', '-n', '1', '--returns', '2', '--auto', '--json'],
  ['delayed-retry-demo', '--min', '20s', '--max', '60s', '-n', '1', '--auto'],
  ['dlq-demo', '--reason', 'delivery_limit', '--auto', '--json'],
  ['dlq-demo', '--strategy', 'at-least-once', '-n', '50', '--hold', '8s', '--auto', '--json'],
  ['dlq-demo', '--reason', 'rejected', '-n', '6', '--auto'],
  ['dlq', 'inspect', '--json'],
  ['dlq', 'replay', '--to', q, '--crash-after', '3'],
  ['dlq', 'replay', '--to', q, '--filter', 'reason=rejected', '--json'],
  ['durability-demo', '-n', '200', '--how', 'kill', '--auto', '--json'],
  ['failover', '--queue', q, '--fault', 'kill', '--json'],
  ['failover', '--queue', q, '--fault', 'pause', '--no-restore', '--json'],
  ['compare', '-n', '3000', '--html', f('r.html'), '--json'],
  ['delayed-retry-demo', '--type', 'failed', '--min', '300ms', '--max', '600ms', '-n', '2', '--returns', '2', '--auto', '--html', f('d.html')],
  ['retry-demo', '--backoff', '300ms,300ms', '--failures', '1', '--tolerance', '0ms', '--auto', '--html', f('r.html')],
  ['bench', '--mode', 'sync,async', '-C', '300', '--html', f('b.html')],
  ['failover', '--queue', q, '--fault', 'partition', '--restore-after', '12s', '--json'],
  ['compare', '--mode', 'on', '--queue', q, '-n', '4000', '--rate', '200', '--fault', 'partition', '--fault-at', '0.05', '--restore-after', '40s', '--json'],
  ['failover', '--queue', q, '--fault', 'latency', '--latency', '300ms', '--loss', '1%', '--json'],
  ['failover', '--queue', q, '--fault', 'partition', '--no-restore', '--json'],
  ['producer', '--outbox', f('o.sqlite'), '-n', '500', '-r', '100', '--queue', q, '--exchange', '', '--progress-lines'],
  ['producer', '--outbox', f('o.sqlite'), '-n', '500', '-r', '0', '--queue', q, '--exchange', '', '--json'],
  ['producer-crash', '--modes', 'outbox', '-n', '1500', '--kills', '3', '--seed', '3', '--json'],
  ['producer-crash', '--modes', 'naive', '-n', '1500', '--kills', '3', '--print-every', '50', '--seed', '11', '--json'],
  ['producer-crash', '-n', '1000', '--kills', '2', '--seed', '5', '--fault', 'kill', '--json'],
  ['compare', '--mode', 'on', '--queue', q, '-n', '3000', '--fault', 'kill', '--fault-at', '0.3', '--json'],
  ['producer', '-n', '50', '--rate', '0', '--queue', q, '--exchange', '', '--routing-key', 'no.such.route', '--mandatory', '--report', f('m.json'), '--json'],
  ['producer', '-n', '250', '--rate', '0', '--tx', '--batch-size', '100', '--queue', q, '--exchange', '', '--report', f('tx.json'), '--json'],
  ['producer', '-n', '2000', '--rate', '0', '--window', '8', '--queue', q, '--exchange', '', '--report', f('w.json'), '--json'],
  ['producer', '-n', '5', '--urls', 'amqp://demo:s3cret@127.0.0.1:1', '--reconnect-timeout', '1s'],
  ['verify', '--report', f('w.json'), '--idle', '500ms', '--json'],
  ['compare', '--mode', 'on', '--queue', q, '-n', '3000', '--rate', '500', '--fault', 'quorum-loss', '--fault-at', '0.1', '--json'],
  ['report', TMP, '-o', f('index.html'), '--json'],
  ['retry-demo', '--auto', '--failures', '1', '--tolerance', '0ms', '--json'],
  ['retry-demo', '--backoff', '1s,2s,3s', '--time-scale', '0.5', '--auto', '--json'],
  ['watch', '--once', '--json', '--match', '^it\\.'],
  ['watch', '--once', '--json', '--match', '^it\\.', '--management-url', 'http://demo:demo@127.0.0.1:1,http://127.0.0.1:15673'],
  ['watch', '--interval', '500ms', '--match', '^it\\.'],
];

/** src/scenarios/producer-crash.ts: the producer child's arguments both modes share (`common`). */
const CRASH_CHILD = ['producer', '--queue', q, '--exchange', '', '--routing-key', q, '-n', '2000', '--rate', '0', '--run-id', 'abc123', '--progress-lines'];

/** The scenarios' own children (src/scenarios/alarm-demo.ts, consumer-crash.ts, producer-crash.ts), as they build them. */
const CHILDREN: string[][] = [
  [
    'producer',
    '--confirms=false',
    '--urls',
    AMQP,
    '--queue',
    'rmq-bench.alarm-demo',
    '--exchange',
    '',
    '--routing-key',
    'rmq-bench.alarm-demo',
    '-n',
    '1000',
    '--rate',
    '100',
    '--size',
    '100',
    '--run-id',
    'abc123',
    '--progress-lines',
    '--flush-timeout',
    '2000ms',
    '--blocked-timeout',
    '68000ms',
    '--json',
  ],
  ['consumer', '--queue', q, '--work', '2ms', '--idle-timeout', '3000ms', '--store', f('s.sqlite'), '--autoack'],
  ['consumer', '--queue', q, '--work', '2ms', '--prefetch', '50', '--multi-ack-every', '10', '--idle-timeout', '3000ms', '--store', f('s.sqlite')],
  [
    'consumer',
    '--queue',
    q,
    '--work',
    '2ms',
    '--prefetch',
    '50',
    '--multi-ack-every',
    '10',
    '--idle-timeout',
    '3000ms',
    '--store',
    f('s.sqlite'),
    '--idempotent',
  ],
  // producer-crash's child: one common part, then the naive mode's tail or the outbox mode's.
  [...CRASH_CHILD, '--start-at', '0', '--print-sent', '100'],
  [...CRASH_CHILD, '--outbox', f('o.sqlite')],
];

/** scripts/smoke.sh: `step <name> <args...>` (each run with --json). */
function smokeSteps(): string[][] {
  return readFileSync(path.join(ROOT, 'scripts', 'smoke.sh'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('step ') && !l.startsWith('step()'))
    .map((l) => [...splitArgs(l).slice(2), '--json']);
}

/** docs/WORKSHOP.md's runnable commands. */
function workshopCommands(): string[][] {
  return parseWorkshop(readFileSync(path.join(ROOT, 'docs', 'WORKSHOP.md'), 'utf8')).flatMap((b) => b.commands.map((c) => c.args));
}

/** Every command's --help examples. */
function helpExamples(): string[][] {
  const all: string[] = [];
  const walk = (c: Command): void => {
    const out: string[] = [];
    c.configureOutput({ writeOut: (s) => out.push(s), writeErr: (s) => out.push(s) });
    c.outputHelp();
    for (const line of out.join('').split('\n')) {
      const m = /^\s+\$ rmq-bench (.*)$/.exec(line);
      if (m) all.push(m[1]!);
    }
    c.commands.forEach(walk);
  };
  walk(createProgram(async () => undefined));
  return [...new Set(all)].map(splitArgs);
}

// commander's messages for the refused lines, kept out of the test log.
captureOutput();

describe('every command line the project runs still parses', () => {
  it.each([
    ...INTEGRATION.map((args) => ({ from: 'integration', args })),
    ...CHILDREN.map((args) => ({ from: 'child', args })),
    ...smokeSteps().map((args) => ({ from: 'smoke.sh', args })),
    ...workshopCommands().map((args) => ({ from: 'WORKSHOP.md', args })),
    ...helpExamples().map((args) => ({ from: '--help', args })),
  ])('$from: $args', async ({ args }) => {
    await invocationOf(args); // parses, and dispatches exactly one command
  });

  // The integration tests' bad invocations: still refused at the edge (exit 2 through main), nothing run.
  it.each([
    ['consumer', '--nack', '--autoack'],
    ['bench', '--mode', 'sync', '--window', '64'],
    ['bench', '--mode', 'async', '-C', '10', '--csv', f('no-such-dir/x.csv')],
    ['compare', '--html', f('missing/r.html')],
    ['dlq-demo', '--hold', '5s'],
    ['producer-crash', '-n', '10', '--kills', '20'],
    ['watch', '--json'],
    ['failover', '--fault', 'nuke'],
    ['audit', '--management-url', 'localhost:15672'],
  ])('refused: %j', async (...args) => {
    expect((await parse(args)).err).toBeInstanceOf(Error);
  });

  it('finds the scripts, the workshop and the examples (not an empty table)', () => {
    expect(smokeSteps().length).toBeGreaterThan(8);
    expect(workshopCommands().length).toBeGreaterThan(10);
    expect(helpExamples().length).toBeGreaterThan(40);
  });
});
