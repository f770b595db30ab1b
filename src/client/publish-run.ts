import { InterruptedError, errorMessage } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { systemClock } from '../util/retry.js';
import type { ModeRules } from './publish-rules.js';
import { ConfirmBook } from './confirm-book.js';
import { Pacer } from './pacer.js';
import { DEFAULT_BLOCKED_TIMEOUT_MS, type FlushOutcome, type LoopSession, PublishLoop, type PublishTransport } from './publish-loop.js';
import type { PublisherHooks, PublisherOptions } from './publisher-options.js';
import type { PublisherResult } from './publisher-result.js';
import { PublishTally, SAMPLER_TICK_MS } from './publish-tally.js';
import { PublishAnswers } from './publish-answers.js';

/**
 * The producer, whatever the protocol: publishes `count` messages (sequence numbers
 * 0..count-1 of one run) and records what happened to each in a Ledger. With confirms, a confirm
 * timeout or a connection lost with the message unconfirmed makes it indeterminate, and it is
 * published again at once after reconnecting (at-least-once: duplicates are possible and
 * counted). A refusal (0-9-1 nack; AMQP 1.0 rejected or modified) is published again after a
 * backoff, and given up after MAX_REFUSALS (refused-resends.ts). Without confirms the producer
 * only knows what it wrote. The loop and the book are shared; a protocol (PublishProtocol)
 * supplies the session, the send, and the broker's answers: settled, refused, lost.
 */

/** The longest wait of a loop with nothing to do: it looks again at least this often. */
const IDLE_WAIT_MS = 100;

/** What a protocol gives the shared run. */
export interface PublishProtocol<S extends LoopSession> {
  readonly transport: PublishTransport<S>;
  readonly rules: ModeRules;
  /** The broker's answer, as the timeline names it: 'confirm' (0-9-1) or 'outcome' (AMQP 1.0). */
  readonly answer: string;
  /** At most this many sends, then the event loop's turn (the client library writes, the broker's answers come in); unset: until the window or the buffer is full. */
  readonly burst?: number;
  /** A new session: listen for the broker's answers on it, and report them to `answers` (settled in its book under `channel`). */
  open(s: S, channel: number, answers: PublishAnswers): void;
  /** Write seq onto s at atMs; false: the buffer is full (wait for the drain). Throws when s is gone. */
  send(s: S, seq: number, atMs: number): boolean;
  /** Whether s may send now (AMQP 1.0: the link has credit); unset: always. */
  canSend?(s: S): boolean;
  /** Nothing may be sent past the blocked timeout (no credit for forMs): why the run gives up. */
  starved?(s: S, forMs: number, limitMs: number): string;
  /** tx: commit what is uncommitted (0-9-1). */
  commit?(s: S): Promise<void>;
  /** s was lost with inDoubt awaiting an answer: the suffix of the timeline's detail. */
  lost?(s: S, inDoubt: number): string;
  /** n answers did not come within the confirm timeout. */
  timedOut?(n: number): void;
}

export class PublishRun<S extends LoopSession> {
  readonly book = new ConfirmBook();
  readonly loop: PublishLoop<S>;
  readonly tally: PublishTally;
  readonly clock = systemClock;
  readonly answers: PublishAnswers;
  readonly #pacer: Pacer;
  /** A paced wait ends early on Ctrl+C and on stop. */
  readonly #paceSignal: AbortSignal;
  readonly #rules: ModeRules;
  /** Awaiting the broker's answer: sync, batch, async (and tx until the commit). */
  readonly #books: boolean;
  #nextSeq: number;
  /** opts.count, or fewer once hooks.stop has fired: new sequences stop here. */
  #limit: number;
  /** Since when nothing could be sent while there was something to send (null: it could). */
  #starvedSince: number | null = null;

  constructor(
    readonly opts: PublisherOptions,
    readonly ledger: Ledger,
    readonly hooks: PublisherHooks,
    readonly protocol: PublishProtocol<S>,
  ) {
    this.#rules = protocol.rules;
    this.#books = this.#rules.confirms || this.#rules.tx;
    this.tally = new PublishTally(this.clock, opts.recordConfirmLatency ?? true);
    this.#pacer = new Pacer(opts.ratePerSec, this.clock);
    this.#paceSignal = hooks.stop ? AbortSignal.any([hooks.signal, hooks.stop]) : hooks.signal;
    this.#nextSeq = opts.startSeq ?? 0;
    this.#limit = opts.count;
    this.loop = new PublishLoop<S>({
      transport: protocol.transport,
      urls: opts.urls,
      startIndex: opts.startIndex,
      heartbeatS: opts.heartbeatS,
      reconnectTimeoutMs: opts.reconnectTimeoutMs,
      signal: hooks.signal,
      flushTimeoutMs: opts.flushTimeoutMs ?? 15_000,
      blockedTimeoutMs: opts.blockedTimeoutMs ?? DEFAULT_BLOCKED_TIMEOUT_MS,
      onOpen: (s) => this.#onOpen(s),
      onLost: (s) => this.#onLost(s),
      onBlocked: (_s, reason) => {
        // Unblocked: answers are due again from now (timeoutsSuspended covers the grace).
        if (reason === null) this.answers.lastAnswerAtMs = this.clock.now();
      },
      ...(hooks.onEvent ? { onEvent: hooks.onEvent } : {}),
    });
    this.answers = new PublishAnswers(this.book, ledger, hooks, this.tally, this.clock, this.loop);
  }

