import type { ConfirmChannel, Options } from 'amqplib';
import { InterruptedError, errorMessage } from '../errors.js';
import type { OutboxCounts, OutboxStore } from '../store/outbox.js';
import { maskUrl } from '../url.js';
import { systemClock } from '../util/retry.js';
import { closeChannelWithin, closeWithin, connectAny } from './connect.js';
import { RelayBook } from './outbox-relay.js';
import type { TimelineEvent } from './publisher.js';
import { Signal } from '../util/signal.js';
import { openPublishSession, type PublishSession } from './session.js';

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

type Session = PublishSession<ConfirmChannel> & { id: number };

export async function runOutboxProducer(store: OutboxStore, opts: OutboxProducerOptions, hooks: OutboxProducerHooks): Promise<OutboxProducerResult> {
  const t0 = performance.now();
  const { runId, count } = store.meta;
  const atStart = store.counts();
  const book = new RelayBook();
  const changed = new Signal();
  const events: TimelineEvent[] = [];
  const connectedTo: string[] = [];
  const body = Buffer.alloc(opts.sizeBytes, 0x61);
  let appended = 0;
  let publishes = 0;
  let markedPublished = 0;
  let nacked = 0;
  let timedOut = 0;
  let requeuedOnReconnect = 0;
  let lateAcks = 0;
  let reconnects = 0;
  let maxInFlight = 0;
  let sessions = 0;
  let session: Session | undefined;
  let startIndex = opts.startIndex;
  let gaveUp: string | null = null;
  let interrupted = false;
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

  const now = (): number => performance.now() - t0;
  const event = (type: TimelineEvent['type'], detail: string): void => {
    const e = { atMs: now(), type, detail };
    events.push(e);
    hooks.onEvent?.(e);
  };

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
    changed.notify();
  };

  /** flush from a callback (a microtask, a close event): a failure stops the run instead of crashing the process. */
  const safeFlush = (): void => {
    try {
      flush();
    } catch (err) {
      fatal ??= err;
      changed.notify();
    }
  };

  const loseSession = (s: Session, why: string): void => {
    if (s.lost) return;
    s.lost = true;
    if (session === s) session = undefined;
    // Acks already received on it still count: mark them before the rest goes back to pending.
    safeFlush();
    const back = book.connectionLost(s.id);
    requeuedOnReconnect += back.length;
    if (back.length > 0) cursor = -1;
    event('connection-lost', `${maskUrl(s.url)}: ${why}${back.length > 0 ? `; ${back.length} unconfirmed rows back to pending` : ''}`);
    changed.notify();
  };

  const open = async (): Promise<Session> => {
    const c = await connectAny(opts.urls, startIndex, { heartbeatS: opts.heartbeatS, timeoutMs: opts.reconnectTimeoutMs, signal, connectionName: 'rmq-bench outbox relay' });
    startIndex = c.index;
    const s: Session = await openPublishSession(c, (connection) => connection.createConfirmChannel(), { id: ++sessions }, { onLost: loseSession, onDrain: () => changed.notify() });
    connectedTo.push(maskUrl(c.url));
    event('connected', maskUrl(c.url));
    return s;
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
      event('nack', `row ${seq} nacked by the broker; back to pending`);
      changed.notify();
    }
    // Any other error: the channel closed; loseSession puts the row back to pending.
  };

  const sweeper = setInterval(() => {
    const late = book.timeouts(performance.now(), opts.confirmTimeoutMs);
    if (late.length > 0) {
      timedOut += late.length;
      cursor = -1;
      event('confirm-timeout', `${late.length} confirms not received within ${opts.confirmTimeoutMs} ms; back to pending`);
      changed.notify();
    }
  }, Math.min(250, opts.confirmTimeoutMs));

  // The application: one event per transaction, paced.
  const writer = (async () => {
    const pacer = { next: performance.now() };
    for (let seq = store.nextSeq(); seq < count; seq++) {
      if (signal.aborted) return;
      if (opts.ratePerSec > 0) {
        const wait = pacer.next - performance.now();
        if (wait > 0) await systemClock.sleep(wait, signal);
        pacer.next = Math.max(pacer.next, performance.now() - 1000 / opts.ratePerSec) + 1000 / opts.ratePerSec;
      } else {
        // Let the relay and the socket run between two commits.
        await new Promise((r) => setImmediate(r));
      }
      store.append(seq, body);
      appended++;
      changed.notify();
    }
  })()
    .catch((err: unknown) => {
      if (!(err instanceof InterruptedError)) fatal ??= err;
    })
    .finally(() => {
      writerDone = true;
      changed.notify();
    });

  const done = (): boolean => writerDone && book.inFlight === 0 && acked.length === 0 && !store.hasPending();

  try {
    while (!done()) {
      if (fatal !== undefined) throw fatal;
      if (hooks.signal.aborted) {
        interrupted = true;
        break;
      }
      if (!session) {
        try {
          session = await open();
          if (sessions > 1) reconnects++;
        } catch (err) {
          if (err instanceof InterruptedError) {
            interrupted = true;
            break;
          }
          gaveUp = errorMessage(err);
          event('gave-up', gaveUp);
          break;
        }
      }
      const s = session;
      const room = opts.window - book.inFlight;
      if (s.needDrain || room <= 0) {
        await Promise.race([changed.wait(100), s.lostPromise]);
        continue;
      }
      // Pending in the table, and not already in flight (or acked and about to be marked).
      const after = cursor;
      const rows = store.pending(after < 0 ? book.inFlight + acked.length + room : room, after).filter((r) => !book.isInFlight(r.seq)).slice(0, room);
      if (rows.length === 0) {
        await Promise.race([changed.wait(100), s.lostPromise]);
        continue;
      }
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
        book.publish(row.seq, s.id, performance.now());
        cursor = Math.max(cursor, row.seq);
        publishes++;
        let ok: boolean;
        try {
          ok = s.channel.publish(opts.exchange, opts.routingKey, row.payload, props, (err) => onConfirm(s, row.seq, err));
        } catch (err) {
          event('publish-failed', `row ${row.seq}: ${errorMessage(err)}`);
          loseSession(s, errorMessage(err));
          break;
        }
        maxInFlight = Math.max(maxInFlight, book.inFlight);
        if (!ok) s.needDrain = true;
      }
    }
  } finally {
    stop.abort();
    clearInterval(sweeper);
    await writer;
    if (session) {
      const s = session;
      session = undefined;
      s.lost = true;
      await Promise.race([closeChannelWithin(s.channel, opts.flushTimeoutMs ?? 15_000), s.lostPromise]);
      safeFlush();
      await closeWithin(s.connection);
    }
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
    reconnects,
    maxInFlight,
    atEnd,
    durationMs: performance.now() - t0,
    completed: gaveUp === null && !interrupted && atEnd.written === count && atEnd.pending === 0,
    interrupted,
    gaveUp,
    events,
    connectedTo,
  };
}
