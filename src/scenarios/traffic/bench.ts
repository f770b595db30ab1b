import { newRunId, type PublishMode } from '../../client/amqp091/publisher.js';
import { DEFAULT_PROTOCOL, type Protocol, traitsOf } from '../../client/protocol.js';
import { clientFor, publisherFor } from '../../client/clients.js';
import type { PublisherResult } from '../../client/publisher-result.js';
import type { LeanConsumer, LeanConsumerOptions } from '../../client/lean-consumer-options.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { DeadlineError, InterruptedError } from '../../errors.js';
import { Ledger } from '../../ledger/ledger.js';
import { ModeMeter, type BenchSample, type MeterTotals } from '../../measure/meter.js';
import { maskUrl } from '../../url.js';
import { retryUntil } from '../../util/retry.js';
import { asAmqpError, awaitMembers, declareSpread, deleteSpread, urlsFrom, vhostOf } from './bench-queues.js';
import { type BenchQueueRow, benchQueueNames, clientsPerQueue, onlyQueueRow, QueueMeter, queueOfClient, queueSuffix } from './bench-spread.js';
import { leadersOf } from '../under-faults/chaos-queues.js';

/**
 * bench: the same workload in each publishing mode, one mode after the other, each into its own
 * fresh quorum queues (--queues of them, their leaders spread over the nodes; deleted afterwards),
 * the producers and consumers spread round-robin over them. Producers and consumers run in this
 * process, so the CPU and RSS figures are theirs plus the bookkeeping (ledger, histograms).
 * Returns data; never prints: per-second samples go to hooks.onSample.
 */

export interface BenchOptions {
  /** In the order to run them; async runs once per window. */
  modes: PublishMode[];
  windows: number[];
  /** batch: confirms awaited every N; tx: commit every N. */
  batchSize: number;
  producers: number;
  /** 0: nothing consumes (messages stay in the queue until it is deleted). */
  consumers: number;
  /**
   * Fresh quorum queues per run, queue i declared through node i (mod the URLs) with the
   * client-local leader locator; producer and consumer i on queue i mod queues, connected to that
   * node first. At most producers, and at most consumers unless that is 0 (the CLI checks).
   */
  queues: number;
  sizeBytes: number;
  /** Per producer; 0 = as fast as possible. */
  ratePerSec: number;
  /** Each mode publishes for this long at most; undefined: only `count` bounds it. */
  durationMs: number | undefined;
  /** Messages per producer in each mode at most; undefined: only `durationMs` bounds it. */
  count: number | undefined;
  /** Consumers: unacked deliveries at most (0 = unlimited). */
  prefetch: number;
  /** Consumers: one multiple-ack every N messages. */
  ackEvery: number;
  /** After publishing stops: how long consumers may take to read what is left. */
  drainTimeoutMs: number;
  confirmTimeoutMs: number;
  heartbeatS: number;
  reconnectTimeoutMs: number;
  /** undefined: the cluster's three AMQP ports with the configured user. */
  urls: string[] | undefined;
  /** Each mode runs once per protocol, AMQP 0-9-1 first; AMQP 1.0 has no tx or batch (those run over 0-9-1 only). */
  protocols: Protocol[];
}

/** One run of the bench: a mode, with its window or batch size, over one protocol. */
export interface BenchRunSpec {
  /** none, tx/100, sync, batch/100, async/256 (over AMQP 1.0: 1.0 none, 1.0 async/256...): unique within a bench. */
  label: string;
  mode: PublishMode;
  window: number | null;
  batchSize: number | null;
  protocol: Protocol;
}

export type { BenchSample, MeterTotals } from '../../measure/meter.js';
export type { BenchQueueRow } from './bench-spread.js';

/** One mode's figures: the meter's totals (see MeterTotals for each field), and how the run went. */
export interface BenchModeResult extends BenchRunSpec, MeterTotals {
  /** The run's queue; with --queues N, the first of them (every one is in perQueue). */
  queue: string;
  /** Each queue's figures, in the order of their names; their counts add up to the run's. */
  perQueue: BenchQueueRow[];
  producers: number;
  consumers: number;
  /** Every publish call, republishes (after a confirm timeout or a nack) included. */
  publishes: number;
  indeterminate: number;
  stoppedBy: 'count' | 'time' | 'interrupted' | 'gave-up';
  /** Consumers read every message published (null without consumers or when interrupted). */
  drained: boolean | null;
  gaveUp: string | null;
}