  /** Publish until every message is confirmed (or written), the run gives up, or Ctrl+C; then close: the result, with what the protocol adds (extra). */
  async publishAll(extra?: () => Pick<PublisherResult, 'amqp10' | 'stream'>): Promise<PublisherResult> {
    const { hooks, tally, book } = this;
    hooks.onStart?.(() => ({
      written: tally.written,
      confirmed: tally.confirmed,
      inFlight: book.inFlight,
      reconnects: this.loop.reconnects,
      retryBacklog: book.retrying + this.answers.refusals.waiting,
    }));
    if (hooks.stop?.aborted) this.#stopHere();
    hooks.stop?.addEventListener('abort', this.#stopHere, { once: true });
    let flush: FlushOutcome | undefined;
    const sweeper = this.#rules.confirms
      ? setInterval(() => this.answers.sweep(this.opts.confirmTimeoutMs, this.protocol), Math.min(250, this.opts.confirmTimeoutMs))
      : undefined;
    const sampler =
      this.opts.sampleProgress === false ? undefined : setInterval(() => tally.samples.offer(this.clock.now() - tally.t0, this.#snapshot), SAMPLER_TICK_MS);
    try {
      await this.loop.run(
        () => this.#done(),
        (s) => this.#step(s),
      );
      hooks.onPublishingEnded?.();
    } finally {
      hooks.stop?.removeEventListener('abort', this.#stopHere);
      if (sweeper) clearInterval(sweeper);
      if (sampler) clearInterval(sampler);
      this.answers.noteRefusals(true);
      flush = await this.loop.close({
        // Interrupted with confirms outstanding: nobody knows what became of them (answers during the close still count).
        beforeClose: () => {
          const left = book.connectionLost();
          if (this.#rules.confirms) for (const seq of left) this.ledger.indeterminate(seq);
        },
      });
    }
    return tally.result(this.opts, this.ledger, this.loop, {
      flush,
      completed: this.#done(),
      refusedGivenUp: this.answers.refusals.givenUp,
      inFlight: book.inFlight,
      ...extra?.(),
    });
  }

  // The loop's side: what to do next, and doing it.

  /** What the loop does next: publish, wait (a full window, a batch's confirms, the last confirms, no credit), or commit. */
  #next(s: S): 'publish' | 'wait' | 'commit' {
    const book = this.book;
    const rules = this.#rules;
    if (rules.confirms && !book.hasRoom(rules.window)) return 'wait';
    if (rules.batch && book.inFlight > 0 && (this.#nextSeq >= this.#limit || book.retrying > 0 || book.inFlight >= this.opts.batchSize)) return 'wait';
    if (book.retrying === 0 && this.#nextSeq >= this.#limit) return rules.tx ? 'commit' : 'wait';
    if (this.protocol.canSend && !this.protocol.canSend(s)) return 'wait';
    return 'publish';
  }

  /** tx: a full batch is uncommitted, or nothing is left to publish. */
  #txDue(): boolean {
    return this.book.inFlight >= this.opts.batchSize || (this.#nextSeq >= this.#limit && this.book.retrying === 0);
  }

  /** Nothing left: every sequence published, none to publish again, none awaiting an answer or its backoff after a refusal. */
  #done(): boolean {
    return this.#nextSeq >= this.#limit && this.book.retrying === 0 && this.book.inFlight === 0 && this.answers.refusals.waiting === 0;
  }

  async #step(s: S): Promise<void> {
    // Refused messages whose backoff has passed go to the backlog (a cheap check when none waits).
    if (this.answers.refusals.waiting > 0) this.answers.refusals.takeDue(this.clock.now(), this.#resend);
    const todo = this.#next(s);
    if (todo === 'wait') {
      if (this.#starved(s)) return;
      return this.loop.wait(s, this.answers.refusals.waitMs(this.clock.now(), IDLE_WAIT_MS));
    }
    this.#starvedSince = null;
    if (todo === 'commit') return this.#commit(s);
    const tx = this.#rules.tx;
    if (this.#pacer.active) {
      if (!(await this.#paced()) || s.lost || this.#next(s) !== 'publish') return;
      if (this.#publishOne(s) && tx && this.#txDue()) await this.#commit(s);
      return;
    }
    // As fast as possible: fill the window without yielding (tx: up to the commit; a burst: then yield).
    const burst = this.protocol.burst ?? Number.POSITIVE_INFINITY;
    for (let n = 1; this.#publishOne(s) && !s.needDrain && !this.hooks.signal.aborted && this.#next(s) === 'publish'; n++) {
      if ((tx && this.#txDue()) || n >= burst) break;
    }
    if (tx && !s.lost && this.#txDue()) await this.#commit(s);
    if (this.protocol.burst !== undefined) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** One message (a retry first) onto the session; false when the send threw. */
  #publishOne(s: S): boolean {
    const { book, ledger, tally } = this;
    const fromRetry = book.retrying > 0;
    const seq = fromRetry ? book.takeRetry()! : this.#nextSeq++;
    const firstTime = !ledger.has(seq, 'written');
    if (fromRetry) ledger.republish(seq);
    else ledger.attempt(seq);
    tally.publishes++;
    this.loop.publishCalls++;
    const at = this.clock.now();
    let ok: boolean;
    try {
      ok = this.protocol.send(s, seq, at);
    } catch (err) {
      // The session closed under us: the message never reached the socket.
      book.retry(seq);
      this.loop.event('publish-failed', `message ${seq}: ${errorMessage(err)}`);
      this.loop.lose(s, errorMessage(err));
      return false;
    }
    if (this.#books) book.publish(seq, at);
    ledger.written(seq);
    if (book.inFlight > tally.maxInFlight) tally.maxInFlight = book.inFlight;
    if (!this.#books) tally.progressed(at);
    if (firstTime) {
      // Counted whether or not a hook listens (an optional call skips its arguments' side effects).
      tally.written++;
      this.hooks.onWritten?.(tally.written, at);
    }
    if (!ok) s.needDrain = true;
    return true;
  }

  /**
   * Nothing may be sent (AMQP 1.0: no link credit; a resource alarm blocks its publishers this
   * way) while there is something to send: past blockedTimeoutMs the run gives up, as it does
   * when a 0-9-1 connection stays blocked.
   */
  #starved(s: S): boolean {
    const { book, protocol } = this;
    const wantsToSend = (book.retrying > 0 || this.#nextSeq < this.#limit) && (!this.#rules.confirms || book.hasRoom(this.#rules.window));
    if (!protocol.starved || !protocol.canSend || !wantsToSend || protocol.canSend(s)) {
      this.#starvedSince = null;
      return false;
    }
    const now = this.clock.now();
    this.#starvedSince ??= now;
    const limitMs = this.opts.blockedTimeoutMs ?? DEFAULT_BLOCKED_TIMEOUT_MS;
    if (now - this.#starvedSince < limitMs) return false;
    this.loop.giveUp(protocol.starved(s, now - this.#starvedSince, limitMs));
    return true;
  }

  /** A paced slot; false when none was taken (Ctrl+C, or hooks.stop: no new sequence from here on). */
  async #paced(): Promise<boolean> {
    try {
      await this.#pacer.pace(this.#paceSignal);
      return true;
    } catch (err) {
      if (!(err instanceof InterruptedError)) throw err;
      if (!this.hooks.signal.aborted) this.#stopHere();
      return false;
    }
  }

  /** tx: commit what is uncommitted; its messages are confirmed when the commit-ok comes. */
  async #commit(s: S): Promise<void> {
    if (this.book.inFlight === 0 || !this.protocol.commit) return;
    const sentAt = this.clock.now();
    await this.protocol.commit(s).catch(() => undefined);
    if (s.lost) return; // #onLost already made them indeterminate
    const at = this.clock.now();
    const commitMs = at - sentAt;
    const inFault = this.hooks.inFaultWindow?.() ?? false;
    this.book.ack(this.book.channel, this.book.lastTag, true, (seq) => this.answers.confirmed(seq, commitMs, at, inFault));
    this.tally.progressed(at);
  }

  /** hooks.stop fired (or a paced wait ended on it): no new sequence from here on. */
  readonly #stopHere = (): void => {
    this.#limit = Math.min(this.#limit, this.#nextSeq);
    this.loop.changed.notify();
  };

  // The broker's side: sessions, answers, timeouts.

  #onOpen(s: S): void {
    this.#starvedSince = null;
    const channel = this.#books ? this.book.openChannel() : this.book.channel;
    if (this.#books) this.answers.lastAnswerAtMs = this.clock.now();
    this.protocol.open(s, channel, this.answers);
  }

  /** Unconfirmed (tx: uncommitted) on the lost session: indeterminate, published again. */
  #onLost(s: S): string {
    const inDoubt = this.book.connectionLost();
    for (const seq of inDoubt) this.ledger.indeterminate(seq);
    return this.protocol.lost?.(s, inDoubt.length) ?? '';
  }

  readonly #resend = (seq: number): void => this.book.retry(seq);

  readonly #snapshot = () => this.tally.sample(this.book.inFlight);
}
