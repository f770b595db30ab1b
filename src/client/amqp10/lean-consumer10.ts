import type { EventContext, Receiver } from 'rhea';
import { errorMessage } from '../../errors.js';
import { nowUs, PUBLISHED_AT_US_HEADER } from '../../measure/published-at.js';
import type { LeanConsumer } from '../lean-consumer-options.js';
import { closeWithin10, connectAny10, queueAddress } from './connection.js';

/**
 * bench's lean consumer over AMQP 1.0: one receiver link, the prefetch as link credit (rhea tops
 * it up as deliveries are settled), each delivery accepted at once, its end-to-end latency handed
 * to onMessage. No reconnect, no records: what a plain rhea consumer does. The AMQP 0-9-1 one is
 * amqp091/lean-consumer.ts.
 */

interface LeanConsumer10Options {
  urls: readonly string[];
  queue: string;
  /** Link credit (0: rhea's default window of 100). */
  prefetch: number;
  heartbeatS: number;
  connectTimeoutMs: number;
  signal: AbortSignal;
}

/** Publish-to-delivery latency in ms from the application property the publisher set; undefined without it. Pure but for the clock. */
function endToEndMs10(applicationProperties: Record<string, unknown> | undefined, nowMicros: number = nowUs()): number | undefined {
  const v = applicationProperties?.[PUBLISHED_AT_US_HEADER];
  const us = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
  return us === undefined ? undefined : (nowMicros - us) / 1000;
}

/** Resolves once the broker has attached the receiver. */
export async function startLeanConsumer10(opts: LeanConsumer10Options, onMessage: (e2eMs: number | undefined) => void): Promise<LeanConsumer> {
  const c = await connectAny10(opts.urls, 0, { heartbeatS: opts.heartbeatS, timeoutMs: opts.connectTimeoutMs, signal: opts.signal });
  const connection = c.connection;
  let stopping = false;
  let onLost!: (why: string) => void;
  const lost = new Promise<string>((resolve) => (onLost = resolve));
  const lose = (why: string): void => {
    if (!stopping) onLost(why);
  };
  let received = 0;
  let receiver: Receiver;
  try {
    receiver = await new Promise<Receiver>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the broker did not attach a receiver on ${opts.queue} within 10 s`)), 10_000);
      const r = connection.open_receiver({
        source: { address: queueAddress(opts.queue) },
        credit_window: opts.prefetch > 0 ? opts.prefetch : 100,
        autoaccept: true,
      });
      r.once('receiver_open', () => {
        clearTimeout(timer);
        resolve(r);
      });
      r.once('receiver_error', (ctx: EventContext) => {
        clearTimeout(timer);
        reject(new Error(`the broker refused a receiver on ${opts.queue}: ${errorMessage(ctx.receiver?.error)}`));
      });
    });
  } catch (err) {
    await closeWithin10(connection);
    throw err;
  }
  receiver.on('message', (ctx: EventContext) => {
    received++;
    onMessage(endToEndMs10(ctx.message?.application_properties as Record<string, unknown> | undefined));
  });
  receiver.on('receiver_close', () => lose(`the broker detached the receiver on ${opts.queue}`));
  receiver.on('receiver_error', (ctx: EventContext) => lose(`receiver error: ${errorMessage(ctx.receiver?.error)}`));
  connection.on('disconnected', (ctx: EventContext) => lose(ctx.error ? errorMessage(ctx.error) : 'disconnected'));
  connection.on('connection_close', () => lose('the broker closed the connection'));
  connection.on('connection_error', (ctx: EventContext) => lose(`connection error: ${errorMessage(ctx.connection.error)}`));
  return {
    lost,
    get received() {
      return received;
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      await closeWithin10(connection, 5_000);
    },
  };
}
