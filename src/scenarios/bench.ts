import type { Channel, ConsumeMessage } from 'amqplib';
import * as hdr from 'hdr-histogram-js';
import { closeWithin, connectAny } from '../amqp/connect.js';
import { newRunId, PUBLISHED_AT_US_HEADER, runPublisher, type PublishMode, type PublisherResult } from '../amqp/publisher.js';
import { startStreamConsumer, type StreamConsumer } from '../amqp/stream-consumer.js';
import { amqpUrl } from '../config.js';
import type { Context } from '../context.js';
import { AmqpError, DeadlineError, InterruptedError, RmqBenchError, errorMessage } from '../errors.js';
import { Ledger } from '../ledger/ledger.js';
import { LatencyRecorder, type LatencySummary } from '../report/histogram.js';
import { maskUrl } from '../url.js';
import { retryUntil } from '../util/retry.js';

/**
 * bench: the same workload in each publishing mode, one mode after the other, each into its own
 * fresh quorum queue (deleted afterwards). Producers and consumers run in this process, so the
 * CPU and RSS figures are theirs plus the bookkeeping (ledger, histograms). Returns data; never
 * prints: per-second samples go to hooks.onSample.
 */

export const BENCH_MODES = ['none', 'tx', 'sync', 'batch', 'async'] as const satisfies readonly PublishMode[];

export interface BenchOptions {
  /** In the order to run them; async runs once per window. */
  modes: PublishMode[];
  windows: number[];
  /** batch: confirms awaited every N; tx: commit every N. */
  batchSize: number;
  producers: number;
  /** 0: nothing consumes (messages stay in the queue until it is deleted). */
  consumers: number;
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
}

/** One run of the bench: a mode, with its window or batch size. */
export interface BenchRunSpec {
  /** none, tx/100, sync, batch/100, async/256: unique within a bench. */
  label: string;
  mode: PublishMode;
  window: number | null;
  batchSize: number | null;
}

/** One second of one mode (the last one may be shorter). Counts are for the interval only. */
export interface BenchSample {
  /** 1, 2, ...: the interval's number since the mode's measurement started. */
  second: number;
  /** End of the interval, ms since the mode's measurement started. */
  elapsedMs: number;
  intervalMs: number;
  published: number;
  confirmed: number;
  nacked: number;
  consumed: number;
  confirmLatency: LatencySummary;
  e2eLatency: LatencySummary;
  /** This process's CPU time (user + system) in the interval. */
  cpuSeconds: number;
  rssBytes: number;
}

/** One mode's figures: the meter's totals (see MeterTotals for each field), and how the run went. */
export interface BenchModeResult extends BenchRunSpec, MeterTotals {
  queue: string;
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
  onRunStart?: (spec: BenchRunSpec, queue: string) => void;
  onSample?: (spec: BenchRunSpec, sample: BenchSample) => void;
}

/** The runs a bench makes, in order: each mode once, async once per window. Pure. */
export function benchRuns(modes: readonly PublishMode[], windows: readonly number[], batchSize: number): BenchRunSpec[] {
  const specs: BenchRunSpec[] = [];
  const seen = new Set<string>();
  const add = (s: BenchRunSpec): void => {
    if (seen.has(s.label)) return;
    seen.add(s.label);
    specs.push(s);
  };
  for (const mode of modes) {
    if (mode === 'async') for (const w of windows) add({ label: `async/${w}`, mode, window: w, batchSize: null });
    else if (mode === 'tx' || mode === 'batch') add({ label: `${mode}/${batchSize}`, mode, window: null, batchSize });
    else add({ label: mode, mode, window: null, batchSize: null });
  }
  return specs;
}

/** Where time, CPU and memory come from (injectable, so that the meter is unit-tested). */
export interface Probe {
  now(): number;
  /** Process CPU time, user + system, in µs. */
  cpuMicros(): number;
  rssBytes(): number;
}

export const processProbe: Probe = {
  now: () => performance.now(),
  cpuMicros: () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  },
  rssBytes: () => process.memoryUsage.rss(),
};

