import type { Delivery, Message } from 'rhea';
import { InterruptedError, NoBrokerError, NotFoundError, UsageError, errorMessage } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { messageId } from '../ledger/ledger.js';
import { LatencyRecorder } from '../measure/histogram.js';
import { AdaptiveSamples } from '../measure/samples.js';
import { encodePublishedAtUs, PUBLISHED_AT_US_HEADER } from '../measure/published-at.js';
import { systemClock } from '../util/retry.js';
import { Signal } from '../util/signal.js';
import { maskUrl } from '../url.js';
import { MAX_SAMPLES, STUCK_AFTER_TIMEOUTS } from '../amqp/publisher.js';
import { Pacer } from '../amqp/pacer.js';
import { DEFAULT_BLOCKED_TIMEOUT_MS, type FlushOutcome, type TimelineEvent } from '../amqp/publish-loop.js';
import type { PublisherHooks, PublisherOptions } from '../amqp/publisher-options.js';
import { countFlags, type PublisherResult, type PublisherSample } from '../amqp/publisher-result.js';
import { RefusalNotes, RefusedResends } from '../amqp/refused-resends.js';
import { closeWithin10, targetAddress } from './connection.js';
import { AMQP10_MODES } from './protocol.js';
import { OUTCOME_RULES, RejectionTally, rejectionOf, type Amqp10Outcomes, type Outcome } from './outcomes.js';
import { bufferedBytes, detachWithin, openSendSession, type SendSession } from './send-session.js';

/**
 * The producer over AMQP 1.0 (rhea): the same options, hooks, ledger and result as the 0-9-1
 * publisher (runPublisher), and the outcome counts AMQP 1.0 adds. mode 'async' sends unsettled
 * transfers, at most `window` awaiting an outcome (sync: one); 'none' sends them pre-settled (no
 * outcome: AMQP 1.0's confirms-off). A transfer unsettled when its connection or link goes, or
 * without an outcome within confirmTimeoutMs, is in doubt and sent again at once after
 * reconnecting (at-least-once). One the broker refused (rejected or modified) is sent again after
 * a backoff, and given up after MAX_REFUSALS (refused-resends.ts), as over 0-9-1. Link credit from
 * the broker bounds what is sent in both modes. Returns data; never prints.
 */

/** How many transfers a burst sends before letting the socket and the broker's frames in. */
const BURST = 256;
const SAMPLER_TICK_MS = 10;
/** The longest wait of the loop with nothing to do: it looks again at least this often. */
const IDLE_WAIT_MS = 100;

export async function runPublisher10(opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks): Promise<PublisherResult> {
  if (!(AMQP10_MODES as readonly string[]).includes(opts.mode)) {
    throw new UsageError(`publish mode ${opts.mode} has no AMQP 1.0 form (AMQP 1.0: ${AMQP10_MODES.join(', ')})`);
  }
  const run = new Publisher10Run(opts, ledger, hooks);
  const flush = await run.publishAll();
  return run.result(flush);
}

class Publisher10Run {
  readonly #opts: PublisherOptions;
  readonly #ledger: Ledger;
  readonly #hooks: PublisherHooks;
  readonly #clock = systemClock;
  readonly #t0: number;
  readonly #startedAtIso: string;
  readonly #preSettled: boolean;
  readonly #window: number;
  readonly #address: string;
  readonly #body: Buffer;
  /** The body as an AMQP 1.0 data section (rhea's, made once rhea is loaded). */
  #section: unknown;
  readonly #idPrefix: string;
  readonly #pacer: Pacer;
  readonly #paceSignal: AbortSignal;
  readonly #changed = new Signal();
  readonly #sampled = new AdaptiveSamples<PublisherSample>(MAX_SAMPLES, SAMPLER_TICK_MS);
  readonly #latency = new LatencyRecorder();
  readonly #latencyFault = new LatencyRecorder();
  readonly #recordLatency: boolean;
  readonly #retry: number[] = [];
  /** Refused messages: their backoff, and those given up (touched on a refusal, never per outcome). */
  readonly #refusals = new RefusedResends();
  readonly #refusalNotes = new RefusalNotes();
  readonly #rejections = new RejectionTally();
  readonly #outcomes = { accepted: 0, released: 0, rejected: 0, modified: 0, inDoubt: 0, timedOut: 0 };
  readonly #events: TimelineEvent[] = [];
  readonly #connectedTo: string[] = [];

