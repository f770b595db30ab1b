import { runConsumer } from '../../client/amqp091/consumer.js';
import type { ConsumerResult } from '../../client/consumer-result.js';
import { newRunId, publishConfirmed } from '../../client/amqp091/publisher.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { InterruptedError } from '../../errors.js';
import { Ledger } from '../../ledger/ledger.js';

/**
 * prefetch-demo: one fast and one slow consumer on the same queue, at several prefetch
 * values. The slow one subscribes first (the worst case for an unlimited prefetch). Shows how
 * the messages are split, the total time, and how many each held unacked at its peak.
 * Returns data; never prints.
 */

export interface PrefetchDemoOptions {
  queue: string;
  exchange: string;
  count: number;
  prefetches: number[];
  fastWorkMs: number;
  slowWorkMs: number;
}

export interface PrefetchRow {
  prefetch: number;
  fastProcessed: number;
  slowProcessed: number;
  /** From the start of consuming to the last message processed. */
  totalMs: number;
  fastMaxHeld: number;
  slowMaxHeld: number;
}

export interface PrefetchDemoResult {
  options: PrefetchDemoOptions;
  rows: PrefetchRow[];
}

async function oneRow(ctx: Context, o: PrefetchDemoOptions, prefetch: number): Promise<PrefetchRow> {
  const { config, progress } = ctx;
  const urls = config.nodes.map((n) => amqpUrl(config, n));
  const label = `prefetch ${prefetch === 0 ? '0 (unlimited)' : prefetch}`;
  progress.start(`${label}: publishing ${o.count} messages`);
  await ctx.management.request('DELETE', `/api/queues/${encodeURIComponent(config.vhost)}/${encodeURIComponent(o.queue)}/contents`);
  const runId = newRunId();
  await publishConfirmed(
    { urls, exchange: o.exchange, routingKey: o.queue, count: o.count, runId, signal: ctx.signal },
    new Ledger({ runId, capacity: o.count }),
  );
  progress.update(`${label}: a slow (${o.slowWorkMs} ms) and a fast (${o.fastWorkMs} ms) consumer`);
  const base = {
    urls,
    queue: o.queue,
    prefetch,
    autoAck: false,
    crashOnDelivery: false,
    failure: undefined,
    ackEvery: 1,
    idleTimeoutMs: 1_500,
    heartbeatS: 5,
    reconnectTimeoutMs: 30_000,
    store: undefined,
  };
  const started = performance.now();
  let lastProcessedAt = started;
  const onDelivery = (): void => {
    lastProcessedAt = performance.now();
  };
  let slowSubscribed!: () => void;
  const slowReady = new Promise<void>((r) => (slowSubscribed = r));
  const slow = runConsumer({ ...base, workMs: o.slowWorkMs, count: undefined }, { signal: ctx.signal, onDelivery, onSubscribed: () => slowSubscribed() });
  await Promise.race([slowReady, slow]);
  const fast = runConsumer({ ...base, workMs: o.fastWorkMs, count: undefined }, { signal: ctx.signal, onDelivery });
  const [s, f] = (await Promise.all([slow, fast])) as [ConsumerResult, ConsumerResult];
  if (s.stoppedBecause === 'interrupted' || f.stoppedBecause === 'interrupted') throw new InterruptedError();
  const row = {
    prefetch,
    fastProcessed: f.processed,
    slowProcessed: s.processed,
    totalMs: lastProcessedAt - started,
    fastMaxHeld: f.maxHeld,
    slowMaxHeld: s.maxHeld,
  };
  progress.succeed(`${label}: fast ${row.fastProcessed}, slow ${row.slowProcessed}, ${Math.round(row.totalMs)} ms`);
  return row;
}

export async function runPrefetchDemo(ctx: Context, o: PrefetchDemoOptions): Promise<PrefetchDemoResult> {
  await requireCluster(ctx);
  const rows: PrefetchRow[] = [];
  for (const p of o.prefetches) rows.push(await oneRow(ctx, o, p));
  return { options: o, rows };
}