/** The totals a meter ends with. */
export interface MeterTotals {
  /** Distinct messages handed to the socket. */
  published: number;
  /** Broker acks (tx: messages in committed transactions); 0 in mode none. */
  confirmed: number;
  nacked: number;
  consumed: number;
  /** First message written to the last one written or confirmed. */
  publishDurationMs: number;
  publishRatePerSec: number | null;
  /** Consumed over first message written to last message consumed. */
  consumeRatePerSec: number | null;
  /** Publish to broker ack; tx: the commit round trip of each message's transaction. */
  confirmLatency: LatencySummary;
  /** Publish to delivery, from the publish time carried in each message. */
  e2eLatency: LatencySummary;
  /** This process's CPU time over the mode (producers, consumers and bookkeeping). */
  cpuSeconds: number;
  cpuUsPerMessage: number | null;
  /** Highest RSS sampled during the mode (once a second, and at its start and end). */
  peakRssBytes: number;
  /** Measurement time: publishing and draining. */
  durationMs: number;
  samples: BenchSample[];
}

function ratePerSec(n: number, ms: number): number | null {
  return n > 0 && ms > 0 ? (n * 1000) / ms : null;
}

const INTERVAL_HIGHEST_US = 60_000_000;

/**
 * The latencies of one interval: an HDR histogram (1 µs .. 60 s, 2 significant digits) that is
 * reset each tick, and an exact running mean. Coarser than LatencyRecorder, and without its
 * iteration for the mean, so that a summary a second stays cheap.
 */
export class IntervalLatency {
  private readonly h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: INTERVAL_HIGHEST_US, numberOfSignificantValueDigits: 2, autoResize: false });
  private sumUs = 0;

  recordMs(ms: number): void {
    const us = Math.min(INTERVAL_HIGHEST_US, Math.max(1, Math.round(ms * 1000)));
    this.sumUs += us;
    this.h.recordValue(us);
  }

  /** The summary so far, then empty. */
  take(): LatencySummary {
    const h = this.h;
    let s: LatencySummary = { count: 0, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null, meanMs: null };
    if (h.totalCount > 0) {
      // A percentile is its bucket's upper edge; never report one above the exact max.
      const max = h.maxValue;
      const ms = (us: number): number => Math.round(Math.min(us, max)) / 1000;
      s = {
        count: h.totalCount,
        p50Ms: ms(h.getValueAtPercentile(50)),
        p95Ms: ms(h.getValueAtPercentile(95)),
        p99Ms: ms(h.getValueAtPercentile(99)),
        maxMs: ms(max),
        meanMs: Math.round(this.sumUs / h.totalCount) / 1000,
      };
    }
    h.reset();
    this.sumUs = 0;
    return s;
  }
}

/**
 * Counts, latencies, CPU and RSS of one mode, with a sample per tick. The callbacks run once per
 * message: they only count and record into histograms.
 */
export class ModeMeter {
  published = 0;
  confirmed = 0;
  nacked = 0;
  consumed = 0;
  private readonly confirmLatency = new LatencyRecorder();
  private readonly e2eLatency = new LatencyRecorder();
  private startAt: number;
  private cpuAtStart: number;
  private firstPublishAt: number | undefined;
  private lastPublishAt = 0;
  private lastConsumedAt = 0;
  private peakRss: number;
  private readonly samples: BenchSample[] = [];
  private readonly confirmInterval = new IntervalLatency();
  private readonly e2eInterval = new IntervalLatency();
  private interval = this.freshInterval(0, 0);

  constructor(private readonly probe: Probe = processProbe) {
    this.startAt = probe.now();
    this.cpuAtStart = probe.cpuMicros();
    this.peakRss = probe.rssBytes();
  }

