/**
 * The order in which one publisher's messages were read, stream by stream: how many were read
 * after one with a higher sequence number, whether something explains each (a redelivery, a second
 * copy, a message the producer sent again), and the largest jump forward. Fed one read at a time,
 * O(1) per read; no I/O.
 *
 * A stream is what one reader saw of one queue: the queue the delivery came from and, where
 * several consumers share a queue (chaos --consumers > --queues), which consumer read it. Competing
 * consumers each get their own part of the queue in order; their reads merged in this process
 * are not the queue's order, so they are never one stream.
 *
 * In a stream, a read is out of order when its sequence is lower than the highest already read
 * there. Out of order and expected when:
 *   - the broker flagged it redelivered (it went back to the queue: a consumer's connection or
 *     channel closed with it unacked, a leader change returned it);
 *   - this sequence had been read before, in any stream (a second copy);
 *   - the producer sent it again: republished, or left in doubt (indeterminate) and republished
 *     after a reconnect; the copy sent again goes to the back of the queue.
 * Out of order with none of these is unexplained: the broker delivered a publisher's messages in
 * an order other than the one they were published in, with nothing in the ledger to account for
 * it. That is a finding to look into; it is not a lost message, and it does not fail a verdict.
 *
 * A gap is a jump forward: a read whose sequence is more than one past the highest read before in
 * its stream (the first read of a stream counts from -1). Its size is the sequences skipped.
 * Messages never read, and messages that arrive later out of order, both open gaps; with
 * competing consumers on one queue, each consumer's gaps include what the others took.
 */

/** Where one delivery came from, as the reader knows it. */
export interface ReadSource {
  /** The queue it was read from; undefined: the one default stream. */
  queue?: string;
  /** Which consumer read it (1-based): needed where consumers compete for one queue (chaos names each). */
  consumer?: number;
  /** The broker's redelivered flag (AMQP 0-9-1), or its AMQP 1.0 equivalent. */
  redelivered?: boolean;
  /**
   * A read known only as a count (a store's log replayed after the run), not seen as it arrived:
   * counted by the ledger, and the order of the run's reads becomes unknown (the report is null).
   */
  replayed?: boolean;
}

/** What the ledger knows of a sequence when it is read, beyond the delivery itself. */
interface ReadHistory {
  /** Read at least once before this read. */
  readBefore: boolean;
  /** The producer sent it more than once, or had no definite answer for it (republished or indeterminate). */
  sentAgain: boolean;
}

export interface OrderCounts {
  /** Reads of this publisher's messages observed in order of arrival. */
  reads: number;
  /** Reads of a sequence lower than the highest already read in the same stream. */
  outOfOrder: number;
  /** Of those, explained by a redelivery, a second copy, or a message sent again. */
  expected: number;
  /** outOfOrder − expected: nothing accounts for them (a finding, not a failed verdict). */
  unexplained: number;
  /** The most sequences skipped at once by a jump forward in one stream; 0 when none. */
  largestGap: number;
}

export interface StreamOrder extends OrderCounts {
  /** The queue; null for reads that named none. */
  queue: string | null;
  /** The consumer that read it (1-based, as the scenario numbers its consumers); null for a single reader that names none (a drain). */
  consumer: number | null;
  /** The first unexplained sequences read in this stream (at most ORDER_SAMPLE_LIMIT). */
  samples: number[];
}

export interface OrderReport extends OrderCounts {
  /** The first unexplained sequences, over all streams, as read (at most ORDER_SAMPLE_LIMIT). */
  samples: number[];
  /** Stream by stream, sorted by queue, then consumer. */
  streams: StreamOrder[];
}

/** Unexplained sequences kept per stream, and over all streams. */
export const ORDER_SAMPLE_LIMIT = 20;

interface StreamState {
  queue: string | null;
  consumer: number | null;
  /** The highest sequence read so far in this stream; -1 before the first read. */
  highest: number;
  reads: number;
  outOfOrder: number;
  expected: number;
  largestGap: number;
  samples: number[];
}

/** Tracks the order of a publisher's reads. One per ledger: the ledger feeds it every read of one of its sequences. */
export class OrderTracker {
  readonly #streams = new Map<string, StreamState>();
  readonly #samples: number[] = [];
  #replayed = 0;
  /** The stream of the last read: most reads come from the same one as the read before. */
  #last: StreamState | undefined;

  /** One read of seq, from `source`, with what the ledger knew of seq before this read. */
  record(seq: number, source: ReadSource | undefined, history: ReadHistory): void {
    if (source?.replayed) {
      this.#replayed++;
      return;
    }
    const s = this.#stream(source);
    s.reads++;
    if (seq < s.highest) {
      s.outOfOrder++;
      if (source?.redelivered === true || history.readBefore || history.sentAgain) s.expected++;
      else {
        if (s.samples.length < ORDER_SAMPLE_LIMIT) s.samples.push(seq);
        if (this.#samples.length < ORDER_SAMPLE_LIMIT) this.#samples.push(seq);
      }
      return;
    }
    const gap = seq - s.highest - 1;
    if (gap > s.largestGap) s.largestGap = gap;
    s.highest = seq;
  }

  /** Reads replayed from counts (their order unknown). */
  get replayed(): number {
    return this.#replayed;
  }

  /**
   * The counts so far; null when a read was replayed from a count, so that the order of the
   * run's reads is not known (an order report of the rest would claim more than was seen).
   * `sampleLimit` cuts the sample lists (at most ORDER_SAMPLE_LIMIT are kept).
   */
  report(sampleLimit = ORDER_SAMPLE_LIMIT): OrderReport | null {
    if (this.#replayed > 0) return null;
    const streams = [...this.#streams.values()].sort(byQueueThenConsumer).map(
      (s): StreamOrder => ({
        queue: s.queue,
        consumer: s.consumer,
        ...countsOf(s),
        samples: s.samples.slice(0, sampleLimit),
      }),
    );
    const total: OrderCounts = { reads: 0, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 0 };
    for (const s of streams) {
      total.reads += s.reads;
      total.outOfOrder += s.outOfOrder;
      total.expected += s.expected;
      total.unexplained += s.unexplained;
      total.largestGap = Math.max(total.largestGap, s.largestGap);
    }
    return { ...total, samples: this.#samples.slice(0, sampleLimit), streams };
  }

  #stream(source: ReadSource | undefined): StreamState {
    const queue = source?.queue ?? null;
    const consumer = source?.consumer ?? null;
    const last = this.#last;
    if (last && last.queue === queue && last.consumer === consumer) return last;
    // The consumer is digits or nothing, so the first '/' ends it; 'q:' tells a queue named '' from none.
    const key = `${consumer ?? ''}/${queue === null ? '' : `q:${queue}`}`;
    let s = this.#streams.get(key);
    if (!s) {
      s = { queue, consumer, highest: -1, reads: 0, outOfOrder: 0, expected: 0, largestGap: 0, samples: [] };
      this.#streams.set(key, s);
    }
    this.#last = s;
    return s;
  }
}

function countsOf(s: StreamState): OrderCounts {
  return { reads: s.reads, outOfOrder: s.outOfOrder, expected: s.expected, unexplained: s.outOfOrder - s.expected, largestGap: s.largestGap };
}

function byQueueThenConsumer(a: StreamState, b: StreamState): number {
  const qa = a.queue ?? '';
  const qb = b.queue ?? '';
  if (qa !== qb) return qa < qb ? -1 : 1;
  return (a.consumer ?? 0) - (b.consumer ?? 0);
}
