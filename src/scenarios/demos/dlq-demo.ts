import type { ConfirmChannel, GetMessage } from 'amqplib';
import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { runConsumer } from '../../client/amqp091/consumer.js';
import type { FailureAction } from '../../client/consumer-failures.js';
import type { ConsumerResult } from '../../client/consumer-result.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { InterruptedError, errorMessage } from '../../errors.js';
import { retryUntil, systemClock } from '../../util/retry.js';
import type { DlqReason } from './dlq-reasons.js';

/**
 * dlq-demo: every way a message reaches a dead-letter exchange, verified by the broker's own
 * x-first-death-reason. demo.dlq is bound to demo.dlx; demo.retry (also bound to demo.dlx, and
 * looping back to demo.orders) is unbound for the demo and bound again at the end, also on
 * failure or Ctrl+C. Returns data; never prints.
 */

export interface DlqDemoOptions {
  reasons: DlqReason[];
  count: number;
  /** Per-message expiration for `expired`. */
  ttlMs: number;
  /** x-max-length for `maxlen` (a temporary policy that keeps dlx-orders' keys). */
  maxLength: number;
}

export interface DeadMessage {
  messageId: string | undefined;
  firstDeathReason: string | undefined;
  firstDeathQueue: string | undefined;
  /** x-death count for the first entry. */
  deathCount: number | undefined;
  deliveryCount: number | undefined;
}

export interface ReasonResult {
  reason: DlqReason;
  /** What the demo did to provoke it, in words. */
  how: string;
  published: number;
  /** Deliveries the consumer saw, per message id (empty where no consumer runs). */
  deliveriesPerMessage: Record<string, number>;
  expectedInDlq: number;
  dead: DeadMessage[];
  leftInQueue: number;
  ok: boolean;
  problems: string[];
}

export interface DlqDemoResult {
  results: ReasonResult[];
  ok: boolean;
}

const QUEUE = 'demo.orders';
const DLX = 'demo.dlx';
const DLQ = 'demo.dlq';
const RETRY = 'demo.retry';
const TEMP_POLICY = 'rmq-bench-dlq-demo-maxlen';

type Step = (title: string) => Promise<void>;

function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

export function deadMessageOf(m: { properties: { messageId?: unknown; headers?: Record<string, unknown> } }): DeadMessage {
  const h = m.properties.headers ?? {};
  const deaths = Array.isArray(h['x-death']) ? (h['x-death'] as Record<string, unknown>[]) : [];
  const first = deaths.find((d) => d.reason === h['x-first-death-reason'] && d.queue === h['x-first-death-queue']) ?? deaths[deaths.length - 1];
  return {
    messageId: typeof m.properties.messageId === 'string' ? m.properties.messageId : undefined,
    firstDeathReason: typeof h['x-first-death-reason'] === 'string' ? h['x-first-death-reason'] : undefined,
    firstDeathQueue: typeof h['x-first-death-queue'] === 'string' ? h['x-first-death-queue'] : undefined,
    deathCount: numberOf(first?.count),
    deliveryCount: numberOf(h['x-delivery-count']),
  };
}

async function publish(ch: ConfirmChannel, ids: string[], options: { expiration?: number } = {}): Promise<void> {
  for (const id of ids) {
    ch.publish('demo.orders', 'demo.orders', Buffer.from(`dlq-demo ${id}`), {
      messageId: id,
      persistent: true,
      ...(options.expiration === undefined ? {} : { expiration: String(options.expiration) }),
    });
  }
  await ch.waitForConfirms();
}

/** Read every message in demo.dlq without removing it: get them all unacked, then close the channel (they go back). */
async function peekDlq(ch: ConfirmChannel, waitForCount: number, timeoutMs: number, signal: AbortSignal): Promise<DeadMessage[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { messageCount } = await ch.checkQueue(DLQ);
    if (messageCount >= waitForCount || performance.now() > deadline) break;
    await systemClock.sleep(200, signal);
  }
  const got: GetMessage[] = [];
  for (;;) {
    const m = await ch.get(DLQ, { noAck: false });
    if (!m) break;
    got.push(m);
  }
  // Leave them for `rmq-bench dlq inspect`: requeue without counting a failed delivery.
  if (got.length > 0) ch.nack(got[got.length - 1]!, true, true);
  return got.map(deadMessageOf);
}

