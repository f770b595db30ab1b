import { consumerOptions } from '../../client/consumer-defaults.js';
import type { ConsumerResult } from '../../client/consumer-result.js';
import type { Endpoints } from '../../client/amqp091/locate.js';
import { newRunId, type TimelineEvent } from '../../client/amqp091/publisher.js';
import { consumerFor, publisherFor } from '../../client/clients.js';
import { DEFAULT_PROTOCOL } from '../../client/protocol.js';
import type { PublisherSnapshot } from '../../client/publisher-options.js';
import type { PublisherResult } from '../../client/publisher-result.js';
import { shortNodeName } from '../../cluster/broker/queue-leadership.js';
import type { Context } from '../../context.js';
import { Ledger, parseMessageId, type ReadSource } from '../../ledger/ledger.js';
import { reconcile } from '../../ledger/reconcile.js';
import { LatencyRecorder } from '../../measure/histogram.js';
import type { ProcessedStore } from '../../store/processed.js';
import { maskUrl } from '../../url.js';
import { type ChaosConsumer, type ChaosOptions, type ChaosProducer, type ConfirmGap, GAP_MIN_MS, type LatencyPhase } from './chaos-plan.js';
import { controlQueue } from './chaos-queues.js';

/**
 * chaos's traffic: P producers with confirms (and the control producer without, when asked) and
 * C consumers with manual ack and one idempotent store, spread over the nodes, and what they
 * measure while the nemesis works: every producer's ledger, the stretches without a confirm,
 * confirm latency by the fault on at the time, and each producer's node.
 */

/** Every producer's ledger, found by the run id in a consumed message's id. */
class Ledgers {
  readonly byRun = new Map<string, Ledger>();
  unexpected = 0;
  readonly unexpectedSamples: string[] = [];

  /** One delivery, as it arrived: `from` names its queue and consumer (each consumer's reads are a stream of their own) and its redelivered flag. */
  read(messageId: string | undefined, from?: ReadSource): void {
    const parsed = messageId === undefined ? undefined : parseMessageId(messageId);
    const ledger = parsed ? this.byRun.get(parsed.runId) : undefined;
    if (ledger && parsed) {
      ledger.recordReadSeq(parsed.seq, from);
      return;
    }
    this.unexpected++;
    if (this.unexpectedSamples.length < 20) this.unexpectedSamples.push(String(messageId));
  }
}

/** The confirming producers' live counters, summed; control: what the control producer wrote. */
interface TrafficCounters {
  written: number;
  confirmed: number;
  inFlight: number;
  control: number;
}

interface TrafficSetup {
  endpoints: Endpoints;
  /** The confirming producers' queues (the control queue comes from the options). */
  names: readonly string[];
  store: ProcessedStore;
  /** performance.now() of the run's start. */
  t0: number;
  /** The latency phase a confirm arriving now belongs to. */
  phaseNow: () => LatencyPhase;
}

export class ChaosTraffic {
  readonly ledgers = new Ledgers();
  readonly gaps: ConfirmGap[] = [];
  readonly latency = new Map<LatencyPhase, LatencyRecorder>();
  /** Deliveries processed (or skipped as duplicates) from the confirming producers' queues. */
  consumed = 0;
  lastDeliveryAt = performance.now();
  /** Each consumer's queue, by index. */
  readonly consumerQueues: string[];
  private readonly stopProducing = new AbortController();
  private readonly stopConsuming = new AbortController();
  private readonly runIds: string[] = [];
  private readonly snapshots: (() => PublisherSnapshot)[] = [];
  private readonly lastConfirmAt: number[];
  /** Each producer's node now (Erlang name), undefined while it has no connection. */
  private readonly nodeOf: (string | undefined)[];
  /** Each producer's nodes in the order it connected to them (short names). */
  private readonly connectedTo: string[][];
  private readonly maskedUrls: string[];
  private readonly producerRuns: Promise<PublisherResult>[] = [];
  private readonly consumerRuns: Promise<ConsumerResult>[];

