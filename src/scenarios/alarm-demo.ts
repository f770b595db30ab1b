import type { Channel } from 'amqplib';
import path from 'node:path';
import { closeChannelWithin, closeWithin, connectAny } from '../amqp/connect.js';
import { runConsumer } from '../amqp/consumer.js';
import { Pacer } from '../amqp/pacer.js';
import { newRunId, publishConfirmed, runPublisher, type PublisherResult } from '../amqp/publisher.js';
import { raiseAlarm, type AlarmHandle } from '../cluster/alarms.js';
import { requireCluster } from '../cluster/cluster.js';
import { amqpUrl, type NodeSpec } from '../config.js';
import type { Context } from '../context.js';
import { InterruptedError, UsageError, errorMessage } from '../errors.js';
import { Ledger, parseMessageId } from '../ledger/ledger.js';
import { maskUrl } from '../url.js';
import { loadExeca } from '../util/exec.js';
import { systemClock } from '../util/retry.js';
import {
  assessAlarmDemo,
  countPublisher,
  type AlarmDemoOptions,
  type AlarmDemoResult,
  type AlarmSample,
  type AlarmTimeline,
  type PublisherInput,
  type PublisherRole,
} from './alarm-plan.js';
import { parseChildLine } from './producer-crash-plan.js';

/**
 * alarm-demo: a resource alarm raised on one node, measured from the clients' side. Five
 * publishers on their own connections (rmq-bench's with a deadline, rmq-bench's that waits, a
 * naive amqplib one without confirms, and two `rmq-bench producer --confirms=false` children,
 * one stopped with SIGTERM and one killed with SIGKILL during the alarm) and rmq-bench's
 * consumer on the alarmed node, reading a backlog. Every message is counted at the consumer.
 * Returns data; never prints. The alarm is cleared and the queue deleted on every way out.
 */

export const ALARM_QUEUE = 'rmq-bench.alarm-demo';

type Step = (title: string) => Promise<void>;

/** Where each publisher connects: the deadline publisher to the alarmed node, the rest spread over the others. */
export function nodesFor(nodes: readonly NodeSpec[], alarmed: string): Record<PublisherRole | 'consumer', NodeSpec> {
  const target = nodes.find((n) => n.name === alarmed);
  if (!target) throw new UsageError(`--node ${alarmed} is not a node of this cluster (${nodes.map((n) => n.name).join(', ')})`);
  const others = nodes.filter((n) => n !== target);
  const other = (i: number): NodeSpec => others[i % others.length] ?? target;
  return { deadline: target, consumer: target, waits: other(0), naive: other(1), sigterm: other(0), sigkill: other(1) };
}

