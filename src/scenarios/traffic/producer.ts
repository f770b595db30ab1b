import { newRunId, type PublishMode, type TimelineEvent } from '../../client/amqp091/publisher.js';
import type { Protocol } from '../../client/protocol.js';
import { publisherFor } from '../../client/clients.js';
import type { PublisherResult } from '../../client/publisher-result.js';
import type { Context } from '../../context.js';
import { Ledger, type LedgerDocument } from '../../ledger/ledger.js';
import type { Progress } from '../../progress.js';
import { SCHEMA_VERSION } from '../../schema-version.js';
import { maskUrl } from '../../url.js';
import { harnessPrinter, type ProducerHarness } from './producer-harness.js';

/**
 * `rmq-bench producer`: publish N messages with or without confirms, recording what happened to
 * every one in a ledger (the --ledger file, for `verify`). Returns data; never prints the result.
 */

export interface ProducerOptions {
  count: number;
  protocol: Protocol;
  urls: string[];
  queue: string;
  exchange: string;
  routingKey: string;
  ratePerSec: number;
  mode: PublishMode;
  window: number;
  batchSize: number;
  mandatory: boolean;
  persistent: boolean;
  sizeBytes: number;
  confirmTimeoutMs: number;
  heartbeatS: number;
  reconnectTimeoutMs: number;
  /** How long the broker may block the connection (a resource alarm) before the run gives up. */
  blockedTimeoutMs: number;
  /** At the end: how long to wait for the broker to have read every publish. */
  flushTimeoutMs: number;
  /** Hidden options for producer-crash, which runs the producer as a child. */
  harness?: ProducerHarness | undefined;
}

/** What --ledger writes and `rmq-bench verify` reads. */
export interface ProducerReport {
  schemaVersion: number;
  kind: 'producer-report';
  queue: string;
  exchange: string;
  routingKey: string;
  urls: string[];
  result: PublisherResult;
  ledger: LedgerDocument;
}

export interface ProducerRun {
  result: PublisherResult;
  /** The --ledger document, built when called (it holds the whole ledger). */
  report(): ProducerReport;
}

export async function runProducer(ctx: Context, o: ProducerOptions): Promise<ProducerRun> {
  const runId = o.harness?.runId ?? newRunId();
  // producer-crash's naive mode: resume at --start-at, print `at`/`sent` lines for the parent.
  const startSeq = o.harness?.startAt ?? 0;
  const printLines = harnessPrinter(o.harness);
  const ledger = new Ledger({ runId, capacity: o.count });
  const status = new PublishStatus(ctx.progress, o);
  const { progress } = ctx;
  progress.start(`publishing ${o.count} messages to ${o.exchange} (${o.routingKey})`);
  const ticker = setInterval(() => progress.update(status.line()), 250);
  let result: PublisherResult;
  try {
    result = await publisherFor(o.protocol)(
      {
        urls: o.urls,
        startIndex: 0,
        exchange: o.exchange,
        routingKey: o.routingKey,
        count: o.count,
        ratePerSec: o.ratePerSec,
        sizeBytes: o.sizeBytes,
        persistent: o.persistent,
        mandatory: o.mandatory,
        mode: o.mode,
        window: o.window,
        batchSize: o.batchSize,
        confirmTimeoutMs: o.confirmTimeoutMs,
        heartbeatS: o.heartbeatS,
        reconnectTimeoutMs: o.reconnectTimeoutMs,
        blockedTimeoutMs: o.blockedTimeoutMs,
        flushTimeoutMs: o.flushTimeoutMs,
        runId,
        startSeq,
      },
      ledger,
      {
        signal: ctx.signal,
        onWritten: (n) => {
          status.written = n;
          printLines?.(startSeq + n);
        },
        onEvent: (e) => status.onEvent(e),
      },
    );
  } finally {
    clearInterval(ticker);
    progress.stop();
  }
  return { result, report: () => producerReport(o, result, ledger) };
}

/** The status line while publishing: how far the run is, or that the broker blocks it (with the deadline). */
class PublishStatus {
  written = 0;
  private lost = 0;
  /** connection.blocked: its reason and since when (performance.now()). */
  private blocked: { reason: string; since: number } | undefined;

  constructor(
    private readonly progress: Progress,
    private readonly o: Pick<ProducerOptions, 'count' | 'blockedTimeoutMs'>,
  ) {}

  line(): string {
    const { blocked, o } = this;
    return blocked
      ? `blocked by the broker (${blocked.reason}: a resource alarm) for ${((performance.now() - blocked.since) / 1000).toFixed(0)} s of --blocked-timeout ${Math.round(o.blockedTimeoutMs / 1000)} s; published ${this.written}/${o.count}`
      : `published ${this.written}/${o.count}, connection losses ${this.lost}`;
  }

  /** Counts the lost connections, follows blocked/unblocked, and logs every event (a connect only once a connection was lost). */
  onEvent(e: TimelineEvent): void {
    if (e.type === 'connection-lost') this.lost++;
    if (e.type === 'blocked') this.blocked = { reason: e.detail.replace(/^.*: /, ''), since: performance.now() };
    if (e.type === 'unblocked' || e.type === 'connection-lost') this.blocked = undefined;
    if (e.type !== 'connected' || this.lost > 0) this.progress.info(`${(e.atMs / 1000).toFixed(2)} s ${e.type}: ${e.detail}`);
  }
}

function producerReport(o: ProducerOptions, result: PublisherResult, ledger: Ledger): ProducerReport {
  return {
    schemaVersion: SCHEMA_VERSION,
    kind: 'producer-report',
    queue: o.queue,
    exchange: o.exchange,
    routingKey: o.routingKey,
    urls: o.urls.map(maskUrl),
    result,
    ledger: ledger.toJSON(),
  };
}
