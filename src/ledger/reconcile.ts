import { Flag, type Ledger } from './ledger.js';
import type { OrderReport } from './order.js';

export type { OrderCounts, OrderReport, StreamOrder } from './order.js';

/**
 * Ledger → what happened to every message, named as in Jepsen's total-queue checker. Pure: one
 * pass over the ledger's arrays, no I/O, nothing printed.
 *
 * Every attempted sequence that was read 0 times falls in exactly one bucket, tried in this order
 * (the first that matches wins):
 *
 *   1. lost                 confirmed and not returned: the broker took responsibility and lost
 *                           it. A mandatory return followed by an ack is not a safe confirm.
 *   2. neverWritten         not written: it never left the process (the connection was down),
 *                           whatever else was recorded about it.
 *   3. knownFailed          nacked or returned: the producer was told it failed.
 *   4. indeterminateUnread  ever indeterminate, with no confirm, nack or return.
 *   5. silentlyLost         written, with no confirm, nack, return, nor indeterminate: the
 *                           producer had no signal at all (every unread message when confirms
 *                           are off).
 *
 * Bucket 5 is exactly what remains after 1–4, so the accounts balance:
 *   readDistinct + lost + neverWritten + knownFailed + indeterminateUnread + silentlyLost = attempted.
 *
 * Besides the buckets, the order in which the reads arrived (order.ts): reads out of order, those
 * a redelivery or a resend explains, the unexplained rest, and the largest gap. Order never
 * changes the verdict: unexplained disorder is a finding the printers state, not a lost message.
 */

export interface ReconcileCounts {
  /** Sequences the producer tried to publish. */
  attempted: number;
  written: number;
  /** Confirmed at least once. */
  confirmed: number;
  nacked: number;
  returned: number;
  /** Indeterminate at least once. */
  indeterminate: number;
  republished: number;
  /** Sequences read at least once. */
  readDistinct: number;
  /** Every delivery of one of our ids. */
  readTotal: number;
  /** Reads that were not ours. */
  unexpected: number;
}

export interface Reconciliation {
  runId: string;
  counts: ReconcileCounts;
  /** Confirmed (and not returned), never read. */
  lost: number;
  /** Written with no signal of success or failure, never read. */
  silentlyLost: number;
  /** Nacked or returned and never safely confirmed, never read: the producer knew. */
  knownFailed: number;
  /** Indeterminate, never confirmed, nacked or returned, never read. */
  indeterminateUnread: number;
  /** Indeterminate at some point, yet read. */
  recovered: number;
  /** Sequences read more than once. */
  duplicated: number;
  /** Sum over sequences of (reads − 1): deliveries beyond the first. */
  duplicateDeliveries: number;
  /** Attempted, never written, never read. */
  neverWritten: number;
  /** Up to sampleLimit sequences each (ascending), and up to the ledger's 20 unexpected ids. */
  samples: { lost: number[]; silentlyLost: number[]; duplicated: number[]; unexpected: string[] };
  /**
   * The order the reads arrived in, stream by stream (order.ts); null when it was not observed
   * (reads replayed from a store's counts). Not part of the verdict.
   */
  order: OrderReport | null;
  /** ok: no confirmed message lost and nothing unexpected read (order plays no part). reasons: why not, one line each; empty when ok. */
  verdict: { ok: boolean; reasons: string[] };
  /** What to do about the rest, one line each. */
  advice: string[];
}

export interface ReconcileOptions {
  /** Sequences kept per sample list; default 20. */
  sampleLimit?: number;
}

const DEFAULT_SAMPLE_LIMIT = 20;

const { attempted: A, written: W, confirmed: C, nacked: N, returned: R, indeterminate: I, republished: P } = Flag;

