import type { Channel } from 'amqplib';
import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { consumerOptions } from '../../client/consumer-defaults.js';
import { runConsumer } from '../../client/amqp091/consumer.js';
import { newRunId, publishConfirmed } from '../../client/amqp091/publisher.js';
import { raiseAlarm, type AlarmHandle } from '../../cluster/broker/alarms.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { amqpUrl, type NodeSpec } from '../../config.js';
import type { Context } from '../../context.js';
import { InterruptedError, UsageError, errorMessage } from '../../errors.js';
import { Ledger, parseMessageId } from '../../ledger/ledger.js';
import { systemClock } from '../../util/retry.js';
import {
  assessAlarmDemo,
  countPublisher,
  type AlarmDemoOptions,
  type AlarmDemoResult,
  type AlarmSample,
  type AlarmTimeline,
  type PublisherRole,
} from './alarm-plan.js';
import { ALARM_QUEUE, type ChildLane, type Lane, startChild, startNaive, startOurs } from './alarm-publishers.js';

/**
 * alarm-demo: a resource alarm raised on one node, measured from the clients' side. Five
 * publishers on their own connections (rmq-bench's with a deadline, rmq-bench's that waits, a
 * naive amqplib one without confirms, and two `rmq-bench producer --confirms=false` children,
 * one stopped with SIGTERM and one killed with SIGKILL during the alarm) and rmq-bench's
 * consumer on the alarmed node, reading a backlog. Every message is counted at the consumer.
 * Returns data; never prints. The alarm is cleared and the queue deleted on every way out.
 */

type Step = (title: string) => Promise<void>;

/** Where each publisher connects: the deadline publisher to the alarmed node, the rest spread over the others. */
export function nodesFor(nodes: readonly NodeSpec[], alarmed: string): Record<PublisherRole | 'consumer', NodeSpec> {
  const target = nodes.find((n) => n.name === alarmed);
  if (!target) throw new UsageError(`--node ${alarmed} is not a node of this cluster (${nodes.map((n) => n.name).join(', ')})`);
  const others = nodes.filter((n) => n !== target);
  const other = (i: number): NodeSpec => others[i % others.length] ?? target;
  return { deadline: target, consumer: target, waits: other(0), naive: other(1), sigterm: other(0), sigkill: other(1) };
}

