import { DataError } from '../errors.js';
import { type OrderReport, OrderTracker, type ReadSource } from './order.js';

export type { ReadSource } from './order.js';

/**
 * The per-message ledger of one run: what the producer learned about each sequence number, and
 * how often the drain read it. Compact on purpose: per sequence one byte of flags, one byte of
 * publish count and two bytes of read count, in typed arrays that grow by doubling. A million
 * messages take about 4 MB; there is no Map and no string per message.
 */

/** One bit per fact about a sequence. Every bit is sticky: "confirmed" means confirmed at least once. */
export const Flag = {
  /** The producer tried to publish it. */
  attempted: 1 << 0,
  /** Handed to the socket: channel.publish returned. */
  written: 1 << 1,
  /** The broker acked it. */
  confirmed: 1 << 2,
  /** The broker nacked it. */
  nacked: 1 << 3,
  /** basic.return: mandatory and unroutable. */
  returned: 1 << 4,
  /** A nack, a confirm timeout or a channel/connection close left it without a definite answer. */
  indeterminate: 1 << 5,
  /** Published more than once. */
  republished: 1 << 6,
} as const;

export type FlagName = keyof typeof Flag;

const KNOWN_BITS = 0x7f;

export const MAX_PUBLISH_COUNT = 0xff;
export const MAX_READ_COUNT = 0xffff;
/** At most this many unexpected message ids are kept as samples. */
export const UNEXPECTED_SAMPLE_LIMIT = 20;
/** Sequences 0..MAX_SEQUENCES-1; beyond that the arrays alone would take 8 GB. */
export const MAX_SEQUENCES = 2 ** 31;
const DEFAULT_CAPACITY = 1024;
/** An unexpected id longer than this is cut in the samples: garbage can be large. */
const SAMPLE_ID_MAX_CHARS = 200;

export type ReadOutcome = 'ours' | 'unexpected';

/** What a drain records each read in: one ledger, or several by run id (several.ts). */
export interface ReadRecorder {
  recordRead(id: string | undefined, from?: ReadSource): ReadOutcome;
}

export interface LedgerOptions {
  runId: string;
  /** Initial number of sequences; the ledger grows past it by doubling. */
  capacity?: number;
}

/** The `--ledger` form of a ledger. Reads (and their order) are not in it: verify re-reads the queue. */
export interface LedgerDocument {
  schemaVersion: 1;
  kind: 'ledger';
  runId: string;
  /** Highest attempted sequence + 1: the length of both arrays below. */
  attempted: number;
  /** Base64 of one flags byte per sequence (bits as in Flag). */
  flags: string;
  /** Base64 of one publish count byte per sequence (saturating at 255). */
  publishCounts: string;
}

function isSeq(seq: number): boolean {
  return Number.isSafeInteger(seq) && seq >= 0;
}

function checkSeq(seq: number): void {
  if (!isSeq(seq)) throw new RangeError(`sequence ${seq} is not a non-negative safe integer`);
  if (seq >= MAX_SEQUENCES) throw new RangeError(`sequence ${seq} is beyond the ledger's limit of ${MAX_SEQUENCES} messages`);
}

/** `${runId}-${seq}`: the message_id of one message of a run. */
export function messageId(runId: string, seq: number): string {
  if (runId === '') throw new RangeError('runId is empty');
  if (!isSeq(seq)) throw new RangeError(`sequence ${seq} is not a non-negative safe integer`);
  return `${runId}-${seq}`;
}

/** Canonical decimal: no sign, no leading zero, no exponent, so that each sequence has exactly one id. */
const SEQ_DIGITS = /^(?:0|[1-9][0-9]{0,15})$/;

function parseSeq(text: string): number | undefined {
  if (!SEQ_DIGITS.test(text)) return undefined;
  const seq = Number(text);
  return Number.isSafeInteger(seq) ? seq : undefined;
}

/**
 * The inverse of messageId. The runId may itself contain '-', so the split is at the LAST '-':
 * 'a-b-7' is run 'a-b', sequence 7; 'run--1' is run 'run-', sequence 1. Undefined for anything
 * else: no '-', an empty runId, an empty or non-canonical sequence ('run-', 'run-007', 'run-1e3').
 */
