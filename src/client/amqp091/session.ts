import type { Channel, ChannelModel } from 'amqplib';
import { errorMessage } from '../../errors.js';
import { type FlushOutcome, freshLoopSession, type PublishTransport } from '../publish-loop.js';
import { closeChannelWithin, closeWithin, connectAny } from './connect.js';

/** A publishing connection and its channel, as a producer's loop sees them. */
interface PublishSession<C extends Channel> {
  connection: ChannelModel;
  channel: C;
  url: string;
  /** Index in the loop's urls. */
  index: number;
  /** Set once the connection or the channel closed; never cleared (a new session replaces it). */
  lost: boolean;
  /** Resolves when it is lost: race it against waits so that none outlives the connection. */
  lostPromise: Promise<void>;
  /** publish() returned false: wait for 'drain' before writing more (backpressure). */
  needDrain: boolean;
  /**
   * The broker's connection.blocked reason ("low on memory", "low on disk space") until its
   * connection.unblocked; null while not blocked. A blocked connection's publishes stay in the
   * client's buffers: the broker reads nothing more from it until the alarm clears.
   */
  blockedBy: string | null;
  /** When the last connection.blocked came, on the loop's clock (set by its onBlocked). */
  blockedAt: number;
}

/**
 * Wrap a fresh connection in a session: open the channel (closing the connection if that
 * fails), swallow 'error' events (the 'close' that follows carries the news), and report the
 * loss once through onLost and the drain through onDrain. `extra` fields (an id) are on the
 * session before any callback can see it.
 */
async function openPublishSession<C extends Channel, E extends object>(
  c: { connection: ChannelModel; url: string; index: number },
  createChannel: (connection: ChannelModel) => Promise<C>,
  extra: E,
  hooks: {
    onLost: (s: PublishSession<C> & E, why: string) => void;
    onDrain: () => void;
    /** connection.blocked (reason) and connection.unblocked (reason null), after blockedBy is set. */
    onBlocked?: (s: PublishSession<C> & E, reason: string | null) => void;
  },
): Promise<PublishSession<C> & E> {
  const connection = c.connection;
  connection.on('error', () => undefined);
  let channel: C;
  try {
    channel = await createChannel(connection);
  } catch (err) {
    await closeWithin(connection);
    throw err;
  }
  channel.on('error', () => undefined);
  const { base, markLost: resolveLost } = freshLoopSession(c.url, c.index);
  const s = { ...extra, ...base, connection, channel };
  const onClose = (err?: Error): void => {
    hooks.onLost(s, err ? errorMessage(err) : 'closed');
    resolveLost();
  };
  connection.on('close', onClose);
  channel.on('close', () => onClose(new Error('channel closed')));
  connection.on('blocked', (reason: unknown) => {
    s.blockedBy = typeof reason === 'string' && reason !== '' ? reason : 'blocked';
    hooks.onBlocked?.(s, s.blockedBy);
  });
  connection.on('unblocked', () => {
    s.blockedBy = null;
    hooks.onBlocked?.(s, null);
  });
  channel.on('drain', () => {
    s.needDrain = false;
    hooks.onDrain();
  });
  return s;
}

/** A 0-9-1 publishing session with the caller's fields (`extra`) on it. */
export type ChannelSession<C extends Channel, E extends object> = PublishSession<C> & E;

/**
 * The PublishLoop's 0-9-1 sessions: a connection and one channel (createChannel: confirm mode,
 * tx), `extra` fields on each before any callback sees it. The end closes the channel first (its
 * close-ok comes back only after the broker has read every publish sent before it; a connection
 * close goes out on channel 0 and can overtake publishes still buffered in the client library),
 * then the connection; a dead peer never answers, and the heartbeat ends the wait first.
 */
export function channelTransport<C extends Channel, E extends object>(
  createChannel: (connection: ChannelModel) => Promise<C>,
  extra: () => E,
): PublishTransport<ChannelSession<C, E>> {
  return {
    async open(o, events) {
      const c = await connectAny(o.urls, o.startIndex, {
        heartbeatS: o.heartbeatS,
        timeoutMs: o.timeoutMs,
        signal: o.signal,
        ...(o.connectionName === undefined ? {} : { connectionName: o.connectionName }),
      });
      return openPublishSession(c, createChannel, extra(), events);
    },
    async close(s, o) {
      const channel = o.skip
        ? 'skipped'
        : await Promise.race([
            closeChannelWithin(s.channel, o.flushTimeoutMs),
            // The connection (not this channel's own close) going first: a dead peer, the heartbeat.
            new Promise<'lost'>((resolve) => s.connection.once('close', () => resolve('lost'))),
          ]);
      o.afterFlush();
      const stream = (s.connection as unknown as { connection?: { stream?: { writableLength?: number; bytesWritten?: number } } }).connection?.stream;
      const outcome: FlushOutcome = {
        channel,
        blockedBy: s.blockedBy,
        bufferedBytes: stream?.writableLength ?? 0,
        bytesPerPublish: o.publishCalls > 0 && stream?.bytesWritten !== undefined ? stream.bytesWritten / o.publishCalls : 0,
      };
      await closeWithin(s.connection);
      return outcome;
    },
    drop(s) {
      void closeWithin(s.connection).catch(() => undefined);
    },
  };
}
