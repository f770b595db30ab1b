import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { runConsumer } from '../../client/amqp091/consumer.js';
import { numberHeader } from '../../client/delivery-headers.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { DeadlineError, InterruptedError, errorMessage } from '../../errors.js';
import { openProcessedStore } from '../../store/processed.js';
import { systemClock } from '../../util/retry.js';
import {
  VIA_DESCRIPTIONS,
  assessVia,
  messageIdsFor,
  timeoutSetting,
  type ConsumerTimeoutDemoOptions,
  type ConsumerTimeoutDemoResult,
  type HandlingRun,
  type NaiveRun,
  type QueueEnd,
  type QueueSample,
  type SeenDelivery,
  type TimeoutVia,
  type ViaResult,
  timeoutEndingOf,
  type TimeoutEnding,
} from './consumer-timeout-plan.js';

/**
 * consumer-timeout-demo: a quorum queue's consumer timeout on RabbitMQ 4.3, measured. For each
 * way of setting it, two queues get the same messages; one of them takes longer than the
 * timeout. A naive consumer (amqplib defaults, ack when done) reads one queue, rmq-bench's own
 * consumer (re-subscribes on a cancel, idempotent store) the other, side by side. Returns
 * data; never prints. Queues and the temporary policy are removed on every way out.
 */

export const QUEUE_PREFIX = 'rmq-bench.consumer-timeout';
export const TEMP_POLICY = 'rmq-bench-consumer-timeout-demo';

type Step = (title: string) => Promise<void>;

export function queuesOf(via: TimeoutVia): { naive: string; handling: string } {
  return { naive: `${QUEUE_PREFIX}.${via}.naive`, handling: `${QUEUE_PREFIX}.${via}.handling` };
}

function seen(msg: ConsumeMessage, atMs: number): SeenDelivery {
  const h = (msg.properties.headers ?? {}) as Record<string, unknown>;
  return {
    atMs,
    messageId: String(msg.properties.messageId),
    redelivered: msg.fields.redelivered,
    deliveryCount: numberHeader(h['x-delivery-count']) ?? 0,
    acquiredCount: numberHeader(h['x-acquired-count']) ?? 0,
  };
}

interface NaiveHandle {
  run: NaiveRun;
  /** Resolves when the slow message's work has ended (acked or not). */
  slowDone: Promise<void>;
  close(): Promise<void>;
}

/**
 * The consumer most tutorials write: prefetch 1, manual ack once the work is done. A null
 * message (amqplib's form of basic.cancel) is skipped. It listens to 'error' and 'close' only
 * to record them (without a listener amqplib rethrows the error); it does nothing about them.
 */
