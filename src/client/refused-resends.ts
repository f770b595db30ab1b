/**
 * What a producer does with a message the broker refused (0-9-1 basic.nack; AMQP 1.0 rejected or
 * modified), shared by both publishers. Pure: no I/O, no timers, no clock of its own (every time
 * is passed in as nowMs).
 *
 * A refused message is sent again after a backoff that doubles with each refusal of that message
 * (FIRST_BACKOFF_MS, then twice that, ...); at its MAX_REFUSALS-th refusal it is given up: not
 * sent again, and it stays nacked in the ledger (reconciliation counts it known failed: the
 * producer was told). A lost connection or a confirm timeout is not a refusal (the broker said
 * nothing): those are sent again at once, after reconnecting, as before.
 *
 * RefusalNotes keeps the timeline short: the first refusal with a given reason is an event, the
 * rest a summary at most every SUMMARY_INTERVAL_MS; the first GIVEN_UP_EVENTS_MAX messages given
 * up are an event each, the rest counted in the summary.
 */

/**
 * Refusals of one message before it is given up. Five: the resends wait 250 + 500 + 1,000 +
 * 2,000 ms, so a refusal that passes within about 3.75 s (a quorum queue without a leader while
 * it elects one, a queue that a consumer is draining) is ridden out; a queue that stays full
 * (reject-publish) ends the run within about 4 s of its last new message instead of never.
 */
export const MAX_REFUSALS = 5;
/** The wait before the first resend of a refused message; it doubles with each further refusal. */
export const FIRST_BACKOFF_MS = 250;
/** Refusals after the first of their reason are summed up in one event at most this often. */
export const SUMMARY_INTERVAL_MS = 1_000;
/** Messages given up that get an event each; any more are counted in the summary. */
export const GIVEN_UP_EVENTS_MAX = 5;

/** The wait before a message refused `refusals` times (1, 2, ...) is sent again. */
export function backoffMs(refusals: number): number {
  return FIRST_BACKOFF_MS * 2 ** (refusals - 1);
}

/** What becomes of one refusal: sent again at dueAtMs, or given up. */
export type RefusalDecision = { resend: true; refusals: number; backoffMs: number; dueAtMs: number } | { resend: false; refusals: number };

/** Sequences waiting out the same backoff: appended in due order, taken from the front. */
class DueQueue {
  #seqs: number[] = [];
  #dueAtMs: number[] = [];
  #head = 0;

  get size(): number {
    return this.#seqs.length - this.#head;
  }

  push(seq: number, dueAtMs: number): void {
    this.#seqs.push(seq);
    this.#dueAtMs.push(dueAtMs);
  }

  /** When the front one is due (undefined: empty). */
  peekDueAtMs(): number | undefined {
    return this.size > 0 ? this.#dueAtMs[this.#head] : undefined;
  }

  shift(): number {
    const seq = this.#seqs[this.#head++]!;
    if (this.#head === this.#seqs.length) {
      this.#seqs = [];
      this.#dueAtMs = [];
      this.#head = 0;
    }
    return seq;
  }
}

/**
 * The refusal policy's state: each refused message's refusal count, those waiting out their
 * backoff, and how many were given up. Touched only on a refusal and when one is due, never per
 * ack (a message confirmed after a refusal keeps its count: it costs a Map entry, not a lookup
 * per ack).
 */
export class RefusedResends {
  readonly #refusals = new Map<number, number>();
  /** One queue per refusal count 1..MAX_REFUSALS-1: each has one backoff, so it is in due order. */
  readonly #queues: DueQueue[] = Array.from({ length: MAX_REFUSALS - 1 }, () => new DueQueue());
  #waiting = 0;
  #givenUp = 0;