export interface BenchResult {
  options: BenchOptions;
  startedAtIso: string;
  runs: BenchModeResult[];
  /** Ctrl+C: the runs measured until then, the last one cut short; later modes not run. */
  interrupted: boolean;
  /** The kernel's high-water mark of this process's RSS over the whole command (getrusage). */
  processPeakRssBytes: number;
}

export interface BenchHooks {
  /** The run's queues are declared and their members online; leaders: each one's node (null: unknown). */
  onRunStart?: (spec: BenchRunSpec, queues: readonly string[], leaders: readonly (string | null)[]) => void;
  onSample?: (spec: BenchRunSpec, sample: BenchSample) => void;
}

/** The runs a bench makes, in order: for each protocol, each mode once, async once per window; each protocol only the modes it has (AMQP 1.0: no tx, no batch). Pure. */
export function benchRuns(
  modes: readonly PublishMode[],
  windows: readonly number[],
  batchSize: number,
  protocols: readonly Protocol[] = [DEFAULT_PROTOCOL],
): BenchRunSpec[] {
  const specs: BenchRunSpec[] = [];
  const seen = new Set<string>();
  for (const protocol of protocols) {
    const { labelPrefix: prefix, publishModes } = traitsOf(protocol);
    const add = (s: Omit<BenchRunSpec, 'protocol'>): void => {
      const label = prefix + s.label;
      if (seen.has(label)) return;
      seen.add(label);
      specs.push({ ...s, label, protocol });
    };
    for (const mode of modes) {
      if (!publishModes.includes(mode)) continue;
      if (mode === 'async') for (const w of windows) add({ label: `async/${w}`, mode, window: w, batchSize: null });
      else if (mode === 'tx' || mode === 'batch') add({ label: `${mode}/${batchSize}`, mode, window: null, batchSize });
      else add({ label: mode, mode, window: null, batchSize: null });
    }
  }
  return specs;
}

function sumOf<T>(list: readonly T[], f: (x: T) => number): number {
  return list.reduce((a, x) => a + f(x), 0);
}

/** A consumer in the run's protocol; onMessage gets each delivery's end-to-end latency. */
async function subscribe(protocol: Protocol, opts: LeanConsumerOptions, onMessage: (e2eMs: number | undefined) => void): Promise<LeanConsumer> {
  try {
    return await clientFor(protocol).leanConsumer(opts, onMessage);
  } catch (err) {
    throw asAmqpError(`a consumer could not subscribe to ${opts.queue}`, err);
  }
}

/**
 * One run: fresh queues (their members online), consumers subscribed, producers until the bound,
 * consumers drain, the leaders looked up again, the queues deleted (on every way out).
 */
async function runOne(
  ctx: Context,
  opts: BenchOptions,
  spec: BenchRunSpec,
  urls: readonly string[],
  vhost: string,
  hooks: BenchHooks,
): Promise<BenchModeResult> {
  const queues = benchQueueNames(spec.label, opts.queues, queueSuffix());
  const declared: string[] = [];
  let run: BenchRun | undefined;
  try {
    await declareSpread(ctx, opts, urls, queues, declared);
    const leadersAtStart = await awaitMembers(ctx, vhost, queues);
    hooks.onRunStart?.(spec, queues, leadersAtStart);
    run = new BenchRun(ctx, opts, spec, urls, queues, hooks);
    const result = await run.measure();
    const leadersAtEnd = await leadersOf(ctx, vhost, queues);
    const producers = clientsPerQueue(opts.producers, queues.length);
    const consumers = clientsPerQueue(opts.consumers, queues.length);
    const where = (q: number) => ({
      queue: queues[q]!,
      leaderAtStart: leadersAtStart[q] ?? null,
      leaderAtEnd: leadersAtEnd[q] ?? null,
      producers: producers[q]!,
      consumers: consumers[q]!,
    });
    const perQueue = run.queueMeters === undefined ? [onlyQueueRow(where(0), run.totals!)] : run.queueMeters.map((m, q) => m.row(where(q)));
    return { ...result, perQueue };
  } finally {
    await run?.stop();
    await deleteSpread(ctx, opts, urls, declared);
  }
}

/** One run on its queues: its consumers and producers, the meters they feed, and the timers that bound and sample it. */
class BenchRun {
  private readonly meter = new ModeMeter();
  /** With several queues, one per queue, in the order of the names, fed beside the run's meter; with one, the run's meter is its. */
  readonly queueMeters: QueueMeter[] | undefined;
  /** The run meter's totals, once measured. */
  totals: MeterTotals | undefined;
  /** Aborted when --duration is up (and on the way out). */
  private readonly stopProducers = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private readonly consumers: LeanConsumer[] = [];
  private producerTasks: Promise<PublisherResult>[] = [];
  /** Why the first consumer that gave up did (null: none did). */
  private consumerLost: string | null = null;