export function reconcile(ledger: Ledger, options: ReconcileOptions = {}): Reconciliation {
  const sampleLimit = options.sampleLimit ?? DEFAULT_SAMPLE_LIMIT;
  if (!(Number.isInteger(sampleLimit) || sampleLimit === Infinity) || sampleLimit < 0) {
    throw new RangeError(`sampleLimit ${sampleLimit} is not a non-negative integer`);
  }
  const counts: ReconcileCounts = {
    attempted: 0,
    written: 0,
    confirmed: 0,
    nacked: 0,
    returned: 0,
    indeterminate: 0,
    republished: 0,
    readDistinct: 0,
    readTotal: ledger.readTotal,
    unexpected: ledger.unexpected,
  };
  let lost = 0;
  let silentlyLost = 0;
  let knownFailed = 0;
  let indeterminateUnread = 0;
  let recovered = 0;
  let duplicated = 0;
  let neverWritten = 0;
  const samples: Reconciliation['samples'] = {
    lost: [],
    silentlyLost: [],
    duplicated: [],
    unexpected: ledger.unexpectedSamples.slice(0, sampleLimit),
  };

  const n = ledger.attempted;
  for (let seq = 0; seq < n; seq++) {
    const f = ledger.flagsOf(seq);
    if ((f & A) === 0) continue;
    counts.attempted++;
    if (f & W) counts.written++;
    if (f & C) counts.confirmed++;
    if (f & N) counts.nacked++;
    if (f & R) counts.returned++;
    if (f & I) counts.indeterminate++;
    if (f & P) counts.republished++;

    const reads = ledger.readCount(seq);
    if (reads > 0) {
      counts.readDistinct++;
      if (f & I) recovered++;
      if (reads > 1) {
        duplicated++;
        if (samples.duplicated.length < sampleLimit) samples.duplicated.push(seq);
      }
      continue;
    }
    // Unread: exactly one bucket, in the order documented at the top of this file.
    if ((f & C) !== 0 && (f & R) === 0) {
      lost++;
      if (samples.lost.length < sampleLimit) samples.lost.push(seq);
    } else if ((f & W) === 0) {
      neverWritten++;
    } else if ((f & (N | R)) !== 0) {
      knownFailed++;
    } else if ((f & I) !== 0) {
      indeterminateUnread++;
    } else {
      silentlyLost++;
      if (samples.silentlyLost.length < sampleLimit) samples.silentlyLost.push(seq);
    }
  }

  // Exact even where a per-sequence read count saturated: the ledger counts every delivery.
  const duplicateDeliveries = counts.readTotal - counts.readDistinct;
  const buckets = { lost, silentlyLost, knownFailed, indeterminateUnread, neverWritten };
  return {
    runId: ledger.runId,
    counts,
    ...buckets,
    recovered,
    duplicated,
    duplicateDeliveries,
    samples,
    order: ledger.orderReport(sampleLimit === Infinity ? undefined : sampleLimit),
    verdict: verdictOf(lost, counts.unexpected),
    advice: adviceOf(counts, buckets, duplicated, duplicateDeliveries),
  };
}

/** The invariant: every attempted sequence is read, or in exactly one unread bucket. */
export function accountsBalance(r: Reconciliation): boolean {
  return r.counts.readDistinct + r.lost + r.silentlyLost + r.knownFailed + r.indeterminateUnread + r.neverWritten === r.counts.attempted;
}

function messages(n: number): string {
  return n === 1 ? '1 message' : `${n} messages`;
}

function was(n: number): string {
  return n === 1 ? 'was' : 'were';
}

function verdictOf(lost: number, unexpected: number): Reconciliation['verdict'] {
  const reasons: string[] = [];
  if (lost > 0) reasons.push(`${lost} confirmed ${lost === 1 ? 'message' : 'messages'} ${was(lost)} never read (lost)`);
  if (unexpected > 0) reasons.push(`${messages(unexpected)} read that ${was(unexpected)} never published (unexpected)`);
  return { ok: reasons.length === 0, reasons };
}

function adviceOf(
  counts: ReconcileCounts,
  b: { silentlyLost: number; knownFailed: number; indeterminateUnread: number; neverWritten: number },
  duplicated: number,
  duplicateDeliveries: number,
): string[] {
  const advice: string[] = [];
  if (b.silentlyLost > 0) {
    advice.push(`${b.silentlyLost} of ${counts.attempted} messages ${was(b.silentlyLost)} written without a confirm and never read (silently lost)`);
  }
  if (b.knownFailed > 0) {
    advice.push(`${messages(b.knownFailed)} ${was(b.knownFailed)} nacked or returned and never read (known failed): republish them, or alert on them`);
  }
  if (b.indeterminateUnread > 0) {
    advice.push(
      `${messages(b.indeterminateUnread)} had no definite answer and ${was(b.indeterminateUnread)} never read (indeterminate): republish until confirmed`,
    );
  }
  if (b.neverWritten > 0) {
    advice.push(
      `${messages(b.neverWritten)} ${was(b.neverWritten)} never written to the socket (never written): buffer and retry while the connection is down`,
    );
  }
  if (duplicated > 0) {
    const extra = duplicateDeliveries === duplicated ? '' : ` (${duplicateDeliveries} extra deliveries)`;
    advice.push(`${messages(duplicated)} ${was(duplicated)} delivered more than once${extra}: make consumers idempotent`);
  }
  return advice;
}