  /** Measurement starts now (after the consumers are subscribed, before the producers start). */
  start(): void {
    this.startAt = this.probe.now();
    this.cpuAtStart = this.probe.cpuMicros();
    this.peakRss = Math.max(this.peakRss, this.probe.rssBytes());
    this.interval = this.freshInterval(this.startAt, this.cpuAtStart);
    this.confirmInterval.take();
    this.e2eInterval.take();
  }

  private freshInterval(at: number, cpu: number) {
    return { at, cpu, published: 0, confirmed: 0, nacked: 0, consumed: 0 };
  }

  onWritten(): void {
    const t = this.probe.now();
    this.firstPublishAt ??= t;
    this.lastPublishAt = t;
    this.published++;
    this.interval.published++;
  }

  onConfirm(latencyMs: number | undefined): void {
    this.lastPublishAt = this.probe.now();
    this.confirmed++;
    this.interval.confirmed++;
    if (latencyMs !== undefined) {
      this.confirmLatency.recordMs(latencyMs);
      this.confirmInterval.recordMs(latencyMs);
    }
  }

  onNack(): void {
    this.nacked++;
    this.interval.nacked++;
  }

  onConsumed(e2eMs: number | undefined): void {
    this.lastConsumedAt = this.probe.now();
    this.consumed++;
    this.interval.consumed++;
    if (e2eMs !== undefined && e2eMs >= 0) {
      this.e2eLatency.recordMs(e2eMs);
      this.e2eInterval.recordMs(e2eMs);
    }
  }

  /** Close the current interval: its sample. */
  tick(): BenchSample {
    const now = this.probe.now();
    const cpu = this.probe.cpuMicros();
    const rss = this.probe.rssBytes();
    this.peakRss = Math.max(this.peakRss, rss);
    const iv = this.interval;
    const sample: BenchSample = {
      second: this.samples.length + 1,
      elapsedMs: now - this.startAt,
      intervalMs: now - iv.at,
      published: iv.published,
      confirmed: iv.confirmed,
      nacked: iv.nacked,
      consumed: iv.consumed,
      confirmLatency: this.confirmInterval.take(),
      e2eLatency: this.e2eInterval.take(),
      cpuSeconds: (cpu - iv.cpu) / 1e6,
      rssBytes: rss,
    };
    this.samples.push(sample);
    this.interval = this.freshInterval(now, cpu);
    return sample;
  }

  /** The last (partial) interval, if anything happened or time passed in it; then the totals. */
  finish(): { last: BenchSample | undefined; totals: MeterTotals } {
    const iv = this.interval;
    const busy = iv.published + iv.confirmed + iv.nacked + iv.consumed > 0;
    const last = busy || this.probe.now() - iv.at >= 100 || this.samples.length === 0 ? this.tick() : undefined;
    const end = this.interval.at;
    const cpuSeconds = (this.interval.cpu - this.cpuAtStart) / 1e6;
    const from = this.firstPublishAt;
    const publishDurationMs = from === undefined ? 0 : this.lastPublishAt - from;
    return {
      last,
      totals: {
        published: this.published,
        confirmed: this.confirmed,
        nacked: this.nacked,
        consumed: this.consumed,
        publishDurationMs,
        publishRatePerSec: ratePerSec(this.published, publishDurationMs),
        consumeRatePerSec: from === undefined ? null : ratePerSec(this.consumed, this.lastConsumedAt - from),
        confirmLatency: this.confirmLatency.summary(),
        e2eLatency: this.e2eLatency.summary(),
        cpuSeconds,
        cpuUsPerMessage: this.published > 0 ? (cpuSeconds * 1e6) / this.published : null,
        peakRssBytes: this.peakRss,
        durationMs: end - this.startAt,
        samples: this.samples,
      },
    };
  }
}

const TIME_ORIGIN_MS = performance.timeOrigin;

/** Now, on the publisher's clock (µs since the epoch, performance-based). */
function nowUs(): number {
  return (TIME_ORIGIN_MS + performance.now()) * 1000;
}