export function parseMessageId(id: string): { runId: string; seq: number } | undefined {
  if (typeof id !== 'string') return undefined;
  const dash = id.lastIndexOf('-');
  if (dash < 1) return undefined;
  const seq = parseSeq(id.slice(dash + 1));
  return seq === undefined ? undefined : { runId: id.slice(0, dash), seq };
}

/** An unexpected id as the samples keep it: cut at 200 characters; a missing one said in words. */
export function sampleOf(id: unknown): string {
  if (id === undefined || id === null) return '(no message_id)';
  const text = typeof id === 'string' ? id : String(id);
  return text.length > SAMPLE_ID_MAX_CHARS ? `${text.slice(0, SAMPLE_ID_MAX_CHARS)}…` : text;
}

export class Ledger implements ReadRecorder {
  readonly runId: string;
  readonly #prefix: string;
  #flags: Uint8Array;
  #publishCounts: Uint8Array;
  #readCounts: Uint16Array;
  /** Highest attempted sequence + 1. */
  #attempted = 0;
  /** Every delivery of one of our ids, exact (the per-sequence counts saturate). */
  #readTotal = 0;
  #unexpected = 0;
  readonly #unexpectedSamples: string[] = [];
  /** The order of the reads, stream by stream (order.ts). Not in toJSON: it is about reads. */
  readonly #order = new OrderTracker();

  constructor(options: LedgerOptions) {
    if (typeof options.runId !== 'string' || options.runId === '') throw new RangeError('a ledger needs a non-empty runId');
    const capacity = options.capacity ?? DEFAULT_CAPACITY;
    if (!Number.isSafeInteger(capacity) || capacity < 0 || capacity > MAX_SEQUENCES) {
      throw new RangeError(`ledger capacity ${capacity} is not an integer in 0..${MAX_SEQUENCES}`);
    }
    this.runId = options.runId;
    this.#prefix = `${options.runId}-`;
    const initial = Math.max(capacity, 1);
    this.#flags = new Uint8Array(initial);
    this.#publishCounts = new Uint8Array(initial);
    this.#readCounts = new Uint16Array(initial);
  }

  /** Highest attempted sequence + 1. Equal to the number of attempted sequences when they have no gaps. */
  get attempted(): number {
    return this.#attempted;
  }

  /** How many sequences the arrays hold before the next doubling. */
  get capacity(): number {
    return this.#flags.length;
  }

  /** Every delivery of one of our attempted ids, exact even where a per-sequence count saturated. */
  get readTotal(): number {
    return this.#readTotal;
  }

  /** Reads that were not ours: another runId, a sequence never attempted, or not a message id at all. */
  get unexpected(): number {
    return this.#unexpected;
  }

  /** The first UNEXPECTED_SAMPLE_LIMIT unexpected ids, as read (cut at 200 characters). */
  get unexpectedSamples(): readonly string[] {
    return this.#unexpectedSamples;
  }