  constructor(
    private readonly ctx: Context,
    private readonly opts: BenchOptions,
    private readonly spec: BenchRunSpec,
    private readonly urls: readonly string[],
    private readonly queues: readonly string[],
    private readonly hooks: BenchHooks,
  ) {
    this.queueMeters = queues.length > 1 ? queues.map(() => new QueueMeter()) : undefined;
  }

  /** The run's figures; perQueue is filled in by runOne, which knows the leaders at the end. */
  async measure(): Promise<Omit<BenchModeResult, 'perQueue'>> {
    const { ctx, opts, spec, meter, hooks } = this;
    await this.subscribeConsumers();
    meter.start();
    this.ticker = setInterval(() => hooks.onSample?.(spec, meter.tick()), 1_000);
    if (opts.durationMs !== undefined) this.timer = setTimeout(() => this.stopProducers.abort(), opts.durationMs);
    this.producerTasks = this.startProducers();
    const producers = await Promise.all(this.producerTasks);
    clearTimeout(this.timer);
    const publishes = sumOf(producers, (p) => p.publishes);
    const gaveUp = producers.find((p) => p.gaveUp !== null)?.gaveUp ?? null;
    const drained = opts.consumers > 0 && !ctx.signal.aborted ? await this.drain(publishes) : null;
    await Promise.all(this.consumers.map((c) => c.stop()));
    clearInterval(this.ticker);
    const { last, totals } = meter.finish();
    this.totals = totals;
    if (last) hooks.onSample?.(spec, last);
    const interrupted = ctx.signal.aborted || producers.some((p) => p.interrupted);
    const consumerGaveUp: string | null = this.consumerLost;
    const run: Omit<BenchModeResult, 'perQueue'> = {
      ...spec,
      queue: this.queues[0]!,
      producers: opts.producers,
      consumers: opts.consumers,
      published: sumOf(producers, (p) => p.written),
      publishes,
      confirmed: spec.mode === 'none' ? 0 : sumOf(producers, (p) => p.confirmed),
      nacked: sumOf(producers, (p) => p.nacked),
      indeterminate: sumOf(producers, (p) => p.indeterminate),
      consumed: totals.consumed,
      publishDurationMs: totals.publishDurationMs,
      publishRatePerSec: totals.publishRatePerSec,
      consumeRatePerSec: totals.consumeRatePerSec,
      confirmLatency: totals.confirmLatency,
      e2eLatency: totals.e2eLatency,
      cpuSeconds: totals.cpuSeconds,
      cpuUsPerMessage: totals.cpuUsPerMessage,
      peakRssBytes: totals.peakRssBytes,
      durationMs: totals.durationMs,
      stoppedBy: interrupted ? 'interrupted' : gaveUp !== null || consumerGaveUp !== null ? 'gave-up' : this.stopProducers.signal.aborted ? 'time' : 'count',
      drained: interrupted ? null : drained,
      gaveUp: gaveUp ?? (consumerGaveUp === null ? null : `consumer: ${consumerGaveUp}`),
      samples: totals.samples,
    };
    return run;
  }

  /** The consumers, each on its own connection to its queue's node first, subscribed before anything is published. */
  private async subscribeConsumers(): Promise<void> {
    const { ctx, opts, meter } = this;
    for (let i = 0; i < opts.consumers; i++) {
      const q = queueOfClient(i, this.queues.length);
      const queueMeter = this.queueMeters?.[q];
      this.consumers.push(
        await subscribe(
          this.spec.protocol,
          {
            urls: urlsFrom(this.urls, q),
            queue: this.queues[q]!,
            prefetch: opts.prefetch,
            ackEvery: opts.ackEvery,
            heartbeatS: opts.heartbeatS,
            connectTimeoutMs: opts.reconnectTimeoutMs,
            signal: ctx.signal,
            connectionName: `rmq-bench bench consumer ${i + 1}`,
          },
          queueMeter === undefined
            ? (e2eMs) => meter.onConsumed(e2eMs)
            : (e2eMs) => {
                meter.onConsumed(e2eMs);
                queueMeter.onConsumed();
              },
        ),
      );
    }
    for (const c of this.consumers) void c.lost.then((why) => (this.consumerLost ??= why));
  }

