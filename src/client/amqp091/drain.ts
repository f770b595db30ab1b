import type { ChannelModel } from 'amqplib';
import type { ReadRecorder } from '../../ledger/ledger.js';
import { BrokerUnavailableError, InterruptedError, NotFoundError, errorMessage } from '../../errors.js';
import { systemClock } from '../../util/retry.js';
import { closeChannelWithin, closeWithin, connectAny, withConnection } from './connect.js';

export interface DrainOptions {
  urls: readonly string[];
  queue: string;
  /** Stop once nothing arrived for this long and the queue reports 0 messages (a stream: nothing arrived for this long). */
  idleMs: number;
  /**
   * A stream: read from its first message (x-stream-offset first), each delivery acked (a
   * stream's acks only grant credit), nothing taken. Complete once nothing arrives for idleMs: a
   * stream's declare-ok counts no messages.
   */
  fromFirstOffset?: boolean;
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
 * Read everything in the queue (auto-ack: reading is all we do; a stream from its first offset),
 * recording each message id in the ledger, or in its run's of several (several.ts), with the
 * queue and the broker's redelivered flag for the order of the reads.
 */
export async function drainQueue(ledger: ReadRecorder, opts: DrainOptions): Promise<DrainResult> {
  if (opts.fromFirstOffset === true) return readStream(ledger, opts);
  const started = performance.now();
  return withConnection(opts.urls, { heartbeatS: opts.heartbeatS, timeoutMs: 30_000, signal: opts.signal }, async ({ connection }) => {
    const ch = await connection.createChannel();
    ch.on('error', () => undefined);
    // A queue that does not exist is the user's to fix (exit 66), not an internal error.
    await ch.checkQueue(opts.queue).catch((err: unknown) => {
      if ((err as { code?: number }).code === 404) {
        throw new NotFoundError(`the queue ${opts.queue} does not exist`, {
          hint: 'give the queue the producer published to (--queue), or check the vhost of --urls',
        });
      }
      throw err;
    });
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

/**
 * A stream read from its first offset until nothing arrives for idleMs, each delivery acked (a
 * stream's acks only grant credit), nothing taken. The reads are kept aside and recorded only once
 * a read completes: a read the broker refuses or ends early (a node whose replica is not running
 * yet, just restarted) is started again from the first offset, from the next node on, until the
 * deadline, rather than counted short.
 */
async function readStream(ledger: ReadRecorder, opts: DrainOptions): Promise<DrainResult> {
  const started = performance.now();
  for (let attempt = 1; ; attempt++) {
    const c = await connectAny(opts.urls, (attempt - 1) % opts.urls.length, { heartbeatS: opts.heartbeatS, timeoutMs: 30_000, signal: opts.signal });
    c.connection.on('error', () => undefined);
    let outcome: { ids: (string | undefined)[]; complete: boolean } | string;
    try {
      outcome = await readStreamOnce(c.connection, opts, started);
    } finally {
      await closeWithin(c.connection);
    }
    if (typeof outcome !== 'string') {
      const read = { queue: opts.queue, redelivered: false };
      for (const id of outcome.ids) ledger.recordRead(id, read);
      return { queue: opts.queue, deliveries: outcome.ids.length, durationMs: performance.now() - started, complete: outcome.complete, leftInQueue: 0 };
    }
    if (performance.now() - started > opts.timeoutMs)
      throw new BrokerUnavailableError(`reading the stream ${opts.queue} from its first offset failed ${attempt} times, the last: ${outcome}`);
    await systemClock.sleep(500, opts.signal);
  }
}

/** One read of the stream from its first offset on `connection`: the ids, or why the broker refused or ended it. */
async function readStreamOnce(
  connection: ChannelModel,
  opts: DrainOptions,
  started: number,
): Promise<{ ids: (string | undefined)[]; complete: boolean } | string> {
  const ids: (string | undefined)[] = [];
  let ended: string | null = null;
  const ch = await connection.createChannel();
  ch.on('error', (err: unknown) => (ended ??= errorMessage(err)));
  ch.on('close', () => (ended ??= 'the channel closed'));
  try {
    await ch.prefetch(2_000);
    let last = performance.now();
    await ch
      .consume(
        opts.queue,
        (msg) => {
          if (!msg) {
            ended ??= 'the broker cancelled the read';
            return;
          }
          ch.ack(msg);
          ids.push(typeof msg.properties.messageId === 'string' ? msg.properties.messageId : undefined);
          last = performance.now();
        },
        { noAck: false, arguments: { 'x-stream-offset': 'first' } },
      )
      .catch((err: unknown) => {
        ended ??= errorMessage(err);
      });
    while (ended === null && performance.now() - last < opts.idleMs && performance.now() - started <= opts.timeoutMs) {
      if (opts.signal.aborted) throw new InterruptedError();
      await systemClock.sleep(200, opts.signal);
      opts.onProgress?.(ids.length);
    }
    return ended ?? { ids, complete: performance.now() - last >= opts.idleMs };
  } finally {
    await closeChannelWithin(ch, 5_000).catch(() => undefined);
  }
}
