import type { Channel, ConfirmChannel, Message } from 'amqplib';
import { InterruptedError, errorMessage } from '../errors.js';
import { type Ledger, parseMessageId } from '../ledger/ledger.js';
import { LatencyRecorder } from '../measure/histogram.js';
import { AdaptiveSamples } from '../measure/samples.js';
import { systemClock } from '../util/retry.js';
import { ConfirmBook, type AckVisitor, type NackVisitor } from './confirm-book.js';
import { Pacer } from './pacer.js';
import { DEFAULT_BLOCKED_TIMEOUT_MS, PublishLoop, type FlushOutcome, type LoopSession, type TimelineEvent } from './publish-loop.js';
import { commitTx, createModeChannel, modeRules, propertiesFor, type ModeRules, type PropertiesOf, type PublishMode } from './publish-modes.js';
import type { PublisherHooks, PublisherOptions } from './publisher-options.js';
import { countFlags, type PublisherResult, type PublisherSample } from './publisher-result.js';
import { RefusalNotes, RefusedResends } from './refused-resends.js';

/**
 * The producer: publishes `count` messages (sequence numbers 0..count-1 of one run) and records
 * what happened to each in a Ledger. With confirms, a confirm timeout or a connection lost with
 * the message unconfirmed makes it indeterminate, and it is published again at once after
 * reconnecting (at-least-once: duplicates are possible and counted). A nack (the broker refused
 * it) is published again after a backoff, and given up after MAX_REFUSALS (refused-resends.ts).
 * Without confirms the producer only knows what it wrote to the socket. Returns data; never prints.
 */

export type { FlushOutcome, PublishMode, TimelineEvent };

/** The most samples a run keeps (AdaptiveSamples: a 0.1 s run and a 60 s one both read well). */
export const MAX_SAMPLES = 1_000;
/** How often the sampler looks; it records a sample when its current interval has passed. */
const SAMPLER_TICK_MS = 10;

/** A live connection with no confirm for this many confirm timeouts is given up (see sweepTimeouts). */
export const STUCK_AFTER_TIMEOUTS = 2;
/** The longest wait of a loop with nothing to do: it looks again at least this often. */
const IDLE_WAIT_MS = 100;
/** basic.nack carries no reason: the refusal's reason in the timeline. */
const NACK_REASON = 'basic.nack';

type Session = LoopSession<Channel | ConfirmChannel, { epoch: number }>;
type AckFrame = { deliveryTag: number; multiple: boolean };

export async function runPublisher(opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks): Promise<PublisherResult> {
  const run = new PublisherRun(opts, ledger, hooks);
  const flush = await run.publishAll();
  return run.result(flush);
}

/**
 * One runPublisher call: its counters, its confirm book and the PublishLoop that does the I/O.
 * The loop calls step() while there is work: publish (a retry first), wait (a full window, a
 * batch's confirms, the last confirms) or commit (tx). Acks, nacks, timeouts and lost
 * connections settle messages in the book and the ledger as they come.
 */
class PublisherRun {
  readonly #opts: PublisherOptions;
  readonly #ledger: Ledger;
  readonly #hooks: PublisherHooks;
  readonly #clock = systemClock;
  readonly #t0: number;
  readonly #startedAtIso: string;
  readonly #rules: ModeRules;
  /** Broker confirms (sync, batch, async). */
  readonly #confirms: boolean;
  readonly #tx: boolean;
  readonly #body: Buffer;
  readonly #propertiesOf: PropertiesOf;
  readonly #book = new ConfirmBook();
  /** Nacked messages: their backoff, and those given up (touched on a nack, never per ack). */
  readonly #refusals = new RefusedResends();
  readonly #refusalNotes = new RefusalNotes();
  readonly #pacer: Pacer;
  readonly #sampled = new AdaptiveSamples<PublisherSample>(MAX_SAMPLES, SAMPLER_TICK_MS);
  readonly #latency = new LatencyRecorder();
  readonly #latencyFault = new LatencyRecorder();
  readonly #recordLatency: boolean;
  readonly #loop: PublishLoop<Channel | ConfirmChannel, { epoch: number }>;
  /** A paced wait ends early on Ctrl+C and on stop. */
  readonly #paceSignal: AbortSignal;