  #session: SendSession | undefined;
  #startIndex: number;
  #nextSeq: number;
  #limit: number;
  #distinctWritten = 0;
  #publishes = 0;
  #confirmsSoFar = 0;
  #maxInFlight = 0;
  #reconnects = 0;
  #interrupted = false;
  #gaveUp: string | null = null;
  #lastProgressAt: number;
  #longestStallMs = 0;
  /** Since when the link has had no credit while there was something to send (null: it has credit). */
  #noCreditSince: number | null = null;

  constructor(opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks) {
    this.#opts = opts;
    this.#ledger = ledger;
    this.#hooks = hooks;
    this.#t0 = this.#clock.now();
    this.#startedAtIso = new Date().toISOString();
    this.#preSettled = opts.mode === 'none';
    this.#window = opts.mode === 'sync' ? 1 : opts.mode === 'async' ? opts.window : Infinity;
    this.#address = targetAddress(opts.exchange, opts.routingKey);
    this.#body = Buffer.alloc(opts.sizeBytes, 0x61);
    this.#idPrefix = messageId(opts.runId, 0).slice(0, -1);
    this.#pacer = new Pacer(opts.ratePerSec, this.#clock);
    this.#paceSignal = hooks.stop ? AbortSignal.any([hooks.signal, hooks.stop]) : hooks.signal;
    this.#recordLatency = opts.recordConfirmLatency ?? true;
    this.#startIndex = opts.startIndex;
    this.#nextSeq = opts.startSeq ?? 0;
    this.#limit = opts.count;
    this.#lastProgressAt = this.#t0;
  }