  /** Starts every producer, then every consumer. */
  constructor(
    private readonly ctx: Context,
    private readonly opts: ChaosOptions,
    private readonly setup: TrafficSetup,
  ) {
    const producerCount = opts.producers + (opts.control ? 1 : 0);
    this.lastConfirmAt = new Array<number>(producerCount).fill(setup.t0);
    this.nodeOf = new Array<string | undefined>(producerCount).fill(undefined);
    this.connectedTo = Array.from({ length: producerCount }, () => []);
    this.maskedUrls = setup.endpoints.urls.map(maskUrl);
    for (let p = 0; p < producerCount; p++) this.producerRuns.push(this.startProducer(p));
    // The push consumers, the polling ones (--polling), then the control queue's.
    const readers = opts.consumers + opts.polling;
    const consumerCount = readers + (opts.control ? 1 : 0);
    this.consumerQueues = Array.from({ length: consumerCount }, (_, c) =>
      opts.control && c === readers ? controlQueue(opts) : setup.names[c % setup.names.length]!,
    );
    this.consumerRuns = this.consumerQueues.map((queue, c) => this.startConsumer(queue, c));
    // Awaited only at the end: a failure before then must not be an unhandled rejection.
    for (const run of [...this.producerRuns, ...this.consumerRuns]) run.catch(() => undefined);
  }

  /** The queue producer p publishes to: the control producer (the last) has its own. */
  private producerQueue(p: number): string {
    return p === this.opts.producers ? controlQueue(this.opts) : this.setup.names[p % this.setup.names.length]!;
  }

  private startProducer(p: number): Promise<PublisherResult> {
    const { opts, setup } = this;
    const isControl = p === opts.producers;
    const runId = newRunId();
    this.runIds.push(runId);
    // Ledgers sized for the run at the nominal rate; they grow if a producer writes more.
    const capacity = Math.ceil((opts.ratePerSec * opts.durationMs) / 1000) + opts.window;
    const ledger = new Ledger({ runId, capacity });
    this.ledgers.byRun.set(runId, ledger);
    return publisherFor(opts.protocol ?? DEFAULT_PROTOCOL)(
      {
        urls: setup.endpoints.urls,
        startIndex: p % setup.endpoints.urls.length,
        exchange: '',
        routingKey: this.producerQueue(p),
        count: 2 ** 31 - 1,
        ratePerSec: opts.ratePerSec,
        sizeBytes: opts.sizeBytes,
        persistent: true,
        mandatory: false,
        mode: isControl ? 'none' : 'async',
        window: opts.window,
        batchSize: 100,
        confirmTimeoutMs: opts.confirmTimeoutMs,
        heartbeatS: opts.heartbeatS,
        reconnectTimeoutMs: opts.rejoinTimeoutMs + 60_000,
        // No credit (AMQP 1.0) or a blocked connection while a quorum loss or a power cut lasts
        // is waited out as long as a lost connection is.
        blockedTimeoutMs: opts.rejoinTimeoutMs + 60_000,
        runId,
        recordConfirmLatency: false,
      },
      ledger,
      {
        signal: this.ctx.signal,
        stop: this.stopProducing.signal,
        onStart: (snapshot) => {
          this.snapshots[p] = snapshot;
        },
        onConfirm: (ms) => this.onConfirm(p, ms),
        onEvent: (e) => this.onProducerEvent(p, e),
      },
    );
  }

  /** A stretch of GAP_MIN_MS or more since producer p's last confirm is a gap; the latency goes to the phase on now. */
  private onConfirm(p: number, ms: number | undefined): void {
    const { t0 } = this.setup;
    const now = performance.now();
    if (now - this.lastConfirmAt[p]! >= GAP_MIN_MS) this.gaps.push({ producer: p + 1, fromMs: this.lastConfirmAt[p]! - t0, toMs: now - t0 });
    this.lastConfirmAt[p] = now;
    if (ms === undefined) return;
    const phase = this.setup.phaseNow();
    let rec = this.latency.get(phase);
    if (!rec) {
      rec = new LatencyRecorder();
      this.latency.set(phase, rec);
    }
    rec.recordMs(ms);
  }

  private onProducerEvent(p: number, e: TimelineEvent): void {
    if (e.type === 'connected') {
      const i = this.maskedUrls.indexOf(e.detail);
      this.nodeOf[p] = i === -1 ? undefined : this.setup.endpoints.nodes[i];
      this.connectedTo[p]!.push(this.nodeOf[p] ? shortNodeName(this.nodeOf[p]!) : e.detail);
    } else if (e.type === 'connection-lost' || e.type === 'gave-up') this.nodeOf[p] = undefined;
  }

