import type { Channel, ConfirmChannel, Message, Options } from 'amqplib';
import { InterruptedError, errorMessage } from '../errors.js';
import { Ledger, messageId, parseMessageId } from '../ledger/ledger.js';
import { LatencyRecorder, type LatencySummary } from '../measure/histogram.js';
import { encodePublishedAtUs, PUBLISHED_AT_US_HEADER } from '../measure/published-at.js';
import { maskUrl } from '../url.js';
import { systemClock } from '../util/retry.js';
import { closeChannelWithin, closeWithin, connectAny } from './connect.js';
import { Signal } from '../util/signal.js';
import { openPublishSession, type PublishSession } from './session.js';

/**
 * The producer: publishes `count` messages (sequence numbers 0..count-1 of one run) and records
 * what happened to each in a Ledger. With confirms, a nack, a confirm timeout or a connection
 * lost with the message unconfirmed makes it indeterminate, and it is published again after
 * reconnecting (at-least-once: duplicates are possible and counted). Without confirms the
 * producer only knows what it wrote to the socket. Returns data; never prints.
 */

export type PublishMode = 'none' | 'tx' | 'sync' | 'batch' | 'async';

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
   * First sequence to publish (default 0): sequences startSeq..count-1. A restarted producer that
   * resumes from the last number it printed (producer-crash's naive mode).
   */
  startSeq?: number;
}

export interface TimelineEvent {
  /** ms since the producer started. */
  atMs: number;
  type: 'connected' | 'connection-lost' | 'publish-failed' | 'nack' | 'confirm-timeout' | 'gave-up';
  detail: string;
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
  /** Every message ended confirmed (confirm modes) or written (none); false when the run gave up or was interrupted. */
  completed: boolean;
  /** Ctrl+C stopped it: the figures are what was measured until then. */
  interrupted: boolean;
  gaveUp: string | null;
  events: TimelineEvent[];
  connectedTo: string[];
  /** Every SAMPLE_EVERY_MS, and once at the end: for timelines (HTML reports). */
  samples: PublisherSample[];
}

/** Counters at one moment of a run: distinct messages written, confirms received, awaiting a confirm. */
export interface PublisherSample {
  tMs: number;
  written: number;
  confirmed: number;
  inFlight: number;
}

export const SAMPLE_EVERY_MS = 100;

/** AMQP 0-9-1 class tx (90): select (10) and commit (20); amqplib has no public API for them. */
const TX_SELECT = (90 << 16) | 10;
const TX_SELECT_OK = (90 << 16) | 11;
const TX_COMMIT = (90 << 16) | 20;
const TX_COMMIT_OK = (90 << 16) | 21;
type RpcChannel = Channel & { rpc(method: number, fields: object, expect: number): Promise<unknown> };

type Session = PublishSession<Channel | ConfirmChannel>;

