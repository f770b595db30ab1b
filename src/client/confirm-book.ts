/**
 * A publisher's confirm window, pure: no I/O, no timers, no clock of its own (every time is passed
 * in as atMs/nowMs, from whatever Clock the caller uses). It knows
 *
 *   - the publishes awaiting a confirm on the current channel, by delivery tag (1, 2, 3, ... per
 *     channel, in publish order: what RabbitMQ's basic.ack/basic.nack carry), each with its
 *     sequence number and publish time;
 *   - the retry backlog: sequences to publish (again) after a confirm timeout or a lost
 *     connection (smallest first), or that the caller puts back (retry). A nacked one is not put
 *     in it: the broker refused it, and when (whether) it comes back is the publisher's refusal
 *     policy (refused-resends.ts), which hands it to retry() once its backoff has passed.
 *
 * A publish is in one of these states on its channel:
 *
 *   in_flight  published, no answer yet: counts against the window;
 *   timed_out  no answer within the timeout: in the backlog, but a late ack still says where it went;
 *   lost       its connection closed first: in the backlog, a late ack (while the channel closes) likewise;
 *   settled    acked or nacked: forgotten (a second confirm for its tag is ignored).
 *
 * Storage is a ring of typed arrays indexed by delivery tag: no Map, no object per message.
 */

const IN_FLIGHT = 1;
const TIMED_OUT = 2;
const LOST = 3;
const SETTLED = 0;

const INITIAL_CAPACITY = 256;

/** Called for each acked publish: sentAtMs is undefined for a late ack (after a timeout or a lost connection). */
export type AckVisitor = (seq: number, sentAtMs: number | undefined) => void;
/** Called for each nacked publish that was in flight (settled; not in the backlog). */
type NackVisitor = (seq: number) => void;

export class ConfirmBook {
  #seqs = new Float64Array(INITIAL_CAPACITY);
  #sentAtMs = new Float64Array(INITIAL_CAPACITY);
  #states = new Uint8Array(INITIAL_CAPACITY);
  #mask = INITIAL_CAPACITY - 1;
  /** Current channel: acks for an earlier one are ignored. */
  #channel = 0;
  /** Lowest tag not settled (every tag below it is). */
  #lowTag = 1;
  /** Tag of the next publish. */
  #nextTag = 1;
  /** Timeouts are looked for from here: every tag below it is no longer in flight. */
  #sweepFromTag = 1;
  #inFlight = 0;
  readonly #backlog: number[] = [];

  /** A fresh channel: delivery tags start at 1 again; what the last one left unanswered is forgotten. Returns its number. */
  openChannel(): number {
    this.#channel++;
    this.#states.fill(SETTLED);
    this.#lowTag = 1;
    this.#nextTag = 1;
    this.#sweepFromTag = 1;
    this.#inFlight = 0;
    return this.#channel;
  }

  get channel(): number {
    return this.#channel;
  }

  /** Publishes awaiting a confirm (timed out and lost ones not counted). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** May one more be published with at most `window` awaiting a confirm? */
  hasRoom(window: number): boolean {
    return this.#inFlight < window;
  }

  /** The tag of the last publish on this channel (0 before the first). */
  get lastTag(): number {
    return this.#nextTag - 1;
  }

  /** Sequences waiting to be published again. */
  get retrying(): number {
    return this.#backlog.length;
  }

  /** The backlog, in the order it will be published. */
  backlog(): readonly number[] {
    return this.#backlog;
  }

  /** The next sequence to publish again, taken off the backlog. */
  takeRetry(): number | undefined {
    return this.#backlog.shift();
  }

  /** Back to the front of the backlog (taken, but not published after all). */
  putBack(seq: number): void {
    this.#backlog.unshift(seq);
  }

  /** Into the backlog, in order (a publish that never reached the socket, a refused one whose backoff has passed). */
  retry(seq: number): void {
    this.#backlog.push(seq);
    this.#backlog.sort(ascending);
  }

