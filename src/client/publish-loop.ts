import type { Channel, ChannelModel } from 'amqplib';
import { InterruptedError, errorMessage } from '../errors.js';
import { maskUrl } from '../url.js';
import { systemClock, type Clock } from '../util/retry.js';
import { Signal } from '../util/signal.js';
import { NoBrokerError } from '../errors.js';
import { closeChannelWithin, closeWithin, connectAny } from './amqp091/connect.js';
import { openPublishSession, type PublishSession } from './amqp091/session.js';

/**
 * The I/O half shared by the publisher and the outbox relay: connect (to the next node that
 * answers), open the channel, notice when it is lost, reconnect, wait for 'drain' when the
 * client library's buffer is full, and at the end close the channel before the connection. What
 * to publish and what became of it is the caller's (its step, and its book).
 */

export interface TimelineEvent {
  /** ms since the producer started. */
  atMs: number;
  type: 'connected' | 'connection-lost' | 'publish-failed' | 'nack' | 'confirm-timeout' | 'blocked' | 'unblocked' | 'gave-up';
  detail: string;
}

export type LoopSession<C extends Channel, E extends object> = PublishSession<C> & E;

export interface PublishLoopOptions<C extends Channel, E extends object> {
  urls: readonly string[];
  /** Index in urls to connect to first. */
  startIndex: number;
  heartbeatS: number;
  /** Deadline to get a connection back after losing one. */
  reconnectTimeoutMs: number;
  connectionName?: string;
  /** Ctrl+C: the loop ends (interrupted). */
  signal: AbortSignal;
  /** Ends a connect attempt (default: signal). */
  connectSignal?: AbortSignal;
  /** At the end: how long the channel may take to close (the broker has read every publish). */
  flushTimeoutMs: number;
  /**
   * How long a connection may stay blocked by the broker (a memory or disk alarm) before the loop
   * gives up (gaveUp). While blocked nothing is written: the broker reads nothing from a blocked
   * connection, and another node would not help (alarms block publishers cluster-wide).
   */
  blockedTimeoutMs: number;
  createChannel: (connection: ChannelModel) => Promise<C>;
  /** Fields of each new session, there before any callback sees it. */
  extra: () => E;
  /** A new session, before the first publish on it (listeners for acks, returns). */
  onOpen?: (s: LoopSession<C, E>) => void;
  /** A session is lost (once each): give its unconfirmed messages back; returns a suffix for the event's detail. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler with nothing to say returns nothing
  onLost: (s: LoopSession<C, E>, why: string) => string | void;
  onEvent?: (event: TimelineEvent) => void;
  /** connection.blocked (its reason) and connection.unblocked (null), after the event is recorded. */
  onBlocked?: (s: LoopSession<C, E>, reason: string | null) => void;
  clock?: Clock;
}

/** How the end went: whether the broker acknowledged reading every publish (the channel's close-ok), and what was left. */
export interface FlushOutcome {
  /** closed: the broker has read every publish; timeout: no close-ok within flushTimeoutMs; lost: the connection went first; skipped: blocked past its deadline, not waited for. */
  channel: 'closed' | 'timeout' | 'lost' | 'skipped';
  /** The connection was blocked by the broker at the end (its reason). */
  blockedBy: string | null;
  /** Bytes still in this process's socket buffer when the connection was closed: they never left it. */
  bufferedBytes: number;
  /** All bytes handed to the socket per publish call, on average (to turn bufferedBytes into messages, roughly). */
  bytesPerPublish: number;
}

/** A connection may stay blocked by a resource alarm this long by default before a producer gives up. */
export const DEFAULT_BLOCKED_TIMEOUT_MS = 60_000;

/** A wait when publish() said the buffer is full: 'drain' ends it early. */
const DRAIN_WAIT_MS = 1_000;

