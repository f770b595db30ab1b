import type { Channel, ChannelModel } from 'amqplib';
import { errorMessage } from '../../errors.js';
import { closeWithin } from './connect.js';

/** A publishing connection and its channel, as a producer's loop sees them. */
export interface PublishSession<C extends Channel> {
  connection: ChannelModel;
  channel: C;
  url: string;
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
export async function openPublishSession<C extends Channel, E extends object>(
  c: { connection: ChannelModel; url: string },
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
  let resolveLost!: () => void;
  const s = {
    ...extra,
    connection,
    channel,
    url: c.url,
    lost: false,
    lostPromise: new Promise<void>((r) => (resolveLost = r)),
    needDrain: false,
    blockedBy: null as string | null,
    blockedAt: 0,
  };
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
