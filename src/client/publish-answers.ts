import type { Ledger } from '../ledger/ledger.js';
import type { Clock } from '../util/retry.js';
import type { AckVisitor, ConfirmBook } from './confirm-book.js';
import type { LoopSession, PublishLoop } from './publish-loop.js';
import type { PublisherHooks } from './publisher-options.js';
import type { PublishTally } from './publish-tally.js';
import { RefusalNotes, RefusedResends } from './refused-resends.js';

/**
 * Where a protocol's producer reports the broker's answers, whatever they are called (0-9-1
 * acks, nacks and returns; AMQP 1.0 outcomes): the confirm book to settle them in, and what
 * each settled message means to the ledger, the counters and the timeline.
 */
/** A live connection with no answer for this many confirm timeouts is given up (see sweep). */
const STUCK_AFTER_TIMEOUTS = 2;

export class PublishAnswers {
  /** Refused messages: their backoff, and those given up (touched on a refusal, never per answer). */
  readonly refusals = new RefusedResends();
  readonly #notes = new RefusalNotes();
  /** The last answer on the current session (or when it opened, or was unblocked): how long the broker has been silent. */
  lastAnswerAtMs = 0;

  constructor(
    readonly book: ConfirmBook,
    readonly ledger: Ledger,
    readonly hooks: PublisherHooks,
    readonly tally: PublishTally,
    readonly clock: Clock,
    readonly loop: Pick<PublishLoop<LoopSession>, 'event' | 'changed' | 'timeoutsSuspended' | 'session' | 'abandon'>,
  ) {}

  /** An answer settled messages at atMs: the broker is not silent; the loop wakes. */
  answered(atMs: number): void {
    this.lastAnswerAtMs = atMs;
    this.loop.changed.notify();
  }

  /** The loop has something new to look at (room in the window, a refusal to schedule). */
  wake(): void {
    this.loop.changed.notify();
  }

  /** seq confirmed at atMs, ms after it was published (undefined: a late confirm, its publish time dropped). */
  confirmed(seq: number, ms: number | undefined, atMs: number, inFault: boolean): void {
    // The broker confirmed it, even if we had given up waiting (then it is also republished).
    if (!this.ledger.has(seq, 'confirmed')) this.tally.confirmed++;
    this.ledger.confirm(seq);
    if (ms !== undefined) this.tally.latency(ms, inFault);
    this.hooks.onConfirm?.(ms, atMs);
  }

  /** A visitor for ConfirmBook.ack: each message confirmed, its latency from its publish time to atMs. */
  confirmVisitor(atMs: number, inFault: boolean): AckVisitor {
    return (seq, sentAtMs) => this.confirmed(seq, sentAtMs === undefined ? undefined : atMs - sentAtMs, atMs, inFault);
  }

  /** The broker refused seq (reason: for the timeline): sent again after its backoff (in doubt until then), or given up (it stays nacked). */
  refused(seq: number, reason: string, atMs: number): void {
    const decision = this.refusals.refused(seq, atMs);
    if (decision.resend) this.ledger.indeterminate(seq);
    for (const detail of this.#notes.refused(seq, reason, decision, atMs)) this.loop.event('nack', detail);
  }

  /** The refusals no event has named yet, at most once a second (final: at the end, whatever is left). */
  noteRefusals(final = false): void {
    for (const detail of this.#notes.summary(this.clock.now(), final)) this.loop.event('nack', detail);
  }

  /**
   * Answers that did not arrive within timeoutMs: indeterminate, published again. When no answer
   * at all has come for STUCK_AFTER_TIMEOUTS × timeoutMs on a connection that is still open (a
   * partitioned node keeps its clients and its heartbeats, and answers stop), that connection is
   * given up and the next node tried. Also the refusals' summary, once a second. words: the
   * answer's name in the timeline ('confirm', 'outcome'), and who counts the timeouts.
   */
  sweep(timeoutMs: number, words: { answer: string; timedOut?: (n: number) => void }): void {
    this.noteRefusals();
    const loop = this.loop;
    if (loop.timeoutsSuspended(timeoutMs)) return;
    const now = this.clock.now();
    const late = this.book.timeouts(now, timeoutMs);
    if (late.length === 0) return;
    for (const seq of late) this.ledger.indeterminate(seq);
    words.timedOut?.(late.length);
    loop.event('confirm-timeout', `${late.length} ${words.answer}s not received within ${timeoutMs} ms; published again`);
    const s = loop.session;
    const silentMs = now - this.lastAnswerAtMs;
    if (s && !s.lost && silentMs >= STUCK_AFTER_TIMEOUTS * timeoutMs) {
      loop.abandon(s, `no ${words.answer} for ${Math.round(silentMs)} ms on a live connection: giving it up for the next node`);
    }
    loop.changed.notify();
  }
}
