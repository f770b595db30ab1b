import type { ConfirmChannel, Options } from 'amqplib';
import { InterruptedError, errorMessage } from '../errors.js';
import type { OutboxCounts, OutboxRow, OutboxStore } from '../store/outbox.js';
import { systemClock } from '../util/retry.js';
import { RelayBook } from './outbox-relay.js';
import { Pacer } from './pacer.js';
import { DEFAULT_BLOCKED_TIMEOUT_MS, PublishLoop, type TimelineEvent } from './publish-loop.js';
import { channelTransport, type ChannelSession } from './amqp091/session.js';

/**
 * The outbox producer: the "application" writes its events into the outbox, one transaction
 * each, while a relay publishes the pending rows with confirms and marks each published once its
 * confirm is in. Both run in this process and resume from the table after a crash. Returns
 * data; never prints.
 */

interface OutboxProducerOptions {
  urls: readonly string[];
  startIndex: number;
  exchange: string;
  routingKey: string;
  /** Events the application writes per second; 0 = as fast as the outbox takes them. */
  ratePerSec: number;
  sizeBytes: number;
  persistent: boolean;
  mandatory: boolean;
  /** Outstanding confirms at most. */
  window: number;
  confirmTimeoutMs: number;
  heartbeatS: number;
  reconnectTimeoutMs: number;
  /** At the end: how long to wait for the channel to close (the broker has read every publish). */
  flushTimeoutMs?: number;
  /** How long the relay's connection may stay blocked by a resource alarm before it gives up (the rows stay pending in the outbox). */
  blockedTimeoutMs?: number;
}

interface OutboxProducerHooks {
  signal: AbortSignal;
  /** After each batch of rows marked published, with the table's published count. */
  onPublished?: (published: number) => void;
  onEvent?: (event: TimelineEvent) => void;
}

export interface OutboxProducerResult {
  file: string;
  runId: string;
  count: number;
  /** The table when this process started: a resumed run starts from its pending rows. */
  atStart: OutboxCounts;
  /** Rows the application wrote in this process. */
  appended: number;
  /** publish calls, republishes included. */
  publishes: number;
  /** Rows this process marked published. */
  markedPublished: number;
  nacked: number;
  timedOut: number;
  /** Rows put back to pending by a lost connection. */
  requeuedOnReconnect: number;
  /** Acks for a row already pending again (after a timeout or a lost connection). */
  lateAcks: number;
  reconnects: number;
  maxInFlight: number;
  atEnd: OutboxCounts;
  durationMs: number;
  /** Every event written and published. */
  completed: boolean;
  interrupted: boolean;
  gaveUp: string | null;
  events: TimelineEvent[];
  connectedTo: string[];
}

type Session = ChannelSession<ConfirmChannel, { id: number }>;

export async function runOutboxProducer(store: OutboxStore, opts: OutboxProducerOptions, hooks: OutboxProducerHooks): Promise<OutboxProducerResult> {
  const run = new OutboxRun(store, opts, hooks);
  await run.runAll();
  return run.result();
}

/**
 * One runOutboxProducer call: the writer (the application, appending rows), the relay (a
 * PublishLoop whose step publishes pending rows), and what connects them: the RelayBook of rows
 * in flight, and the acks waiting to be marked published in the table.
 */
class OutboxRun {
  readonly #store: OutboxStore;
  readonly #opts: OutboxProducerOptions;
  readonly #hooks: OutboxProducerHooks;
  readonly #clock = systemClock;
  readonly #t0: number;
  readonly #runId: string;
  readonly #count: number;
  readonly #atStart: OutboxCounts;
  readonly #book = new RelayBook();
  readonly #body: Buffer;
  /** Aborted at the end of the run: the writer stops, and so does a connect attempt. */
  readonly #stop = new AbortController();
  /** Ctrl+C or the end of the run. */
  readonly #signal: AbortSignal;
  readonly #loop: PublishLoop<ChannelSession<ConfirmChannel, { id: number }>>;
  #appended = 0;
  #publishes = 0;
  #markedPublished = 0;
  #nacked = 0;
  #timedOut = 0;
  #requeuedOnReconnect = 0;
  #lateAcks = 0;
  #maxInFlight = 0;
  #sessions = 0;
  #writerDone = false;
  /** A failed write to the outbox (the writer's, or a flush's): the run stops with it. */
  #fatal: unknown;
  /** Acked on the wire, marked in the table by the next flush (a microtask: one transaction per ack frame). */
  #acked: number[] = [];
  #flushQueued = false;
  /**
   * The relay reads pending rows above the highest sequence it has published; a row put back to
   * pending (nack, timeout, lost connection) resets it, and the next read starts from the lowest.
   */
  #cursor = -1;