  async publishAll(): Promise<FlushOutcome | undefined> {
    // rhea on the first run, not at import: the CLI's option parsing must stay cheap.
    const { default: rhea } = await import('rhea');
    this.#section = rhea.message.data_section(this.#body);
    const hooks = this.#hooks;
    hooks.onStart?.(() => ({
      written: this.#distinctWritten,
      confirmed: this.#confirmsSoFar,
      inFlight: this.#session?.inFlight ?? 0,
      reconnects: this.#reconnects,
      retryBacklog: this.#retry.length + this.#refusals.waiting,
    }));
    if (hooks.stop?.aborted) this.#stopHere();
    hooks.stop?.addEventListener('abort', this.#stopHere, { once: true });
    const sweeper = this.#preSettled ? undefined : setInterval(() => this.#sweepTimeouts(), Math.min(250, this.#opts.confirmTimeoutMs));
    const sampler =
      this.#opts.sampleProgress === false ? undefined : setInterval(() => this.#sampled.offer(this.#clock.now() - this.#t0, this.#snapshot), SAMPLER_TICK_MS);
    try {
      await this.#loop();
      hooks.onPublishingEnded?.();
    } finally {
      hooks.stop?.removeEventListener('abort', this.#stopHere);
      if (sweeper) clearInterval(sweeper);
      if (sampler) clearInterval(sampler);
      this.#noteRefusals(true);
    }
    return this.#close();
  }

  result(flush: FlushOutcome | undefined): PublisherResult {
    this.#sampled.push(this.#snapshot());
    const durationMs = this.#clock.now() - this.#t0;
    const flags = countFlags(this.#ledger);
    const amqp10: Amqp10Outcomes = {
      settlement: this.#preSettled ? 'pre-settled' : 'on-outcome',
      ...this.#outcomes,
      rejections: this.#rejections.list(),
    };
    return {
      runId: this.#opts.runId,
      mode: this.#opts.mode,
      count: this.#opts.count,
      written: this.#distinctWritten,
      publishes: this.#publishes,
      confirmed: flags.confirmed,
      nacked: flags.nacked,
      returned: flags.returned,
      indeterminate: flags.indeterminate,
      republished: flags.republished,
      reconnects: this.#reconnects,
      maxInFlight: this.#maxInFlight,
      startedAtIso: this.#startedAtIso,
      durationMs,
      publishRatePerSec: durationMs > 0 ? (this.#publishes * 1000) / durationMs : 0,
      confirmLatency: this.#latency.summary(),
      confirmLatencyAroundFault: this.#latencyFault.summary(),
      longestStallMs: this.#longestStallMs,
      blocks: 0,
      blockedMs: 0,
      flush,
      completed: this.#gaveUp === null && !this.#interrupted && this.#done(),
      gaveUp: this.#gaveUp,
      interrupted: this.#interrupted,
      events: this.#events,
      connectedTo: this.#connectedTo,
      samples: this.#sampled.samples,
      amqp10,
      refusedGivenUp: this.#refusals.givenUp,
    };
  }

  // The loop: a session, then publish, or wait for credit, room in the window or outcomes.

  async #loop(): Promise<void> {
    while (!this.#done()) {
      if (this.#hooks.signal.aborted) {
        this.#interrupted = true;
        return;
      }
      const s = this.#session ?? (await this.#open());
      if (s === undefined) return;
      if (s.lost) continue;
      // Refused messages whose backoff has passed go to the retry list (a cheap check when none waits).
      if (this.#refusals.waiting > 0) this.#refusals.takeDue(this.#clock.now(), this.#resend);
      if (this.#next(s) === 'wait') {
        if (this.#creditStarved(s)) return;
        await Promise.race([this.#changed.wait(this.#refusals.waitMs(this.#clock.now(), IDLE_WAIT_MS)), s.lostPromise]);
        continue;
      }
      this.#noCreditSince = null;
      if (this.#pacer.active) {
        if ((await this.#paced()) && !s.lost && this.#next(s) === 'publish') this.#publishOne(s);
        continue;
      }
      for (let n = 0; n < BURST && this.#next(s) === 'publish'; n++) this.#publishOne(s);
      // Let rhea write what was sent and read the broker's outcomes and credit.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Nothing left: every sequence sent, none to send again, none awaiting an outcome or its backoff after a refusal. */
  #done(): boolean {
    return this.#nextSeq >= this.#limit && this.#retry.length === 0 && (this.#session?.inFlight ?? 0) === 0 && this.#refusals.waiting === 0;
  }

  /**
   * The broker grants no credit (a resource alarm blocks AMQP 1.0 publishers this way) while
   * there is something to send: past blockedTimeoutMs the run gives up, as the 0-9-1 publisher
   * does when its connection stays blocked.
   */
  #creditStarved(s: SendSession): boolean {
    const wantsToSend = (this.#retry.length > 0 || this.#nextSeq < this.#limit) && s.inFlight < this.#window;
    if (!wantsToSend || s.sender.sendable()) {
      this.#noCreditSince = null;
      return false;
    }
    const now = this.#clock.now();
    this.#noCreditSince ??= now;
    const limitMs = this.#opts.blockedTimeoutMs ?? DEFAULT_BLOCKED_TIMEOUT_MS;
    if (now - this.#noCreditSince < limitMs) return false;
    this.#gaveUp = `the broker granted ${maskUrl(s.url)} no link credit for ${((now - this.#noCreditSince) / 1000).toFixed(1)} s, past the blocked timeout (${limitMs} ms): a resource alarm (rabbitmq-diagnostics alarms) or a queue that takes nothing; raise --blocked-timeout to wait longer`;
    this.#event('gave-up', this.#gaveUp);
    return true;
  }

  #next(s: SendSession): 'publish' | 'wait' {
    if (this.#retry.length === 0 && this.#nextSeq >= this.#limit) return 'wait';
    if (s.inFlight >= this.#window) return 'wait';
    return s.sender.sendable() ? 'publish' : 'wait';
  }

  async #open(): Promise<SendSession | undefined> {
    const opts = this.#opts;
    try {
      const s = await openSendSession(
        {
          urls: opts.urls,
          startIndex: this.#startIndex,
          address: this.#address,
          preSettled: this.#preSettled,
          heartbeatS: opts.heartbeatS,
          reconnectTimeoutMs: opts.reconnectTimeoutMs,
          signal: this.#hooks.signal,
          nowMs: () => this.#clock.now(),
        },
        { onOutcome: this.#onOutcome, onSendable: () => this.#changed.notify(), onLost: this.#onLost },
      );
      this.#startIndex = s.index;
      this.#connectedTo.push(maskUrl(s.url));
      this.#event('connected', maskUrl(s.url));
      if (this.#connectedTo.length > 1) this.#reconnects++;
      this.#session = s;
      this.#noCreditSince = null;
      return s;
    } catch (err) {
      if (err instanceof InterruptedError) {
        this.#interrupted = true;
        return undefined;
      }
      // No broker at all, or no such exchange or queue: the run's one error, not a fault to ride out.
      if (err instanceof NoBrokerError || err instanceof NotFoundError) throw err;
      this.#gaveUp = errorMessage(err);
      this.#event('gave-up', this.#gaveUp);
      return undefined;
    }
  }

  #publishOne(s: SendSession): void {
    const ledger = this.#ledger;
    const fromRetry = this.#retry.length > 0;
    const seq = fromRetry ? this.#retry.shift()! : this.#nextSeq++;
    const firstTime = !ledger.has(seq, 'written');
    if (fromRetry) ledger.republish(seq);
    else ledger.attempt(seq);
    this.#publishes++;
    const at = this.#clock.now();
    let delivery: Delivery;
    try {
      delivery = s.sender.send(this.#message(seq, at));
    } catch (err) {
      this.#retry.unshift(seq);
      this.#event('publish-failed', `message ${seq}: ${errorMessage(err)}`);
      this.#lose(s, errorMessage(err));
      return;
    }
    ledger.written(seq);
    if (this.#preSettled) this.#progressed(at);
    else {
      s.pending.set(delivery, { seq, sentAtMs: at, timedOut: false });
      s.inFlight++;
      if (s.inFlight > this.#maxInFlight) this.#maxInFlight = s.inFlight;
    }
    if (firstTime) {
      this.#distinctWritten++;
      this.#hooks.onWritten?.(this.#distinctWritten, at);
    }
  }

  #message(seq: number, atMs: number): Message {
    const opts = this.#opts;
    const id = this.#idPrefix + seq;
    const body = this.#section;
    if (opts.leanProperties) {
      const props = opts.publishedAtUs ? { [PUBLISHED_AT_US_HEADER]: encodePublishedAtUs(atMs) } : undefined;
      return { message_id: id, durable: opts.persistent, body, ...(props ? { application_properties: props } : {}) } as unknown as Message;
    }
    const props: Record<string, unknown> = { 'x-rmq-bench-run': opts.runId, 'x-rmq-bench-seq': seq, 'x-rmq-bench-published-at': Date.now() };
    if (opts.publishedAtUs) props[PUBLISHED_AT_US_HEADER] = encodePublishedAtUs(atMs);
    const message = {
      message_id: id,
      durable: opts.persistent,
      content_type: 'application/octet-stream',
      creation_time: new Date(),
      application_properties: props,
      body,
    };
    return message as unknown as Message;
  }

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

  readonly #stopHere = (): void => {
    this.#limit = Math.min(this.#limit, this.#nextSeq);
    this.#changed.notify();
  };

  // The broker's side: outcomes, lost sessions, timeouts.

  readonly #onOutcome = (s: SendSession, outcome: Outcome, delivery: Delivery): void => {
    const p = s.pending.get(delivery);
    if (p === undefined) return;
    s.pending.delete(delivery);
    if (!p.timedOut) s.inFlight--;
    const at = this.#clock.now();
    s.lastOutcomeAtMs = at;
    this.#outcomes[outcome]++;
    const rule = OUTCOME_RULES[outcome];
    const ledger = this.#ledger;
    if (rule.flag === 'confirmed') {
      if (!ledger.has(p.seq, 'confirmed')) this.#confirmsSoFar++;
      ledger.confirm(p.seq);
      const ms = p.timedOut ? undefined : at - p.sentAtMs;
      if (ms !== undefined && this.#recordLatency) {
        this.#latency.recordMs(ms);
        if (this.#hooks.inFaultWindow?.()) this.#latencyFault.recordMs(ms);
      }
      this.#hooks.onConfirm?.(ms, at);
      this.#progressed(at);
    } else if (rule.flag === 'returned') {
      ledger.returned(p.seq);
      this.#progressed(at);
    } else {
      ledger.nack(p.seq);
      const why = outcome === 'rejected' ? rejectionOf(delivery.remote_state) : undefined;
      if (why) this.#rejections.add(why);
      this.#hooks.onRefused?.();
      // A transfer that had no outcome in time was sent again already: the refusal policy follows that copy.
      if (rule.resend && !p.timedOut) this.#refused(p.seq, why ? `rejected: ${why.condition}${why.description ? `: ${why.description}` : ''}` : outcome, at);
    }
    this.#changed.notify();
  };

  /** The broker refused seq: sent again after its backoff (in doubt until then), or given up (it stays nacked). */
  #refused(seq: number, reason: string, at: number): void {
    const decision = this.#refusals.refused(seq, at);
    if (decision.resend) this.#ledger.indeterminate(seq);
    for (const detail of this.#refusalNotes.refused(seq, reason, decision, at)) this.#event('nack', detail);
  }

  readonly #resend = (seq: number): void => {
    this.#retry.push(seq);
  };

  /** The refusals no event has named yet, at most once a second (final: at the end, whatever is left). */
  #noteRefusals(final = false): void {
    for (const detail of this.#refusalNotes.summary(this.#clock.now(), final)) this.#event('nack', detail);
  }

  readonly #onLost = (s: SendSession, why: string): void => this.#lose(s, why);

  /** s is gone: its unsettled transfers are in doubt and sent again; its connection closed in the background. */
  #lose(s: SendSession, why: string): void {
    if (this.#session === s) this.#session = undefined;
    s.lost = true;
    let inDoubt = 0;
    for (const p of s.pending.values()) {
      if (p.timedOut) continue;
      this.#ledger.indeterminate(p.seq);
      this.#retry.push(p.seq);
      inDoubt++;
    }
    s.pending.clear();
    s.inFlight = 0;
    this.#retry.sort((a, b) => a - b);
    this.#outcomes.inDoubt += inDoubt;
    this.#event('connection-lost', `${maskUrl(s.url)}: ${why}${inDoubt > 0 ? `; ${inDoubt} in doubt, published again` : ''}`);
    s.connection.on('error', () => undefined);
    try {
      s.connection.close();
    } catch {
      // already closed
    }
    this.#changed.notify();
  }

  /** Outcomes not received within confirmTimeoutMs: in doubt, sent again; a live connection silent for long is given up. Also the refusals' summary. */
  #sweepTimeouts(): void {
    this.#noteRefusals();
    const s = this.#session;
    if (!s || s.lost) return;
    const timeoutMs = this.#opts.confirmTimeoutMs;
    const now = this.#clock.now();
    let late = 0;
    for (const p of s.pending.values()) {
      if (p.timedOut) continue;
      if (now - p.sentAtMs < timeoutMs) break;
      p.timedOut = true;
      s.inFlight--;
      this.#ledger.indeterminate(p.seq);
      this.#retry.push(p.seq);
      late++;
    }
    if (late === 0) return;
    this.#outcomes.timedOut += late;
    this.#event('confirm-timeout', `${late} outcomes not received within ${timeoutMs} ms; published again`);
    const silentMs = now - s.lastOutcomeAtMs;
    if (silentMs >= STUCK_AFTER_TIMEOUTS * timeoutMs) {
      this.#startIndex = (s.index + 1) % this.#opts.urls.length;
      this.#lose(s, `no outcome for ${Math.round(silentMs)} ms on a live connection: giving it up for the next node`);
    }
    this.#changed.notify();
  }

  /** The end: anything unsettled is in doubt; the link's detach says whether the broker read everything sent. */
  async #close(): Promise<FlushOutcome | undefined> {
    const s = this.#session;
    if (!s) return undefined;
    this.#session = undefined;
    for (const p of s.pending.values()) if (!p.timedOut) this.#ledger.indeterminate(p.seq);
    s.lost = true;
    const channel = await detachWithin(s, this.#opts.flushTimeoutMs ?? 15_000);
    const outcome: FlushOutcome = { channel, blockedBy: null, bufferedBytes: bufferedBytes(s), bytesPerPublish: 0 };
    await closeWithin10(s.connection);
    return outcome;
  }

  #event(type: TimelineEvent['type'], detail: string): void {
    const e = { atMs: this.#clock.now() - this.#t0, type, detail };
    this.#events.push(e);
    this.#hooks.onEvent?.(e);
  }

  #progressed(at: number): void {
    if (at - this.#lastProgressAt > this.#longestStallMs) this.#longestStallMs = at - this.#lastProgressAt;
    this.#lastProgressAt = at;
  }

  readonly #snapshot = (): PublisherSample => ({
    tMs: this.#clock.now() - this.#t0,
    written: this.#distinctWritten,
    confirmed: this.#confirmsSoFar,
    inFlight: this.#session?.inFlight ?? 0,
  });
}