export async function runAlarmDemo(ctx: Context, o: AlarmDemoOptions, step: Step): Promise<AlarmDemoResult> {
  await requireCluster(ctx);
  const { config } = ctx;
  const overview = (await ctx.management.get('/api/overview')) as { rabbitmq_version?: string };
  const brokerVersion = overview.rabbitmq_version ?? 'unknown';
  const where = nodesFor(config.nodes, o.node);
  const urlOf = (n: NodeSpec): string => amqpUrl(config, n);
  const admin = await connectAny(config.nodes.map(urlOf), 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench alarm-demo' });
  admin.connection.on('error', () => undefined);
  const demo = new AlarmDemo(ctx, o, step, where, urlOf, admin.connection);
  try {
    const ch = await admin.connection.createChannel();
    ch.on('error', () => undefined);
    const backlogRun = await demo.setUp(ch);
    await demo.startPublishers();
    await systemClock.sleep(o.beforeMs, ctx.signal);
    const timeline = await demo.raiseAlarm();
    demo.startConsumer();
    await demo.stopChildrenDuringAlarm();
    await demo.clearAlarm(timeline);
    const stillDelivering = await demo.stopAndDrain();
    if (ctx.signal.aborted) throw new InterruptedError();
    const leftInQueue = (await ch.checkQueue(ALARM_QUEUE)).messageCount;
    return demo.result(brokerVersion, backlogRun, timeline, { leftInQueue, stillDelivering });
  } finally {
    await demo.cleanUp();
  }
}

type AdminConnection = Awaited<ReturnType<typeof connectAny>>['connection'];

/** The demo's steps in order, and what they leave for the end: the cleanup, and the counts. */
class AlarmDemo {
  private readonly stopPublishers = new AbortController();
  private readonly stopConsumer = new AbortController();
  private readonly children = new Set<{ kill(s: NodeJS.Signals): boolean }>();
  private alarm: AlarmHandle | undefined;
  private declared = false;
  private readonly lanes: Lane[] = [];
  private stopSampler = (): void => undefined;
  private consumer: Promise<unknown> | undefined;
  /** The children, once started: stopped killAfterMs into the alarm. */
  private term: ChildLane | undefined;
  private kill: ChildLane | undefined;
  private readonly samples: AlarmSample[] = [];
  /** Deliveries of the demo's messages (backlog included). */
  private delivered = 0;
  /** Each run id's deliveries, in order of arrival. */
  private readonly arrivals = new Map<string, { seq: number; atMs: number }[]>();
  private lastDeliveryAt = 0;
  /** performance.now() when the publishers start: the demo's time base. */
  private t0 = 0;
  private readonly now = (): number => performance.now() - this.t0;

  constructor(
    private readonly ctx: Context,
    private readonly o: AlarmDemoOptions,
    private readonly step: Step,
    private readonly where: Record<PublisherRole | 'consumer', NodeSpec>,
    private readonly urlOf: (n: NodeSpec) => string,
    private readonly admin: AdminConnection,
  ) {}

  /** A fresh quorum queue with `backlog` confirmed messages in it; returns the backlog's run id. */
  async setUp(ch: Channel): Promise<string> {
    const { ctx, o } = this;
    await this.step(
      `setup: a fresh quorum queue ${ALARM_QUEUE}, and ${o.backlog} confirmed messages in it (a backlog for the consumer to read during the alarm)`,
    );
    await ch.deleteQueue(ALARM_QUEUE);
    await ch.assertQueue(ALARM_QUEUE, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    this.declared = true;
    const backlogRun = newRunId();
    const backlogLedger = new Ledger({ runId: backlogRun, capacity: Math.max(1, o.backlog) });
    if (o.backlog > 0) {
      const allUrls = ctx.config.nodes.map(this.urlOf);
      await publishConfirmed({ urls: allUrls, exchange: '', routingKey: ALARM_QUEUE, count: o.backlog, runId: backlogRun, signal: ctx.signal }, backlogLedger);
    }
    return backlogRun;
  }

  /** The five publishers, each on its own connection; t0 is their start. Then the sampler. */
  async startPublishers(): Promise<void> {
    const { ctx, o, where, urlOf, now } = this;
    const totalMs = o.beforeMs + o.holdMs + o.afterMs + 60_000;
    const count = Math.ceil((o.ratePerSec * totalMs) / 1000);
    await this.step(
      `five publishers at ${o.ratePerSec} msg/s each, on their own connections: ${(['deadline', 'waits', 'naive', 'sigterm', 'sigkill'] as const)
        .map((r) => `${r} → ${where[r].name}`)
        .join(', ')}`,
    );
    this.t0 = performance.now();
    const pubSignals = { signal: ctx.signal, stop: this.stopPublishers.signal };
    const deadline = startOurs('deadline', where.deadline, urlOf(where.deadline), o, o.deadlineMs, count, pubSignals, now);
    const waits = startOurs('waits', where.waits, urlOf(where.waits), o, o.holdMs + 60_000, count, pubSignals, now);
    const naive = await startNaive(ctx, where.naive, urlOf(where.naive), o, AbortSignal.any([ctx.signal, this.stopPublishers.signal]), now);
    const term = await startChild(ctx, 'sigterm', where.sigterm, urlOf(where.sigterm), o, count, this.children);
    const kill = await startChild(ctx, 'sigkill', where.sigkill, urlOf(where.sigkill), o, count, this.children);
    this.lanes.push(deadline, waits, naive, term, kill);
    this.term = term;
    this.kill = kill;
    // The children publish before the alarm: a child still starting when it is raised would be blocked at its first message.
    await Promise.race([Promise.all([term.started, kill.started]), systemClock.sleep(30_000, ctx.signal)]);
    this.startSampler();
  }

  /** Every 250 ms: what each publisher has sent, and what the consumer has received. */
  private startSampler(): void {
    const sampler = setInterval(() => {
      const sent: Partial<Record<PublisherRole, number>> = {};
      for (const l of this.lanes) sent[l.input.role] = l.sentNow();
      this.samples.push({ tMs: this.now(), sent, delivered: this.delivered });
    }, 250);
    this.stopSampler = () => clearInterval(sampler);
  }

  async raiseAlarm(): Promise<AlarmTimeline> {
    const { ctx, o } = this;
    await this.step(
      `raise a ${o.alarm} alarm on ${o.node} (${o.alarm === 'memory' ? 'vm_memory_high_watermark 1 MB' : 'disk_free_limit 1,000,000 GB'}); rmq-bench's consumer starts reading on ${this.where.consumer.name}`,
    );
    const alarm = await raiseAlarm(ctx, ctx.config.nodes.find((n) => n.name === o.node)!, o.alarm);
    this.alarm = alarm;
    const timeline: AlarmTimeline = { raiseAtMs: this.since(alarm.commandAt), raisedAtMs: this.since(alarm.raisedAt), clearAtMs: null, clearedAtMs: null };
    ctx.progress.info(`${o.alarm} alarm on ${o.node} reported ${((alarm.raisedAt - alarm.commandAt) / 1000).toFixed(2)} s after its limit was set`);
    return timeline;
  }

  /** A performance.now() value in the demo's time base. */
  private since(at: number): number {
    return at - this.t0;
  }

  /** rmq-bench's consumer on the alarmed node: every delivery of the demo's messages is counted by run id. */
  startConsumer(): void {
    this.lastDeliveryAt = this.now();
    this.consumer = runConsumer(
      consumerOptions({
        urls: [this.urlOf(this.where.consumer)],
        queue: ALARM_QUEUE,
        prefetch: 100,
        idleTimeoutMs: 600_000,
        heartbeatS: 5,
        reconnectTimeoutMs: 15_000,
      }),
      {
        signal: AbortSignal.any([this.ctx.signal, this.stopConsumer.signal]),
        onDelivery: (d) => {
          const id = parseMessageId(String(d.messageId ?? ''));
          if (!id) return;
          this.delivered++;
          this.lastDeliveryAt = this.now();
          const list = this.arrivals.get(id.runId) ?? [];
          if (list.length === 0) this.arrivals.set(id.runId, list);
          list.push({ seq: id.seq, atMs: this.lastDeliveryAt });
        },
      },
    );
  }

  /** The children are stopped killAfterMs into the alarm; the hold runs from the alarm's report. */
  async stopChildrenDuringAlarm(): Promise<void> {
    const { ctx, o } = this;
    await systemClock.sleep(o.killAfterMs, ctx.signal);
    this.term!.kill();
    this.kill!.kill();
    ctx.progress.info(`SIGTERM and SIGKILL sent to the two producer children, ${(o.killAfterMs / 1000).toFixed(1)} s into the alarm`);
    await systemClock.sleep(Math.max(0, o.holdMs - o.killAfterMs), ctx.signal);
  }

  /** Clear the alarm, then publishing goes on for afterMs. */
  async clearAlarm(timeline: AlarmTimeline): Promise<void> {
    const { o, alarm } = this;
    await this.step(
      `clear the alarm (${o.alarm === 'memory' ? 'vm_memory_high_watermark back to 0.6' : 'disk_free_limit back to 200MB'}); publishing goes on for ${o.afterMs} ms`,
    );
    await alarm!.clear();
    timeline.clearAtMs = this.since(alarm!.clearCommandAt!);
    timeline.clearedAtMs = this.since(alarm!.clearedAt!);
    await systemClock.sleep(o.afterMs, this.ctx.signal);
  }

  /**
   * Stop the publishers, and the consumer once nothing has come for quietMs (at most 60 s).
   * Returns whether deliveries were still coming at that deadline.
   */
  async stopAndDrain(): Promise<boolean> {
    const { ctx, o } = this;
    await this.step(`stop the publishers; the consumer reads until nothing has come for ${o.quietMs} ms`);
    this.stopPublishers.abort();
    await Promise.all(this.lanes.map((l) => l.done));
    const quietDeadline = performance.now() + 60_000;
    while (this.now() - this.lastDeliveryAt < o.quietMs && performance.now() < quietDeadline) await systemClock.sleep(100, ctx.signal);
    const stillDelivering = this.now() - this.lastDeliveryAt < o.quietMs;
    this.stopConsumer.abort();
    await this.consumer;
    this.stopSampler();
    return stillDelivering;
  }

  /** Every publisher and the consumer counted against the timeline, and the verdict. */
  result(brokerVersion: string, backlogRun: string, timeline: AlarmTimeline, end: { leftInQueue: number; stillDelivering: boolean }): AlarmDemoResult {
    const { o, arrivals } = this;
    const backlogArrivals = arrivals.get(backlogRun) ?? [];
    const backlogSeen = new Set(backlogArrivals.map((a) => a.seq));
    const clearAt = timeline.clearAtMs ?? Number.POSITIVE_INFINITY;
    const publishers = this.lanes.map((l) => countPublisher({ ...l.input, arrivals: arrivals.get(l.input.runId) ?? [] }, timeline));
    const consumerRun = {
      node: this.where.consumer.name,
      backlogDuringAlarm: backlogArrivals.filter((a) => a.atMs >= timeline.raisedAtMs && a.atMs < clearAt).length,
      backlogArrived: backlogSeen.size,
      backlogMissing: o.backlog - [...backlogSeen].filter((s) => s < o.backlog).length,
      deliveries: this.delivered,
      leftInQueue: end.leftInQueue,
    };
    const verdict = assessAlarmDemo(o, timeline, publishers, consumerRun);
    if (end.stillDelivering) {
      verdict.problems.push(`deliveries were still coming 60 s after the publishers stopped: the counts are not final`);
      verdict.ok = false;
    }
    return { ...o, brokerVersion, queue: ALARM_QUEUE, timeline, publishers, consumer: consumerRun, samples: this.samples, ...verdict, interrupted: false };
  }

  /** Every way out: stop everything, clear the alarm, delete the queue, close the admin connection. */
  async cleanUp(): Promise<void> {
    const { ctx, o } = this;
    this.stopSampler();
    for (const c of this.children) c.kill('SIGKILL');
    this.stopPublishers.abort();
    this.stopConsumer.abort();
    if (this.alarm) {
      await this.alarm
        .clear()
        .catch((err: unknown) => ctx.log(`could not clear the ${o.alarm} alarm on ${o.node}: ${errorMessage(err)}; run rmq-bench cluster up`));
    }
    await Promise.allSettled([...this.lanes.map((l) => l.done), ...(this.consumer ? [this.consumer] : [])]);
    if (this.declared) {
      try {
        const ch = await this.admin.createChannel();
        await ch.deleteQueue(ALARM_QUEUE);
      } catch (err) {
        ctx.log(`could not delete ${ALARM_QUEUE}: ${errorMessage(err)}`);
      }
    }
    await closeWithin(this.admin);
  }
}
