import { readFile, writeFile } from 'node:fs/promises';
import { drainQueue } from '../../amqp/drain.js';
import { newRunId, runPublisher, type PublisherResult } from '../../amqp/publisher.js';
import { amqpUrl, type Config } from '../../config.js';
import type { Context } from '../../context.js';
import { BrokerUnavailableError, DataError, InterruptedError, NotFoundError } from '../../errors.js';
import { Ledger, type LedgerDocument } from '../../ledger/ledger.js';
import { reconcile } from '../../ledger/reconcile.js';
import { renderProducer, renderReconciliation } from '../../report/compare.js';
import { SCHEMA_VERSION } from '../../report/json.js';
import { maskUrl } from '../../url.js';
import { emit } from '../output.js';
import { harnessPrinter, producerWithOutbox } from './producer-crash.js';
import type { ProducerCliOptions, VerifyCliOptions } from '../program.js';

export function defaultUrls(config: Config): string[] {
  return config.nodes.map((n) => amqpUrl(config, n));
}

interface ProducerReport {
  schemaVersion: number;
  kind: 'producer-report';
  queue: string;
  exchange: string;
  routingKey: string;
  urls: string[];
  result: PublisherResult;
  ledger: LedgerDocument;
}

export async function producer(ctx: Context, o: ProducerCliOptions): Promise<number> {
  if (o.outboxFile !== undefined) return producerWithOutbox(ctx, { ...o, outboxFile: o.outboxFile });
  const urls = o.urls ?? defaultUrls(ctx.config);
  const runId = o.harness?.runId ?? newRunId();
  // producer-crash's naive mode: resume at --start-at, print `at`/`sent` lines for the parent.
  const startSeq = o.harness?.startAt ?? 0;
  const printLines = harnessPrinter(o.harness);
  const ledger = new Ledger({ runId, capacity: o.count });
  const { progress } = ctx;
  progress.start(`publishing ${o.count} messages to ${o.exchange} (${o.routingKey})`);
  let latest = { written: 0, lost: 0 };
  const ticker = setInterval(() => progress.update(`published ${latest.written}/${o.count}, connection losses ${latest.lost}`), 250);
  let result: PublisherResult;
  try {
    result = await runPublisher(
      {
        urls,
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
        runId,
        startSeq,
      },
      ledger,
      {
        signal: ctx.signal,
        onWritten: (n) => {
          latest = { ...latest, written: n };
          printLines?.(startSeq + n);
        },
        onEvent: (e) => {
          if (e.type === 'connection-lost') latest = { ...latest, lost: latest.lost + 1 };
          if (e.type !== 'connected' || latest.lost > 0) progress.info(`${(e.atMs / 1000).toFixed(2)} s ${e.type}: ${e.detail}`);
        },
      },
    );
  } finally {
    clearInterval(ticker);
    progress.stop();
  }
  if (o.reportFile) {
    const report: ProducerReport = {
      schemaVersion: SCHEMA_VERSION,
      kind: 'producer-report',
      queue: o.queue,
      exchange: o.exchange,
      routingKey: o.routingKey,
      urls: urls.map(maskUrl),
      result,
      ledger: ledger.toJSON(),
    };
    await writeFile(o.reportFile, JSON.stringify(report));
  }
  const nothingHappened = result.gaveUp !== null && result.publishes === 0;
  if (!nothingHappened) emit(o, 'producer', { ...result, reportFile: o.reportFile ?? null }, renderProducer(result));
  if (result.interrupted) throw new InterruptedError('interrupted: the figures above are what was measured until Ctrl+C');
  if (result.gaveUp !== null) {
    throw new BrokerUnavailableError(`the producer gave up after ${result.written} of ${o.count} messages: ${result.gaveUp}`, {
      ...(o.reportFile ? { hint: `what happened so far is in ${o.reportFile}` } : {}),
    });
  }
  return 0;
}

async function readReport(file: string): Promise<ProducerReport> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new NotFoundError(`cannot read the report ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new DataError(`${file} is not a JSON document (was it written by 'rmq-bench producer --report'?)`);
  }
  const r = doc as Partial<ProducerReport>;
  if (r.kind !== 'producer-report' || typeof r.queue !== 'string' || r.ledger === undefined) {
    throw new DataError(`${file} is not a producer report (kind '${String(r.kind)}')`);
  }
  return r as ProducerReport;
}

export async function verify(ctx: Context, o: VerifyCliOptions): Promise<number> {
  const report = await readReport(o.reportFile);
  const ledger = Ledger.fromJSON(report.ledger, o.reportFile);
  const queue = o.queue ?? report.queue;
  ctx.progress.start(`draining ${queue}`);
  const drain = await drainQueue(ledger, {
    urls: o.urls ?? defaultUrls(ctx.config),
    queue,
    idleMs: o.idleMs,
    timeoutMs: 600_000,
    heartbeatS: 5,
    signal: ctx.signal,
    onProgress: (n) => ctx.progress.update(`draining ${queue}: ${n} read`),
  });
  ctx.progress.succeed(`drained ${queue}: ${drain.deliveries} messages in ${Math.round(drain.durationMs)} ms`);
  const r = reconcile(ledger);
  emit(o, 'verify', { queue, drain, reconciliation: r }, renderReconciliation(r));
  return r.verdict.ok ? 0 : 1;
}