  constructor(store: OutboxStore, opts: OutboxProducerOptions, hooks: OutboxProducerHooks) {
    this.#store = store;
    this.#opts = opts;
    this.#hooks = hooks;
    this.#t0 = this.#clock.now();
    const { runId, count } = store.meta;
    this.#runId = runId;
    this.#count = count;
    this.#atStart = store.counts();
    this.#body = Buffer.alloc(opts.sizeBytes, 0x61);
    this.#signal = AbortSignal.any([hooks.signal, this.#stop.signal]);
    this.#loop = new PublishLoop<ChannelSession<ConfirmChannel, { id: number }>>({
      urls: opts.urls,
      startIndex: opts.startIndex,
      heartbeatS: opts.heartbeatS,
      reconnectTimeoutMs: opts.reconnectTimeoutMs,
      connectionName: 'rmq-bench outbox relay',
      signal: hooks.signal,
      connectSignal: this.#signal,
      flushTimeoutMs: opts.flushTimeoutMs ?? 15_000,
      blockedTimeoutMs: opts.blockedTimeoutMs ?? DEFAULT_BLOCKED_TIMEOUT_MS,
      transport: channelTransport(
        (connection) => connection.createConfirmChannel(),
        () => ({ id: ++this.#sessions }),
      ),
      onLost: (s) => this.#onLost(s),
      ...(hooks.onEvent ? { onEvent: hooks.onEvent } : {}),
    });
  }

  /** The writer and the relay until every event is written and published, the relay gives up, Ctrl+C, or a failed write (thrown). */
  async runAll(): Promise<void> {
    const sweeper = setInterval(() => this.#sweepTimeouts(), Math.min(250, this.#opts.confirmTimeoutMs));
    const writer = this.#startWriter();
    try {
      await this.#loop.run(
        () => this.#done(),
        (s) => this.#step(s),
        () => {
          if (this.#fatal !== undefined) throw this.#fatal;
        },
      );
    } finally {
      this.#stop.abort();
      clearInterval(sweeper);
      await writer;
      await this.#loop.close({ afterChannelClose: this.#safeFlush });
      this.#safeFlush();
    }
    if (this.#fatal !== undefined) throw this.#fatal;
  }

  result(): OutboxProducerResult {
    const loop = this.#loop;
    const atEnd = this.#store.counts();
    return {
      file: this.#store.file,
      runId: this.#runId,
      count: this.#count,
      atStart: this.#atStart,
      appended: this.#appended,
      publishes: this.#publishes,
      markedPublished: this.#markedPublished,
      nacked: this.#nacked,
      timedOut: this.#timedOut,
      requeuedOnReconnect: this.#requeuedOnReconnect,
      lateAcks: this.#lateAcks,
      reconnects: loop.reconnects,
      maxInFlight: this.#maxInFlight,
      atEnd,
      durationMs: this.#clock.now() - this.#t0,
      completed: loop.gaveUp === null && !loop.interrupted && atEnd.written === this.#count && atEnd.pending === 0,
      interrupted: loop.interrupted,
      gaveUp: loop.gaveUp,
      events: loop.events,
      connectedTo: loop.connectedTo,
    };
  }

  #done(): boolean {
    return this.#writerDone && this.#book.inFlight === 0 && this.#acked.length === 0 && !this.#store.hasPending();
  }

  // The application.

  /** The writer, running beside the relay: a failed write becomes #fatal; its end wakes the relay. */
  #startWriter(): Promise<void> {
    return this.#write()
      .catch((err: unknown) => {
        if (!(err instanceof InterruptedError)) this.#fatal ??= err;
      })
      .finally(() => {
        this.#writerDone = true;
        this.#loop.changed.notify();
      });
  }

