import type { ChannelModel, ConsumeMessage } from 'amqplib';
import { numberHeader } from '../../client/delivery-headers.js';
import { InterruptedError, errorMessage } from '../../errors.js';
import { systemClock } from '../../util/retry.js';
import { SETTLE_MS, type SeenDelivery } from './delivery-limit-plan.js';

/**
 * delivery-limit-demo's consumer-timeout row: one round is one consumer on a channel of its own
 * (basic.consume, prefetch 1, manual ack, the consumer argument x-consumer-timeout) that takes the
 * message, never acks it, and waits for the broker's basic.cancel (amqplib hands it over as a null
 * message); then the channel is closed. RabbitMQ 4.3 keeps a timed-out consumer registered until
 * its channel goes, so each round's consumer is a new one on a new channel.
 */

/** How often the waits look again; the times themselves are taken in amqplib's callback. */
const POLL_MS = 10;

/** Poll until get() gives a value, or undefined after waitMs. */
async function within<T>(waitMs: number, signal: AbortSignal, get: () => T | undefined): Promise<T | undefined> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (signal.aborted) throw new InterruptedError();
    if (performance.now() >= deadline) return undefined;
    await systemClock.sleep(POLL_MS, signal).catch(() => undefined);
  }
}

/**
 * One round: the delivery recorded in `seen` with its x-delivery-count, redelivered flag and the
 * ms from it to the broker's basic.cancel (null when none came within timeoutMs + SETTLE_MS).
 * 'gone' when no delivery came within SETTLE_MS; else 'returned' (the cancel returned the message,
 * or, without one, the channel's close does).
 */
export async function timeoutRound(
  connection: ChannelModel,
  queue: string,
  timeoutMs: number,
  seen: SeenDelivery[],
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<'returned' | 'gone'> {
  const c = await connection.createChannel();
  c.on('error', () => undefined);
  try {
    await c.prefetch(1);
    let delivered: { m: ConsumeMessage; atMs: number } | undefined;
    let cancelAtMs: number | undefined;
    await c.consume(
      queue,
      (m) => {
        const now = performance.now();
        if (!m) cancelAtMs ??= now;
        else delivered ??= { m, atMs: now };
      },
      { noAck: false, arguments: { 'x-consumer-timeout': timeoutMs } },
    );
    const got = await within(SETTLE_MS, signal, () => delivered);
    if (!got) return 'gone';
    const h = (got.m.properties.headers ?? {}) as Record<string, unknown>;
    const d: SeenDelivery = { deliveryCount: numberHeader(h['x-delivery-count']) ?? null, redelivered: got.m.fields.redelivered, cancelMs: null };
    seen.push(d);
    const cancelled = await within(timeoutMs + SETTLE_MS, signal, () => cancelAtMs);
    if (cancelled !== undefined) d.cancelMs = Math.round(cancelled - got.atMs);
    return 'returned';
  } finally {
    await c.close().catch((e: unknown) => log(`could not close the timed-out consumer's channel on ${queue}: ${errorMessage(e)}`));
  }
}
