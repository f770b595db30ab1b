/**
 * The outbox relay's bookkeeping, pure: no I/O, no clock of its own. A row of the outbox is
 *
 *   pending    in the table, not handed to the broker (or handed over without a definite answer),
 *   in_flight  published on the current connection, its confirm not yet in,
 *   published  confirmed by the broker and marked so in the table: final.
 *
 * Only pending and published are stored (src/store/outbox.ts): in_flight lives in memory, so a
 * relay that dies turns every in_flight row back into pending (event 'restart'), and they are
 * published again: at-least-once, never at-most-once.
 */

export type RowState = 'pending' | 'in_flight' | 'published';

export type RelayEvent =
  /** The relay hands the row to the channel. */
  | 'publish'
  /** The broker acked it (and the table says published). Also valid late: after a timeout. */
  | 'ack'
  /** The broker nacked it: publish it again. */
  | 'nack'
  /** No confirm within the confirm timeout: indeterminate, publish it again. */
  | 'timeout'
  /** The connection (or channel) it was published on closed before its confirm. */
  | 'connection-lost'
  /** The relay process starts (again): nothing is in flight any more. */
  | 'restart';

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: RowState,
    readonly event: RelayEvent,
    readonly seq?: number,
  ) {
    super(`outbox relay: '${event}' is not allowed for a row that is ${from}${seq === undefined ? '' : ` (sequence ${seq})`}`);
  }
}

/**
 * The state machine, as a table. A late ack (after a timeout or a lost connection) still means
 * the broker took the message: pending → published spares one duplicate. Published is final.
 */
const TABLE: Record<RowState, Record<RelayEvent, RowState | null>> = {
  pending: { publish: 'in_flight', ack: 'published', nack: 'pending', timeout: 'pending', 'connection-lost': 'pending', restart: 'pending' },
  in_flight: { publish: null, ack: 'published', nack: 'pending', timeout: 'pending', 'connection-lost': 'pending', restart: 'pending' },
  published: { publish: null, ack: 'published', nack: 'published', timeout: 'published', 'connection-lost': 'published', restart: 'published' },
};

/** from --event--> to, or IllegalTransitionError (publishing a row twice at once, or after it was published). */
export function transition(from: RowState, event: RelayEvent, seq?: number): RowState {
  const to = TABLE[from][event];
  if (to === null) throw new IllegalTransitionError(from, event, seq);
  return to;
}

/** What the table stores becomes what a fresh relay starts from. */
export function stateAfterRestart(stored: 'pending' | 'published'): RowState {
  return transition(stored, 'restart');
}

interface InFlight {
  session: number;
  sentAtMs: number;
}

/**
 * The relay's rows during one life of the process: which are in flight (on which connection,
 * since when), which it saw published. A row it never touched is pending as far as it knows
 * (the table is the authority for that).
 */
export class RelayBook {
  readonly #inFlight = new Map<number, InFlight>();
  readonly #published = new Set<number>();

  stateOf(seq: number): RowState {
    if (this.#published.has(seq)) return 'published';
    return this.#inFlight.has(seq) ? 'in_flight' : 'pending';
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  get published(): number {
    return this.#published.size;
  }

  isInFlight(seq: number): boolean {
    return this.#inFlight.has(seq);
  }

  /** pending → in_flight on connection `session`. */
  publish(seq: number, session: number, atMs: number): void {
    transition(this.stateOf(seq), 'publish', seq);
    this.#inFlight.set(seq, { session, sentAtMs: atMs });
  }

  /** → published (the caller has marked it in the table first). Returns the state it left. */
  ack(seq: number): RowState {
    const from = this.stateOf(seq);
    transition(from, 'ack', seq);
    this.#inFlight.delete(seq);
    this.#published.add(seq);
    return from;
  }

  /** A nack for the publish on `session`: back to pending. False when that publish is no longer in flight. */
  nack(seq: number, session: number): boolean {
    const f = this.#inFlight.get(seq);
    if (!f || f.session !== session) return false;
    this.#back(seq, 'nack');
    return true;
  }

  /** Rows whose confirm is older than timeoutMs: back to pending, in send order. */
  timeouts(nowMs: number, timeoutMs: number): number[] {
    const out: number[] = [];
    for (const [seq, f] of this.#inFlight) {
      if (nowMs - f.sentAtMs < timeoutMs) continue;
      out.push(seq);
    }
    for (const seq of out) this.#back(seq, 'timeout');
    return out;
  }

  /** Connection `session` closed: everything in flight on it is pending again. */
  connectionLost(session: number): number[] {
    const out: number[] = [];
    for (const [seq, f] of this.#inFlight) if (f.session === session) out.push(seq);
    for (const seq of out) this.#back(seq, 'connection-lost');
    return out;
  }

  #back(seq: number, event: 'nack' | 'timeout' | 'connection-lost'): void {
    transition(this.stateOf(seq), event, seq);
    this.#inFlight.delete(seq);
  }
}