  /** One event per transaction, paced, up to count. */
  async #write(): Promise<void> {
    const pacer = new Pacer(this.#opts.ratePerSec, this.#clock);
    for (let seq = this.#store.nextSeq(); seq < this.#count; seq++) {
      if (this.#signal.aborted) return;
      if (pacer.active) await pacer.pace(this.#signal);
      // Let the relay and the socket run between two commits.
      else await new Promise((r) => setImmediate(r));
      this.#store.append(seq, this.#body);
      this.#appended++;
      this.#loop.changed.notify();
    }
  }

  // The relay.

  /** Pending rows in the table, not already in flight (or acked and about to be marked), up to the window. */
  async #step(s: Session): Promise<void> {
    const rows = this.#nextRows();
    if (rows.length === 0) return this.#loop.wait(s, 100);
    for (const row of rows) {
      if (s.lost || s.needDrain) break;
      if (!this.#publish(s, row)) break;
    }
  }

  #nextRows(): OutboxRow[] {
    const book = this.#book;
    const room = this.#opts.window - book.inFlight;
    const after = this.#cursor;
    if (room <= 0) return [];
    return this.#store
      .pending(after < 0 ? book.inFlight + this.#acked.length + room : room, after)
      .filter((r) => !book.isInFlight(r.seq))
      .slice(0, room);
  }

  /** One row onto the channel, its confirm to onConfirm; false when the channel threw. */
  #publish(s: Session, row: OutboxRow): boolean {
    const opts = this.#opts;
    const props: Options.Publish = {
      messageId: row.id,
      persistent: opts.persistent,
      mandatory: opts.mandatory,
      contentType: 'application/octet-stream',
      timestamp: Math.floor(Date.now() / 1000),
      headers: { 'x-rmq-bench-run': this.#runId, 'x-rmq-bench-seq': row.seq, 'x-rmq-bench-outbox': true },
    };
    this.#book.publish(row.seq, s.id, this.#clock.now());
    this.#cursor = Math.max(this.#cursor, row.seq);
    this.#publishes++;
    let ok: boolean;
    try {
      ok = s.channel.publish(opts.exchange, opts.routingKey, row.payload, props, (err) => this.#onConfirm(s, row.seq, err));
    } catch (err) {
      this.#loop.event('publish-failed', `row ${row.seq}: ${errorMessage(err)}`);
      this.#loop.lose(s, errorMessage(err));
      return false;
    }
    this.#maxInFlight = Math.max(this.#maxInFlight, this.#book.inFlight);
    if (!ok) s.needDrain = true;
    return true;
  }

  #onConfirm(s: Session, seq: number, err: unknown): void {
    if (!err) {
      this.#acked.push(seq);
      if (!this.#flushQueued) {
        this.#flushQueued = true;
        // amqplib calls the callbacks of a multiple ack in one synchronous loop: one transaction for all of them.
        queueMicrotask(this.#safeFlush);
      }
      return;
    }
    if (!s.lost && /nack/i.test(errorMessage(err)) && this.#book.nack(seq, s.id)) {
      this.#nacked++;
      this.#cursor = -1;
      this.#loop.event('nack', `row ${seq} nacked by the broker; back to pending`);
      this.#loop.changed.notify();
    }
    // Any other error: the channel closed; onLost puts the row back to pending.
  }

  /** A lost session: its unconfirmed rows back to pending; returns the suffix of the loop's event. */
  #onLost(s: Session): string {
    // Acks already received on it still count: mark them before the rest goes back to pending.
    this.#safeFlush();
    const back = this.#book.connectionLost(s.id);
    this.#requeuedOnReconnect += back.length;
    if (back.length > 0) this.#cursor = -1;
    return back.length > 0 ? `; ${back.length} unconfirmed rows back to pending` : '';
  }

  #sweepTimeouts(): void {
    const timeoutMs = this.#opts.confirmTimeoutMs;
    if (this.#loop.timeoutsSuspended(timeoutMs)) return;
    const late = this.#book.timeouts(this.#clock.now(), timeoutMs);
    if (late.length > 0) {
      this.#timedOut += late.length;
      this.#cursor = -1;
      this.#loop.event('confirm-timeout', `${late.length} confirms not received within ${timeoutMs} ms; back to pending`);
      this.#loop.changed.notify();
    }
  }

  // The table.

  /** The acked rows marked published: the table first (a row is published once the table says so), then the book. */
  #flush(): void {
    this.#flushQueued = false;
    if (this.#acked.length === 0) return;
    const batch = this.#acked;
    this.#acked = [];
    this.#markedPublished += this.#store.markPublished(batch);
    for (const seq of batch) {
      if (this.#book.stateOf(seq) === 'published') continue;
      if (this.#book.ack(seq) === 'pending') this.#lateAcks++;
    }
    this.#hooks.onPublished?.(this.#atStart.published + this.#markedPublished);
    this.#loop.changed.notify();
  }

  /** #flush from a callback (a microtask, a close event): a failure stops the run instead of crashing the process. */
  readonly #safeFlush = (): void => {
    try {
      this.#flush();
    } catch (err) {
      this.#fatal ??= err;
      this.#loop.changed.notify();
    }
  };
}
