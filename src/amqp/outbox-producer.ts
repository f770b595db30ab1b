import type { ConfirmChannel, Options } from 'amqplib';
import { InterruptedError, errorMessage } from '../errors.js';
import type { OutboxCounts, OutboxStore } from '../store/outbox.js';
import { systemClock } from '../util/retry.js';
import { RelayBook } from './outbox-relay.js';
import { Pacer } from './pacer.js';
import { DEFAULT_BLOCKED_TIMEOUT_MS, PublishLoop, type LoopSession, type TimelineEvent } from './publish-loop.js';

/**
 * The outbox producer: the "application" writes its events into the outbox, one transaction
 * each, while a relay publishes the pending rows with confirms and marks each published once its
 * confirm is in. Both run in this process and resume from the table after a crash. Returns
 * data; never prints.
 */

export interface OutboxProducerOptions {
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

export interface OutboxProducerHooks {
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

type Session = LoopSession<ConfirmChannel, { id: number }>;

export async function runOutboxProducer(store: OutboxStore, opts: OutboxProducerOptions, hooks: OutboxProducerHooks): Promise<OutboxProducerResult> {
  const clock = systemClock;
  const t0 = clock.now();
  const { runId, count } = store.meta;
  const atStart = store.counts();
  const book = new RelayBook();
  const body = Buffer.alloc(opts.sizeBytes, 0x61);
  let appended = 0;
  let publishes = 0;
  let markedPublished = 0;
  let nacked = 0;
  let timedOut = 0;
  let requeuedOnReconnect = 0;
  let lateAcks = 0;
  let maxInFlight = 0;
  let sessions = 0;
  let writerDone = false;
  /** A failed write to the outbox (the writer's, or a flush's): the run stops with it. */
  let fatal: unknown;
  /** Acked on the wire, marked in the table by the next flush (a microtask: one transaction per ack frame). */
  let acked: number[] = [];
  let flushQueued = false;
  /**
   * The relay reads pending rows above the highest sequence it has published; a row put back to
   * pending (nack, timeout, lost connection) resets it, and the next read starts from the lowest.
   */
  let cursor = -1;
  const stop = new AbortController();
  const signal = AbortSignal.any([hooks.signal, stop.signal]);

  const loop = new PublishLoop<ConfirmChannel, { id: number }>({
    urls: opts.urls,
    startIndex: opts.startIndex,
    heartbeatS: opts.heartbeatS,
    reconnectTimeoutMs: opts.reconnectTimeoutMs,
    connectionName: 'rmq-bench outbox relay',
    signal: hooks.signal,
    connectSignal: signal,
    flushTimeoutMs: opts.flushTimeoutMs ?? 15_000,
    blockedTimeoutMs: opts.blockedTimeoutMs ?? DEFAULT_BLOCKED_TIMEOUT_MS,
    createChannel: (connection) => connection.createConfirmChannel(),
    extra: () => ({ id: ++sessions }),
    onLost: (s) => {
      // Acks already received on it still count: mark them before the rest goes back to pending.
      safeFlush();
      const back = book.connectionLost(s.id);
      requeuedOnReconnect += back.length;
      if (back.length > 0) cursor = -1;
      return back.length > 0 ? `; ${back.length} unconfirmed rows back to pending` : '';
    },
    ...(hooks.onEvent ? { onEvent: hooks.onEvent } : {}),
  });

  const flush = (): void => {
    flushQueued = false;
    if (acked.length === 0) return;
    const batch = acked;
    acked = [];
    // The table first: a row is published once the table says so, and only then in the book.
    markedPublished += store.markPublished(batch);
    for (const seq of batch) {
      if (book.stateOf(seq) === 'published') continue;
      if (book.ack(seq) === 'pending') lateAcks++;
    }
    hooks.onPublished?.(atStart.published + markedPublished);
    loop.changed.notify();
  };

  /** flush from a callback (a microtask, a close event): a failure stops the run instead of crashing the process. */
  const safeFlush = (): void => {
    try {
      flush();
    } catch (err) {
      fatal ??= err;
      loop.changed.notify();
    }
  };

  const onConfirm = (s: Session, seq: number, err: unknown): void => {
    if (!err) {
      acked.push(seq);
      if (!flushQueued) {
        flushQueued = true;
        // amqplib calls the callbacks of a multiple ack in one synchronous loop: one transaction for all of them.
        queueMicrotask(safeFlush);
      }
      return;
    }
    if (!s.lost && /nack/i.test(errorMessage(err)) && book.nack(seq, s.id)) {
      nacked++;
      cursor = -1;
      loop.event('nack', `row ${seq} nacked by the broker; back to pending`);
      loop.changed.notify();
    }
    // Any other error: the channel closed; onLost puts the row back to pending.
  };

  const sweeper = setInterval(
    () => {
      if (loop.timeoutsSuspended(opts.confirmTimeoutMs)) return;
      const late = book.timeouts(clock.now(), opts.confirmTimeoutMs);
      if (late.length > 0) {
        timedOut += late.length;
        cursor = -1;
        loop.event('confirm-timeout', `${late.length} confirms not received within ${opts.confirmTimeoutMs} ms; back to pending`);
        loop.changed.notify();
      }
    },
    Math.min(250, opts.confirmTimeoutMs),
  );

  // The application: one event per transaction, paced.
  const writer = (async () => {
    const pacer = new Pacer(opts.ratePerSec, clock);
    for (let seq = store.nextSeq(); seq < count; seq++) {
      if (signal.aborted) return;
      if (pacer.active) await pacer.pace(signal);
      // Let the relay and the socket run between two commits.
      else await new Promise((r) => setImmediate(r));
      store.append(seq, body);
      appended++;
      loop.changed.notify();
    }
  })()
    .catch((err: unknown) => {
      if (!(err instanceof InterruptedError)) fatal ??= err;
    })
    .finally(() => {
      writerDone = true;
      loop.changed.notify();
    });

  const done = (): boolean => writerDone && book.inFlight === 0 && acked.length === 0 && !store.hasPending();

  /** Pending rows in the table, not already in flight (or acked and about to be marked), up to the window. */
  const step = async (s: Session): Promise<void> => {
    const room = opts.window - book.inFlight;
    const after = cursor;
    const rows =
      room <= 0
        ? []
        : store
            .pending(after < 0 ? book.inFlight + acked.length + room : room, after)
            .filter((r) => !book.isInFlight(r.seq))
            .slice(0, room);
    if (rows.length === 0) return loop.wait(s, 100);
    for (const row of rows) {
      if (s.lost || s.needDrain) break;
      const props: Options.Publish = {
        messageId: row.id,
        persistent: opts.persistent,
        mandatory: opts.mandatory,
        contentType: 'application/octet-stream',
        timestamp: Math.floor(Date.now() / 1000),
        headers: { 'x-rmq-bench-run': runId, 'x-rmq-bench-seq': row.seq, 'x-rmq-bench-outbox': true },
      };
      book.publish(row.seq, s.id, clock.now());
      cursor = Math.max(cursor, row.seq);
      publishes++;
      let ok: boolean;
      try {
        ok = s.channel.publish(opts.exchange, opts.routingKey, row.payload, props, (err) => onConfirm(s, row.seq, err));
      } catch (err) {
        loop.event('publish-failed', `row ${row.seq}: ${errorMessage(err)}`);
        loop.lose(s, errorMessage(err));
        break;
      }
      maxInFlight = Math.max(maxInFlight, book.inFlight);
      if (!ok) s.needDrain = true;
    }
  };

  try {
    await loop.run(done, step, () => {
      if (fatal !== undefined) throw fatal;
    });
  } finally {
    stop.abort();
    clearInterval(sweeper);
    await writer;
    await loop.close({ afterChannelClose: safeFlush });
    safeFlush();
  }
  if (fatal !== undefined) throw fatal;

  const atEnd = store.counts();
  return {
    file: store.file,
    runId,
    count,
    atStart,
    appended,
    publishes,
    markedPublished,
    nacked,
    timedOut,
    requeuedOnReconnect,
    lateAcks,
    reconnects: loop.reconnects,
    maxInFlight,
    atEnd,
    durationMs: clock.now() - t0,
    completed: loop.gaveUp === null && !loop.interrupted && atEnd.written === count && atEnd.pending === 0,
    interrupted: loop.interrupted,
    gaveUp: loop.gaveUp,
    events: loop.events,
    connectedTo: loop.connectedTo,
  };
}
