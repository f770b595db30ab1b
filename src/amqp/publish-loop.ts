import type { Channel, ChannelModel } from 'amqplib';
import { InterruptedError, errorMessage } from '../errors.js';
import { maskUrl } from '../url.js';
import { systemClock, type Clock } from '../util/retry.js';
import { Signal } from '../util/signal.js';
import { closeChannelWithin, closeWithin, connectAny } from './connect.js';
import { openPublishSession, type PublishSession } from './session.js';

/**
 * The I/O half shared by the publisher and the outbox relay: connect (to the next node that
 * answers), open the channel, notice when it is lost, reconnect, wait for 'drain' when the
 * client library's buffer is full, and at the end close the channel before the connection. What
 * to publish and what became of it is the caller's (its step, and its book).
 */

export interface TimelineEvent {
  /** ms since the producer started. */
  atMs: number;
  type: 'connected' | 'connection-lost' | 'publish-failed' | 'nack' | 'confirm-timeout' | 'gave-up';
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
  createChannel: (connection: ChannelModel) => Promise<C>;
  /** Fields of each new session, there before any callback sees it. */
  extra: () => E;
  /** A new session, before the first publish on it (listeners for acks, returns). */
  onOpen?: (s: LoopSession<C, E>) => void;
  /** A session is lost (once each): give its unconfirmed messages back; returns a suffix for the event's detail. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler with nothing to say returns nothing
  onLost: (s: LoopSession<C, E>, why: string) => string | void;
  onEvent?: (event: TimelineEvent) => void;
  clock?: Clock;
}

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
  readonly #clock: Clock;
  readonly #t0: number;
  #startIndex: number;

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
   * within the reconnect deadline ends the loop, gaveUp), then backpressure, then step(s) with a
   * live session whose buffer has room.
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
      // Backpressure: the client library's buffer is full; a well-behaved producer waits.
      if (s.needDrain) {
        await this.wait(s, DRAIN_WAIT_MS);
        continue;
      }
      await step(s);
    }
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
      const s = await openPublishSession(c, o.createChannel, o.extra(), { onLost: (lost, why) => this.lose(lost, why), onDrain: () => this.changed.notify() });
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
  async close(hooks: { beforeClose?: (s: LoopSession<C, E>) => void; afterChannelClose?: (s: LoopSession<C, E>) => void } = {}): Promise<void> {
    const s = this.session;
    if (!s) return;
    this.session = undefined;
    hooks.beforeClose?.(s);
    s.lost = true;
    await Promise.race([closeChannelWithin(s.channel, this.opts.flushTimeoutMs), s.lostPromise]);
    hooks.afterChannelClose?.(s);
    await closeWithin(s.connection);
  }
}
