import type { Channel, ConsumeMessage } from 'amqplib';
import { errorMessage } from '../../errors.js';
import type { LeanConsumer, LeanConsumerOptions } from '../lean-consumer-options.js';
import { closeChannelWithin, closeWithin, connectAny } from './connect.js';

/**
 * A lean consumer for throughput runs: manual ack, prefetch, one multiple-ack every N (and
 * whatever is pending once a burst of deliveries has been handled), each delivery handed to
 * onMessage inside amqplib's callback. No reconnect, no records, no timers per message: what a
 * plain amqplib consumer does, so that `bench` measures the broker and not its own consumer.
 * For consumers with failures, crashes and an idempotent store, see runConsumer.
 */

/** Resolves once basic.consume is in place. */
export async function startLeanConsumer(opts: LeanConsumerOptions, onMessage: (msg: ConsumeMessage) => void): Promise<LeanConsumer> {
  const c = await connectAny(opts.urls, 0, {
    heartbeatS: opts.heartbeatS,
    timeoutMs: opts.connectTimeoutMs,
    signal: opts.signal,
    connectionName: opts.connectionName ?? 'rmq-bench consumer',
  });
  const conn = c.connection;
  conn.on('error', () => undefined);
  let stopping = false;
  let closed = false;
  let onLost!: (why: string) => void;
  const lost = new Promise<string>((resolve) => (onLost = resolve));
  const lose = (why: string): void => {
    closed = true;
    if (!stopping) onLost(why);
  };
  conn.on('close', (err?: Error) => lose(err ? errorMessage(err) : 'connection closed'));
  let ch: Channel;
  try {
    ch = await conn.createChannel();
    ch.on('error', () => undefined);
    ch.on('close', () => lose('channel closed'));
    if (opts.prefetch > 0) await ch.prefetch(opts.prefetch);
  } catch (err) {
    await closeWithin(conn);
    throw err;
  }
  let received = 0;
  let pending: ConsumeMessage | undefined;
  let pendingCount = 0;
  let flushScheduled = false;
  const flush = (): void => {
    flushScheduled = false;
    if (pending && !closed) ch.ack(pending, true);
    pending = undefined;
    pendingCount = 0;
  };
  try {
    await ch.consume(
      opts.queue,
      (msg) => {
        if (!msg) {
          lose(`the broker cancelled the subscription to ${opts.queue}`);
          return;
        }
        received++;
        onMessage(msg);
        if (opts.ackEvery <= 1) {
          ch.ack(msg);
          return;
        }
        pending = msg;
        if (++pendingCount >= opts.ackEvery) flush();
        else if (!flushScheduled) {
          // After this burst of deliveries: never sit on acks the broker waits for (prefetch < N).
          flushScheduled = true;
          setImmediate(flush);
        }
      },
      { noAck: false },
    );
  } catch (err) {
    await closeWithin(conn);
    throw err;
  }
  return {
    lost,
    get received() {
      return received;
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      flush();
      if (!closed) await closeChannelWithin(ch, 5_000);
      await closeWithin(conn);
    },
  };
}