async function startNaive(
  ctx: Context,
  urls: string[],
  queue: string,
  o: ConsumerTimeoutDemoOptions,
  slowId: string,
  consumerArguments: Record<string, number>,
  now: () => number,
): Promise<NaiveHandle> {
  const c = await connectAny(urls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench consumer-timeout-demo naive' });
  c.connection.on('error', () => undefined);
  const run: NaiveRun = {
    queue,
    deliveries: [],
    processed: {},
    slowDeliveredAtMs: null,
    slowEarliestAtMs: null,
    cancelAtMs: null,
    channelOpenAfterCancel: null,
    lateAckAtMs: null,
    channelClosedAtMs: null,
    channelError: null,
    lastProcessedAtMs: null,
  };
  let slowResolve!: () => void;
  const slowDone = new Promise<void>((r) => (slowResolve = r));
  const timers = new Set<NodeJS.Timeout>();
  const ch: Channel = await c.connection.createChannel();
  ch.on('error', (err: unknown) => {
    run.channelError ??= errorMessage(err);
  });
  ch.on('close', () => {
    run.channelClosedAtMs ??= now();
  });
  await ch.prefetch(1);
  // Prefetch 1: the broker hands a message out only after the ack before it (or the subscription).
  let handOutFloorMs = now();
  await ch.consume(
    queue,
    (msg) => {
      if (!msg) {
        run.cancelAtMs ??= now();
        ctx.progress.info(
          `  ${queue}: the naive consumer got basic.cancel at ${(run.cancelAtMs / 1000).toFixed(2)} s (amqplib: a null message); it does nothing about it`,
        );
        // Is the channel still open? A passive declare on it answers, or fails with the channel.
        const answered = (open: boolean): void => {
          run.channelOpenAfterCancel ??= open;
        };
        ch.checkQueue(queue).then(
          () => answered(true),
          () => answered(false),
        );
        return;
      }
      const d = seen(msg, now());
      run.deliveries.push(d);
      const slow = d.messageId === slowId && run.slowDeliveredAtMs === null;
      if (slow) {
        run.slowDeliveredAtMs = d.atMs;
        run.slowEarliestAtMs = handOutFloorMs;
      }
      const t = setTimeout(
        () => {
          timers.delete(t);
          run.processed[d.messageId] = (run.processed[d.messageId] ?? 0) + 1;
          run.lastProcessedAtMs = now();
          try {
            handOutFloorMs = now();
            ch.ack(msg);
            if (run.cancelAtMs !== null) run.lateAckAtMs ??= now();
          } catch (err) {
            run.channelError ??= errorMessage(err);
          }
          if (slow) slowResolve();
        },
        slow ? o.slowWorkMs : o.workMs,
      );
      timers.add(t);
    },
    { arguments: consumerArguments },
  );
  return {
    run,
    slowDone,
    async close() {
      for (const t of timers) clearTimeout(t);
      slowResolve();
      await closeWithin(c.connection);
    },
  };
}

async function declareFresh(ch: ConfirmChannel, queue: string, args: Record<string, number>): Promise<void> {
  await ch.deleteQueue(queue);
  await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum', ...args } });
}

async function waitForPolicy(ctx: Context, queues: string[]): Promise<void> {
  const vh = encodeURIComponent(ctx.config.vhost);
  const deadlineMs = 15_000;
  const deadline = performance.now() + deadlineMs;
  for (const q of queues) {
    for (;;) {
      const info = (await ctx.management.get(`/api/queues/${vh}/${encodeURIComponent(q)}`)) as { policy?: string };
      if (info.policy === TEMP_POLICY) break;
      if (performance.now() > deadline) throw new DeadlineError(`queue ${q} did not report policy ${TEMP_POLICY} within ${deadlineMs} ms`, deadlineMs);
      await systemClock.sleep(200, ctx.signal);
    }
  }
}

async function queueEnd(ch: ConfirmChannel, queue: string): Promise<QueueEnd> {
  const q = await ch.checkQueue(queue);
  return { ready: q.messageCount, consumers: q.consumerCount };
}

/**
 * The handling consumer's queue once it stopped: its connection is closed, but the broker may list
 * the consumer a moment longer (seen under load: a smoke run beside the unit tests). Asked again
 * for up to CONSUMER_GONE_MS; one still listed after that is left behind for real.
 */
const CONSUMER_GONE_MS = 10_000;
async function queueEndAfterStop(ch: ConfirmChannel, queue: string): Promise<QueueEnd> {
  const deadline = performance.now() + CONSUMER_GONE_MS;
  for (;;) {
    const end = await queueEnd(ch, queue);
    if (end.consumers === 0 || performance.now() >= deadline) return end;
    await systemClock.sleep(250);
  }
}

export async function runConsumerTimeoutDemo(ctx: Context, o: ConsumerTimeoutDemoOptions, step: Step): Promise<ConsumerTimeoutDemoResult> {
  await requireCluster(ctx);
  const { config } = ctx;
  const overview = (await ctx.management.get('/api/overview')) as { rabbitmq_version?: string };
  const brokerVersion = overview.rabbitmq_version ?? 'unknown';
  const ending = timeoutEndingOf(brokerVersion);
  const urls = config.nodes.map((n) => amqpUrl(config, n));
  const admin = await connectAny(urls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench consumer-timeout-demo' });
  admin.connection.on('error', () => undefined);
  const demo = new TimeoutDemo(ctx, o, urls, admin.connection, ending);
  try {
    const ch = await admin.connection.createConfirmChannel();
    ch.on('error', () => undefined);

    await step(
      `setup: for ${o.vias.join(', ')}, two fresh quorum queues with a consumer timeout of ${o.timeoutMs} ms: ${o.vias.map((v) => VIA_DESCRIPTIONS[v]).join('; ')}`,
    );
    await demo.declareQueues(ch);

    await step(
      `publish ${o.count} messages to each queue; message ${o.slowIndex} takes ${o.slowWorkMs} ms of work, the others ${o.workMs} ms (the timeout is ${o.timeoutMs} ms)`,
    );
    await demo.publish(ch);

    await step('the naive consumer and rmq-bench consumer, side by side on their own queues; watching until both are done and then for the observation window');
    const runs = await demo.watch(ch);
    const { vias: _, ...ranWith } = o;
    return {
      ...ranWith,
      brokerVersion,
      ending,
      runs,
      samples: demo.samples,
      ok: runs.every((r) => r.ok),
    };
  } finally {
    await demo.cleanUp();
  }
}

/** One via's consumers once they are done: the naive one's handle and what rmq-bench's consumer saw. */
interface ViaRun {
  via: TimeoutVia;
  q: { naive: string; handling: string };
  slowId: string;
  naive: NaiveHandle;
  handling: HandlingRun;
}

/**
 * One run of the demo: the queues and the temporary policy it declared, the consumers it
 * started, the idempotent stores' folder, and the clock its records use (ms since the
 * consumers started). cleanUp undoes all of it.
 */
class TimeoutDemo {
  /** Every queue declared, for the sampler and the cleanup. */
  private readonly declared: string[] = [];
  private policySet = false;
  private readonly naives: NaiveHandle[] = [];
  /** Aborted by the demo's own deadline, or once the runs are assessed. */
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  private readonly storeDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-consumer-timeout-'));
  private readonly vh: string;
  private t0 = 0;
  readonly samples: QueueSample[] = [];

  constructor(
    private readonly ctx: Context,
    private readonly o: ConsumerTimeoutDemoOptions,
    private readonly urls: string[],
    private readonly admin: ChannelModel,
    /** How the broker ends a timed-out consumer (its version): what the claims are checked against. */
    private readonly ending: TimeoutEnding,
  ) {
    this.signal = AbortSignal.any([ctx.signal, this.stop.signal]);
    this.vh = encodeURIComponent(ctx.config.vhost);
  }

  /** ms since the consumers started. */
  private readonly now = (): number => performance.now() - this.t0;

  private slowOf(via: TimeoutVia): string {
    return messageIdsFor(via, this.o.count)[this.o.slowIndex - 1]!;
  }

  /** Two fresh quorum queues per via, with the timeout set that way (the policy: a temporary one, seen applied). */
  async declareQueues(ch: ConfirmChannel): Promise<void> {
    const { o } = this;
    for (const via of o.vias) {
      const q = queuesOf(via);
      const set = timeoutSetting(via, o.timeoutMs);
      for (const name of [q.naive, q.handling]) {
        this.declared.push(name);
        await declareFresh(ch, name, set.queueArguments);
      }
    }
    if (o.vias.includes('policy')) {
      const q = queuesOf('policy');
      this.policySet = true;
      await this.ctx.management.request('PUT', `/api/policies/${this.vh}/${TEMP_POLICY}`, {
        body: {
          pattern: `^${q.naive.replace(/\./g, '\\.')}$|^${q.handling.replace(/\./g, '\\.')}$`,
          'apply-to': 'queues',
          priority: 50,
          definition: timeoutSetting('policy', o.timeoutMs).policy,
        },
      });
      await waitForPolicy(this.ctx, [q.naive, q.handling]);
    }
  }

  /** The same messages to both queues of every via, confirmed. */
  async publish(ch: ConfirmChannel): Promise<void> {
    for (const via of this.o.vias) {
      const q = queuesOf(via);
      for (const id of messageIdsFor(via, this.o.count)) {
        for (const name of [q.naive, q.handling]) ch.sendToQueue(name, Buffer.from(`consumer-timeout-demo ${id}`), { messageId: id, persistent: true });
      }
    }
    await ch.waitForConfirms();
  }

  /** Both consumers of every via side by side, the queues sampled meanwhile, within the demo's deadline; then each via assessed. */
  async watch(ch: ConfirmChannel): Promise<ViaResult[]> {
    const { o, signal, stop } = this;
    this.t0 = performance.now();
    const sampler = this.sample(ch);
    const aborted = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const deadlineMs = o.slowWorkMs + o.count * o.workMs + o.timeoutMs + 2 * o.observeMs + 60_000;
    const deadline = setTimeout(() => stop.abort(), deadlineMs);
    try {
      const perVia = await Promise.all(o.vias.map((via) => this.runVia(via, aborted)));
      if (this.ctx.signal.aborted) throw new InterruptedError();
      const timedOut = stop.signal.aborted;
      const runs: ViaResult[] = [];
      for (const x of perVia) {
        const r = await this.assess(ch, x);
        if (timedOut) r.problems.push(`the demo did not finish within ${deadlineMs} ms`);
        runs.push({ ...r, ok: r.ok && !timedOut });
      }
      stop.abort();
      await sampler;
      return runs;
    } finally {
      clearTimeout(deadline);
      stop.abort();
    }
  }

  /** Every queue's ready count every 250 ms, until the demo stops. */
  private sample(ch: ConfirmChannel): Promise<void> {
    const { signal } = this;
    return (async () => {
      while (!signal.aborted) {
        const ready: Record<string, number> = {};
        for (const name of this.declared) ready[name] = (await ch.checkQueue(name)).messageCount;
        this.samples.push({ tMs: this.now(), ready });
        await systemClock.sleep(250, signal).catch(() => undefined);
      }
    })().catch(() => undefined);
  }

  /** One via: the naive consumer and rmq-bench's, then the observation window once the naive one's slow work is over. */
  private async runVia(via: TimeoutVia, aborted: Promise<void>): Promise<ViaRun> {
    const { o } = this;
    const q = queuesOf(via);
    const set = timeoutSetting(via, o.timeoutMs);
    const slowId = this.slowOf(via);
    const naive = await startNaive(this.ctx, this.urls, q.naive, o, slowId, set.consumerArguments, this.now);
    this.naives.push(naive);
    const handling = await this.runHandling(via, q.handling, slowId, set.consumerArguments);
    await Promise.race([naive.slowDone, aborted]);
    // The observation window: the naive consumer has had its chance to go on.
    await systemClock.sleep(Math.max(0, o.observeMs - (this.now() - (naive.run.lastProcessedAtMs ?? 0))), this.signal).catch(() => undefined);
    return { via, q, slowId, naive, handling };
  }

  /** rmq-bench's consumer on its queue, with an idempotent store, until it has been idle for the observation window. */
  private async runHandling(via: TimeoutVia, queue: string, slowId: string, consumeArguments: Record<string, number>): Promise<HandlingRun> {
    const { o, now } = this;
    const store = openProcessedStore(path.join(this.storeDir, `${via}.sqlite`), { idempotent: true });
    const handling: HandlingRun = {
      queue,
      deliveries: [],
      processed: {},
      duplicatesAbsorbed: 0,
      cancels: 0,
      cancelAtMs: null,
      resubscribedAtMs: null,
      finishedAtMs: 0,
    };
    try {
      const r = await runConsumer(
        {
          urls: this.urls,
          queue,
          consumeArguments,
          prefetch: 1,
          autoAck: false,
          crashOnDelivery: false,
          failure: undefined,
          workMs: o.workMs,
          workMsOf: (id) => (id === slowId ? o.slowWorkMs : o.workMs),
          ackEvery: 1,
          count: undefined,
          idleTimeoutMs: o.observeMs,
          heartbeatS: 5,
          reconnectTimeoutMs: 30_000,
          store,
        },
        {
          signal: this.signal,
          onDelivery: (d) =>
            handling.deliveries.push({
              atMs: now(),
              messageId: d.messageId ?? '?',
              redelivered: d.redelivered,
              deliveryCount: d.deliveryCount ?? 0,
              acquiredCount: d.acquiredCount ?? 0,
            }),
          onCancelled: () => {
            handling.cancelAtMs ??= now();
            this.ctx.progress.info(
              `  ${via}: rmq-bench's consumer cancelled by the broker at ${(now() / 1000).toFixed(2)} s; it subscribes again when its work is done`,
            );
          },
          onChannelClosed: (reason) => {
            handling.cancelAtMs ??= now();
            this.ctx.progress.info(
              `  ${via}: the broker closed rmq-bench's consumer's channel at ${(now() / 1000).toFixed(2)} s (${reason}); it subscribes again on a new connection`,
            );
          },
          onSubscribed: () => {
            if (handling.cancelAtMs !== null) handling.resubscribedAtMs ??= now();
          },
        },
      );
      handling.processed = Object.fromEntries(store.processedCounts());
      handling.duplicatesAbsorbed = store.skippedDuplicates();
      handling.cancels = r.cancels;
      handling.channelsClosed = r.channelsClosed;
      handling.finishedAtMs = now();
    } finally {
      store.close();
    }
    return handling;
  }

  /** One via's records and both queues' end state, checked against RabbitMQ's claims. */
  private async assess(ch: ConfirmChannel, x: ViaRun): Promise<ViaResult> {
    const { o } = this;
    const endAtMs = this.now();
    return assessVia(
      o,
      {
        via: x.via,
        setBy: VIA_DESCRIPTIONS[x.via],
        timeoutMs: o.timeoutMs,
        messageIds: messageIdsFor(x.via, o.count),
        slowId: x.slowId,
        naive: x.naive.run,
        handling: x.handling,
        naiveEnd: await queueEnd(ch, x.q.naive),
        handlingEnd: await queueEndAfterStop(ch, x.q.handling),
        endAtMs,
      },
      this.ending,
    );
  }

  /** On every way out: the consumers closed, the temporary policy and the queues removed, the stores deleted. */
  async cleanUp(): Promise<void> {
    const { ctx, declared } = this;
    for (const n of this.naives) await n.close().catch(() => undefined);
    if (this.policySet) {
      await ctx.management
        .request('DELETE', `/api/policies/${this.vh}/${TEMP_POLICY}`)
        .catch((err: unknown) => ctx.log(`could not remove policy ${TEMP_POLICY}: ${errorMessage(err)}`));
    }
    if (declared.length > 0) {
      try {
        const ch = await this.admin.createChannel();
        for (const q of declared) await ch.deleteQueue(q);
      } catch (err) {
        ctx.log(`could not delete the demo's queues (${declared.join(', ')}): ${errorMessage(err)}`);
      }
    }
    await closeWithin(this.admin);
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
