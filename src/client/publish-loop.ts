import { InterruptedError, errorMessage } from '../errors.js';
import { maskUrl } from '../url.js';
import { systemClock, type Clock } from '../util/retry.js';
import { Signal } from '../util/signal.js';
import { NoBrokerError } from '../errors.js';

/**
 * The I/O half shared by every producer (both protocols' publishers and the outbox relay):
 * connect (to the next node that answers), open a session, notice when it is lost, reconnect,
 * wait when the client library's buffer is full or the broker blocks, and at the end flush and
 * close. How a protocol opens and closes a session is its PublishTransport; what to publish and
 * what became of it is the caller's (its step, and its book).
 */

export interface TimelineEvent {
  /** ms since the producer started. */
  atMs: number;
  type: 'connected' | 'connection-lost' | 'publish-failed' | 'nack' | 'confirm-timeout' | 'blocked' | 'unblocked' | 'gave-up';
  detail: string;
}

/** What the loop needs of any protocol's publishing session. */
export interface LoopSession {
  readonly url: string;
  /** Index in urls of the node it is connected to. */
  readonly index: number;
  /** Set once the connection (or its channel or link) closed; never cleared (a new session replaces it). */
  lost: boolean;
  /** Resolves when it is lost: race it against waits so that none outlives the connection. */
  readonly lostPromise: Promise<void>;
  /** The client library's buffer is full: wait for its drain before writing more (backpressure). */
  needDrain: boolean;
  /**
   * The broker's connection.blocked reason ("low on memory", "low on disk space") until its
   * connection.unblocked; null while not blocked (always, where a protocol has no such notice).
   */
  blockedBy: string | null;
  /** When the last connection.blocked came, on the loop's clock (set by the loop). */
  blockedAt: number;
}

/**
 * A new session's part of LoopSession: connected to urls[index], not lost, no backpressure, not
 * blocked; and `markLost`, which resolves its lostPromise (the protocol's session sets `lost`).
 */
export function freshLoopSession(url: string, index: number): { base: LoopSession; markLost: () => void } {
  let markLost!: () => void;
  const lostPromise = new Promise<void>((resolve) => {
    markLost = resolve;
  });
  return { base: { url, index, lost: false, lostPromise, needDrain: false, blockedBy: null, blockedAt: 0 }, markLost };
}

/** What a session reports to the loop, once it is open. */
export interface SessionEvents<S extends LoopSession> {
  /** Once: the connection, channel or link closed. */
  onLost: (s: S, why: string) => void;
  /** The buffer drained (or the broker gave credit): writing may go on. */
  onDrain: () => void;
  /** connection.blocked (reason) and connection.unblocked (null), after blockedBy is set. */
  onBlocked: (s: S, reason: string | null) => void;
}

/** A protocol's publishing sessions: how one is opened, flushed at the end, and dropped. */
export interface PublishTransport<S extends LoopSession> {
  /** Connect to urls[startIndex] or the next that answers, within timeoutMs, and open a session. */
  open(
    o: { urls: readonly string[]; startIndex: number; heartbeatS: number; timeoutMs: number; signal: AbortSignal; connectionName?: string },
    events: SessionEvents<S>,
  ): Promise<S>;
  /** An error of open() that ends the run rather than one connection (no such queue); NoBrokerError always does. */
  isFatal?: (err: unknown) => boolean;
  /**
   * The end, s already marked lost: wait (flushTimeoutMs at most) until the broker has read
   * everything sent, call afterFlush, close the connection. skip: do not wait (blocked for good).
   */
  close(s: S, o: { flushTimeoutMs: number; skip: boolean; publishCalls: number; afterFlush: () => void }): Promise<FlushOutcome>;
  /** Close s in the background: it was given up. */
  drop(s: S): void;
}

