import type { ConfirmChannel, GetMessage } from 'amqplib';
import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { retryUntil } from '../../util/retry.js';
import { NotFoundError, RmqBenchError, UsageError, errorMessage } from '../../errors.js';

/**
 * `dlq inspect` and `dlq replay`. Inspect reads every message without losing one: each is
 * taken unacked and, at the end, given back with nack(requeue) (which does not count as a
 * failed delivery on RabbitMQ 4.x quorum queues). Replay republishes with confirms and acks
 * (removes) the dead letter only after the confirm: a crash mid-replay loses nothing, at
 * worst one message is replayed twice.
 */

export interface DeadLetterRow {
  messageId: string | undefined;
  reason: string | undefined;
  sourceQueue: string | undefined;
  /** x-death count of the first death. */
  count: number | undefined;
  firstDeathAt: string | undefined;
  lastDeathAt: string | undefined;
  bytes: number;
}

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

function asTime(v: unknown): string | undefined {
  // x-death 'time' is an AMQP timestamp, seconds since the epoch; amqplib decodes it as
  // { '!': 'timestamp', value }.
  const tagged = typeof v === 'object' && v !== null && 'value' in v ? (v as { value: unknown }).value : v;
  const n = asNumber(tagged);
  return n === undefined ? undefined : new Date(n * 1000).toISOString();
}

/** One dead letter in words. Pure. */
export function deadLetterRow(m: { content: Buffer; properties: { messageId?: unknown; headers?: Record<string, unknown> } }): DeadLetterRow {
  const h = m.properties.headers ?? {};
  const deaths = Array.isArray(h['x-death']) ? (h['x-death'] as Record<string, unknown>[]) : [];
  const reason = typeof h['x-first-death-reason'] === 'string' ? h['x-first-death-reason'] : undefined;
  const queue = typeof h['x-first-death-queue'] === 'string' ? h['x-first-death-queue'] : undefined;
  const first = deaths.find((d) => d.reason === reason && d.queue === queue) ?? deaths[deaths.length - 1];
  const times = deaths
    .map((d) => asTime(d.time))
    .filter((t): t is string => t !== undefined)
    .sort();
  return {
    messageId: typeof m.properties.messageId === 'string' ? m.properties.messageId : undefined,
    reason,
    sourceQueue: queue,
    count: asNumber(first?.count),
    firstDeathAt: times[0],
    lastDeathAt: times[times.length - 1],
    bytes: m.content.length,
  };
}

/** "reason=rejected" | "queue=demo.orders" → a predicate. Pure. */
export function parseFilter(text: string | undefined): (row: DeadLetterRow) => boolean {
  if (text === undefined) return () => true;
  const m = /^(reason|queue)=(.+)$/.exec(text.trim());
  if (!m) throw new UsageError(`--filter '${text}' is not reason=<reason> or queue=<queue>`);
  const [, key, value] = m;
  return key === 'reason' ? (r) => r.reason === value : (r) => r.sourceQueue === value;
}

async function withDlqChannel<T>(ctx: Context, queue: string, fn: (ch: ConfirmChannel) => Promise<T>): Promise<T> {
  const { config } = ctx;
  const c = await connectAny(
    config.nodes.map((n) => amqpUrl(config, n)),
    0,
    { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench dlq' },
  );
  c.connection.on('error', () => undefined);
  try {
    const ch = await c.connection.createConfirmChannel();
    ch.on('error', () => undefined);
    await ch.checkQueue(queue).catch((err: unknown) => {
      throw new NotFoundError(`queue '${queue}' does not exist (${errorMessage(err)})`);
    });
    return await fn(ch);
  } finally {
    await closeWithin(c.connection);
  }
}

export async function inspectDlq(ctx: Context, queue: string, limit: number): Promise<{ queue: string; rows: DeadLetterRow[]; total: number }> {
  return withDlqChannel(ctx, queue, async (ch) => {
    const { messageCount } = await ch.checkQueue(queue);
    const taken: GetMessage[] = [];
    try {
      while (taken.length < limit) {
        const m = await ch.get(queue, { noAck: false });
        if (!m) break;
        taken.push(m);
      }
      return { queue, rows: taken.map(deadLetterRow), total: messageCount };
    } finally {
      if (taken.length > 0) ch.nack(taken[taken.length - 1]!, true, true);
    }
  });
}

export interface ReplayOptions {
  queue: string;
  to: string;
  limit: number;
  filter: string | undefined;
  /** For tests of crash safety: drop the connection after N confirms, before acking the Nth. */
  crashAfter: number | undefined;
}

export interface ReplayResult {
  queue: string;
  to: string;
  replayed: number;
  skipped: number;
  leftInQueue: number;
}

export class SimulatedCrash extends RmqBenchError {
  constructor(after: number) {
    super(`simulated crash after ${after} confirmed replays (the last one not yet removed from the DLQ)`, 70);
  }
}

export async function replayDlq(ctx: Context, o: ReplayOptions): Promise<ReplayResult> {
  const keep = parseFilter(o.filter);
  return withDlqChannel(ctx, o.queue, async (ch) => {
    await ch.checkQueue(o.to).catch((err: unknown) => {
      throw new NotFoundError(`target queue '${o.to}' does not exist (${errorMessage(err)})`);
    });
    let replayed = 0;
    let skipped = 0;
    const skippedMsgs: GetMessage[] = [];
    try {
      while (replayed < o.limit) {
        const m = await ch.get(o.queue, { noAck: false });
        if (!m) break;
        if (!keep(deadLetterRow(m))) {
          skipped++;
          skippedMsgs.push(m);
          continue;
        }
        // Publish a copy through the default exchange, wait for its confirm, then remove the original.
        ch.sendToQueue(o.to, m.content, { ...m.properties, headers: { ...(m.properties.headers ?? {}), 'x-rmq-bench-replayed-from': o.queue } });
        await ch.waitForConfirms();
        replayed++;
        if (o.crashAfter !== undefined && replayed >= o.crashAfter) throw new SimulatedCrash(replayed);
        ch.ack(m);
        ctx.progress.update(`replayed ${replayed}`);
      }
    } finally {
      // Skipped ones go back untouched (nack requeue one by one: the last replayed is not covered).
      for (const m of skippedMsgs) ch.nack(m, false, true);
    }
    // The requeued ones are back once the queue has applied the nacks: wait briefly for them.
    const leftInQueue = (
      await retryUntil(
        () => ch.checkQueue(o.queue),
        (q) => q.messageCount >= skipped,
        { timeoutMs: 5_000, intervalMs: 100, signal: ctx.signal, describe: () => 'skipped messages not back' },
      ).catch(() => ch.checkQueue(o.queue))
    ).messageCount;
    return { queue: o.queue, to: o.to, replayed, skipped, leftInQueue };
  });
}