  // What was published.
  #nextSeq: number;
  /** opts.count, or fewer once hooks.stop has fired: new sequences stop here. */
  #limit: number;
  #distinctWritten = 0;
  #publishes = 0;
  #maxInFlight = 0;

  // What was confirmed, and when.
  #confirmsSoFar = 0;
  /** When the confirms being visited arrived (tx: the commit's round trip), and whether in the fault window. */
  #ackAtMs = 0;
  #commitMs = 0;
  #inFault = false;
  /** The last ack on the current session (or when it opened): how long confirms have been silent. */
  #lastAckAtMs = 0;

  // The longest stretch with no message written and no confirm received.
  #lastProgressAt: number;
  #longestStallMs = 0;

  constructor(opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks) {
    this.#opts = opts;
    this.#ledger = ledger;
    this.#hooks = hooks;
    this.#t0 = this.#clock.now();
    this.#startedAtIso = new Date().toISOString();
    this.#rules = modeRules(opts.mode, opts.window, opts.batchSize);
    this.#confirms = this.#rules.confirms;
    this.#tx = this.#rules.tx;
    this.#body = Buffer.alloc(opts.sizeBytes, 0x61);
    this.#propertiesOf = propertiesFor(opts);
    this.#pacer = new Pacer(opts.ratePerSec, this.#clock);
    this.#recordLatency = opts.recordConfirmLatency ?? true;
    this.#nextSeq = opts.startSeq ?? 0;
    this.#limit = opts.count;
    this.#lastProgressAt = this.#t0;
    this.#loop = new PublishLoop<Channel | ConfirmChannel, { epoch: number }>({
      urls: opts.urls,
      startIndex: opts.startIndex,
      heartbeatS: opts.heartbeatS,
      reconnectTimeoutMs: opts.reconnectTimeoutMs,
      signal: hooks.signal,
      flushTimeoutMs: opts.flushTimeoutMs ?? 15_000,
      blockedTimeoutMs: opts.blockedTimeoutMs ?? DEFAULT_BLOCKED_TIMEOUT_MS,
      createChannel: (connection) => createModeChannel(connection, this.#rules),
      extra: () => ({ epoch: 0 }),
      onOpen: (s) => this.#onOpen(s),
      onLost: () => this.#onLost(),
      onBlocked: (_s, reason) => this.#onBlocked(reason),
      ...(hooks.onEvent ? { onEvent: hooks.onEvent } : {}),
    });
    this.#paceSignal = hooks.stop ? AbortSignal.any([hooks.signal, hooks.stop]) : hooks.signal;
  }

  /** Publish until every message is confirmed (or written), the run gives up, or Ctrl+C; then close: how the end went. */
  async publishAll(): Promise<FlushOutcome | undefined> {
    const hooks = this.#hooks;
    hooks.onStart?.(() => ({
      written: this.#distinctWritten,
      confirmed: this.#confirmsSoFar,
      inFlight: this.#book.inFlight,
      reconnects: this.#loop.reconnects,
      retryBacklog: this.#book.retrying + this.#refusals.waiting,
    }));
    if (hooks.stop?.aborted) this.#stopHere();
    hooks.stop?.addEventListener('abort', this.#stopHere, { once: true });

    let flush: FlushOutcome | undefined;
    const sweeper = this.#confirms ? setInterval(() => this.#sweepTimeouts(), Math.min(250, this.#opts.confirmTimeoutMs)) : undefined;
    const sampler =
      this.#opts.sampleProgress === false ? undefined : setInterval(() => this.#sampled.offer(this.#clock.now() - this.#t0, this.#snapshot), SAMPLER_TICK_MS);
    try {
      await this.#loop.run(
        () => this.#done(),
        (s) => this.#step(s),
      );
      hooks.onPublishingEnded?.();
    } finally {
      hooks.stop?.removeEventListener('abort', this.#stopHere);
      if (sweeper) clearInterval(sweeper);
      if (sampler) clearInterval(sampler);
      this.#noteRefusals(true);
      flush = await this.#loop.close({
        // Interrupted with confirms outstanding: nobody knows what became of them (acks during the close still count).
        beforeClose: () => {
          const left = this.#book.connectionLost();
          if (this.#confirms) for (const seq of left) this.#ledger.indeterminate(seq);
        },
      });
    }
    return flush;
  }

  /** The figures, once publishAll() has returned: counters, the ledger's flags, the loop's record. */
  result(flush: FlushOutcome | undefined): PublisherResult {
    const opts = this.#opts;
    const loop = this.#loop;
    this.#sampled.push(this.#snapshot());
    const durationMs = this.#clock.now() - this.#t0;
    const flags = countFlags(this.#ledger);
    return {
      runId: opts.runId,
      mode: opts.mode,
      count: opts.count,
      written: this.#distinctWritten,
      publishes: this.#publishes,
      confirmed: flags.confirmed,
      nacked: flags.nacked,
      returned: flags.returned,
      indeterminate: flags.indeterminate,
      republished: flags.republished,
      reconnects: loop.reconnects,
      maxInFlight: this.#maxInFlight,
      startedAtIso: this.#startedAtIso,
      durationMs,
      publishRatePerSec: durationMs > 0 ? (this.#publishes * 1000) / durationMs : 0,
      confirmLatency: this.#latency.summary(),
      confirmLatencyAroundFault: this.#latencyFault.summary(),
      longestStallMs: this.#longestStallMs,
      blocks: loop.blocks,
      blockedMs: loop.blockedMs,
      flush,
      completed: loop.gaveUp === null && !loop.interrupted && this.#done(),
      gaveUp: loop.gaveUp,
      interrupted: loop.interrupted,
      events: loop.events,
      connectedTo: loop.connectedTo,
      samples: this.#sampled.samples,
      refusedGivenUp: this.#refusals.givenUp,
    };
  }

  // The loop's side: what to do next, and doing it.

  /** What the loop does next: publish, wait (a full window, a batch's confirms, the last confirms), or commit. */
  #next(): 'publish' | 'wait' | 'commit' {
    const book = this.#book;
    if (this.#confirms && !book.hasRoom(this.#rules.window)) return 'wait';
    if (this.#rules.batch && book.inFlight > 0 && (this.#nextSeq >= this.#limit || book.retrying > 0 || book.inFlight >= this.#opts.batchSize)) return 'wait';
    if (book.retrying === 0 && this.#nextSeq >= this.#limit) return this.#tx ? 'commit' : 'wait';
    return 'publish';
  }

  /** tx: a full batch is uncommitted, or nothing is left to publish. */
  #txDue(): boolean {
    return this.#book.inFlight >= this.#opts.batchSize || (this.#nextSeq >= this.#limit && this.#book.retrying === 0);
  }

  /** Nothing left: every sequence published, none to publish again, none awaiting a confirm or its backoff after a nack. */
  #done(): boolean {
    return this.#nextSeq >= this.#limit && this.#book.retrying === 0 && this.#book.inFlight === 0 && this.#refusals.waiting === 0;
  }

  async #step(s: Session): Promise<void> {
    // Nacked messages whose backoff has passed go to the backlog (a cheap check when none waits).
    if (this.#refusals.waiting > 0) this.#refusals.takeDue(this.#clock.now(), this.#resend);
    const todo = this.#next();
    if (todo === 'wait') return this.#loop.wait(s, this.#refusals.waitMs(this.#clock.now(), IDLE_WAIT_MS));
    if (todo === 'commit') return this.#commit(s);
    if (this.#pacer.active) {
      if (!(await this.#paced()) || s.lost || this.#next() !== 'publish') return;
      if (this.#publishOne(s) && this.#tx && this.#txDue()) await this.#commit(s);
      return;
    }
    // As fast as possible: fill the window without yielding (tx: up to the commit).
    while (this.#publishOne(s) && !s.needDrain && !this.#hooks.signal.aborted && this.#next() === 'publish') {
      if (this.#tx && this.#txDue()) break;
    }
    if (this.#tx && !s.lost && this.#txDue()) await this.#commit(s);
  }

  /** One message (a retry first) onto the channel; false when the channel threw. */
  #publishOne(s: Session): boolean {
    const book = this.#book;
    const ledger = this.#ledger;
    const fromRetry = book.retrying > 0;
    const seq = fromRetry ? book.takeRetry()! : this.#nextSeq++;
    const firstTime = !ledger.has(seq, 'written');
    if (fromRetry) ledger.republish(seq);
    else ledger.attempt(seq);
    this.#publishes++;
    this.#loop.publishCalls++;
    const at = this.#clock.now();
    let ok: boolean;
    try {
      ok = s.channel.publish(this.#opts.exchange, this.#opts.routingKey, this.#body, this.#propertiesOf(seq, at));
    } catch (err) {
      // The channel closed under us: the message never reached the socket.
      book.retry(seq);
      this.#loop.event('publish-failed', `message ${seq}: ${errorMessage(err)}`);
      this.#loop.lose(s, errorMessage(err));
      return false;
    }
    if (this.#confirms || this.#tx) book.publish(seq, at);
    ledger.written(seq);
    if (book.inFlight > this.#maxInFlight) this.#maxInFlight = book.inFlight;
    if (!this.#confirms && !this.#tx) this.#progressed(at);
    if (firstTime) {
      // Counted whether or not a hook listens (an optional call skips its arguments' side effects).
      this.#distinctWritten++;
      this.#hooks.onWritten?.(this.#distinctWritten, at);
    }
    if (!ok) s.needDrain = true;
    return true;
  }

  /** A paced slot; false when none was taken (Ctrl+C, or hooks.stop: no new sequence from here on). */
  async #paced(): Promise<boolean> {
    try {
      await this.#pacer.pace(this.#paceSignal);
      return true;
    } catch (err) {
      if (!(err instanceof InterruptedError)) throw err;
      if (!this.#hooks.signal.aborted) this.#stopHere();
      return false;
    }
  }

  /** tx: commit what is uncommitted; its messages are confirmed when the commit-ok comes. */
  async #commit(s: Session): Promise<void> {
    if (this.#book.inFlight === 0) return;
    const sentAt = this.#clock.now();
    await commitTx(s.channel).catch(() => undefined);
    if (s.lost) return; // onLost already made them indeterminate
    const at = this.#clock.now();
    this.#commitMs = at - sentAt;
    // The committed messages' confirm time (hooks.onConfirm's atMs).
    this.#ackAtMs = at;
    this.#inFault = this.#hooks.inFaultWindow?.() ?? false;
    this.#book.ack(this.#book.channel, this.#book.lastTag, true, this.#onCommitted);
    this.#progressed(at);
  }

  /** hooks.stop fired (or a paced wait ended on it): no new sequence from here on. */
  readonly #stopHere = (): void => {
    this.#limit = Math.min(this.#limit, this.#nextSeq);
    this.#loop.changed.notify();
  };

  // The broker's side: sessions, acks, nacks, timeouts.

  /** A new session: returns into the ledger; with confirms or tx, a fresh channel in the book and its ack listeners. */
  #onOpen(s: Session): void {
    s.channel.on('return', (msg: Message) => {
      const id = parseMessageId(String(msg.properties.messageId ?? ''));
      if (id && id.runId === this.#opts.runId) this.#ledger.returned(id.seq);
    });
    if (!this.#confirms && !this.#tx) return;
    this.#lastAckAtMs = this.#clock.now();
    const epoch = this.#book.openChannel();
    s.epoch = epoch;
    s.channel.on('ack', (f: AckFrame) => this.#onAck(epoch, f));
    s.channel.on('nack', (f: AckFrame) => this.#onNack(epoch, f));
  }

  #onLost(): void {
    // Unconfirmed (tx: uncommitted) on the lost connection: indeterminate, published again.
    for (const seq of this.#book.connectionLost()) this.#ledger.indeterminate(seq);
  }

  /** Unblocked: confirms are due again from now (timeoutsSuspended covers the grace). */
  #onBlocked(reason: string | null): void {
    if (reason === null) this.#lastAckAtMs = this.#clock.now();
  }

  /** One ack frame (multiple: many messages): one clock read, one wake-up. */
  #onAck(epoch: number, f: AckFrame): void {
    this.#ackAtMs = this.#clock.now();
    this.#inFault = this.#hooks.inFaultWindow?.() ?? false;
    if (this.#book.ack(epoch, f.deliveryTag, f.multiple, this.#onAcked) === 0) return;
    this.#lastAckAtMs = this.#ackAtMs;
    this.#progressed(this.#ackAtMs);
    this.#loop.changed.notify();
  }

  #onNack(epoch: number, f: AckFrame): void {
    if (this.#book.nack(epoch, f.deliveryTag, f.multiple, this.#onNacked) > 0) this.#loop.changed.notify();
  }

  readonly #onAcked: AckVisitor = (seq, sentAtMs) => this.#confirmed(seq, sentAtMs === undefined ? undefined : this.#ackAtMs - sentAtMs);
  readonly #onCommitted: AckVisitor = (seq) => this.#confirmed(seq, this.#commitMs);
  /** A nack: the broker refused seq. Published again after its backoff, or given up (it stays nacked). */
  readonly #onNacked: NackVisitor = (seq) => {
    this.#ledger.nack(seq);
    const now = this.#clock.now();
    const decision = this.#refusals.refused(seq, now);
    // In doubt until it is published again; given up, it stays nacked (known failed).
    if (decision.resend) this.#ledger.indeterminate(seq);
    for (const detail of this.#refusalNotes.refused(seq, NACK_REASON, decision, now)) this.#loop.event('nack', detail);
    this.#hooks.onRefused?.();
  };

  readonly #resend = (seq: number): void => this.#book.retry(seq);

  /** The refusals no event has named yet, at most once a second (final: at the end, whatever is left). */
  #noteRefusals(final = false): void {
    for (const detail of this.#refusalNotes.summary(this.#clock.now(), final)) this.#loop.event('nack', detail);
  }

  /** seq confirmed, ms after it was published (undefined: a late ack whose publish time was dropped). */
  #confirmed(seq: number, ms: number | undefined): void {
    // The broker confirmed it, even if we had given up waiting (then it is also republished).
    if (!this.#ledger.has(seq, 'confirmed')) this.#confirmsSoFar++;
    this.#ledger.confirm(seq);
    if (ms !== undefined && this.#recordLatency) {
      this.#latency.recordMs(ms);
      if (this.#inFault) this.#latencyFault.recordMs(ms);
    }
    this.#hooks.onConfirm?.(ms, this.#ackAtMs);
  }

  /**
   * Confirms that did not arrive within confirmTimeoutMs: indeterminate, published again. When
   * no confirm at all has come for STUCK_AFTER_TIMEOUTS × confirmTimeoutMs on a connection that
   * is still open (a partitioned node keeps its clients and its heartbeats, and confirms stop),
   * that connection is given up and the next node tried. Also writes the refusals' summary, at
   * most once a second.
   */
  #sweepTimeouts(): void {
    this.#noteRefusals();
    const loop = this.#loop;
    const timeoutMs = this.#opts.confirmTimeoutMs;
    if (loop.timeoutsSuspended(timeoutMs)) return;
    const now = this.#clock.now();
    const late = this.#book.timeouts(now, timeoutMs);
    if (late.length === 0) return;
    for (const seq of late) this.#ledger.indeterminate(seq);
    loop.event('confirm-timeout', `${late.length} confirms not received within ${timeoutMs} ms; published again`);
    const s = loop.session;
    const silentMs = now - this.#lastAckAtMs;
    if (s && !s.lost && silentMs >= STUCK_AFTER_TIMEOUTS * timeoutMs) {
      loop.abandon(s, `no confirm for ${Math.round(silentMs)} ms on a live connection: giving it up for the next node`);
    }
    loop.changed.notify();
  }

  // Measures.

  /** A message written (no confirms) or a confirm received at `at`: the stall, if any, ends. */
  #progressed(at: number): void {
    if (at - this.#lastProgressAt > this.#longestStallMs) this.#longestStallMs = at - this.#lastProgressAt;
    this.#lastProgressAt = at;
  }

  readonly #snapshot = (): PublisherSample => ({
    tMs: this.#clock.now() - this.#t0,
    written: this.#distinctWritten,
    confirmed: this.#confirmsSoFar,
    inFlight: this.#book.inFlight,
  });
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