async function consume(ctx: Context, failure: FailureAction | 'crash'): Promise<ConsumerResult> {
  const { config } = ctx;
  return runConsumer(
    {
      urls: config.nodes.map((n) => amqpUrl(config, n)),
      queue: QUEUE,
      prefetch: 1,
      autoAck: false,
      crashOnDelivery: failure === 'crash',
      failure: failure === 'crash' ? undefined : { action: failure, every: undefined, rate: undefined },
      workMs: 0,
      ackEvery: 1,
      count: undefined,
      idleTimeoutMs: 2_000,
      heartbeatS: 5,
      reconnectTimeoutMs: 30_000,
      store: undefined,
    },
    { signal: ctx.signal, onDelivery: (d) => ctx.progress.info(`  delivery #${(d.deliveryCount ?? 0) + 1} of ${d.messageId ?? '?'} → ${d.outcome}`) },
  );
}

function perMessage(r: ConsumerResult): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of r.deliveries) if (d.messageId) out[d.messageId] = (out[d.messageId] ?? 0) + 1;
  return out;
}

async function oneReason(ctx: Context, ch: ConfirmChannel, o: DlqDemoOptions, reason: DlqReason, step: Step): Promise<ReasonResult> {
  const m = ctx.management;
  const vh = encodeURIComponent(ctx.config.vhost);
  await m.request('DELETE', `/api/queues/${vh}/${encodeURIComponent(QUEUE)}/contents`);
  await m.request('DELETE', `/api/queues/${vh}/${encodeURIComponent(DLQ)}/contents`);
  // The previous reason's consumer has closed its connection, but on a busy machine the queue
  // can still count it for a moment, and hand it this reason's messages: in a CI run the maxlen
  // reason then read 0 messages left in the queue instead of 2 (they were out to that consumer,
  // not ready). Nothing is published until the queue has no consumer.
  await retryUntil(
    () => ch.checkQueue(QUEUE),
    (q) => q.consumerCount === 0,
    {
      timeoutMs: 30_000,
      intervalMs: 200,
      signal: ctx.signal,
      describe: (last) =>
        `${QUEUE} still had ${last.value?.consumerCount ?? '?'} consumer(s) before the ${reason} run${last.error ? ` (${errorMessage(last.error)})` : ''}`,
    },
  );
  const ids = Array.from({ length: o.count }, (_, i) => `dlq-${reason}-${i + 1}`);
  let how = '';
  let deliveries: Record<string, number> = {};
  let expectedInDlq = ids.length;
  const problems: string[] = [];

  if (reason === 'delivery_limit') {
    how = 'a consumer that crashes on every delivery (connection closed, no ack): delivery-limit 5 = the first delivery + 5 redeliveries';
    await step(`delivery_limit: publish ${ids.length} messages, then ${how}`);
    await publish(ch, ids);
    deliveries = perMessage(await consume(ctx, 'crash'));
    for (const id of ids) if (deliveries[id] !== 6) problems.push(`${id} was delivered ${deliveries[id] ?? 0} times, not 6`);
  } else if (reason === 'rejected') {
    how = 'basic.reject with requeue=false on the first delivery: dead-lettered at once, whatever the count';
    await step(`rejected: publish ${ids.length} messages, then ${how}`);
    await publish(ch, ids);
    deliveries = perMessage(await consume(ctx, 'reject-drop'));
    for (const id of ids) if (deliveries[id] !== 1) problems.push(`${id} was delivered ${deliveries[id] ?? 0} times, not once`);
  } else if (reason === 'expired') {
    how = `a per-message expiration of ${o.ttlMs} ms and no consumer`;
    await step(`expired: publish ${ids.length} messages with ${how}`);
    await publish(ch, ids, { expiration: o.ttlMs });
  } else {
    how = `a temporary policy (priority 10, keeping dlx-orders' DLX and delivery-limit) with x-max-length ${o.maxLength} and overflow drop-head; ${ids.length} messages published`;
    await step(`maxlen: ${how}`);
    await m.request('PUT', `/api/policies/${vh}/${TEMP_POLICY}`, {
      body: {
        pattern: '^demo\\.orders$',
        'apply-to': 'queues',
        priority: 10,
        definition: { 'dead-letter-exchange': DLX, 'delivery-limit': 5, 'max-length': o.maxLength, overflow: 'drop-head' },
      },
    });
    try {
      // Wait until the queue reports the temporary policy before publishing.
      for (let i = 0; i < 50; i++) {
        const q = (await m.get(`/api/queues/${vh}/${encodeURIComponent(QUEUE)}`)) as { policy?: string };
        if (q.policy === TEMP_POLICY) break;
        await systemClock.sleep(100, ctx.signal);
      }
      await publish(ch, ids);
      expectedInDlq = Math.max(0, ids.length - o.maxLength);
    } finally {
      await m
        .request('DELETE', `/api/policies/${vh}/${TEMP_POLICY}`)
        .catch((err: unknown) => ctx.log(`could not remove policy ${TEMP_POLICY}: ${errorMessage(err)}`));
    }
  }

  await step(`reading ${DLQ} (the messages stay there)`);
  const dead = await peekDlq(ch, expectedInDlq, reason === 'expired' ? o.ttlMs + 10_000 : 10_000, ctx.signal);
  await ctx.checkpoint({ name: 'dead-lettered', queue: DLQ, vhost: ctx.config.vhost, mode: reason, run: 1 });
  const leftInQueue = (await ch.checkQueue(QUEUE)).messageCount;
  const ours = dead.filter((d) => d.messageId?.startsWith(`dlq-${reason}-`));
  if (ours.length !== expectedInDlq) problems.push(`${ours.length} messages in ${DLQ}, expected ${expectedInDlq}`);
  for (const d of ours) {
    if (d.firstDeathReason !== reason) problems.push(`${d.messageId ?? '?'}: x-first-death-reason ${d.firstDeathReason ?? 'none'}, expected ${reason}`);
    if (d.firstDeathQueue !== QUEUE) problems.push(`${d.messageId ?? '?'}: x-first-death-queue ${d.firstDeathQueue ?? 'none'}, expected ${QUEUE}`);
  }
  const expectedLeft = reason === 'maxlen' ? Math.min(ids.length, o.maxLength) : 0;
  if (leftInQueue !== expectedLeft) problems.push(`${leftInQueue} messages left in ${QUEUE}, expected ${expectedLeft}`);
  if (reason === 'maxlen') await m.request('DELETE', `/api/queues/${vh}/${encodeURIComponent(QUEUE)}/contents`);
  return { reason, how, published: ids.length, deliveriesPerMessage: deliveries, expectedInDlq, dead: ours, leftInQueue, ok: problems.length === 0, problems };
}