interface PublishLoopOptions<S extends LoopSession> {
  transport: PublishTransport<S>;
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
  /** A new session, before the first publish on it (listeners for acks, returns). */
  onOpen?: (s: S) => void;
  /** A session is lost (once each): give its unconfirmed messages back; returns a suffix for the event's detail. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler with nothing to say returns nothing
  onLost: (s: S, why: string) => string | void;
  onEvent?: (event: TimelineEvent) => void;
  /** connection.blocked (its reason) and connection.unblocked (null), after the event is recorded. */
  onBlocked?: (s: S, reason: string | null) => void;
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

export class PublishLoop<S extends LoopSession> {
  readonly events: TimelineEvent[] = [];
  readonly connectedTo: string[] = [];
  /** Wakes a waiting loop: a confirm, a drain, a lost connection, new work. */
  readonly changed = new Signal();
  reconnects = 0;
  interrupted = false;
  gaveUp: string | null = null;
  session: S | undefined;
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

  constructor(private readonly opts: PublishLoopOptions<S>) {
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
  wait(s: S, timeoutMs: number): Promise<void> {
    return Promise.race([this.changed.wait(timeoutMs), s.lostPromise]);
  }

  /** s is gone (its connection or channel closed, or a publish threw): once. */
  lose(s: S, why: string): void {
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
  abandon(s: S, why: string): void {
    if (s.lost) return;
    this.#startIndex = (this.#startIndex + 1) % this.opts.urls.length;
    this.lose(s, why);
    this.opts.transport.drop(s);
  }

  /** Give the run up from a step (the broker kept it from sending past a deadline): run() returns. */
  giveUp(why: string): void {
    this.gaveUp = why;
    this.event('gave-up', why);
    this.changed.notify();
  }

  /**
   * Until done(): check() (may throw), then a session (connecting again if needed; a failure to
   * within the reconnect deadline ends the loop, gaveUp; no broker at the run's first connection
   * throws NoBrokerError), then backpressure, then step(s) with a live session whose buffer has room.
   */
  async run(done: () => boolean, step: (s: S) => Promise<void> | void, check?: () => void): Promise<void> {
    while (!done() && this.gaveUp === null) {
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

  #blocked(s: S, reason: string | null): void {
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

  async #open(): Promise<S | undefined> {
    const o = this.opts;
    try {
      const s = await o.transport.open(
        {
          urls: o.urls,
          startIndex: this.#startIndex,
          heartbeatS: o.heartbeatS,
          timeoutMs: o.reconnectTimeoutMs,
          signal: o.connectSignal ?? o.signal,
          ...(o.connectionName === undefined ? {} : { connectionName: o.connectionName }),
        },
        {
          onLost: (lost, why) => this.lose(lost, why),
          onDrain: () => this.changed.notify(),
          onBlocked: (b, reason) => this.#blocked(b, reason),
        },
      );
      this.#startIndex = s.index;
      o.onOpen?.(s);
      this.connectedTo.push(maskUrl(s.url));
      this.event('connected', maskUrl(s.url));
      if (this.connectedTo.length > 1) this.reconnects++;
      if (!s.lost) this.session = s;
      return s;
    } catch (err) {
      if (err instanceof InterruptedError) {
        this.interrupted = true;
        return undefined;
      }
      // The run never reached a broker: not a connection lost and given up on, but the run's one error.
      if (err instanceof NoBrokerError || o.transport.isFatal?.(err)) throw err;
      this.gaveUp = errorMessage(err);
      this.event('gave-up', this.gaveUp);
      return undefined;
    }
  }

  /**
   * The end: the transport flushes (0-9-1: the channel's close-ok comes back only after the
   * broker has read every publish sent before it; AMQP 1.0: the link's detach), then closes the
   * connection. beforeClose sees the session while acks can still arrive; afterChannelClose once
   * they cannot.
   */
  async close(hooks: { beforeClose?: (s: S) => void; afterChannelClose?: (s: S) => void } = {}): Promise<FlushOutcome | undefined> {
    const s = this.session;
    if (!s) return undefined;
    this.session = undefined;
    hooks.beforeClose?.(s);
    s.lost = true;
    const outcome = await this.opts.transport.close(s, {
      flushTimeoutMs: this.opts.flushTimeoutMs,
      // Blocked past its deadline: no close-ok can come until the alarm clears; do not wait for it again.
      skip: s.blockedBy !== null && this.gaveUp !== null,
      publishCalls: this.publishCalls,
      afterFlush: () => {
        hooks.afterChannelClose?.(s);
        if (s.blockedBy !== null) this.blockedMs += this.#clock.now() - s.blockedAt;
      },
    });
    return outcome;
  }
}
