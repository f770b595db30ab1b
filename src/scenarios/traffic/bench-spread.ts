import { LatencyRecorder, type LatencySummary } from '../../measure/histogram.js';
import type { MeterTotals } from '../../measure/meter.js';

/**
 * bench's queues of one run, the pure part: their names, how the producers and consumers spread
 * over them, and each queue's own figures. Pure but for the meter's clock, which is injectable.
 */

/** One queue of a run: who used it, what went through it, and where its leader was. */
export interface BenchQueueRow {
  queue: string;
  /** Its leader's node (rabbit2) once every member was online; null when the management API did not say. */
  leaderAtStart: string | null;
  /** Its leader's node after the run, before the queue was deleted; null when the management API did not say. */
  leaderAtEnd: string | null;
  producers: number;
  consumers: number;
  /** Distinct messages its producers handed to the socket. */
  published: number;
  /** Broker acks (tx: messages in committed transactions); 0 in mode none. */
  confirmed: number;
  consumed: number;
  /** published over its own first message written to its last one written or confirmed. */
  publishRatePerSec: number | null;
  /** consumed over its own first message written to its last one consumed. */
  consumeRatePerSec: number | null;
  /** Publish to broker ack on this queue; empty (count 0) in mode none. */
  confirmLatency: LatencySummary;
}

/** The queue client i (producer or consumer) uses: round-robin over the run's queues, as PerfTest spreads them. */
export function queueOfClient(client: number, queues: number): number {
  return client % queues;
}

/** How many of `clients` land on each of `queues` queues, round-robin. */
export function clientsPerQueue(clients: number, queues: number): number[] {
  return Array.from({ length: queues }, (_, q) => (clients > q ? Math.floor((clients - q - 1) / queues) + 1 : 0));
}

/**
 * A run's queue names: bench-<label>-<suffix>, and with several queues -1..-N after it
 * (bench-async256-k3x9q-1). The suffix makes them fresh; the label says which run they belong to.
 */
export function benchQueueNames(label: string, queues: number, suffix: string): string[] {
  const stem = `bench-${label.replace('1.0 ', 'amqp10-').replace('/', '')}-${suffix}`;
  return queues === 1 ? [stem] : Array.from({ length: queues }, (_, i) => `${stem}-${i + 1}`);
}

/** A fresh 5-character suffix for a run's queue names. */
export function queueSuffix(): string {
  return Math.random().toString(36).slice(2, 7).padEnd(5, '0');
}

function ratePerSec(n: number, ms: number): number | null {
  return n > 0 && ms > 0 ? (n * 1000) / ms : null;
}

type QueueWhere = Pick<BenchQueueRow, 'queue' | 'leaderAtStart' | 'leaderAtEnd' | 'producers' | 'consumers'>;

/**
 * The row of a run's only queue: the run meter's own figures, which a QueueMeter fed the same
 * callbacks would repeat (nothing feeds one beside the run's meter then: two calls fewer a
 * message). Pure.
 */
export function onlyQueueRow(
  where: QueueWhere,
  t: Pick<MeterTotals, 'published' | 'confirmed' | 'consumed' | 'publishRatePerSec' | 'consumeRatePerSec' | 'confirmLatency'>,
): BenchQueueRow {
  return {
    ...where,
    published: t.published,
    confirmed: t.confirmed,
    consumed: t.consumed,
    publishRatePerSec: t.publishRatePerSec,
    consumeRatePerSec: t.consumeRatePerSec,
    confirmLatency: t.confirmLatency,
  };
}

/**
 * One queue's counts and confirm latency, fed by the same callbacks as the run's meter (once per
 * message: it only counts and records into a histogram).
 */
const EMPTY_LATENCY: LatencySummary = { count: 0, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null, meanMs: null };

export class QueueMeter {
  published = 0;
  confirmed = 0;
  consumed = 0;
  private firstPublishAt: number | undefined;
  private lastPublishAt = 0;
  private lastConsumedAt = 0;
  private readonly confirmLatency: LatencyRecorder | undefined;
  private readonly now: () => number;

  /** latencies false: the counts and rates only (the run's own meter has the latencies of a run on one queue). */
  constructor(options: { latencies?: boolean; now?: () => number } = {}) {
    this.confirmLatency = options.latencies === false ? undefined : new LatencyRecorder();
    this.now = options.now ?? (() => performance.now());
  }

  onWritten(at?: number): void {
    const t = at ?? this.now();
    this.firstPublishAt ??= t;
    this.lastPublishAt = t;
    this.published++;
  }

  onConfirm(latencyMs: number | undefined, at?: number): void {
    this.lastPublishAt = at ?? this.now();
    this.confirmed++;
    if (latencyMs !== undefined) this.confirmLatency?.recordMs(latencyMs);
  }

  onConsumed(): void {
    this.lastConsumedAt = this.now();
    this.consumed++;
  }

  /** The queue's row: its counts, its rates over its own publishing and consuming time. */
  row(where: QueueWhere, confirmLatency?: LatencySummary): BenchQueueRow {
    const from = this.firstPublishAt;
    return {
      ...where,
      published: this.published,
      confirmed: this.confirmed,
      consumed: this.consumed,
      publishRatePerSec: from === undefined ? null : ratePerSec(this.published, this.lastPublishAt - from),
      consumeRatePerSec: from === undefined ? null : ratePerSec(this.consumed, this.lastConsumedAt - from),
      confirmLatency: confirmLatency ?? this.confirmLatency?.summary() ?? EMPTY_LATENCY,
    };
  }
}
