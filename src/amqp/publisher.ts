import type { Channel, ConfirmChannel, Message } from 'amqplib';
import { InterruptedError, errorMessage } from '../errors.js';
import { type Ledger, parseMessageId } from '../ledger/ledger.js';
import { LatencyRecorder, type LatencySummary } from '../measure/histogram.js';
import { AdaptiveSamples } from '../measure/samples.js';
import { systemClock } from '../util/retry.js';
import { ConfirmBook, type AckVisitor, type NackVisitor } from './confirm-book.js';
import { Pacer } from './pacer.js';
import { DEFAULT_BLOCKED_TIMEOUT_MS, PublishLoop, type FlushOutcome, type LoopSession, type TimelineEvent } from './publish-loop.js';
import { commitTx, createModeChannel, modeRules, propertiesFor, type PublishMode } from './publish-modes.js';

/**
 * The producer: publishes `count` messages (sequence numbers 0..count-1 of one run) and records
 * what happened to each in a Ledger. With confirms, a nack, a confirm timeout or a connection
 * lost with the message unconfirmed makes it indeterminate, and it is published again after
 * reconnecting (at-least-once: duplicates are possible and counted). Without confirms the
 * producer only knows what it wrote to the socket. Returns data; never prints.
 */

export type { FlushOutcome, PublishMode, TimelineEvent };

export interface PublisherOptions {
  urls: readonly string[];
  /** Index in urls to connect to first (compare: the queue leader's node). */
  startIndex: number;
  exchange: string;
  routingKey: string;
  count: number;
  /** Messages per second; 0 = as fast as possible. */
  ratePerSec: number;
  sizeBytes: number;
  persistent: boolean;
  mandatory: boolean;
  mode: PublishMode;
  /** async: outstanding confirms at most. */
  window: number;
  /** batch: confirms awaited every N; tx: commit every N. */
  batchSize: number;
  confirmTimeoutMs: number;
  heartbeatS: number;
  /** Deadline to get a connection back after losing one. */
  reconnectTimeoutMs: number;
  runId: string;
  /** At the end: how long to wait for the client library to hand buffered publishes to the broker. */
  flushTimeoutMs?: number;
  /** How long the connection may stay blocked by the broker (a resource alarm) before the run gives up (default 60 s). */
  blockedTimeoutMs?: number;
  /**
   * Also carry x-rmq-bench-published-at-us: microseconds, performance.timeOrigin + performance.now(),
   * so that a consumer in the same process can measure end-to-end latency finer than Date.now()'s ms.
   */
  publishedAtUs?: boolean;
  /**
   * Only message_id, delivery mode and (with publishedAtUs) the publish time: no content type, no
   * timestamp, no x-rmq-bench-run/-seq/-published-at headers. For throughput runs, where encoding
   * them costs measurable CPU per message; `verify` needs only the message_id.
   */
  leanProperties?: boolean;
  /**
   * Record confirm latencies in the result's confirmLatency histograms (default true). false: the
   * caller records them itself from hooks.onConfirm (bench's meter), and the result's histograms
   * stay empty; one histogram record per confirm instead of two.
   */
  recordConfirmLatency?: boolean;
  /**
   * First sequence to publish (default 0): sequences startSeq..count-1. A restarted producer that
   * resumes from the last number it printed (producer-crash's naive mode).
   */
  startSeq?: number;
}

export interface PublisherSnapshot {
  written: number;
  confirmed: number;
  inFlight: number;
  reconnects: number;
  retryBacklog: number;
}

export interface PublisherHooks {
  signal: AbortSignal;
  /** After a message is written for the first time, with the number of distinct messages written so far. */
  onWritten?: (distinctWritten: number) => void;
  onEvent?: (event: TimelineEvent) => void;
  /** Whether a confirm arriving now falls in the window around a fault (for a second histogram). */
  inFaultWindow?: () => boolean;
  /**
   * On each broker ack (tx: each message of a committed batch), with its latency in ms: publish to
   * ack (tx: the commit round trip); undefined for a late ack whose publish time was dropped.
   */
  onConfirm?: (latencyMs: number | undefined) => void;
  /**
   * Stop publishing new messages, as if `count` had been reached: retries and outstanding confirms
   * are still awaited (tx: the open transaction is committed) and the run can end completed. For
   * runs bounded by time rather than by count.
   */
  stop?: AbortSignal;
  /** Called once at the start with a reader of the live counters (chaos's per-second line and timeline). */
  onStart?: (snapshot: () => PublisherSnapshot) => void;
}