/** Publish-to-delivery latency in ms, from the header the publisher set; undefined without it. Pure but for the clock. */
export function endToEndMs(msg: Pick<ConsumeMessage, 'properties'>, nowMicros: number = nowUs()): number | undefined {
  const v = (msg.properties.headers as Record<string, unknown> | undefined)?.[PUBLISHED_AT_US_HEADER];
  const us = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
  return us === undefined ? undefined : (nowMicros - us) / 1000;
}

/** bench-async256-k3x9q: a queue name per run. */
function queueName(spec: BenchRunSpec): string {
  return `bench-${spec.label.replace('/', '')}-${Math.random().toString(36).slice(2, 7)}`;
}

function sumOf<T>(list: readonly T[], f: (x: T) => number): number {
  return list.reduce((a, x) => a + f(x), 0);
}

/**
 * A channel on a connection of its own, to whichever node answers first: declaring and deleting
 * the queue survive a node that went away in between. Without a signal, it runs on Ctrl+C too.
 */
async function withAdminChannel<T>(urls: readonly string[], opts: BenchOptions, signal: AbortSignal | undefined, fn: (ch: Channel) => Promise<T>): Promise<T> {
  const c = await connectAny(urls, 0, { heartbeatS: opts.heartbeatS, timeoutMs: opts.reconnectTimeoutMs, signal, connectionName: 'rmq-bench bench (queues)' });
  c.connection.on('error', () => undefined);
  try {
    const ch = await c.connection.createChannel();
    ch.on('error', () => undefined);
    return await fn(ch);
  } finally {
    await closeWithin(c.connection);
  }
}

/** amqplib's own errors (a channel or connection closed under us) as AmqpError, with its code; ours as they are. */
function asAmqpError(what: string, err: unknown): unknown {
  if (err instanceof RmqBenchError) return err;
  const e = err as { code?: unknown; classId?: unknown };
  return new AmqpError(`${what}: ${errorMessage(err)}`, typeof e.code === 'number' ? e.code : undefined, typeof e.classId === 'number' ? e.classId : undefined, { cause: err });
}

async function subscribe(...args: Parameters<typeof startStreamConsumer>): Promise<StreamConsumer> {
  try {
    return await startStreamConsumer(...args);
  } catch (err) {
    throw asAmqpError(`a consumer could not subscribe to ${args[0].queue}`, err);
  }
}

