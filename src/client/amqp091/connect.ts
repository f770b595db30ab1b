import type { ChannelModel } from 'amqplib';
import { type ConnectOptions, connectAnyWith } from '../connect-any.js';

/** AMQP 0-9-1 connections with amqplib: connectAny on connect-any.ts's rounds, and closing within a deadline. */

export interface Connected {
  connection: ChannelModel;
  url: string;
  index: number;
}

/** The URL with ?heartbeat=N unless it sets one itself. Pure. */
export function withHeartbeat(url: string, heartbeatS: number): string {
  const u = new URL(url);
  if (!u.searchParams.has('heartbeat')) u.searchParams.set('heartbeat', String(heartbeatS));
  return u.toString();
}

/**
 * Connect to the first URL that answers, starting at `startIndex` and going round the list,
 * with backoff between rounds and an overall deadline; before the first connection of the run,
 * no broker at any URL fails at once (NoBrokerError; see BrokerWait in connect-any.ts).
 */
export async function connectAny(urls: readonly string[], startIndex: number, options: ConnectOptions): Promise<Connected> {
  // amqplib on the first connect, not at import: a client library loads only when a run connects (rhea too, amqp10/connection.ts).
  const { default: amqp } = await import('amqplib');
  return connectAnyWith(urls, startIndex, options, (url) =>
    amqp.connect(withHeartbeat(url, options.heartbeatS), {
      timeout: options.attemptTimeoutMs ?? 5_000,
      clientProperties: { connection_name: options.connectionName ?? 'rmq-bench' },
    }),
  );
}

/** Open a connection, run fn, always close it. */
export async function withConnection<T>(urls: readonly string[], options: ConnectOptions, fn: (c: Connected) => Promise<T>): Promise<T> {
  const c = await connectAny(urls, 0, options);
  c.connection.on('error', () => undefined);
  try {
    return await fn(c);
  } finally {
    await closeWithin(c.connection);
  }
}

/**
 * Close a connection within timeoutMs. amqplib's close() waits for the broker's close-ok, which
 * never comes from a node that was killed or paused; past the deadline the socket is destroyed.
 */
export async function closeWithin(connection: ChannelModel, timeoutMs = 2_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const r = await Promise.race([
      connection.close().then(
        () => 'closed' as const,
        () => 'closed' as const,
      ),
      timedOut,
    ]);
    const stream = (connection as unknown as { connection?: { stream?: { destroy(): void; unref?(): void } } }).connection?.stream;
    if (r === 'timeout') stream?.destroy();
    // amqplib closes a blocked connection at once, with a half-close that the blocked broker reads
    // only when its alarm clears. Left as it is, that socket keeps the process alive after its
    // work is done; destroyed, it can reset, and the broker drop what it had not read. Unref'd,
    // what the kernel holds is still delivered while this process lives, and the process can end.
    else if ((connection as unknown as { connection?: { blocked?: boolean } }).connection?.blocked === true) stream?.unref?.();
  } finally {
    clearTimeout(timer);
  }
}

/** Close a channel, waiting at most timeoutMs for the broker's close-ok. */
export async function closeChannelWithin(channel: { close(): Promise<void> }, timeoutMs: number): Promise<'closed' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    return await Promise.race([
      channel.close().then(
        () => 'closed' as const,
        () => 'closed' as const,
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