export interface PublisherResult {
  runId: string;
  mode: PublishMode;
  count: number;
  /** Distinct messages handed to the socket at least once (what a producer without confirms reports as sent). */
  written: number;
  /** All publish calls, republishes included. */
  publishes: number;
  confirmed: number;
  nacked: number;
  returned: number;
  indeterminate: number;
  republished: number;
  reconnects: number;
  /** The most confirms (or uncommitted tx messages) outstanding at once. */
  maxInFlight: number;
  startedAtIso: string;
  durationMs: number;
  publishRatePerSec: number;
  confirmLatency: LatencySummary;
  confirmLatencyAroundFault: LatencySummary;
  /** Longest stretch with no message written and no confirm received. */
  longestStallMs: number;
  /** connection.blocked notifications (resource alarms), and the time spent blocked (ms). */
  blocks: number;
  blockedMs: number;
  /**
   * How the end went (undefined: no connection was open at the end). Without confirms, a channel
   * close that timed out means the broker had not read everything written.
   */
  flush: FlushOutcome | undefined;
  /** Every message ended confirmed (confirm modes) or written (none); false when the run gave up or was interrupted. */
  completed: boolean;
  /** Ctrl+C stopped it: the figures are what was measured until then. */
  interrupted: boolean;
  gaveUp: string | null;
  events: TimelineEvent[];
  connectedTo: string[];
  /** For timelines (HTML reports): at most MAX_SAMPLES, at an interval from 10 ms up, chosen by the run's length; and once at the end. */
  samples: PublisherSample[];
}

/** Counters at one moment of a run: distinct messages written, confirms received, awaiting a confirm. */
export interface PublisherSample {
  tMs: number;
  written: number;
  confirmed: number;
  inFlight: number;
}

/** The most samples a run keeps (AdaptiveSamples: a 0.1 s run and a 60 s one both read well). */
export const MAX_SAMPLES = 1_000;
/** How often the sampler looks; it records a sample when its current interval has passed. */
const SAMPLER_TICK_MS = 10;

/** A live connection with no confirm for this many confirm timeouts is given up (see sweepTimeouts). */
export const STUCK_AFTER_TIMEOUTS = 2;

type Session = LoopSession<Channel | ConfirmChannel, { epoch: number }>;
type AckFrame = { deliveryTag: number; multiple: boolean };

