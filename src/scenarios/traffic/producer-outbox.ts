import { runOutboxProducer, type OutboxProducerResult } from '../../client/outbox-producer.js';
import { newRunId } from '../../client/amqp091/publisher.js';
import type { Context } from '../../context.js';
import { openOutbox, type OutboxStore } from '../../store/outbox.js';
import type { ProducerOptions } from './producer.js';

/**
 * `rmq-bench producer --outbox <file>`: the events go to a SQLite outbox first, and a relay
 * publishes them; the same file resumes after a crash. Returns data; never prints the result.
 */

export interface ProducerOutboxOptions extends Omit<ProducerOptions, 'queue' | 'mode' | 'batchSize'> {
  outboxFile: string;
}

export async function runProducerOutbox(ctx: Context, o: ProducerOutboxOptions): Promise<OutboxProducerResult> {
  const store = openOutbox(o.outboxFile, { create: { runId: o.harness?.runId ?? newRunId(), count: o.count } });
  try {
    return await relay(ctx, store, o);
  } finally {
    store.close();
  }
}

/** Write the events still missing and publish the pending rows, with a status line (and `at <n>` lines for producer-crash). */
async function relay(ctx: Context, store: OutboxStore, o: ProducerOutboxOptions): Promise<OutboxProducerResult> {
  const { progress } = ctx;
  const print = o.harness?.progressLines ? (n: number): void => void process.stdout.write(`at ${n}\n`) : undefined;
  const before = store.counts();
  print?.(before.published);
  progress.start(
    before.written > 0
      ? `resuming ${o.outboxFile}: ${before.written}/${o.count} events written, ${before.pending} pending`
      : `writing ${o.count} events to the outbox ${o.outboxFile}; the relay publishes them to ${o.exchange || '(default exchange)'} (${o.routingKey})`,
  );
  let published = before.published;
  let connections = 0;
  const ticker = setInterval(() => progress.update(`outbox: ${published}/${o.count} published`), 250);
  try {
    return await runOutboxProducer(
      store,
      {
        urls: o.urls,
        startIndex: 0,
        exchange: o.exchange,
        routingKey: o.routingKey,
        ratePerSec: o.ratePerSec,
        sizeBytes: o.sizeBytes,
        persistent: o.persistent,
        mandatory: o.mandatory,
        window: o.window,
        confirmTimeoutMs: o.confirmTimeoutMs,
        heartbeatS: o.heartbeatS,
        reconnectTimeoutMs: o.reconnectTimeoutMs,
        blockedTimeoutMs: o.blockedTimeoutMs,
        flushTimeoutMs: o.flushTimeoutMs,
      },
      {
        signal: ctx.signal,
        onPublished: (n) => {
          published = n;
          print?.(n);
        },
        onEvent: (e) => {
          if (e.type === 'connected' && connections++ === 0) return;
          progress.info(`${(e.atMs / 1000).toFixed(2)} s ${e.type}: ${e.detail}`);
        },
      },
    );
  } finally {
    clearInterval(ticker);
    progress.stop();
  }
}
