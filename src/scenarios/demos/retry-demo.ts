import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { runConsumer } from '../../client/amqp091/consumer.js';
import type { DeliveryRecord } from '../../client/consumer-result.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { errorMessage } from '../../errors.js';

/**
 * retry-demo: the article's loop demo.orders → nack(requeue=false) → demo.dlx → demo.retry
 * (TTL 5 s) → default exchange → demo.orders. A consumer fails the first K attempts and then
 * succeeds; each attempt's gap is measured and checked against demo.retry's TTL. demo.dlq,
 * if present, is unbound from demo.dlx for the demo (it would take a copy of every dead
 * letter) and bound again at the end. Returns data; never prints.
 */

export interface RetryDemoOptions {
  /** Attempts that fail before one succeeds. */
  failures: number;
  /** Accepted lateness over the TTL for each gap. */
  toleranceMs: number;
}

export interface RetryAttempt {
  attempt: number;
  atMs: number;
  /** Since the previous attempt. */
  gapMs: number | null;
  outcome: string;
  death: string | undefined;
}

export interface RetryDemoResult {
  messageId: string;
  ttlMs: number;
  attempts: RetryAttempt[];
  processedTimes: number;
  ok: boolean;
  problems: string[];
}

/** Gaps between consecutive deliveries of one message, checked against the retry TTL. Pure. */
export function checkGaps(deliveries: readonly Pick<DeliveryRecord, 'atMs'>[], ttlMs: number, toleranceMs: number): { gaps: number[]; problems: string[] } {
  const gaps: number[] = [];
  const problems: string[] = [];
  for (let i = 1; i < deliveries.length; i++) {
    const gap = deliveries[i]!.atMs - deliveries[i - 1]!.atMs;
    gaps.push(gap);
    if (gap < ttlMs) problems.push(`attempt ${i + 1} came ${Math.round(gap)} ms after the previous one, before the ${ttlMs} ms TTL`);
    else if (gap > ttlMs + toleranceMs)
      problems.push(`attempt ${i + 1} came ${Math.round(gap)} ms after the previous one, more than ${ttlMs + toleranceMs} ms`);
  }
  return { gaps, problems };
}

export async function runRetryDemo(ctx: Context, o: RetryDemoOptions, step: (title: string) => Promise<void>): Promise<RetryDemoResult> {
  await requireCluster(ctx);
  const { config, management: m } = ctx;
  const vh = encodeURIComponent(config.vhost);
  const retry = (await m.get(`/api/queues/${vh}/demo.retry`)) as { arguments?: Record<string, unknown> };
  const ttlMs = Number(retry.arguments?.['x-message-ttl'] ?? 5000);
  const bindings = (await m.get(`/api/exchanges/${vh}/demo.dlx/bindings/source`)) as { destination: string; destination_type: string }[];
  const dlqBound = bindings.some((b) => b.destination === 'demo.dlq' && b.destination_type === 'queue');
  const urls = config.nodes.map((n) => amqpUrl(config, n));
  const c = await connectAny(urls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench retry-demo' });
  c.connection.on('error', () => undefined);
  const messageId = `retry-demo-${Date.now().toString(36)}`;
  try {
    const ch = await c.connection.createConfirmChannel();
    ch.on('error', () => undefined);
    await step(
      `setup: purge demo.orders and demo.retry${dlqBound ? '; unbind demo.dlq from demo.dlx for the demo' : ''}; demo.retry holds dead letters for ${ttlMs} ms`,
    );
    await ch.purgeQueue('demo.orders');
    await ch.purgeQueue('demo.retry');
    if (dlqBound) await ch.unbindQueue('demo.dlq', 'demo.dlx', '');
    await step(`publish one message (${messageId}); the consumer fails its first ${o.failures} attempts with nack(requeue=false), then succeeds`);
    ch.publish('demo.orders', 'demo.orders', Buffer.from('retry-demo'), { messageId, persistent: true });
    await ch.waitForConfirms();
    const r = await runConsumer(
      {
        urls,
        queue: 'demo.orders',
        prefetch: 1,
        autoAck: false,
        crashOnDelivery: false,
        failure: { action: 'nack-drop', every: undefined, rate: undefined, first: o.failures },
        workMs: 0,
        ackEvery: 1,
        count: 1,
        idleTimeoutMs: ttlMs + o.toleranceMs + 5_000,
        heartbeatS: 5,
        reconnectTimeoutMs: 30_000,
        store: undefined,
      },
      {
        signal: ctx.signal,
        onDelivery: (d) => ctx.progress.info(`  attempt at ${(d.atMs / 1000).toFixed(2)} s → ${d.outcome}${d.death ? ` (x-death: ${d.death})` : ''}`),
      },
    );
    const mine = r.deliveries.filter((d) => d.messageId === messageId);
    const { gaps, problems } = checkGaps(mine, ttlMs, o.toleranceMs);
    const attempts: RetryAttempt[] = mine.map((d, i) => ({
      attempt: i + 1,
      atMs: d.atMs,
      gapMs: i === 0 ? null : gaps[i - 1]!,
      outcome: d.outcome,
      death: d.death,
    }));
    const processedTimes = mine.filter((d) => d.outcome === 'processed').length;
    if (mine.length !== o.failures + 1) problems.push(`${mine.length} attempts, expected ${o.failures + 1}`);
    if (processedTimes !== 1) problems.push(`processed ${processedTimes} times, expected once`);
    if (mine[mine.length - 1]?.outcome !== 'processed') problems.push('the last attempt did not succeed');
    return { messageId, ttlMs, attempts, processedTimes, ok: problems.length === 0, problems };
  } finally {
    if (dlqBound) {
      await m
        .request('POST', `/api/bindings/${vh}/e/demo.dlx/q/demo.dlq`, { body: { routing_key: '', arguments: {} } })
        .catch((err: unknown) => ctx.log(`could not bind demo.dlq to demo.dlx again: ${errorMessage(err)}`));
    }
    await closeWithin(c.connection);
  }
}