  private startConsumer(queue: string, c: number): Promise<ConsumerResult> {
    const { ctx, opts, setup } = this;
    // The protocol's consumer (over AMQP 1.0 it settles with outcomes, credit as its prefetch); no failures are simulated here.
    return consumerFor(opts.protocol ?? DEFAULT_PROTOCOL)(
      consumerOptions({
        urls: setup.endpoints.urls,
        // Spread over the nodes, as the producers are: a fault hits some consumers, not all.
        startIndex: (c + 1) % setup.endpoints.urls.length,
        queue,
        prefetch: opts.prefetch,
        idleTimeoutMs: 2 ** 31 - 1,
        heartbeatS: opts.heartbeatS,
        reconnectTimeoutMs: opts.rejoinTimeoutMs + 60_000,
        store: setup.store,
        polling: this.isPolling(c),
      }),
      {
        signal: AbortSignal.any([ctx.signal, this.stopConsuming.signal]),
        onDelivery: (d) => {
          if (d.outcome !== 'processed' && d.outcome !== 'duplicate-skipped') return;
          // The timeline's consumed counts the confirming producers' queues; the control queue is apart.
          if (queue !== controlQueue(opts)) this.consumed++;
          this.lastDeliveryAt = performance.now();
          this.ledgers.read(d.messageId, { queue, consumer: c + 1, redelivered: d.redelivered });
        },
        onEvent: (line) => {
          if (line.startsWith('connection lost')) ctx.log(`consumer ${c + 1}: ${line}`);
        },
      },
    );
  }

  /** Every producer's node now, the control producer's last, for the nemesis's producer target. */
  producerNodes(): (string | undefined)[] {
    return [...this.nodeOf];
  }

  counters(): TrafficCounters {
    const c = { written: 0, confirmed: 0, inFlight: 0, control: 0 };
    this.snapshots.forEach((snap, p) => {
      const s = snap();
      if (p === this.opts.producers) c.control += s.written;
      else {
        c.written += s.written;
        c.confirmed += s.confirmed;
        c.inFlight += s.inFlight;
      }
    });
    return c;
  }

  /** No new messages: each producer still awaits its retries and outstanding confirms. */
  stopProducers(): void {
    this.stopProducing.abort();
  }

  stopConsumers(): void {
    this.stopConsuming.abort();
  }

  producersDone(): Promise<PublisherResult[]> {
    return Promise.all(this.producerRuns);
  }

  consumersDone(): Promise<ConsumerResult[]> {
    return Promise.all(this.consumerRuns);
  }

  /** The gaps still open at endMs (ms since t0): a confirming producer with no confirm since. */
  closeGaps(endMs: number): void {
    const { t0 } = this.setup;
    for (let p = 0; p < this.opts.producers; p++)
      if (endMs - (this.lastConfirmAt[p]! - t0) >= GAP_MIN_MS) this.gaps.push({ producer: p + 1, fromMs: this.lastConfirmAt[p]! - t0, toMs: endMs });
  }

  producerReports(results: readonly PublisherResult[]): ChaosProducer[] {
    return results.map((r, p) => ({
      producer: p + 1,
      queue: this.producerQueue(p),
      confirms: p !== this.opts.producers,
      runId: this.runIds[p]!,
      reconnects: r.reconnects,
      longestStallMs: r.longestStallMs,
      connectedTo: this.connectedTo[p]!,
      reconciliation: reconcile(this.ledgers.byRun.get(this.runIds[p]!)!),
    }));
  }

  consumerReports(results: readonly ConsumerResult[]): ChaosConsumer[] {
    return results.map((r, c) => ({
      consumer: c + 1,
      queue: this.consumerQueues[c]!,
      received: r.received,
      processed: r.processed,
      duplicatesSkipped: r.duplicatesSkipped,
      reconnects: r.reconnects,
      polling: this.isPolling(c),
    }));
  }

  /** Consumer c polls with basic.get: it comes after the push consumers, before the control queue's. */
  private isPolling(c: number): boolean {
    return c >= this.opts.consumers && c < this.opts.consumers + this.opts.polling;
  }
}