  /** seq was handed to the channel at atMs: its delivery tag. */
  publish(seq: number, atMs: number): number {
    if (this.#nextTag - this.#lowTag > this.#mask) this.#grow();
    const tag = this.#nextTag++;
    const i = tag & this.#mask;
    this.#seqs[i] = seq;
    this.#sentAtMs[i] = atMs;
    this.#states[i] = IN_FLIGHT;
    this.#inFlight++;
    return tag;
  }

  /**
   * basic.ack on `channel`: the publish with this tag (multiple: every one up to it). Each not
   * settled yet goes to visit; a tag already settled, unknown, or of another channel is ignored.
   * Returns how many were visited.
   */
  ack(channel: number, tag: number, multiple: boolean, visit: AckVisitor): number {
    // #settle's loop, written out: this one runs once per message confirmed.
    if (channel !== this.#channel) return 0;
    const to = Math.min(tag, this.#nextTag - 1);
    let n = 0;
    for (let t = multiple ? this.#lowTag : Math.max(tag, this.#lowTag); t <= to; t++) {
      const i = t & this.#mask;
      const state = this.#states[i]!;
      if (state === SETTLED) continue;
      this.#states[i] = SETTLED;
      if (state === IN_FLIGHT) {
        this.#inFlight--;
        visit(this.#seqs[i]!, this.#sentAtMs[i]!);
      } else visit(this.#seqs[i]!, undefined);
      n++;
    }
    this.#advance();
    return n;
  }

  /**
   * basic.nack on `channel`: each publish still in flight is settled and goes to visit (the
   * caller decides when it is published again); one that timed out or was lost is already in the
   * backlog, and is only forgotten.
   */
  nack(channel: number, tag: number, multiple: boolean, visit: NackVisitor): number {
    return this.#settle(channel, tag, multiple, (i, wasInFlight) => {
      if (!wasInFlight) return false;
      visit(this.#seqs[i]!);
      return true;
    });
  }

  /** Settle the tag (multiple: every tag up to it) on the current channel; onSettle says whether it counts. */
  #settle(channel: number, tag: number, multiple: boolean, onSettle: (i: number, wasInFlight: boolean) => boolean): number {
    if (channel !== this.#channel) return 0;
    const to = Math.min(tag, this.#nextTag - 1);
    let n = 0;
    for (let t = multiple ? this.#lowTag : Math.max(tag, this.#lowTag); t <= to; t++) {
      const i = t & this.#mask;
      const state = this.#states[i]!;
      if (state === SETTLED) continue;
      this.#states[i] = SETTLED;
      const wasInFlight = state === IN_FLIGHT;
      if (wasInFlight) this.#inFlight--;
      if (onSettle(i, wasInFlight)) n++;
    }
    this.#advance();
    return n;
  }

  /**
   * The publishes whose confirm is timeoutMs old or older at nowMs, in publish order: timed out,
   * into the backlog (which is then sorted). A late ack for them is still welcome.
   */
  timeouts(nowMs: number, timeoutMs: number): number[] {
    const out: number[] = [];
    let t = Math.max(this.#sweepFromTag, this.#lowTag);
    for (; t < this.#nextTag; t++) {
      const i = t & this.#mask;
      if (this.#states[i] !== IN_FLIGHT) continue;
      // Publish order is time order: the first one not old enough ends the sweep.
      if (nowMs - this.#sentAtMs[i]! < timeoutMs) break;
      this.#states[i] = TIMED_OUT;
      this.#inFlight--;
      out.push(this.#seqs[i]!);
    }
    this.#sweepFromTag = t;
    if (out.length > 0) {
      for (const seq of out) this.#backlog.push(seq);
      this.#backlog.sort(ascending);
    }
    return out;
  }

  /**
   * The connection (or channel) closed: every publish in flight is lost, in publish order, into
   * the backlog (sorted). Acks that still come in on this channel (while it closes) are late acks.
   */
  connectionLost(): number[] {
    const out: number[] = [];
    for (let t = this.#lowTag; t < this.#nextTag; t++) {
      const i = t & this.#mask;
      if (this.#states[i] !== IN_FLIGHT) continue;
      this.#states[i] = LOST;
      out.push(this.#seqs[i]!);
    }
    this.#inFlight = 0;
    if (out.length > 0) {
      for (const seq of out) this.#backlog.push(seq);
      this.#backlog.sort(ascending);
    }
    return out;
  }

  #advance(): void {
    while (this.#lowTag < this.#nextTag && this.#states[this.#lowTag & this.#mask] === SETTLED) this.#lowTag++;
  }

  #grow(): void {
    const capacity = (this.#mask + 1) * 2;
    const seqs = new Float64Array(capacity);
    const sentAtMs = new Float64Array(capacity);
    const states = new Uint8Array(capacity);
    const mask = capacity - 1;
    for (let t = this.#lowTag; t < this.#nextTag; t++) {
      const from = t & this.#mask;
      const to = t & mask;
      seqs[to] = this.#seqs[from]!;
      sentAtMs[to] = this.#sentAtMs[from]!;
      states[to] = this.#states[from]!;
    }
    this.#seqs = seqs;
    this.#sentAtMs = sentAtMs;
    this.#states = states;
    this.#mask = mask;
  }
}

function ascending(a: number, b: number): number {
  return a - b;
}