  /** --producers publishers in the run's mode, each with its own ledger, on its queue's node first, until the count or stopProducers. */
  private startProducers(): Promise<PublisherResult>[] {
    const { ctx, opts, spec, meter } = this;
    const count = opts.count ?? Number.MAX_SAFE_INTEGER;
    let ended = 0;
    return Array.from({ length: opts.producers }, (_, p) => {
      const q = queueOfClient(p, this.queues.length);
      const queueMeter = this.queueMeters?.[q];
      const runId = newRunId();
      const ledger = new Ledger(opts.count === undefined ? { runId } : { runId, capacity: opts.count });
      return publisherFor(spec.protocol)(
        {
          urls: this.urls,
          startIndex: q % this.urls.length,
          exchange: '',
          routingKey: this.queues[q]!,
          count,
          ratePerSec: opts.ratePerSec,
          sizeBytes: opts.sizeBytes,
          persistent: true,
          mandatory: false,
          mode: spec.mode,
          window: spec.window ?? 1,
          batchSize: spec.batchSize ?? 1,
          confirmTimeoutMs: opts.confirmTimeoutMs,
          heartbeatS: opts.heartbeatS,
          reconnectTimeoutMs: opts.reconnectTimeoutMs,
          runId,
          flushTimeoutMs: 5_000,
          publishedAtUs: true,
          leanProperties: true,
          // The meter records them (hooks.onConfirm): the publisher's own histograms would be a second copy.
          recordConfirmLatency: false,
          // The meter samples once a second; the publisher's 10-ms progress samples would go unused.
          sampleProgress: false,
        },
        ledger,
        {
          signal: ctx.signal,
          stop: this.stopProducers.signal,
          // The publisher's clock reading (performance.now(), as the meters'): none of their own.
          onWritten:
            queueMeter === undefined
              ? (_n, at) => meter.onWritten(at)
              : (_n, at) => {
                  meter.onWritten(at);
                  queueMeter.onWritten(at);
                },
          onConfirm:
            queueMeter === undefined
              ? (ms, at) => meter.onConfirm(ms, at)
              : (ms, at) => {
                  meter.onConfirm(ms, at);
                  queueMeter.onConfirm(ms, at);
                },
          // Every refusal is counted; the timeline has one 'nack' event per reason, then a summary a second.
          onRefused: () => meter.onNack(),
          // The last producer's last confirm: the work measured per message ends (or with the last delivery).
          onPublishingEnded: () => {
            if (++ended === opts.producers) meter.publishingEnded(opts.consumers > 0);
          },
          onEvent: (e) => {
            if (e.type !== 'connected') ctx.log(`${spec.label}: ${e.type}: ${e.detail}`);
          },
        },
      );
    });
  }

  /** Whether the consumers read every publish within --drain-timeout (until one gives up); null when interrupted. */
  private async drain(publishes: number): Promise<boolean | null> {
    const { ctx, meter } = this;
    try {
      await retryUntil(
        async () => meter.consumed,
        (n) => n >= publishes || this.consumerLost !== null,
        { timeoutMs: this.opts.drainTimeoutMs, intervalMs: 50, signal: ctx.signal, describe: () => 'drain' },
      );
      return meter.consumed >= publishes;
    } catch (err) {
      if (err instanceof DeadlineError) return false;
      if (!(err instanceof InterruptedError)) throw err;
      return null;
    }
  }

  /** On every way out (an error too): everything stopped before the queue goes. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    clearInterval(this.ticker);
    this.stopProducers.abort();
    await Promise.allSettled([...this.producerTasks, ...this.consumers.map((c) => c.stop())]);
  }
}

export async function runBench(ctx: Context, opts: BenchOptions, hooks: BenchHooks = {}): Promise<BenchResult> {
  const startedAtIso = new Date().toISOString();
  const urls = opts.urls ?? ctx.config.nodes.map((n) => amqpUrl(ctx.config, n));
  const vhost = opts.urls ? vhostOf(opts.urls[0]!) : ctx.config.vhost;
  const specs = benchRuns(opts.modes, opts.windows, opts.batchSize, opts.protocols);
  const runs: BenchModeResult[] = [];
  try {
    for (const spec of specs) {
      if (ctx.signal.aborted) break;
      runs.push(await runOne(ctx, opts, spec, urls, vhost, hooks));
    }
  } catch (err) {
    if (!(err instanceof InterruptedError)) throw err;
  }
  // The options go into reports: never with a password.
  const options = opts.urls ? { ...opts, urls: opts.urls.map(maskUrl) } : opts;
  return { options, startedAtIso, runs, interrupted: ctx.signal.aborted, processPeakRssBytes: process.resourceUsage().maxRSS * 1024 };
}