export async function runPublisher(opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks): Promise<PublisherResult> {
  const t0 = performance.now();
  const startedAtIso = new Date().toISOString();
  const confirms = opts.mode === 'sync' || opts.mode === 'batch' || opts.mode === 'async';
  const window = opts.mode === 'sync' ? 1 : opts.mode === 'batch' ? opts.batchSize : opts.mode === 'async' ? opts.window : Infinity;
  const body = Buffer.alloc(opts.sizeBytes, 0x61);
  const events: TimelineEvent[] = [];
  const samples: PublisherSample[] = [];
  let confirmsSoFar = 0;
  const connectedTo: string[] = [];
  const latency = new LatencyRecorder();
  const latencyFault = new LatencyRecorder();
  const changed = new Signal();
  /** seq → publish time, for messages awaiting a confirm on the current session. */
  const inflight = new Map<number, number>();
  /** Sequences to publish (again): indeterminate, nacked, or never written. */
  const retry: number[] = [];
  let nextSeq = opts.startSeq ?? 0;
  let distinctWritten = 0;
  let publishes = 0;
  let reconnects = 0;
  let maxInFlight = 0;
  let lastProgress = performance.now();
  let longestStallMs = 0;
  let startIndex = opts.startIndex;
  let session: Session | undefined;
  let gaveUp: string | null = null;
  let interrupted = false;
  /** tx: sequences published since the last commit. */
  let txPending: number[] = [];
  /** opts.count, or fewer once hooks.stop has fired: new sequences stop here. */
  let limit = opts.count;
  const stopHere = (): void => {
    limit = Math.min(limit, nextSeq);
    changed.notify();
  };
  if (hooks.stop?.aborted) stopHere();
  hooks.stop?.addEventListener('abort', stopHere, { once: true });
  /** A paced wait ends early on Ctrl+C and on stop. */
  const paceSignal = hooks.stop ? AbortSignal.any([hooks.signal, hooks.stop]) : hooks.signal;

  const now = (): number => performance.now() - t0;
  const event = (type: TimelineEvent['type'], detail: string): void => {
    const e = { atMs: now(), type, detail };
    events.push(e);
    hooks.onEvent?.(e);
  };
  const progressed = (): void => {
    const t = performance.now();
    longestStallMs = Math.max(longestStallMs, t - lastProgress);
    lastProgress = t;
  };
  const seqOf = (msg: Message): number | undefined => {
    const id = parseMessageId(String(msg.properties.messageId ?? ''));
    return id && id.runId === opts.runId ? id.seq : undefined;
  };

  const loseSession = (s: Session, why: string): void => {
    if (s.lost) return;
    s.lost = true;
    if (session === s) session = undefined;
    event('connection-lost', `${maskUrl(s.url)}: ${why}`);
    for (const seq of inflight.keys()) {
      ledger.indeterminate(seq);
      retry.push(seq);
    }
    inflight.clear();
    for (const seq of txPending) {
      ledger.indeterminate(seq);
      retry.push(seq);
    }
    txPending = [];
    retry.sort((a, b) => a - b);
    changed.notify();
  };

  const open = async (): Promise<Session> => {
    const c = await connectAny(opts.urls, startIndex, {
      heartbeatS: opts.heartbeatS,
      timeoutMs: opts.reconnectTimeoutMs,
      signal: hooks.signal,
    });
    startIndex = c.index;
    const s: Session = await openPublishSession(
      c,
      async (connection) => {
        const channel: Channel | ConfirmChannel = confirms ? await connection.createConfirmChannel() : await connection.createChannel();
        if (opts.mode === 'tx') await (channel as RpcChannel).rpc(TX_SELECT, {}, TX_SELECT_OK);
        return channel;
      },
      {},
      { onLost: loseSession, onDrain: () => changed.notify() },
    );
    s.channel.on('return', (msg: Message) => {
      const seq = seqOf(msg);
      if (seq !== undefined) ledger.returned(seq);
    });
    connectedTo.push(maskUrl(c.url));
    event('connected', maskUrl(c.url));
    return s;
  };

  const onConfirm = (s: Session, seq: number, err: unknown): void => {
    if (!err) {
      // The broker confirmed it, even if we had given up waiting (then it is also republished).
      if (!ledger.has(seq, 'confirmed')) confirmsSoFar++;
      ledger.confirm(seq);
      const sentAt = inflight.get(seq);
      if (sentAt !== undefined && !s.lost) {
        const ms = performance.now() - sentAt;
        latency.recordMs(ms);
        if (hooks.inFaultWindow?.()) latencyFault.recordMs(ms);
        inflight.delete(seq);
        hooks.onConfirm?.(ms);
      } else {
        hooks.onConfirm?.(undefined);
      }
      progressed();
    } else if (!s.lost && inflight.has(seq) && /nack/i.test(errorMessage(err))) {
      ledger.nack(seq);
      ledger.indeterminate(seq);
      inflight.delete(seq);
      retry.push(seq);
      event('nack', `message ${seq} nacked by the broker; it will be published again`);
    }
    // Any other error: the channel closed, and loseSession has made it indeterminate.
    changed.notify();
  };

  /** Confirms that did not arrive within confirmTimeoutMs: indeterminate, published again. */
  const sweepTimeouts = (): void => {
    const limit = performance.now() - opts.confirmTimeoutMs;
    let timedOut = 0;
    for (const [seq, sentAt] of inflight) {
      if (sentAt > limit) break; // Map keeps insertion (send) order
      inflight.delete(seq);
      ledger.indeterminate(seq);
      retry.push(seq);
      timedOut++;
    }
    if (timedOut > 0) {
      retry.sort((a, b) => a - b);
      event('confirm-timeout', `${timedOut} confirms not received within ${opts.confirmTimeoutMs} ms; published again`);
    }
  };

  const commitTx = async (s: Session): Promise<void> => {
    if (txPending.length === 0) return;
    const batch = txPending;
    const sentAt = performance.now();
    await (s.channel as RpcChannel).rpc(TX_COMMIT, {}, TX_COMMIT_OK);
    if (s.lost) return; // loseSession already made them indeterminate
    txPending = [];
    const ms = performance.now() - sentAt;
    for (const seq of batch) {
      if (!ledger.has(seq, 'confirmed')) confirmsSoFar++;
      ledger.confirm(seq);
      latency.recordMs(ms);
      if (hooks.inFaultWindow?.()) latencyFault.recordMs(ms);
      hooks.onConfirm?.(ms);
    }
    progressed();
  };

  const pacer = { next: performance.now() };
  const pace = async (): Promise<void> => {
    if (opts.ratePerSec <= 0) return;
    const wait = pacer.next - performance.now();
    if (wait > 0) await systemClock.sleep(wait, paceSignal);
    pacer.next = Math.max(pacer.next, performance.now() - 1000 / opts.ratePerSec) + 1000 / opts.ratePerSec;
  };

  const done = (): boolean => nextSeq >= limit && retry.length === 0 && inflight.size === 0 && txPending.length === 0;
  const sweeper = confirms ? setInterval(sweepTimeouts, Math.min(250, opts.confirmTimeoutMs)) : undefined;
  const sample = (): void => {
    samples.push({ tMs: now(), written: distinctWritten, confirmed: confirmsSoFar, inFlight: inflight.size + txPending.length });
  };
  const sampler = setInterval(sample, SAMPLE_EVERY_MS);

  try {
    while (!done()) {
      if (hooks.signal.aborted) {
        interrupted = true;
        break;
      }
      if (!session) {
        try {
          session = await open();
          if (connectedTo.length > 1) reconnects++;
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
      // Backpressure: the client library's buffer is full; a well-behaved producer waits.
      if (s.needDrain) {
        await Promise.race([changed.wait(1_000), s.lostPromise]);
        continue;
      }
      // Room to publish? (window of outstanding confirms; batch: wait for the whole batch)
      if (confirms && inflight.size >= window) {
        await Promise.race([changed.wait(100), s.lostPromise]);
        continue;
      }
      if (opts.mode === 'batch' && inflight.size > 0 && (nextSeq >= limit || retry.length > 0 || inflight.size >= opts.batchSize)) {
        await Promise.race([changed.wait(100), s.lostPromise]);
        continue;
      }
      const fromRetry = retry.length > 0;
      if (!fromRetry && nextSeq >= limit) {
        if (opts.mode === 'tx') {
          await commitTx(s).catch(() => undefined);
          continue;
        }
        // Wait for the last confirms.
        await Promise.race([changed.wait(100), s.lostPromise]);
        continue;
      }
      const seq = fromRetry ? retry.shift()! : nextSeq++;
      try {
        await pace();
      } catch (err) {
        if (!(err instanceof InterruptedError)) throw err;
        if (fromRetry) retry.unshift(seq);
        else nextSeq--;
        if (hooks.signal.aborted) {
          interrupted = true;
          break;
        }
        // hooks.stop: no new sequence from here on.
        stopHere();
        continue;
      }
      if (!fromRetry && seq >= limit) {
        // hooks.stop fired while pacing.
        nextSeq--;
        continue;
      }
      if (s.lost) {
        // Lost while pacing: back to the queue.
        if (fromRetry) retry.unshift(seq);
        else nextSeq--;
        continue;
      }
      const firstTime = !ledger.has(seq, 'written');
      if (!fromRetry) ledger.attempt(seq);
      else ledger.republish(seq);
      publishes++;
      const props = opts.leanProperties ? leanProperties(opts, seq) : fullProperties(opts, seq);
      let ok: boolean;
      try {
        if (confirms) {
          inflight.set(seq, performance.now());
          ok = (s.channel as ConfirmChannel).publish(opts.exchange, opts.routingKey, body, props, (err) => onConfirm(s, seq, err));
        } else {
          ok = s.channel.publish(opts.exchange, opts.routingKey, body, props);
        }
      } catch (err) {
        // The channel closed under us: the message never reached the socket.
        inflight.delete(seq);
        retry.push(seq);
        retry.sort((a, b) => a - b);
        event('publish-failed', `message ${seq}: ${errorMessage(err)}`);
        loseSession(s, errorMessage(err));
        continue;
      }
      ledger.written(seq);
      maxInFlight = Math.max(maxInFlight, inflight.size, txPending.length + (opts.mode === 'tx' ? 1 : 0));
      if (opts.mode === 'none') progressed();
      if (firstTime) {
        distinctWritten++;
        hooks.onWritten?.(distinctWritten);
      }
      if (opts.mode === 'tx') {
        txPending.push(seq);
        if (txPending.length >= opts.batchSize || (nextSeq >= limit && retry.length === 0)) {
          await commitTx(s).catch(() => undefined);
        }
      }
      if (!ok) s.needDrain = true;
    }
  } finally {
    hooks.stop?.removeEventListener('abort', stopHere);
    if (sweeper) clearInterval(sweeper);
    clearInterval(sampler);
    if (session) {
      const s = session;
      session = undefined;
      // Interrupted with confirms outstanding: nobody knows what became of them.
      for (const seq of inflight.keys()) ledger.indeterminate(seq);
      inflight.clear();
      s.lost = true;
      // Close the channel first: its close-ok comes back only after the broker has read every
      // publish sent before it. A connection close goes out on channel 0 and can overtake
      // publishes still buffered in the client library, which the broker then never sees.
      // A dead peer never answers: the heartbeat ends the wait (the connection closes) first.
      await Promise.race([closeChannelWithin(s.channel, opts.flushTimeoutMs ?? 15_000), s.lostPromise]);
      await closeWithin(s.connection);
    }
  }

  sample();
  const durationMs = performance.now() - t0;
  let confirmed = 0;
  let nacked = 0;
  let returned = 0;
  let indeterminate = 0;
  let republished = 0;
  for (let seq = 0; seq < ledger.attempted; seq++) {
    if (ledger.has(seq, 'confirmed')) confirmed++;
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
    confirmed,
    nacked,
    returned,
    indeterminate,
    republished,
    reconnects,
    maxInFlight,
    startedAtIso,
    durationMs,
    publishRatePerSec: durationMs > 0 ? (publishes * 1000) / durationMs : 0,
    confirmLatency: latency.summary(),
    confirmLatencyAroundFault: latencyFault.summary(),
    longestStallMs,
    completed: gaveUp === null && !interrupted && done(),
    gaveUp,
    interrupted,
    events,
    connectedTo,
    samples,
  };
}

/** What every message carries by default: its id, its run and sequence, its publish time. */
function fullProperties(opts: PublisherOptions, seq: number): Options.Publish {
  const headers: Record<string, unknown> = { 'x-rmq-bench-run': opts.runId, 'x-rmq-bench-seq': seq, 'x-rmq-bench-published-at': Date.now() };
  if (opts.publishedAtUs) headers[PUBLISHED_AT_US_HEADER] = encodePublishedAtUs();
  return {
    messageId: messageId(opts.runId, seq),
    persistent: opts.persistent,
    mandatory: opts.mandatory,
    contentType: 'application/octet-stream',
    timestamp: Math.floor(Date.now() / 1000),
    headers,
  };
}

function leanProperties(opts: PublisherOptions, seq: number): Options.Publish {
  const props: Options.Publish = { messageId: messageId(opts.runId, seq), persistent: opts.persistent, mandatory: opts.mandatory };
  if (opts.publishedAtUs) props.headers = { [PUBLISHED_AT_US_HEADER]: encodePublishedAtUs() };
  return props;
}

/** A fresh run id: short, no '-' (message ids are `${runId}-${seq}`). */
export function newRunId(): string {
  return `r${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}