/** One run: fresh queue, consumers subscribed, producers until the bound, consumers drain, queue deleted. */
async function runOne(ctx: Context, opts: BenchOptions, spec: BenchRunSpec, urls: readonly string[], hooks: BenchHooks): Promise<BenchModeResult> {
  const queue = queueName(spec);
  try {
    await withAdminChannel(urls, opts, ctx.signal, (ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  } catch (err) {
    throw asAmqpError(`could not declare queue ${queue}`, err);
  }
  hooks.onRunStart?.(spec, queue);
  const meter = new ModeMeter();
  const stopProducers = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let ticker: NodeJS.Timeout | undefined;
  const consumers: StreamConsumer[] = [];
  let producerTasks: Promise<PublisherResult>[] = [];
  try {
    for (let i = 0; i < opts.consumers; i++) {
      consumers.push(
        await subscribe(
          {
            urls,
            queue,
            prefetch: opts.prefetch,
            ackEvery: opts.ackEvery,
            heartbeatS: opts.heartbeatS,
            connectTimeoutMs: opts.reconnectTimeoutMs,
            signal: ctx.signal,
            connectionName: `rmq-bench bench consumer ${i + 1}`,
          },
          (msg) => meter.onConsumed(endToEndMs(msg)),
        ),
      );
    }
    let consumerLost: string | null = null;
    for (const c of consumers) void c.lost.then((why) => (consumerLost ??= why));

    meter.start();
    ticker = setInterval(() => hooks.onSample?.(spec, meter.tick()), 1_000);
    if (opts.durationMs !== undefined) timer = setTimeout(() => stopProducers.abort(), opts.durationMs);
    const count = opts.count ?? Number.MAX_SAFE_INTEGER;
    producerTasks = Array.from({ length: opts.producers }, () => {
      const runId = newRunId();
      const ledger = new Ledger(opts.count === undefined ? { runId } : { runId, capacity: opts.count });
      return runPublisher(
        {
          urls,
          startIndex: 0,
          exchange: '',
          routingKey: queue,
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
        },
        ledger,
        {
          signal: ctx.signal,
          stop: stopProducers.signal,
          onWritten: () => meter.onWritten(),
          onConfirm: (ms) => meter.onConfirm(ms),
          onEvent: (e) => {
            if (e.type === 'nack') meter.onNack();
            else if (e.type !== 'connected') ctx.log(`${spec.label}: ${e.type}: ${e.detail}`);
          },
        },
      );
    });
    const producers = await Promise.all(producerTasks);
    clearTimeout(timer);
    const publishes = sumOf(producers, (p) => p.publishes);
    const gaveUp = producers.find((p) => p.gaveUp !== null)?.gaveUp ?? null;

    let drained: boolean | null = null;
    if (opts.consumers > 0 && !ctx.signal.aborted) {
      try {
        await retryUntil(
          async () => meter.consumed,
          (n) => n >= publishes || consumerLost !== null,
          { timeoutMs: opts.drainTimeoutMs, intervalMs: 50, signal: ctx.signal, describe: () => 'drain' },
        );
        drained = meter.consumed >= publishes;
      } catch (err) {
        if (err instanceof DeadlineError) drained = false;
        else if (!(err instanceof InterruptedError)) throw err;
      }
    }
    await Promise.all(consumers.map((c) => c.stop()));
    clearInterval(ticker);
    const { last, totals } = meter.finish();
    if (last) hooks.onSample?.(spec, last);
    const interrupted = ctx.signal.aborted || producers.some((p) => p.interrupted);
    const consumerGaveUp: string | null = consumerLost;
    const run: BenchModeResult = {
      ...spec,
      queue,
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
      stoppedBy: interrupted ? 'interrupted' : gaveUp !== null || consumerGaveUp !== null ? 'gave-up' : stopProducers.signal.aborted ? 'time' : 'count',
      drained: interrupted ? null : drained,
      gaveUp: gaveUp ?? (consumerGaveUp === null ? null : `consumer: ${consumerGaveUp}`),
      samples: totals.samples,
    };
    return run;
  } finally {
    clearTimeout(timer);
    clearInterval(ticker);
    // On an error: stop everything before the queue goes.
    stopProducers.abort();
    await Promise.allSettled([...producerTasks, ...consumers.map((c) => c.stop())]);
    await deleteQueue(ctx, opts, urls, queue);
  }
}

async function deleteQueue(ctx: Context, opts: BenchOptions, urls: readonly string[], queue: string): Promise<void> {
  try {
    await withAdminChannel(urls, opts, undefined, (ch) => ch.deleteQueue(queue));
  } catch (err) {
    ctx.log(`could not delete queue ${queue}: ${errorMessage(err)} (delete it in the management UI)`);
  }
}

export async function runBench(ctx: Context, opts: BenchOptions, hooks: BenchHooks = {}): Promise<BenchResult> {
  const startedAtIso = new Date().toISOString();
  const urls = opts.urls ?? ctx.config.nodes.map((n) => amqpUrl(ctx.config, n));
  const specs = benchRuns(opts.modes, opts.windows, opts.batchSize);
  const runs: BenchModeResult[] = [];
  try {
    for (const spec of specs) {
      if (ctx.signal.aborted) break;
      runs.push(await runOne(ctx, opts, spec, urls, hooks));
    }
  } catch (err) {
    if (!(err instanceof InterruptedError)) throw err;
  }
  // The options go into reports: never with a password.
  const options = opts.urls ? { ...opts, urls: opts.urls.map(maskUrl) } : opts;
  return { options, startedAtIso, runs, interrupted: ctx.signal.aborted, processPeakRssBytes: process.resourceUsage().maxRSS * 1024 };
}