export class PublishLoop<C extends Channel, E extends object = object> {
  readonly events: TimelineEvent[] = [];
  readonly connectedTo: string[] = [];
  /** Wakes a waiting loop: a confirm, a drain, a lost connection, new work. */
  readonly changed = new Signal();
  reconnects = 0;
  interrupted = false;
  gaveUp: string | null = null;
  session: LoopSession<C, E> | undefined;
  /** Time spent blocked by the broker, over all sessions (ms); a block still on at close() counts to then. */
  blockedMs = 0;
  /** connection.blocked notifications received. */
  blocks = 0;
  /** Publish calls, counted by the caller (publishes()) for the flush's bytes per publish. */
  publishCalls = 0;
  readonly #clock: Clock;
  readonly #t0: number;
  #startIndex: number;
  /** When the last block ended (clock), for timeoutsSuspended. */
  #unblockedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly opts: PublishLoopOptions<C, E>) {
    this.#clock = opts.clock ?? systemClock;
    this.#t0 = this.#clock.now();
    this.#startIndex = opts.startIndex;
  }

  /** ms since the loop was made. */
  elapsedMs(): number {
    return this.#clock.now() - this.#t0;
  }

  event(type: TimelineEvent['type'], detail: string): void {
    const e = { atMs: this.elapsedMs(), type, detail };
    this.events.push(e);
    this.opts.onEvent?.(e);
  }

  /** Until something changes or s is lost, timeoutMs at most. */
  wait(s: LoopSession<C, E>, timeoutMs: number): Promise<void> {
    return Promise.race([this.changed.wait(timeoutMs), s.lostPromise]);
  }

  /** s is gone (its connection or channel closed, or a publish threw): once. */
  lose(s: LoopSession<C, E>, why: string): void {
    if (s.lost) return;
    s.lost = true;
    if (this.session === s) this.session = undefined;
    const suffix = this.opts.onLost(s, why) ?? '';
    this.event('connection-lost', `${maskUrl(s.url)}: ${why}${suffix}`);
    this.changed.notify();
  }

  /**
   * Give up on a session that is still open but no longer useful (confirms stopped on a live
   * connection: a partitioned node): lose it, close its connection in the background, and
   * connect to the next URL first.
   */
  abandon(s: LoopSession<C, E>, why: string): void {
    if (s.lost) return;
    this.#startIndex = (this.#startIndex + 1) % this.opts.urls.length;
    this.lose(s, why);
    void closeWithin(s.connection).catch(() => undefined);
  }

  /**
   * Until done(): check() (may throw), then a session (connecting again if needed; a failure to
   * within the reconnect deadline ends the loop, gaveUp; no broker at the run's first connection
   * throws NoBrokerError), then backpressure, then step(s) with a live session whose buffer has room.
   */
  async run(done: () => boolean, step: (s: LoopSession<C, E>) => Promise<void> | void, check?: () => void): Promise<void> {
    while (!done()) {
      check?.();
      if (this.opts.signal.aborted) {
        this.interrupted = true;
        return;
      }
      const s = this.session ?? (await this.#open());
      if (s === undefined) return;
      if (s.lost) continue; // lost before its first step: open another
      // Blocked by a resource alarm: write nothing until unblocked, within the deadline.
      if (s.blockedBy !== null) {
        const blockedForMs = this.#clock.now() - s.blockedAt;
        if (blockedForMs >= this.opts.blockedTimeoutMs) {
          this.gaveUp = `the broker blocked the connection to ${maskUrl(s.url)} (${s.blockedBy}) for ${(blockedForMs / 1000).toFixed(1)} s, past the blocked timeout (${this.opts.blockedTimeoutMs} ms): a resource alarm; clear it (rabbitmq-diagnostics alarms) or raise --blocked-timeout`;
          this.event('gave-up', this.gaveUp);
          return;
        }
        await this.wait(s, Math.min(250, this.opts.blockedTimeoutMs - blockedForMs));
        continue;
      }
      // Backpressure: the client library's buffer is full; a well-behaved producer waits.
      if (s.needDrain) {
        await this.wait(s, DRAIN_WAIT_MS);
        continue;
      }
      await step(s);
    }
  }

  /**
   * Whether confirm deadlines are suspended: the session is blocked (the broker reads nothing,
   * so a confirm cannot be late), or was unblocked less than graceMs ago (the broker is reading
   * what waited). Without this, a block longer than the confirm timeout would republish every
   * message in flight, and give up a connection that another node could not replace.
   */
  timeoutsSuspended(graceMs: number): boolean {
    if (this.session?.blockedBy != null) return true;
    return this.#clock.now() - this.#unblockedAt < graceMs;
  }

  #blocked(s: LoopSession<C, E>, reason: string | null): void {
    const now = this.#clock.now();
    if (reason !== null) {
      s.blockedAt = now;
      this.blocks++;
      this.event('blocked', `${maskUrl(s.url)}: ${reason}`);
    } else {
      this.blockedMs += now - s.blockedAt;
      this.#unblockedAt = now;
      this.event('unblocked', `${maskUrl(s.url)}: after ${Math.round(now - s.blockedAt)} ms`);
    }
    this.opts.onBlocked?.(s, reason);
    this.changed.notify();
  }

  async #open(): Promise<LoopSession<C, E> | undefined> {
    const o = this.opts;
    try {
      const c = await connectAny(o.urls, this.#startIndex, {
        heartbeatS: o.heartbeatS,
        timeoutMs: o.reconnectTimeoutMs,
        signal: o.connectSignal ?? o.signal,
        ...(o.connectionName === undefined ? {} : { connectionName: o.connectionName }),
      });
      this.#startIndex = c.index;
      const s = await openPublishSession(c, o.createChannel, o.extra(), {
        onLost: (lost, why) => this.lose(lost, why),
        onDrain: () => this.changed.notify(),
        onBlocked: (b, reason) => this.#blocked(b, reason),
      });
      o.onOpen?.(s);
      this.connectedTo.push(maskUrl(c.url));
      this.event('connected', maskUrl(c.url));
      if (this.connectedTo.length > 1) this.reconnects++;
      if (!s.lost) this.session = s;
      return s;
    } catch (err) {
      if (err instanceof InterruptedError) {
        this.interrupted = true;
        return undefined;
      }
      // The run never reached a broker: not a connection lost and given up on, but the run's one error.
      if (err instanceof NoBrokerError) throw err;
      this.gaveUp = errorMessage(err);
      this.event('gave-up', this.gaveUp);
      return undefined;
    }
  }

  /**
   * The end: the channel first (its close-ok comes back only after the broker has read every
   * publish sent before it; a connection close goes out on channel 0 and can overtake publishes
   * still buffered in the client library), then the connection. A dead peer never answers: the
   * heartbeat ends the wait (the connection closes) first. beforeClose sees the session while
   * acks can still arrive; afterChannelClose once they cannot.
   */
  async close(
    hooks: { beforeClose?: (s: LoopSession<C, E>) => void; afterChannelClose?: (s: LoopSession<C, E>) => void } = {},
  ): Promise<FlushOutcome | undefined> {
    const s = this.session;
    if (!s) return undefined;
    this.session = undefined;
    hooks.beforeClose?.(s);
    s.lost = true;
    // Blocked past its deadline: no close-ok can come until the alarm clears; do not wait for it again.
    const skip = s.blockedBy !== null && this.gaveUp !== null;
    const channel = skip
      ? 'skipped'
      : await Promise.race([
          closeChannelWithin(s.channel, this.opts.flushTimeoutMs),
          // The connection (not this channel's own close) going first: a dead peer, the heartbeat.
          new Promise<'lost'>((resolve) => s.connection.once('close', () => resolve('lost'))),
        ]);
    hooks.afterChannelClose?.(s);
    if (s.blockedBy !== null) this.blockedMs += this.#clock.now() - s.blockedAt;
    const stream = (s.connection as unknown as { connection?: { stream?: { writableLength?: number; bytesWritten?: number } } }).connection?.stream;
    const outcome: FlushOutcome = {
      channel,
      blockedBy: s.blockedBy,
      bufferedBytes: stream?.writableLength ?? 0,
      bytesPerPublish: this.publishCalls > 0 && stream?.bytesWritten !== undefined ? stream.bytesWritten / this.publishCalls : 0,
    };
    await closeWithin(s.connection);
    return outcome;
  }
}
