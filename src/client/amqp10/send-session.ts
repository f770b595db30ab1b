import type { Connection, EventContext, Sender } from 'rhea';
import { NotFoundError, errorMessage } from '../../errors.js';
import { type FlushOutcome, freshLoopSession, type LoopSession, type PublishTransport, type SessionEvents } from '../publish-loop.js';
import { closeWithin10, connectAny10 } from './connection.js';

/**
 * One AMQP 1.0 connection with one sender link, as the publisher uses it: opened to the first
 * URL that answers, lost once (its connection or link closed, or an error), and closed at the
 * end after the broker has answered the link's detach (everything sent before it was read).
 * The broker answers each transfer with an outcome on the link (the publisher listens).
 */

export interface SendSession extends LoopSession {
  readonly connection: Connection;
  readonly sender: Sender;
  /** Transfers sent on it so far: the last one's delivery tag in the publisher's confirm book. */
  sent: number;
  /** Given up by the loop (not closed at the end): outcomes still coming in on it are not counted. */
  dropped: boolean;
}

interface OpenSendOptions {
  urls: readonly string[];
  startIndex: number;
  address: string;
  preSettled: boolean;
  heartbeatS: number;
  reconnectTimeoutMs: number;
  signal: AbortSignal;
}

/** How long the broker may take to attach the link. */
const ATTACH_TIMEOUT_MS = 10_000;

/** Connect, attach the sender, wire its events. A link the broker refuses for good (no such exchange or queue) is a NotFoundError. */
async function openSendSession(o: OpenSendOptions, events: SessionEvents<SendSession>): Promise<SendSession> {
  const c = await connectAny10(o.urls, o.startIndex, { heartbeatS: o.heartbeatS, timeoutMs: o.reconnectTimeoutMs, signal: o.signal });
  const sender = c.connection.open_sender({
    target: { address: o.address },
    snd_settle_mode: o.preSettled ? 1 : 0,
    autosettle: true,
    // rhea's own option (untyped): a modified outcome is counted as modified, not as released.
    ...{ treat_modified_as_released: false },
  });
  // AMQP 1.0 has no connection.blocked (blockedBy stays null): a broker that takes nothing grants no credit.
  const { base, markLost } = freshLoopSession(c.url, c.index);
  const s: SendSession = { ...base, connection: c.connection, sender, sent: 0, dropped: false };
  // Once; the loop marks the session lost (it may have already: then it ignores this).
  let reported = false;
  const lose = (why: string): void => {
    if (reported) return;
    reported = true;
    events.onLost(s, why);
    markLost();
  };
  try {
    await attached(c.connection, sender, o.address);
  } catch (err) {
    await closeWithin10(c.connection);
    throw err;
  }
  sender.on('sendable', () => events.onDrain());
  sender.on('sender_error', (ctx: EventContext) => lose(`link error: ${errorMessage(ctx.sender?.error)}`));
  sender.on('sender_close', () => lose('the broker detached the link'));
  c.connection.on('connection_error', (ctx: EventContext) => lose(`connection error: ${errorMessage(ctx.connection.error)}`));
  c.connection.on('connection_close', () => lose('the broker closed the connection'));
  c.connection.on('disconnected', (ctx: EventContext) => lose(ctx.error ? errorMessage(ctx.error) : 'disconnected'));
  c.connection.on('error', (err: unknown) => lose(errorMessage(err)));
  return s;
}

/** The broker's attach, or its refusal (amqp:not-found is for good: NotFoundError), within ATTACH_TIMEOUT_MS. */
function attached(connection: Connection, sender: Sender, address: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`the broker did not attach a link to ${address} within ${ATTACH_TIMEOUT_MS} ms`)), ATTACH_TIMEOUT_MS);
    const done = (err?: Error): void => {
      clearTimeout(timer);
      sender.removeListener('sender_open', opened);
      sender.removeListener('sender_error', refused);
      connection.removeListener('disconnected', dropped);
      if (err) reject(err);
      else resolve();
    };
    const opened = (): void => done();
    const refused = (ctx: EventContext): void => {
      const e = ctx.sender?.error as { condition?: string; description?: string } | undefined;
      const text = `${e?.condition ?? 'link refused'}${e?.description ? `: ${e.description}` : ''}`;
      done(e?.condition === 'amqp:not-found' ? new NotFoundError(`cannot publish to ${address}: ${text}`) : new Error(text));
    };
    const dropped = (ctx: EventContext): void => done(new Error(ctx.error ? errorMessage(ctx.error) : 'disconnected while attaching'));
    sender.once('sender_open', opened);
    sender.on('sender_error', refused);
    connection.on('disconnected', dropped);
  });
}

/**
 * How the end went, as FlushOutcome.channel says it for 0-9-1: the link's detach answered, not
 * within the deadline, or the connection went first. The caller marks the session lost first, so
 * that the detach's answer is not taken for a lost link.
 */
async function detachWithin(s: SendSession, timeoutMs: number): Promise<'closed' | 'timeout' | 'lost'> {
  if (!s.connection.is_open()) return 'lost';
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    const finish = (r: 'closed' | 'timeout' | 'lost'): void => {
      clearTimeout(timer);
      resolve(r);
    };
    s.sender.once('sender_close', () => finish('closed'));
    s.connection.once('disconnected', () => finish('lost'));
    try {
      s.sender.close();
    } catch {
      finish('lost');
    }
  });
}

/** Bytes still in this process's socket buffer: they never left it. */
function bufferedBytes(s: SendSession): number {
  const socket = (s.connection as unknown as { socket?: { writableLength?: number } }).socket;
  return socket?.writableLength ?? 0;
}

/** Close s's connection without waiting, whatever state it is in. */
export function dropSession(s: SendSession): void {
  s.connection.on('error', () => undefined);
  try {
    s.connection.close();
  } catch {
    // already closed
  }
}

/**
 * The PublishLoop's AMQP 1.0 sessions: a connection and a sender link to `address` (preSettled:
 * transfers sent settled, no outcomes). A link the broker refuses for good (no such exchange or
 * queue) ends the run. The end detaches the link (the broker answers once it has read everything
 * sent), then closes the connection.
 */
export function sendTransport(address: string, preSettled: boolean): PublishTransport<SendSession> {
  return {
    open: (o, events) =>
      openSendSession(
        { urls: o.urls, startIndex: o.startIndex, address, preSettled, heartbeatS: o.heartbeatS, reconnectTimeoutMs: o.timeoutMs, signal: o.signal },
        events,
      ),
    isFatal: (err) => err instanceof NotFoundError,
    async close(s, o) {
      const channel = await detachWithin(s, o.flushTimeoutMs);
      o.afterFlush();
      const outcome: FlushOutcome = { channel, blockedBy: null, bufferedBytes: bufferedBytes(s), bytesPerPublish: 0 };
      await closeWithin10(s.connection);
      return outcome;
    },
    drop: dropSession,
  };
}
