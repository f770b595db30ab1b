import type { ReadRecorder } from '../../ledger/ledger.js';
import { InterruptedError } from '../../errors.js';
import { systemClock } from '../../util/retry.js';
import { withConnection } from './connect.js';

export interface DrainOptions {
  urls: readonly string[];
  queue: string;
  /** Stop once nothing arrived for this long and the queue reports 0 messages. */
  idleMs: number;
  timeoutMs: number;
  heartbeatS: number;
  signal: AbortSignal;
  onProgress?: (read: number) => void;
}

export interface DrainResult {
  queue: string;
  deliveries: number;
  durationMs: number;
  /** False when the deadline passed with messages still in the queue. */
  complete: boolean;
  leftInQueue: number;
}

/**
 * Read everything in the queue (auto-ack: reading is all we do), recording each message id in the
 * ledger, or in its run's of several (several.ts), with the queue and the broker's redelivered flag
 * for the order of the reads.
 */
export async function drainQueue(ledger: ReadRecorder, opts: DrainOptions): Promise<DrainResult> {
  const started = performance.now();
  return withConnection(opts.urls, { heartbeatS: opts.heartbeatS, timeoutMs: 30_000, signal: opts.signal }, async ({ connection }) => {
    const ch = await connection.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(2_000);
    let deliveries = 0;
    let last = performance.now();
    const firstDelivery = { queue: opts.queue, redelivered: false };
    const redelivery = { queue: opts.queue, redelivered: true };
    const { consumerTag } = await ch.consume(
      opts.queue,
      (msg) => {
        if (!msg) return;
        deliveries++;
        last = performance.now();
        ledger.recordRead(
          typeof msg.properties.messageId === 'string' ? msg.properties.messageId : undefined,
          msg.fields.redelivered ? redelivery : firstDelivery,
        );
      },
      { noAck: true },
    );
    let leftInQueue = 0;
    let complete = false;
    for (;;) {
      if (opts.signal.aborted) throw new InterruptedError();
      await systemClock.sleep(200, opts.signal);
      opts.onProgress?.(deliveries);
      if (performance.now() - last >= opts.idleMs) {
        leftInQueue = (await ch.checkQueue(opts.queue)).messageCount;
        if (leftInQueue === 0) {
          complete = true;
          break;
        }
      }
      if (performance.now() - started > opts.timeoutMs) {
        leftInQueue = (await ch.checkQueue(opts.queue)).messageCount;
        break;
      }
    }
    await ch.cancel(consumerTag).catch(() => undefined);
    return { queue: opts.queue, deliveries, durationMs: performance.now() - started, complete, leftInQueue };
  });
}