  /** The broker refused seq at nowMs: when it is sent again, or that it is given up. */
  refused(seq: number, nowMs: number): RefusalDecision {
    const refusals = (this.#refusals.get(seq) ?? 0) + 1;
    this.#refusals.set(seq, refusals);
    if (refusals >= MAX_REFUSALS) {
      this.#givenUp++;
      return { resend: false, refusals };
    }
    const wait = backoffMs(refusals);
    const dueAtMs = nowMs + wait;
    this.#queues[refusals - 1]!.push(seq, dueAtMs);
    this.#waiting++;
    return { resend: true, refusals, backoffMs: wait, dueAtMs };
  }

  /** Refused messages waiting out their backoff. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Messages refused MAX_REFUSALS times: not sent again. */
  get givenUp(): number {
    return this.#givenUp;
  }

  /** Times seq was refused so far (0: never). */
  refusalsOf(seq: number): number {
    return this.#refusals.get(seq) ?? 0;
  }

  /** When the next waiting message is due (undefined: none waits). */
  nextDueAtMs(): number | undefined {
    let next: number | undefined;
    for (const q of this.#queues) {
      const at = q.peekDueAtMs();
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
    return next;
  }

  /** Every message due at nowMs, taken off the wait, each to `resend`; how many. */
  takeDue(nowMs: number, resend: (seq: number) => void): number {
    if (this.#waiting === 0) return 0;
    let n = 0;
    for (const q of this.#queues) {
      for (let at = q.peekDueAtMs(); at !== undefined && at <= nowMs; at = q.peekDueAtMs()) {
        resend(q.shift());
        n++;
      }
    }
    this.#waiting -= n;
    return n;
  }

  /**
   * How long a loop with nothing else to do may wait, at most maxMs: until the next message is
   * due (at least 1 ms), or maxMs when none waits.
   */
  waitMs(nowMs: number, maxMs: number): number {
    const next = this.nextDueAtMs();
    return next === undefined ? maxMs : Math.min(maxMs, Math.max(1, Math.ceil(next - nowMs)));
  }
}

/** Counts as the timeline writes them: 1,681. */
function count(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * The timeline's side of refusals: which ones become an event (the details; the publisher records
 * each as a 'nack' event), so that a queue refusing thousands of publishes a second writes a few
 * lines, not thousands.
 */
export class RefusalNotes {
  readonly #seen = new Set<string>();
  /** Refusals not yet in an event, by reason, in first-seen order. */
  #pending = new Map<string, number>();
  #givenUpShown = 0;
  #givenUpPending = 0;
  #lastNoteAtMs: number | undefined;

  /** A refusal of seq (reason: the broker's, as text) and what the policy decided: the events to record now. */
  refused(seq: number, reason: string, d: RefusalDecision, nowMs: number): string[] {
    const first = !this.#seen.has(reason);
    if (first) this.#seen.add(reason);
    if (!d.resend) {
      if (this.#givenUpShown < GIVEN_UP_EVENTS_MAX) {
        this.#givenUpShown++;
        return [`message ${seq} refused ${d.refusals} times by the broker (${reason}): not sent again`];
      }
      this.#givenUpPending++;
      return [];
    }
    if (first) {
      this.#lastNoteAtMs ??= nowMs;
      return [
        `message ${seq} refused by the broker (${reason}); sent again in ${d.backoffMs} ms, the wait doubling with each refusal, given up after ${MAX_REFUSALS}`,
      ];
    }
    this.#pending.set(reason, (this.#pending.get(reason) ?? 0) + 1);
    return [];
  }

  /**
   * The summary of what no event has named yet, if SUMMARY_INTERVAL_MS has passed since the last
   * one (or the first refusal), or at the end (final): at most two events.
   */
  summary(nowMs: number, final = false): string[] {
    if (this.#pending.size === 0 && this.#givenUpPending === 0) return [];
    if (!final && this.#lastNoteAtMs !== undefined && nowMs - this.#lastNoteAtMs < SUMMARY_INTERVAL_MS) return [];
    this.#lastNoteAtMs = nowMs;
    const out: string[] = [];
    if (this.#pending.size > 0) {
      const reasons = [...this.#pending];
      const total = reasons.reduce((a, [, n]) => a + n, 0);
      const why = reasons.length === 1 ? reasons[0]![0] : reasons.map(([r, n]) => `${count(n)}× ${r}`).join('; ');
      out.push(`the broker refused ${count(total)} more (${why}); resending with backoff, at most ${MAX_REFUSALS} refusals each`);
      this.#pending = new Map();
    }
    if (this.#givenUpPending > 0) {
      const n = this.#givenUpPending;
      out.push(`${count(n)} more ${n === 1 ? 'message' : 'messages'} refused ${MAX_REFUSALS} times by the broker: not sent again`);
      this.#givenUpPending = 0;
    }
    return out;
  }
}
