import type { Channel, ConsumeMessage } from 'amqplib';
import { InterruptedError, NotFoundError, errorMessage } from '../errors.js';
import type { ProcessedStore } from '../store/processed.js';
import { maskUrl } from '../url.js';
import { systemClock } from '../util/retry.js';
import { closeChannelWithin, closeWithin, connectAny } from './connect.js';
import type { FailureAction } from './failure-actions.js';

/**
 * The consumer: manual ack or autoack, prefetch, simulated work, simulated failures, and an
 * optional durable (idempotent) record of what it processed. Returns data; never prints.
 */

export type { FailureAction } from './failure-actions.js';

/** What each failure does to the message, for people (RabbitMQ 4.3 quorum queues). */
export const FAILURE_DESCRIPTIONS: Record<FailureAction, string> = {
  'nack-requeue': 'basic.nack requeue=true: back to the queue',
  'nack-drop': 'basic.nack requeue=false: dead-lettered (or dropped) at once',
  'reject-requeue': 'basic.reject requeue=true: back to the queue',
  'reject-drop': 'basic.reject requeue=false: dead-lettered (or dropped) at once',
  close: 'close the connection without acking: a failed delivery, counted towards delivery-limit',
};

/** When deliveries fail on purpose, and how. */
export interface FailureSpec {
  action: FailureAction;
  every: number | undefined;
  rate: number | undefined;
  first?: number | undefined;
}

export interface ConsumerOptions {
  urls: readonly string[];
  /** Index in urls to connect to first (default 0). */
  startIndex?: number;
  queue: string;
  /** basic.consume arguments (for example x-consumer-timeout). */
  consumeArguments?: Record<string, unknown>;
  /** 0 = unlimited. Ignored by the broker with autoack. */
  prefetch: number;
  autoAck: boolean;
  /** The article's --nack: every delivery "crashes" the consumer (connection closed, no ack). */
  crashOnDelivery: boolean;
  failure: FailureSpec | undefined;
  workMs: number;
  /** The work of one delivery, in ms, when it differs by message (a slow message among fast ones); workMs otherwise. */
  workMsOf?: (messageId: string) => number;
  /** Manual ack: one multiple-ack every N messages (1 = ack each). A wider window for duplicates after a crash. */
  ackEvery: number;
  /** Stop after this many deliveries processed (or skipped as duplicates). */
  count: number | undefined;
  /** Stop when nothing arrived for this long. */
  idleTimeoutMs: number;
  heartbeatS: number;
  reconnectTimeoutMs: number;
  store: ProcessedStore | undefined;
  /** Pseudo-random source for --fail-rate (injectable for tests). */
  random?: () => number;
}

export type DeliveryOutcome = 'processed' | 'duplicate-skipped' | FailureAction | 'crash';

export interface DeliveryRecord {
  atMs: number;
  messageId: string | undefined;
  redelivered: boolean;
  /** x-delivery-count as the broker sent it (absent on a first delivery). */
  deliveryCount: number | undefined;
  /** x-acquired-count (RabbitMQ 4.x), when present. */
  acquiredCount: number | undefined;
  /** First x-death entry, e.g. "rejected from demo.orders ×2". */
  death: string | undefined;
  outcome: DeliveryOutcome;
}

export interface ConsumerResult {
  queue: string;
  autoAck: boolean;
  prefetch: number;
  received: number;
  processed: number;
  duplicatesSkipped: number;
  acked: number;
  nacked: number;
  rejected: number;
  /** Connections closed on purpose (--nack, --on-failure close). */
  crashes: number;
  byOutcome: Record<string, number>;
  reconnects: number;
  /**
   * basic.cancel from the broker: a consumer timeout (RabbitMQ 4.3 quorum queues), or the queue
   * deleted. Each time the connection is closed (the broker's consumer with it) and the
   * consumer subscribes again; a deleted queue then ends the run.
   */
  cancels: number;
  /** The most deliveries held at once by this consumer, unacked or (autoack) unprocessed. */
  maxHeld: number;
  /** ms since start of the last message processed. */
  lastProcessedAtMs: number | null;
  durationMs: number;
  stoppedBecause: 'count' | 'idle' | 'interrupted' | 'gave-up';
  gaveUp: string | null;
  /** Every delivery, in order (at most the first 100,000). */
  deliveries: DeliveryRecord[];
}

export interface ConsumerHooks {
  signal: AbortSignal;
  onDelivery?: (d: DeliveryRecord) => void;
  onEvent?: (line: string) => void;
  /** After each basic.consume is in place. */
  onSubscribed?: () => void;
  /** The moment the broker's basic.cancel arrives (the consumer subscribes again once its current work is over). */
  onCancelled?: () => void;
}

const MAX_RECORDS = 100_000;

/** A numeric header as amqplib decodes it (a number, a bigint, or a typed { value }). Pure. */
export function numberHeader(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'object' && v !== null && 'value' in v && typeof (v as { value: unknown }).value === 'number') return (v as { value: number }).value;
  return undefined;
}

