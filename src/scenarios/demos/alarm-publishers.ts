import type { Channel } from 'amqplib';
import path from 'node:path';
import { closeChannelWithin, closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { Pacer } from '../../client/pacer.js';
import { newRunId, runPublisher } from '../../client/amqp091/publisher.js';
import type { PublisherResult } from '../../client/publisher-result.js';
import type { NodeSpec } from '../../config.js';
import type { Context } from '../../context.js';
import { errorMessage } from '../../errors.js';
import { Ledger } from '../../ledger/ledger.js';
import { maskUrl } from '../../url.js';
import { loadExeca } from '../../util/exec.js';
import { systemClock } from '../../util/retry.js';
import type { AlarmDemoOptions, PublisherInput, PublisherRole } from './alarm-plan.js';
import { parseChildLine } from '../crashes/producer-crash-plan.js';

/**
 * alarm-demo's five publishers, each on its own connection to ALARM_QUEUE: rmq-bench's own with
 * async confirms (one with a blocked deadline, one that waits), a naive amqplib one without
 * confirms, and `rmq-bench producer --confirms=false` as a child process (stopped by SIGTERM or
 * SIGKILL during the alarm). Each fills in its PublisherInput as it goes and when it ends.
 */

export const ALARM_QUEUE = 'rmq-bench.alarm-demo';

export interface Lane {
  input: PublisherInput;
  /** Resolves when the publisher has finished (or was stopped). */
  done: Promise<void>;
  /** Distinct messages sent so far (sampler). */
  sentNow: () => number;
}

/** A child process's lane: stopped by its signal, and `started` once it has published. */
export type ChildLane = Lane & { kill(): void; started: Promise<void> };

/** The time base of the demo: ms since t0. */
type Now = () => number;

function blankInput(role: PublisherRole, node: NodeSpec, url: string, runId: string): PublisherInput {
  return {
    role,
    node: node.name,
    url: maskUrl(url),
    runId,
    sent: 0,
    sentWhileBlocked: 0,
    seqAtBlock: null,
    confirmedSeqs: null,
    indeterminate: null,
    blockedAtMs: null,
    unblockedAtMs: null,
    gaveUpAtMs: null,
    gaveUp: null,
    completed: false,
    longestStallMs: null,
    flush: null,
    maxBufferedBytes: null,
    exit: null,
    arrivals: [],
  };
}

/** rmq-bench's own publisher with async confirms, until `stop` (or its blocked timeout). */
export function startOurs(
  role: 'deadline' | 'waits',
  node: NodeSpec,
  url: string,
  o: AlarmDemoOptions,
  blockedTimeoutMs: number,
  count: number,
  signals: { signal: AbortSignal; stop: AbortSignal },
  now: Now,
): Lane {
  const runId = newRunId();
  const input = blankInput(role, node, url, runId);
  const ledger = new Ledger({ runId, capacity: count });
  let written = 0;
  const done = runPublisher(
    {
      urls: [url],
      startIndex: 0,
      exchange: '',
      routingKey: ALARM_QUEUE,
      count,
      ratePerSec: o.ratePerSec,
      sizeBytes: o.sizeBytes,
      persistent: true,
      mandatory: false,
      mode: 'async',
      window: 256,
      batchSize: 100,
      confirmTimeoutMs: 5_000,
      heartbeatS: 5,
      reconnectTimeoutMs: 15_000,
      blockedTimeoutMs,
      flushTimeoutMs: 5_000,
      runId,
    },
    ledger,
    {
      signal: signals.signal,
      stop: signals.stop,
      onWritten: (n) => {
        written = n;
      },
      onEvent: (e) => {
        if (e.type === 'blocked') input.blockedAtMs ??= now();
        if (e.type === 'unblocked') input.unblockedAtMs ??= now();
        if (e.type === 'gave-up') input.gaveUpAtMs ??= now();
      },
    },
  ).then((r: PublisherResult) => {
    input.sent = r.written;
    input.confirmedSeqs = [];
    for (let seq = 0; seq < ledger.attempted; seq++) if (ledger.has(seq, 'confirmed')) input.confirmedSeqs.push(seq);
    input.indeterminate = r.written - input.confirmedSeqs.length;
    input.gaveUp = r.gaveUp;
    input.completed = r.completed;
    input.longestStallMs = r.longestStallMs;
    input.flush = r.flush ?? null;
  });
  return { input, done, sentNow: () => written };
}

/**
 * The publisher most tutorials write without confirms: a connection, a channel, publish() on a
 * timer, no listener for connection.blocked. It records the block only to report it, and
 * keeps publishing; amqplib buffers what the broker does not read.
 */
export async function startNaive(ctx: Context, node: NodeSpec, url: string, o: AlarmDemoOptions, stop: AbortSignal, now: Now): Promise<Lane> {
  const runId = newRunId();
  const input = blankInput('naive', node, url, runId);
  input.maxBufferedBytes = 0;
  const c = await connectAny([url], 0, { heartbeatS: 5, timeoutMs: 15_000, signal: ctx.signal, connectionName: 'rmq-bench alarm-demo naive' });
  c.connection.on('error', () => undefined);
  let blocked = false;
  c.connection.on('blocked', () => {
    blocked = true;
    input.blockedAtMs ??= now();
    input.seqAtBlock ??= input.sent;
  });
  c.connection.on('unblocked', () => {
    blocked = false;
    input.unblockedAtMs ??= now();
  });
  const ch: Channel = await c.connection.createChannel();
  ch.on('error', () => undefined);
  const stream = (c.connection as unknown as { connection?: { stream?: { writableLength?: number } } }).connection?.stream;
  const body = Buffer.alloc(o.sizeBytes, 0x61);
  const pacer = new Pacer(o.ratePerSec, systemClock);
  const done = (async () => {
    try {
      while (!stop.aborted) {
        await pacer.pace(stop).catch(() => undefined);
        if (stop.aborted) break;
        ch.publish('', ALARM_QUEUE, body, { messageId: `${runId}-${input.sent}`, persistent: true });
        input.sent++;
        if (blocked) input.sentWhileBlocked++;
        input.maxBufferedBytes = Math.max(input.maxBufferedBytes ?? 0, stream?.writableLength ?? 0);
      }
      // The end: its buffer goes out once the broker reads again (the channel's close-ok says it has).
      const r = await closeChannelWithin(ch, 60_000);
      input.completed = r === 'closed';
    } finally {
      await closeWithin(c.connection);
    }
  })();
  return { input, done, sentNow: () => input.sent };
}

/** `rmq-bench producer --confirms=false` as a child process; stopped by `signal` `killAfterMs` into the alarm. */
export async function startChild(
  ctx: Context,
  role: 'sigterm' | 'sigkill',
  node: NodeSpec,
  url: string,
  o: AlarmDemoOptions,
  count: number,
  killed: Set<{ kill(s: NodeJS.Signals): boolean }>,
): Promise<ChildLane> {
  const execa = await loadExeca();
  const runId = newRunId();
  const input = blankInput(role, node, url, runId);
  const bin = path.join(ctx.config.projectRoot, 'bin', 'rmq-bench.js');
  const args = [
    bin,
    'producer',
    '--confirms=false',
    '--urls',
    url,
    '--queue',
    ALARM_QUEUE,
    '--exchange',
    '',
    '--routing-key',
    ALARM_QUEUE,
    '-n',
    String(count),
    '--rate',
    String(o.ratePerSec),
    '--size',
    String(o.sizeBytes),
    '--run-id',
    runId,
    '--progress-lines',
    '--flush-timeout',
    `${o.flushTimeoutMs}ms`,
    '--blocked-timeout',
    `${o.holdMs + 60_000}ms`,
    '--json',
  ];
  const child = execa('node', args, {
    cwd: ctx.config.projectRoot,
    reject: false,
    stdin: 'ignore',
    env: { RMQ_BENCH_QUIET: '1' },
    timeout: 600_000,
    // SIGTERM: the producer flushes (--flush-timeout), closes, reports; only a hang past that is killed.
    forceKillAfterDelay: o.flushTimeoutMs + 15_000,
  });
  killed.add(child);
  let position = 0;
  let partial = '';
  let json = '';
  let resolveStarted!: () => void;
  const started = new Promise<void>((r) => (resolveStarted = r));
  child.stdout?.on('data', (chunk: Buffer | string) => {
    const lines = (partial + String(chunk)).split('\n');
    partial = lines.pop() ?? '';
    for (const raw of lines) {
      if (json !== '' || raw.startsWith('{')) {
        json += `${raw}\n`;
        continue;
      }
      const l = parseChildLine(raw);
      if (l?.kind === 'at') {
        position = Math.max(position, l.n);
        if (position > 0) resolveStarted();
      }
    }
  });
  const done = child.then((r) => {
    killed.delete(child);
    json += partial;
    input.exit = r.signal ? String(r.signal) : `exit ${r.exitCode}`;
    input.sent = position;
    if (json.trim() !== '') {
      try {
        const doc = JSON.parse(json) as Partial<PublisherResult>;
        input.sent = doc.written ?? position;
        input.flush = doc.flush ?? null;
        input.completed = doc.completed === true;
      } catch (err) {
        ctx.log(`${role}: its JSON did not parse: ${errorMessage(err)}`);
      }
    }
    resolveStarted();
  });
  const signal: NodeJS.Signals = role === 'sigterm' ? 'SIGTERM' : 'SIGKILL';
  return { input, done, sentNow: () => position, kill: () => void child.kill(signal), started };
}