interface Lane {
  input: PublisherInput;
  /** Resolves when the publisher has finished (or was stopped). */
  done: Promise<void>;
  /** Distinct messages sent so far (sampler). */
  sentNow: () => number;
}

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
function startOurs(
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
async function startNaive(ctx: Context, node: NodeSpec, url: string, o: AlarmDemoOptions, stop: AbortSignal, now: Now): Promise<Lane> {
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
async function startChild(
  ctx: Context,
  role: 'sigterm' | 'sigkill',
  node: NodeSpec,
  url: string,
  o: AlarmDemoOptions,
  count: number,
  killed: Set<{ kill(s: NodeJS.Signals): boolean }>,
): Promise<Lane & { kill(): void; started: Promise<void> }> {
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

export async function runAlarmDemo(ctx: Context, o: AlarmDemoOptions, step: Step): Promise<AlarmDemoResult> {
  await requireCluster(ctx);
  const { config } = ctx;
  const overview = (await ctx.management.get('/api/overview')) as { rabbitmq_version?: string };
  const brokerVersion = overview.rabbitmq_version ?? 'unknown';
  const where = nodesFor(config.nodes, o.node);
  const urlOf = (n: NodeSpec): string => amqpUrl(config, n);
  const allUrls = config.nodes.map(urlOf);
  const admin = await connectAny(allUrls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench alarm-demo' });
  admin.connection.on('error', () => undefined);
  const stopPublishers = new AbortController();
  const stopConsumer = new AbortController();
  const children = new Set<{ kill(s: NodeJS.Signals): boolean }>();
  let alarm: AlarmHandle | undefined;
  let declared = false;
  const lanes: Lane[] = [];
  let stopSampler = (): void => undefined;
  let consumer: Promise<unknown> | undefined;
  try {
    const ch = await admin.connection.createChannel();
    ch.on('error', () => undefined);
    await step(`setup: a fresh quorum queue ${ALARM_QUEUE}, and ${o.backlog} confirmed messages in it (a backlog for the consumer to read during the alarm)`);
    await ch.deleteQueue(ALARM_QUEUE);
    await ch.assertQueue(ALARM_QUEUE, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    declared = true;
    const backlogRun = newRunId();
    const backlogLedger = new Ledger({ runId: backlogRun, capacity: Math.max(1, o.backlog) });
    if (o.backlog > 0) {
      await publishConfirmed({ urls: allUrls, exchange: '', routingKey: ALARM_QUEUE, count: o.backlog, runId: backlogRun, signal: ctx.signal }, backlogLedger);
    }

    const totalMs = o.beforeMs + o.holdMs + o.afterMs + 60_000;
    const count = Math.ceil((o.ratePerSec * totalMs) / 1000);
    await step(
      `five publishers at ${o.ratePerSec} msg/s each, on their own connections: ${(['deadline', 'waits', 'naive', 'sigterm', 'sigkill'] as const)
        .map((r) => `${r} → ${where[r].name}`)
        .join(', ')}`,
    );
    const t0 = performance.now();
    const now: Now = () => performance.now() - t0;
    const pubSignals = { signal: ctx.signal, stop: stopPublishers.signal };
    const deadline = startOurs('deadline', where.deadline, urlOf(where.deadline), o, o.deadlineMs, count, pubSignals, now);
    const waits = startOurs('waits', where.waits, urlOf(where.waits), o, o.holdMs + 60_000, count, pubSignals, now);
    const naive = await startNaive(ctx, where.naive, urlOf(where.naive), o, AbortSignal.any([ctx.signal, stopPublishers.signal]), now);
    const term = await startChild(ctx, 'sigterm', where.sigterm, urlOf(where.sigterm), o, count, children);
    const kill = await startChild(ctx, 'sigkill', where.sigkill, urlOf(where.sigkill), o, count, children);
    lanes.push(deadline, waits, naive, term, kill);
    // The children publish before the alarm: a child still starting when it is raised would be blocked at its first message.
    await Promise.race([Promise.all([term.started, kill.started]), systemClock.sleep(30_000, ctx.signal)]);

    const samples: AlarmSample[] = [];
    let delivered = 0;
    const sampler = setInterval(() => {
      const sent: Partial<Record<PublisherRole, number>> = {};
      for (const l of lanes) sent[l.input.role] = l.sentNow();
      samples.push({ tMs: now(), sent, delivered });
    }, 250);
    stopSampler = () => clearInterval(sampler);

    await systemClock.sleep(o.beforeMs, ctx.signal);
    await step(
      `raise a ${o.alarm} alarm on ${o.node} (${o.alarm === 'memory' ? 'vm_memory_high_watermark 1 MB' : 'disk_free_limit 1,000,000 GB'}); rmq-bench's consumer starts reading on ${where.consumer.name}`,
    );
    const t = (at: number): number => at - t0;
    alarm = await raiseAlarm(ctx, config.nodes.find((n) => n.name === o.node)!, o.alarm);
    const timeline: AlarmTimeline = { raiseAtMs: t(alarm.commandAt), raisedAtMs: t(alarm.raisedAt), clearAtMs: null, clearedAtMs: null };
    ctx.progress.info(`${o.alarm} alarm on ${o.node} reported ${((alarm.raisedAt - alarm.commandAt) / 1000).toFixed(2)} s after its limit was set`);

    const arrivals = new Map<string, { seq: number; atMs: number }[]>();
    let lastDeliveryAt = now();
    consumer = runConsumer(
      {
        urls: [urlOf(where.consumer)],
        queue: ALARM_QUEUE,
        prefetch: 100,
        autoAck: false,
        crashOnDelivery: false,
        failure: undefined,
        workMs: 0,
        ackEvery: 1,
        count: undefined,
        idleTimeoutMs: 600_000,
        heartbeatS: 5,
        reconnectTimeoutMs: 15_000,
        store: undefined,
      },
      {
        signal: AbortSignal.any([ctx.signal, stopConsumer.signal]),
        onDelivery: (d) => {
          const id = parseMessageId(String(d.messageId ?? ''));
          if (!id) return;
          delivered++;
          lastDeliveryAt = now();
          const list = arrivals.get(id.runId) ?? [];
          if (list.length === 0) arrivals.set(id.runId, list);
          list.push({ seq: id.seq, atMs: lastDeliveryAt });
        },
      },
    );

    // The children are stopped killAfterMs into the alarm; the hold runs from the alarm's report.
    await systemClock.sleep(o.killAfterMs, ctx.signal);
    term.kill();
    kill.kill();
    ctx.progress.info(`SIGTERM and SIGKILL sent to the two producer children, ${(o.killAfterMs / 1000).toFixed(1)} s into the alarm`);
    await systemClock.sleep(Math.max(0, o.holdMs - o.killAfterMs), ctx.signal);
    await step(
      `clear the alarm (${o.alarm === 'memory' ? 'vm_memory_high_watermark back to 0.6' : 'disk_free_limit back to 200MB'}); publishing goes on for ${o.afterMs} ms`,
    );
    await alarm.clear();
    timeline.clearAtMs = t(alarm.clearCommandAt!);
    timeline.clearedAtMs = t(alarm.clearedAt!);
    await systemClock.sleep(o.afterMs, ctx.signal);

    await step(`stop the publishers; the consumer reads until nothing has come for ${o.quietMs} ms`);
    stopPublishers.abort();
    await Promise.all(lanes.map((l) => l.done));
    const quietDeadline = performance.now() + 60_000;
    while (now() - lastDeliveryAt < o.quietMs && performance.now() < quietDeadline) await systemClock.sleep(100, ctx.signal);
    const stillDelivering = now() - lastDeliveryAt < o.quietMs;
    stopConsumer.abort();
    await consumer;
    stopSampler();
    if (ctx.signal.aborted) throw new InterruptedError();
    const leftInQueue = (await ch.checkQueue(ALARM_QUEUE)).messageCount;

    const backlogArrivals = arrivals.get(backlogRun) ?? [];
    const backlogSeen = new Set(backlogArrivals.map((a) => a.seq));
    const clearAt = timeline.clearAtMs ?? Number.POSITIVE_INFINITY;
    const publishers = lanes.map((l) => countPublisher({ ...l.input, arrivals: arrivals.get(l.input.runId) ?? [] }, timeline));
    const consumerRun = {
      node: where.consumer.name,
      backlogDuringAlarm: backlogArrivals.filter((a) => a.atMs >= timeline.raisedAtMs && a.atMs < clearAt).length,
      backlogArrived: backlogSeen.size,
      backlogMissing: o.backlog - [...backlogSeen].filter((s) => s < o.backlog).length,
      deliveries: delivered,
      leftInQueue,
    };
    const verdict = assessAlarmDemo(o, timeline, publishers, consumerRun);
    if (stillDelivering) {
      verdict.problems.push(`deliveries were still coming 60 s after the publishers stopped: the counts are not final`);
      verdict.ok = false;
    }
    return { ...o, brokerVersion, queue: ALARM_QUEUE, timeline, publishers, consumer: consumerRun, samples, ...verdict, interrupted: false };
  } finally {
    stopSampler();
    for (const c of children) c.kill('SIGKILL');
    stopPublishers.abort();
    stopConsumer.abort();
    if (alarm) {
      await alarm.clear().catch((err: unknown) => ctx.log(`could not clear the ${o.alarm} alarm on ${o.node}: ${errorMessage(err)}; run rmq-bench cluster up`));
    }
    await Promise.allSettled([...lanes.map((l) => l.done), ...(consumer ? [consumer] : [])]);
    if (declared) {
      try {
        const ch = await admin.connection.createChannel();
        await ch.deleteQueue(ALARM_QUEUE);
      } catch (err) {
        ctx.log(`could not delete ${ALARM_QUEUE}: ${errorMessage(err)}`);
      }
    }
    await closeWithin(admin.connection);
  }
}