/** The first x-death entry in words. Pure. */
export function deathSummary(headers: Record<string, unknown> | undefined): string | undefined {
  const deaths = headers?.['x-death'];
  if (!Array.isArray(deaths) || deaths.length === 0) return undefined;
  const d = deaths[0] as Record<string, unknown>;
  return `${String(d.reason ?? '?')} from ${String(d.queue ?? '?')} ×${numberHeader(d.count) ?? '?'}`;
}

/** Whether the n-th delivery (1-based) should fail. Pure. */
export function shouldFail(n: number, failure: ConsumerOptions['failure'], random: () => number): boolean {
  if (!failure) return false;
  if (failure.first !== undefined) return n <= failure.first;
  if (failure.every !== undefined) return n % failure.every === 0;
  if (failure.rate !== undefined) return random() < failure.rate;
  return true;
}

export async function runConsumer(opts: ConsumerOptions, hooks: ConsumerHooks): Promise<ConsumerResult> {
  const t0 = performance.now();
  const random = opts.random ?? Math.random;
  const deliveries: DeliveryRecord[] = [];
  const byOutcome: Record<string, number> = {};
  let received = 0;
  let processed = 0;
  let duplicatesSkipped = 0;
  let acked = 0;
  let nacked = 0;
  let rejected = 0;
  let crashes = 0;
  let reconnects = 0;
  let cancels = 0;
  let maxHeld = 0;
  let lastProcessedAtMs: number | null = null;
  let connections = 0;
  let lastActivity = performance.now();
  let stoppedBecause: ConsumerResult['stoppedBecause'] | undefined;
  let gaveUp: string | null = null;
  const prefetch = opts.crashOnDelivery ? 1 : opts.prefetch;
  const doneCount = (): boolean => opts.count !== undefined && processed + duplicatesSkipped >= opts.count;

  const record = (msg: ConsumeMessage, outcome: DeliveryOutcome): void => {
    const headers = msg.properties.headers as Record<string, unknown> | undefined;
    const d: DeliveryRecord = {
      atMs: performance.now() - t0,
      messageId: typeof msg.properties.messageId === 'string' ? msg.properties.messageId : undefined,
      redelivered: msg.fields.redelivered,
      deliveryCount: numberHeader(headers?.['x-delivery-count']),
      acquiredCount: numberHeader(headers?.['x-acquired-count']),
      death: deathSummary(headers),
      outcome,
    };
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
    if (deliveries.length < MAX_RECORDS) deliveries.push(d);
    hooks.onDelivery?.(d);
  };

  let startIndex = opts.startIndex ?? 0;
  while (!stoppedBecause) {
    if (hooks.signal.aborted) {
      stoppedBecause = 'interrupted';
      break;
    }
    let c: Awaited<ReturnType<typeof connectAny>>;
    try {
      c = await connectAny(opts.urls, startIndex, {
        heartbeatS: opts.heartbeatS,
        timeoutMs: opts.reconnectTimeoutMs,
        signal: hooks.signal,
        connectionName: 'rmq-bench consumer',
      });
    } catch (err) {
      if (err instanceof InterruptedError) {
        stoppedBecause = 'interrupted';
        break;
      }
      gaveUp = errorMessage(err);
      stoppedBecause = 'gave-up';
      break;
    }
    startIndex = c.index;
    connections++;
    if (connections > 1) reconnects++;
    hooks.onEvent?.(`connected to ${maskUrl(c.url)}`);
    const conn = c.connection;
    conn.on('error', () => undefined);
    let closed = false;
    /** The broker cancelled this consumer: no more deliveries, and no acks on this channel (see below). */
    let cancelled = false;
    let closedResolve!: () => void;
    const closedP = new Promise<void>((r) => (closedResolve = r));
    conn.on('close', () => {
      closed = true;
      closedResolve();
    });
    let ch: Channel;
    try {
      ch = await conn.createChannel();
      ch.on('error', () => undefined);
      if (prefetch > 0) await ch.prefetch(prefetch);
      await ch.checkQueue(opts.queue).catch((err: unknown) => {
        throw new NotFoundError(`queue '${opts.queue}' does not exist (${errorMessage(err)})`);
      });
    } catch (err) {
      await closeWithin(conn);
      if (err instanceof NotFoundError) throw err;
      continue;
    }
    let unacked: ConsumeMessage | undefined;
    let unackedCount = 0;
    /** A message taken from the inbox and not yet settled. */
    let inProcess = false;
    // Deliveries are processed one at a time, in order: a local FIFO fed by amqplib.
    const inbox: ConsumeMessage[] = [];
    let wake: (() => void) | undefined;
    try {
      await ch.consume(
        opts.queue,
        (msg) => {
          if (!msg) {
            // basic.cancel from the broker. On 4.3 a quorum queue sends it when a delivery outlives
            // the consumer timeout: that message is back in the queue, and the broker keeps the
            // consumer in a "timeout" state until it is settled. An ack of it would wake the consumer
            // at the broker while amqplib has already forgotten its tag (the next delivery closes the
            // channel: "Unknown consumer"). So: no more acks here; close this connection and subscribe again.
            cancelled = true;
            closed = true;
            closedResolve();
            hooks.onCancelled?.();
            return;
          }
          inbox.push(msg);
          maxHeld = Math.max(maxHeld, inbox.length + unackedCount + (inProcess ? 1 : 0));
          wake?.();
        },
        { noAck: opts.autoAck, ...(opts.consumeArguments ? { arguments: opts.consumeArguments } : {}) },
      );
    } catch {
      // The connection went while subscribing (a node killed or cut off just then): connect again.
      await closeWithin(conn);
      hooks.onEvent?.('connection lost while subscribing; reconnecting');
      continue;
    }
    hooks.onSubscribed?.();

    let crashed = false;
    const flushAcks = (): void => {
      if (unacked && !closed) {
        ch.ack(unacked, true);
        acked += unackedCount;
      }
      unacked = undefined;
      unackedCount = 0;
    };
    while (!closed && !crashed) {
      if (hooks.signal.aborted) {
        stoppedBecause = 'interrupted';
        break;
      }
      if (doneCount()) {
        stoppedBecause = 'count';
        break;
      }
      const msg = inbox.shift();
      if (!msg) {
        flushAcks();
        if (performance.now() - lastActivity >= opts.idleTimeoutMs) {
          stoppedBecause = 'idle';
          break;
        }
        await Promise.race([new Promise<void>((r) => (wake = r)), closedP, systemClock.sleep(100)]);
        wake = undefined;
        continue;
      }
      lastActivity = performance.now();
      received++;
      inProcess = true;
      if (opts.crashOnDelivery) {
        record(msg, 'crash');
        crashes++;
        crashed = true;
        break;
      }
      const id = typeof msg.properties.messageId === 'string' ? msg.properties.messageId : `no-id-${received}`;
      // A message the idempotent store already has is not worked on again (the store check below records it as skipped):
      // otherwise a redelivered slow message would do its slow work again, and time out again.
      const workMs = opts.store?.alreadyProcessed(id) ? 0 : opts.workMsOf ? opts.workMsOf(id) : opts.workMs;
      if (workMs > 0) {
        try {
          await systemClock.sleep(workMs, hooks.signal);
        } catch {
          stoppedBecause = 'interrupted';
          break;
        }
      }
      if (shouldFail(received, opts.failure, random)) {
        const action = opts.failure!.action;
        inProcess = false;
        record(msg, action);
        if (!opts.autoAck) {
          if (action === 'nack-requeue' || action === 'nack-drop') {
            ch.nack(msg, false, action === 'nack-requeue');
            nacked++;
          } else if (action === 'reject-requeue' || action === 'reject-drop') {
            ch.reject(msg, action === 'reject-requeue');
            rejected++;
          }
        }
        if (action === 'close') {
          crashes++;
          crashed = true;
        }
        continue;
      }
      const deliveryCount = numberHeader((msg.properties.headers as Record<string, unknown> | undefined)?.['x-delivery-count']) ?? 0;
      const outcome = opts.store ? opts.store.process(id, deliveryCount, () => undefined) : 'processed';
      if (outcome === 'duplicate') duplicatesSkipped++;
      else processed++;
      lastProcessedAtMs = performance.now() - t0;
      if (!opts.autoAck) {
        unacked = msg;
        unackedCount++;
        if (unackedCount >= Math.max(1, opts.ackEvery)) flushAcks();
      }
      inProcess = false;
      // Idle counts from the end of the work: a slow message is activity, not silence.
      lastActivity = performance.now();
      record(msg, outcome === 'duplicate' ? 'duplicate-skipped' : 'processed');
    }
    // Leaving this connection: deliberately (crash), or because we stop.
    if (crashed) {
      hooks.onEvent?.('closing the connection without acking (simulated crash)');
      await closeWithin(conn, 2_000);
      continue;
    }
    if (cancelled) {
      cancels++;
      const dropped = inbox.length;
      hooks.onEvent?.(
        `the broker cancelled the consumer (a consumer timeout, or the queue deleted); closing this connection${dropped > 0 ? ` (${dropped} prefetched deliveries go back)` : ''} and subscribing again`,
      );
      await closeWithin(conn);
      // The returned message comes back on the next subscription: the wait for it is not idleness.
      lastActivity = performance.now();
    } else if (!closed) {
      flushAcks();
      await closeChannelWithin(ch, 5_000);
      await closeWithin(conn);
    } else if (!stoppedBecause) {
      hooks.onEvent?.('connection lost; reconnecting');
    }
  }
  return {
    queue: opts.queue,
    autoAck: opts.autoAck,
    prefetch,
    received,
    processed,
    duplicatesSkipped,
    acked,
    nacked,
    rejected,
    crashes,
    byOutcome,
    reconnects,
    cancels,
    maxHeld,
    lastProcessedAtMs,
    durationMs: performance.now() - t0,
    stoppedBecause: stoppedBecause ?? 'idle',
    gaveUp,
    deliveries,
  };
}
