import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { runConsumer } from '../../amqp/consumer.js';
import type { Context } from '../../context.js';
import { BrokerUnavailableError, InterruptedError } from '../../errors.js';
import { renderConsumer, renderConsumerCrash, renderDelivery, renderPrefetchDemo } from '../../report/consumer.js';
import { runPrefetchDemo, type PrefetchDemoOptions } from '../../scenarios/prefetch-demo.js';
import { runConsumerCrash, type ConsumerCrashOptions } from '../../scenarios/consumer-crash.js';
import { openProcessedStore, type ProcessedStore } from '../../store/processed.js';
import { emit } from '../output.js';
import type { ConsumerCliOptions } from '../program.js';
import { defaultUrls } from './producer.js';

export async function consumer(ctx: Context, o: ConsumerCliOptions): Promise<number> {
  let store: ProcessedStore | undefined;
  if (o.storeFile) {
    await mkdir(path.dirname(path.resolve(o.storeFile)), { recursive: true });
    store = openProcessedStore(o.storeFile, { idempotent: o.idempotent });
  }
  const { progress } = ctx;
  if (o.failure) progress.info(`on failure: ${o.failure.action}`);
  let shown = 0;
  try {
    const r = await runConsumer(
      {
        urls: o.urls ?? defaultUrls(ctx.config),
        queue: o.queue,
        prefetch: o.prefetch,
        autoAck: o.autoAck,
        crashOnDelivery: o.crashOnDelivery,
        failure: o.failure,
        workMs: o.workMs,
        ackEvery: o.ackEvery,
        count: o.count,
        idleTimeoutMs: o.idleTimeoutMs,
        heartbeatS: o.heartbeatS,
        reconnectTimeoutMs: o.reconnectTimeoutMs,
        store,
      },
      {
        signal: ctx.signal,
        // Every failure, crash and duplicate; the first 20 successes, then every 1000th.
        onDelivery: (d) => {
          shown++;
          if (d.outcome !== 'processed' || shown <= 20 || shown % 1000 === 0) progress.info(renderDelivery(d));
        },
        onEvent: (line) => progress.info(line),
      },
    );
    emit(o, 'consumer', { ...r, storeFile: o.storeFile ?? null }, renderConsumer(r, o.failure?.action));
    if (r.stoppedBecause === 'interrupted') throw new InterruptedError('interrupted: the figures above are what was measured until Ctrl+C');
    if (r.stoppedBecause === 'gave-up') throw new BrokerUnavailableError(`the consumer gave up: ${r.gaveUp ?? ''}`);
    return 0;
  } finally {
    store?.close();
  }
}

export async function consumerCrash(ctx: Context, o: ConsumerCrashOptions & { json: boolean; html: string | undefined }): Promise<number> {
  const { json, html, ...options } = o;
  const r = await runConsumerCrash(ctx, options);
  emit({ json, html }, 'consumer-crash', r, renderConsumerCrash(r));
  return r.ok ? 0 : 1;
}

export async function prefetchDemo(ctx: Context, o: PrefetchDemoOptions & { json: boolean; html: string | undefined }): Promise<number> {
  const { json, html, ...options } = o;
  const r = await runPrefetchDemo(ctx, options);
  emit({ json, html }, 'prefetch-demo', r, renderPrefetchDemo(r));
  return 0;
}
