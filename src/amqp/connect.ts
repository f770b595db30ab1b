import type { ChannelModel } from 'amqplib';
import { BrokerUnavailableError, InterruptedError, UsageError, errorMessage } from '../errors.js';
import { maskUrl } from '../url.js';
import { systemClock, type Clock } from '../util/retry.js';

export interface ConnectOptions {
  /** Heartbeat in seconds, so that a half-open connection is noticed (0 disables). */
  heartbeatS: number;
  /** Overall deadline across every URL and retry. */
  timeoutMs: number;
  /** Per attempt (TCP + AMQP handshake). */
  attemptTimeoutMs?: number;
  signal?: AbortSignal | undefined;
  clock?: Clock;
  /** client_properties.connection_name, as the management API lists it. */
  connectionName?: string;
  /** Called before each wait between rounds (for progress). */
  onRetry?: (info: { attempt: number; delayMs: number; error: string }) => void;
}

export interface Connected {
  connection: ChannelModel;
  url: string;
  index: number;
}

/** Check and normalise a comma-separated URL list once, at the edge. */
export function parseUrls(text: string): string[] {
  const urls = text
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  if (urls.length === 0) throw new UsageError('--urls: no URL given');
  urls.forEach((u, i) => {
    // Never quote the entry: a malformed URL's password cannot be found to be masked.
    const which = urls.length > 1 ? `entry ${i + 1}` : 'the URL';
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw new UsageError(`--urls: ${which} is not a URL (example: amqp://demo:demo@127.0.0.1:5672)`);
    }
    if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') {
      throw new UsageError(`--urls: ${which} is not an amqp:// or amqps:// URL`);
    }
    if (!u.toLowerCase().startsWith(`${parsed.protocol}//`) || parsed.hostname === '') {
      throw new UsageError(`--urls: ${which} has no host (example: amqp://demo:demo@127.0.0.1:5672)`);
    }
  });
  return urls;
}

/** The URL with ?heartbeat=N unless it sets one itself. Pure. */
export function withHeartbeat(url: string, heartbeatS: number): string {
  const u = new URL(url);
  if (!u.searchParams.has('heartbeat')) u.searchParams.set('heartbeat', String(heartbeatS));
  return u.toString();
}

/** Backoff between full rounds over the URL list: 100 ms doubling, at most 2 s. Pure. */
export function backoffMs(round: number): number {
  return Math.min(2_000, 100 * 2 ** Math.max(0, round));
}

/**
 * Connect to the first URL that answers, starting at `startIndex` and going round the list,
 * with backoff between rounds and an overall deadline.
 */
export async function connectAny(urls: readonly string[], startIndex: number, options: ConnectOptions): Promise<Connected> {
  // amqplib on the first connect, not at import: parseUrls serves the CLI's option parsing, which must stay cheap.
  const { default: amqp } = await import('amqplib');
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  const failures = new Map<string, string>();
  for (let round = 0; ; round++) {
    for (let i = 0; i < urls.length; i++) {
      if (options.signal?.aborted) throw new InterruptedError();
      const index = (startIndex + i) % urls.length;
      const url = urls[index]!;
      try {
        const connection = await amqp.connect(withHeartbeat(url, options.heartbeatS), {
          timeout: options.attemptTimeoutMs ?? 5_000,
          clientProperties: { connection_name: options.connectionName ?? 'rmq-bench' },
        });
        return { connection, url, index };
      } catch (err) {
        failures.set(maskUrl(url), errorMessage(err));
      }
    }
    const elapsed = clock.now() - started;
    if (elapsed >= options.timeoutMs) {
      const detail = [...failures].map(([u, e]) => `${u}: ${e}`).join('; ');
      throw new BrokerUnavailableError(`no broker answered within ${options.timeoutMs} ms (${detail})`, {
        hint: "is the cluster up? 'rmq-bench cluster up' starts it",
      });
    }
    const delayMs = Math.min(backoffMs(round), options.timeoutMs - elapsed);
    options.onRetry?.({ attempt: round + 1, delayMs, error: [...failures.values()].pop() ?? '' });
    await clock.sleep(delayMs, options.signal);
  }
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