export async function runDlqDemo(ctx: Context, o: DlqDemoOptions, step: Step): Promise<DlqDemoResult> {
  await requireCluster(ctx);
  const m = ctx.management;
  const vh = encodeURIComponent(ctx.config.vhost);
  const { config } = ctx;
  const c = await connectAny(
    config.nodes.map((n) => amqpUrl(config, n)),
    0,
    { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench dlq-demo' },
  );
  c.connection.on('error', () => undefined);
  let retryUnbound = false;
  try {
    const ch = await c.connection.createConfirmChannel();
    ch.on('error', () => undefined);
    await step(`setup: quorum queue ${DLQ} bound to ${DLX}; ${RETRY} unbound from ${DLX} for the demo (it would send dead letters back to ${QUEUE})`);
    await ch.assertQueue(DLQ, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await ch.bindQueue(DLQ, DLX, '');
    await ch.unbindQueue(RETRY, DLX, '');
    retryUnbound = true;
    const results: ReasonResult[] = [];
    for (const reason of o.reasons) {
      if (ctx.signal.aborted) throw new InterruptedError();
      results.push(await oneReason(ctx, ch, o, reason, step));
    }
    return { results, ok: results.every((r) => r.ok) };
  } finally {
    if (retryUnbound) {
      await m
        .request('POST', `/api/bindings/${vh}/e/${encodeURIComponent(DLX)}/q/${encodeURIComponent(RETRY)}`, { body: { routing_key: '', arguments: {} } })
        .catch((err: unknown) => ctx.log(`could not bind ${RETRY} to ${DLX} again: ${errorMessage(err)}`));
    }
    await closeWithin(c.connection);
  }
}