  /**
   * The producer is about to publish seq. Attempting a sequence a second time counts as a
   * republish, so the publish count stays honest whichever call the producer uses.
   */
  attempt(seq: number): void {
    checkSeq(seq);
    if (seq >= this.#flags.length) this.#grow(seq + 1);
    const flags = this.#flags[seq]!;
    if ((flags & Flag.attempted) !== 0) {
      this.republish(seq);
      return;
    }
    this.#flags[seq] = flags | Flag.attempted;
    this.#publishCounts[seq] = 1;
    if (seq >= this.#attempted) this.#attempted = seq + 1;
  }

  /** channel.publish returned: the message was handed to the socket. */
  written(seq: number): void {
    this.#mark(seq, Flag.written, 'written');
  }

  /** The broker acked it. */
  confirm(seq: number): void {
    this.#mark(seq, Flag.confirmed, 'confirm');
  }

  /** The broker nacked it. */
  nack(seq: number): void {
    this.#mark(seq, Flag.nacked, 'nack');
  }

  /** basic.return: mandatory and unroutable. A later ack for it does not make it safe. */
  returned(seq: number): void {
    this.#mark(seq, Flag.returned, 'returned');
  }

  /** No definite answer (a nack, a confirm timeout, a closed channel): it will be republished. */
  indeterminate(seq: number): void {
    this.#mark(seq, Flag.indeterminate, 'indeterminate');
  }

  /** Published once more: the publish count goes up (saturating at 255) and the republished flag is set. */
  republish(seq: number): void {
    this.#mark(seq, Flag.republished, 'republish');
    const count = this.#publishCounts[seq]!;
    if (count < MAX_PUBLISH_COUNT) this.#publishCounts[seq] = count + 1;
  }

  has(seq: number, flag: FlagName): boolean {
    return (this.flagsOf(seq) & Flag[flag]) !== 0;
  }

  /** The raw flag bits of seq (see Flag); 0 for a sequence never attempted. */
  flagsOf(seq: number): number {
    return seq < this.#attempted ? (this.#flags[seq] ?? 0) : 0;
  }

  /** Times seq was published (1 after attempt; saturates at 255); 0 if never attempted. */
  publishCount(seq: number): number {
    return seq < this.#attempted ? (this.#publishCounts[seq] ?? 0) : 0;
  }

  /** Times seq was read (saturates at 65535). */
  readCount(seq: number): number {
    return seq < this.#attempted ? (this.#readCounts[seq] ?? 0) : 0;
  }

  /**
   * Record one delivery, in the order it arrived. Anything not an attempted id of this run is
   * counted as unexpected. `from`: the queue (and consumer) it came from and the broker's
   * redelivered flag, for the order of the reads (order.ts); without it, the read goes to one
   * default stream. A read replayed from a count says so (`replayed`): the order is then unknown.
   */
  recordRead(id: string | undefined, from?: ReadSource): ReadOutcome {
    // Fast path, equivalent to parseMessageId(id).runId === this.runId: if what follows the
    // prefix is all digits, the last '-' is the prefix's own.
    if (typeof id === 'string' && id.length > this.#prefix.length && id.startsWith(this.#prefix)) {
      const seq = parseSeq(id.slice(this.#prefix.length));
      if (seq !== undefined && this.#isAttempted(seq)) return this.#read(seq, from);
    }
    return this.#unexpectedRead(id);
  }

  /** recordRead for a caller that already has the sequence number. */
  recordReadSeq(seq: number, from?: ReadSource): ReadOutcome {
    if (this.#isAttempted(seq)) return this.#read(seq, from);
    return this.#unexpectedRead(isSeq(seq) ? `${this.runId}-${seq}` : String(seq));
  }

  /** The order of the reads so far (order.ts); null once a read was replayed from a count. */
  orderReport(sampleLimit?: number): OrderReport | null {
    return this.#order.report(sampleLimit);
  }

  toJSON(): LedgerDocument {
    const n = this.#attempted;
    return {
      schemaVersion: 1,
      kind: 'ledger',
      runId: this.runId,
      attempted: n,
      flags: Buffer.from(this.#flags.buffer, this.#flags.byteOffset, n).toString('base64'),
      publishCounts: Buffer.from(this.#publishCounts.buffer, this.#publishCounts.byteOffset, n).toString('base64'),
    };
  }

  /**
   * A ledger back from its toJSON() form, with no reads. Anything malformed is a DataError
   * with one line naming `source` (the report file, say) and what is wrong.
   */
  static fromJSON(doc: unknown, source = 'ledger document'): Ledger {
    const fail = (what: string): never => {
      throw new DataError(`${source}: ${what}`);
    };
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
      fail(`expected an object, got ${doc === null ? 'null' : Array.isArray(doc) ? 'an array' : typeof doc}`);
    const d = doc as Record<string, unknown>;
    for (const key of ['schemaVersion', 'kind', 'runId', 'attempted', 'flags', 'publishCounts']) {
      if (!(key in d)) fail(`missing field '${key}'`);
    }
    if (d.schemaVersion !== 1) fail(`schemaVersion ${JSON.stringify(d.schemaVersion)} is not supported (expected 1)`);
    if (d.kind !== 'ledger') fail(`kind ${JSON.stringify(d.kind)} is not 'ledger'`);
    if (typeof d.runId !== 'string' || d.runId === '') fail(`runId must be a non-empty string, got ${JSON.stringify(d.runId)}`);
    const attempted = d.attempted;
    if (typeof attempted !== 'number' || !Number.isSafeInteger(attempted) || attempted < 0 || attempted > MAX_SEQUENCES) {
      fail(`attempted must be an integer in 0..${MAX_SEQUENCES}, got ${JSON.stringify(attempted)}`);
    }
    const n = attempted as number;
    const flags = decodeBase64(d.flags, 'flags', n, fail);
    const publishCounts = decodeBase64(d.publishCounts, 'publishCounts', n, fail);
    for (let seq = 0; seq < n; seq++) {
      const f = flags[seq]!;
      const count = publishCounts[seq]!;
      if ((f & ~KNOWN_BITS) !== 0) fail(`sequence ${seq} has unknown flag bits 0x${f.toString(16)}`);
      if ((f & Flag.attempted) === 0) {
        if (f !== 0 || count !== 0) fail(`sequence ${seq} has flags 0x${f.toString(16)} and publish count ${count} but was never attempted`);
      } else if (count === 0) {
        fail(`sequence ${seq} was attempted but its publish count is 0`);
      }
    }
    if (n > 0 && (flags[n - 1]! & Flag.attempted) === 0) fail(`attempted is ${n} but sequence ${n - 1} was never attempted`);

    const ledger = new Ledger({ runId: d.runId as string, capacity: n });
    ledger.#flags.set(flags);
    ledger.#publishCounts.set(publishCounts);
    ledger.#attempted = n;
    return ledger;
  }

  #isAttempted(seq: number): boolean {
    // A non-integer or negative index reads undefined, which & 1 turns into 0.
    return seq < this.#attempted && ((this.#flags[seq] ?? 0) & Flag.attempted) !== 0;
  }

  #mark(seq: number, bit: number, what: string): void {
    if (!this.#isAttempted(seq)) throw new RangeError(`ledger ${this.runId}: ${what}(${seq}) for a sequence never attempted`);
    this.#flags[seq] = this.#flags[seq]! | bit;
  }

  #read(seq: number, from: ReadSource | undefined): 'ours' {
    const count = this.#readCounts[seq]!;
    this.#order.record(seq, from, { readBefore: count > 0, sentAgain: (this.#flags[seq]! & (Flag.republished | Flag.indeterminate)) !== 0 });
    if (count < MAX_READ_COUNT) this.#readCounts[seq] = count + 1;
    this.#readTotal++;
    return 'ours';
  }

  #unexpectedRead(id: unknown): 'unexpected' {
    this.#unexpected++;
    if (this.#unexpectedSamples.length < UNEXPECTED_SAMPLE_LIMIT) this.#unexpectedSamples.push(sampleOf(id));
    return 'unexpected';
  }

  #grow(needed: number): void {
    let capacity = this.#flags.length;
    while (capacity < needed) capacity *= 2;
    capacity = Math.min(capacity, MAX_SEQUENCES);
    const flags = new Uint8Array(capacity);
    flags.set(this.#flags);
    const publishCounts = new Uint8Array(capacity);
    publishCounts.set(this.#publishCounts);
    const readCounts = new Uint16Array(capacity);
    readCounts.set(this.#readCounts);
    this.#flags = flags;
    this.#publishCounts = publishCounts;
    this.#readCounts = readCounts;
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(value: unknown, field: string, expectedBytes: number, fail: (what: string) => never): Uint8Array {
  if (typeof value !== 'string') return fail(`${field} must be a base64 string, got ${value === null ? 'null' : typeof value}`);
  // Buffer.from(…, 'base64') skips what it does not understand; check first, so garbage is an error.
  if (value.length % 4 !== 0 || !BASE64.test(value)) return fail(`${field} is not valid base64 (${value.length} characters)`);
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length !== expectedBytes) return fail(`${field} decodes to ${bytes.length} bytes, expected ${expectedBytes} (attempted)`);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}