export async function runPublisher(opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks): Promise<PublisherResult> {
  const clock = systemClock;
  const t0 = clock.now();
  const startedAtIso = new Date().toISOString();
  const rules = modeRules(opts.mode, opts.window, opts.batchSize);
  const { confirms, tx, window } = rules;
  const body = Buffer.alloc(opts.sizeBytes, 0x61);
  const propertiesOf = propertiesFor(opts);
  const book = new ConfirmBook();
  const pacer = new Pacer(opts.ratePerSec, clock);
  const sampled = new AdaptiveSamples<PublisherSample>(MAX_SAMPLES, SAMPLER_TICK_MS);
  const latency = new LatencyRecorder();
  const latencyFault = new LatencyRecorder();
  const recordLatency = opts.recordConfirmLatency ?? true;
  let confirmsSoFar = 0;
  let nextSeq = opts.startSeq ?? 0;
  let distinctWritten = 0;
  let publishes = 0;
  let maxInFlight = 0;
  let lastProgressAt = t0;
  let longestStallMs = 0;
  /** opts.count, or fewer once hooks.stop has fired: new sequences stop here. */
  let limit = opts.count;
  /** When the confirms being visited arrived (tx: the commit's round trip), and whether in the fault window. */
  let ackAtMs = 0;
  let commitMs = 0;
  let inFault = false;
  /** The last ack on the current session (or when it opened): how long confirms have been silent. */
  let lastAckAtMs = 0;

  const loop = new PublishLoop<Channel | ConfirmChannel, { epoch: number }>({
    urls: opts.urls,
    startIndex: opts.startIndex,
    heartbeatS: opts.heartbeatS,
    reconnectTimeoutMs: opts.reconnectTimeoutMs,
    signal: hooks.signal,
    flushTimeoutMs: opts.flushTimeoutMs ?? 15_000,
    blockedTimeoutMs: opts.blockedTimeoutMs ?? DEFAULT_BLOCKED_TIMEOUT_MS,
    createChannel: (connection) => createModeChannel(connection, rules),
    extra: () => ({ epoch: 0 }),
    onOpen: (s) => {
      s.channel.on('return', (msg: Message) => {
        const id = parseMessageId(String(msg.properties.messageId ?? ''));
        if (id && id.runId === opts.runId) ledger.returned(id.seq);
      });
      if (!confirms && !tx) return;
      lastAckAtMs = clock.now();
      const epoch = book.openChannel();
      s.epoch = epoch;
      s.channel.on('ack', (f: AckFrame) => onAck(epoch, f));
      s.channel.on('nack', (f: AckFrame) => onNack(epoch, f));
    },
    onLost: () => {
      // Unconfirmed (tx: uncommitted) on the lost connection: indeterminate, published again.
      for (const seq of book.connectionLost()) ledger.indeterminate(seq);
    },
    // Unblocked: confirms are due again from now (timeoutsSuspended covers the grace).
    onBlocked: (_s, reason) => {
      if (reason === null) lastAckAtMs = clock.now();
    },
    ...(hooks.onEvent ? { onEvent: hooks.onEvent } : {}),
  });
  hooks.onStart?.(() => ({
    written: distinctWritten,
    confirmed: confirmsSoFar,
    inFlight: book.inFlight,
    reconnects: loop.reconnects,
    retryBacklog: book.retrying,
  }));

  const stopHere = (): void => {
    limit = Math.min(limit, nextSeq);
    loop.changed.notify();
  };
  if (hooks.stop?.aborted) stopHere();
  hooks.stop?.addEventListener('abort', stopHere, { once: true });
  /** A paced wait ends early on Ctrl+C and on stop. */
  const paceSignal = hooks.stop ? AbortSignal.any([hooks.signal, hooks.stop]) : hooks.signal;

  const progressed = (at: number): void => {
    if (at - lastProgressAt > longestStallMs) longestStallMs = at - lastProgressAt;
    lastProgressAt = at;
  };
  const confirmed = (seq: number, ms: number | undefined): void => {
    // The broker confirmed it, even if we had given up waiting (then it is also republished).
    if (!ledger.has(seq, 'confirmed')) confirmsSoFar++;
    ledger.confirm(seq);
    if (ms !== undefined && recordLatency) {
      latency.recordMs(ms);
      if (inFault) latencyFault.recordMs(ms);
    }
    hooks.onConfirm?.(ms);
  };
  const onAcked: AckVisitor = (seq, sentAtMs) => confirmed(seq, sentAtMs === undefined ? undefined : ackAtMs - sentAtMs);
  const onCommitted: AckVisitor = (seq) => confirmed(seq, commitMs);
  const onNacked: NackVisitor = (seq) => {
    ledger.nack(seq);
    ledger.indeterminate(seq);
    loop.event('nack', `message ${seq} nacked by the broker; it will be published again`);
  };
  /** One ack frame (multiple: many messages): one clock read, one wake-up. */
  const onAck = (epoch: number, f: AckFrame): void => {
    ackAtMs = clock.now();
    inFault = hooks.inFaultWindow?.() ?? false;
    if (book.ack(epoch, f.deliveryTag, f.multiple, onAcked) === 0) return;
    lastAckAtMs = ackAtMs;
    progressed(ackAtMs);
    loop.changed.notify();
  };
  const onNack = (epoch: number, f: AckFrame): void => {
    if (book.nack(epoch, f.deliveryTag, f.multiple, onNacked) > 0) loop.changed.notify();
  };
  const commit = async (s: Session): Promise<void> => {
    if (book.inFlight === 0) return;
    const sentAt = clock.now();
    await commitTx(s.channel).catch(() => undefined);
    if (s.lost) return; // onLost already made them indeterminate
    const at = clock.now();
    commitMs = at - sentAt;
    inFault = hooks.inFaultWindow?.() ?? false;
    book.ack(book.channel, book.lastTag, true, onCommitted);
    progressed(at);
  };

  /**
   * Confirms that did not arrive within confirmTimeoutMs: indeterminate, published again. When
   * no confirm at all has come for STUCK_AFTER_TIMEOUTS × confirmTimeoutMs on a connection that
   * is still open (a partitioned node keeps its clients and its heartbeats, and confirms stop),
   * that connection is given up and the next node tried.
   */
  const sweepTimeouts = (): void => {
    if (loop.timeoutsSuspended(opts.confirmTimeoutMs)) return;
    const now = clock.now();
    const late = book.timeouts(now, opts.confirmTimeoutMs);
    if (late.length === 0) return;
    for (const seq of late) ledger.indeterminate(seq);
    loop.event('confirm-timeout', `${late.length} confirms not received within ${opts.confirmTimeoutMs} ms; published again`);
    const s = loop.session;
    const silentMs = now - lastAckAtMs;
    if (s && !s.lost && silentMs >= STUCK_AFTER_TIMEOUTS * opts.confirmTimeoutMs) {
      loop.abandon(s, `no confirm for ${Math.round(silentMs)} ms on a live connection: giving it up for the next node`);
    }
    loop.changed.notify();
  };
  const snapshot = (): PublisherSample => ({ tMs: clock.now() - t0, written: distinctWritten, confirmed: confirmsSoFar, inFlight: book.inFlight });
  const sample = (): void => sampled.offer(clock.now() - t0, snapshot);

  /** What the loop does next: publish, wait (a full window, a batch's confirms, the last confirms), or commit. */
  const next = (): 'publish' | 'wait' | 'commit' => {
    if (confirms && !book.hasRoom(window)) return 'wait';
    if (rules.batch && book.inFlight > 0 && (nextSeq >= limit || book.retrying > 0 || book.inFlight >= opts.batchSize)) return 'wait';
    if (book.retrying === 0 && nextSeq >= limit) return tx ? 'commit' : 'wait';
    return 'publish';
  };
  const txDue = (): boolean => book.inFlight >= opts.batchSize || (nextSeq >= limit && book.retrying === 0);
  const done = (): boolean => nextSeq >= limit && book.retrying === 0 && book.inFlight === 0;

  /** One message (a retry first) onto the channel; false when the channel threw. */
  const publishOne = (s: Session): boolean => {
    const fromRetry = book.retrying > 0;
    const seq = fromRetry ? book.takeRetry()! : nextSeq++;
    const firstTime = !ledger.has(seq, 'written');
    if (fromRetry) ledger.republish(seq);
    else ledger.attempt(seq);
    publishes++;
    loop.publishCalls++;
    const at = clock.now();
    let ok: boolean;
    try {
      ok = s.channel.publish(opts.exchange, opts.routingKey, body, propertiesOf(seq, at));
    } catch (err) {
      // The channel closed under us: the message never reached the socket.
      book.retry(seq);
      loop.event('publish-failed', `message ${seq}: ${errorMessage(err)}`);
      loop.lose(s, errorMessage(err));
      return false;
    }
    if (confirms || tx) book.publish(seq, at);
    ledger.written(seq);
    if (book.inFlight > maxInFlight) maxInFlight = book.inFlight;
    if (!confirms && !tx) progressed(at);
    if (firstTime) {
      // Counted whether or not a hook listens (an optional call skips its arguments' side effects).
      distinctWritten++;
      hooks.onWritten?.(distinctWritten);
    }
    if (!ok) s.needDrain = true;
    return true;
  };

  /** A paced slot; false when none was taken (Ctrl+C, or hooks.stop: no new sequence from here on). */
  const paced = async (): Promise<boolean> => {
    try {
      await pacer.pace(paceSignal);
      return true;
    } catch (err) {
      if (!(err instanceof InterruptedError)) throw err;
      if (!hooks.signal.aborted) stopHere();
      return false;
    }
  };

  const step = async (s: Session): Promise<void> => {
    const todo = next();
    if (todo === 'wait') return loop.wait(s, 100);
    if (todo === 'commit') return commit(s);
    if (pacer.active) {
      if (!(await paced()) || s.lost || next() !== 'publish') return;
      if (publishOne(s) && tx && txDue()) await commit(s);
      return;
    }
    // As fast as possible: fill the window without yielding (tx: up to the commit).
    while (publishOne(s) && !s.needDrain && !hooks.signal.aborted && next() === 'publish') {
      if (tx && txDue()) break;
    }
    if (tx && !s.lost && txDue()) await commit(s);
  };

  let flush: FlushOutcome | undefined;
  const sweeper = confirms ? setInterval(sweepTimeouts, Math.min(250, opts.confirmTimeoutMs)) : undefined;
  const sampler = setInterval(sample, SAMPLER_TICK_MS);
  try {
    await loop.run(done, step);
  } finally {
    hooks.stop?.removeEventListener('abort', stopHere);
    if (sweeper) clearInterval(sweeper);
    clearInterval(sampler);
    flush = await loop.close({
      // Interrupted with confirms outstanding: nobody knows what became of them (acks during the close still count).
      beforeClose: () => {
        const left = book.connectionLost();
        if (confirms) for (const seq of left) ledger.indeterminate(seq);
      },
    });
  }

  sampled.push(snapshot());
  const durationMs = clock.now() - t0;
  let confirmedCount = 0;
  let nacked = 0;
  let returned = 0;
  let indeterminate = 0;
  let republished = 0;
  for (let seq = 0; seq < ledger.attempted; seq++) {
    if (ledger.has(seq, 'confirmed')) confirmedCount++;
    if (ledger.has(seq, 'nacked')) nacked++;
    if (ledger.has(seq, 'returned')) returned++;
    if (ledger.has(seq, 'indeterminate')) indeterminate++;
    if (ledger.has(seq, 'republished')) republished++;
  }
  return {
    runId: opts.runId,
    mode: opts.mode,
    count: opts.count,
    written: distinctWritten,
    publishes,
    confirmed: confirmedCount,
    nacked,
    returned,
    indeterminate,
    republished,
    reconnects: loop.reconnects,
    maxInFlight,
    startedAtIso,
    durationMs,
    publishRatePerSec: durationMs > 0 ? (publishes * 1000) / durationMs : 0,
    confirmLatency: latency.summary(),
    confirmLatencyAroundFault: latencyFault.summary(),
    longestStallMs,
    blocks: loop.blocks,
    blockedMs: loop.blockedMs,
    flush,
    completed: loop.gaveUp === null && !loop.interrupted && done(),
    gaveUp: loop.gaveUp,
    interrupted: loop.interrupted,
    events: loop.events,
    connectedTo: loop.connectedTo,
    samples: sampled.samples,
  };
}

/** A fresh run id: short, no '-' (message ids are `${runId}-${seq}`). */
export function newRunId(): string {
  return `r${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * A demo's setup: `count` persistent 100-byte messages to exchange/routingKey with async
 * confirms (window 256), recorded in ledger. Ctrl+C: InterruptedError.
 */
export async function publishConfirmed(
  o: { urls: readonly string[]; exchange: string; routingKey: string; count: number; runId: string; signal: AbortSignal },
  ledger: Ledger,
): Promise<PublisherResult> {
  const pub = await runPublisher(
    {
      urls: o.urls,
      startIndex: 0,
      exchange: o.exchange,
      routingKey: o.routingKey,
      count: o.count,
      ratePerSec: 0,
      sizeBytes: 100,
      persistent: true,
      mandatory: false,
      mode: 'async',
      window: 256,
      batchSize: 100,
      confirmTimeoutMs: 10_000,
      heartbeatS: 5,
      reconnectTimeoutMs: 30_000,
      runId: o.runId,
    },
    ledger,
    { signal: o.signal },
  );
  if (pub.interrupted) throw new InterruptedError();
  return pub;
}
