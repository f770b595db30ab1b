import { type Ledger, parseMessageId, sampleOf, type ReadOutcome, type ReadRecorder, type ReadSource, UNEXPECTED_SAMPLE_LIMIT } from './ledger.js';
import type { ReconcileCounts, Reconciliation } from './reconcile.js';

/**
 * Several producers' ledgers against one queue: each read goes to the ledger of the run its
 * message id names (`<runId>-<seq>`, so ids stay unique across processes without any
 * coordination), and the reconciliations add up to one total. Pure: no I/O, nothing printed.
 *
 * With one ledger every read is that ledger's, as recordRead has it: an id of another run is its
 * unexpected read. With several, an id whose run is none of theirs (or no message id at all) is
 * foreign: counted once, in the total, in no ledger. An id of one of their runs with a sequence
 * that run never attempted is that ledger's unexpected read.
 */

/** Reads whose id names none of the ledgers' runs. */
export interface ForeignReads {
  count: number;
  /** The first UNEXPECTED_SAMPLE_LIMIT ids, as read (cut as the ledger cuts them). */
  samples: string[];
}

/** Routes each read to the ledger of its run id. */
export class LedgerRouter implements ReadRecorder {
  readonly #byRun = new Map<string, Ledger>();
  readonly #only: Ledger | undefined;
  #foreign = 0;
  readonly #foreignSamples: string[] = [];

  /** RangeError for no ledger, or for two of one run id (the caller names the files first: duplicateRunIds). */
  constructor(ledgers: readonly Ledger[]) {
    if (ledgers.length === 0) throw new RangeError('a router needs at least one ledger');
    for (const l of ledgers) {
      if (this.#byRun.has(l.runId)) throw new RangeError(`two ledgers of run ${l.runId}`);
      this.#byRun.set(l.runId, l);
    }
    this.#only = ledgers.length === 1 ? ledgers[0] : undefined;
  }

  /** Reads whose id names none of the ledgers' runs (always none with one ledger: they are its unexpected reads). */
  get foreign(): ForeignReads {
    return { count: this.#foreign, samples: [...this.#foreignSamples] };
  }

  recordRead(id: string | undefined, from?: ReadSource): ReadOutcome {
    if (this.#only) return this.#only.recordRead(id, from);
    const parsed = id === undefined ? undefined : parseMessageId(id);
    const ledger = parsed === undefined ? undefined : this.#byRun.get(parsed.runId);
    if (ledger) return ledger.recordRead(id, from);
    this.#foreign++;
    if (this.#foreignSamples.length < UNEXPECTED_SAMPLE_LIMIT) this.#foreignSamples.push(sampleOf(id));
    return 'unexpected';
  }
}

/** Run ids found in more than one ledger, each with the files that hold it, in the order given. */
export function duplicateRunIds(entries: readonly { file: string; runId: string }[]): { runId: string; files: string[] }[] {
  const files = new Map<string, string[]>();
  for (const e of entries) files.set(e.runId, [...(files.get(e.runId) ?? []), e.file]);
  return [...files].filter(([, f]) => f.length > 1).map(([runId, f]) => ({ runId, files: f }));
}

/** One producer's ledger, reconciled. */
export interface LedgerRow {
  /** The file it was read from, as given (or found in a given folder). */
  file: string;
  runId: string;
  /** The queue its producer published to (the report's). */
  queue: string;
  reconciliation: Reconciliation;
}

/** The unread buckets and the read-side counts every reconciliation has, summed. */
const SUMMED = ['lost', 'silentlyLost', 'knownFailed', 'indeterminateUnread', 'neverWritten', 'recovered', 'duplicated', 'duplicateDeliveries'] as const;
type Summed = (typeof SUMMED)[number];

/** The ledgers together: every count the sum of the ledgers', the foreign reads added to `unexpected`. */
export type ReconcileTotal = { [K in Summed]: number } & {
  ledgers: number;
  counts: ReconcileCounts;
  /** Reads of none of the ledgers (in counts.unexpected too, and in no ledger's). */
  foreign: ForeignReads;
  /** ok: every ledger's verdict ok and no foreign read. reasons: each failed ledger's, named by its file, then the foreign reads. */
  verdict: { ok: boolean; reasons: string[] };
};

const COUNT_KEYS = [
  'attempted',
  'written',
  'confirmed',
  'nacked',
  'returned',
  'indeterminate',
  'republished',
  'readDistinct',
  'readTotal',
  'unexpected',
] as const satisfies readonly (keyof ReconcileCounts)[];

/** The total of the ledgers' reconciliations and the foreign reads. */
export function totalOf(rows: readonly LedgerRow[], foreign: ForeignReads): ReconcileTotal {
  const counts = Object.fromEntries(COUNT_KEYS.map((k) => [k, 0])) as unknown as ReconcileCounts;
  const sums = Object.fromEntries(SUMMED.map((k) => [k, 0])) as { [K in Summed]: number };
  const reasons: string[] = [];
  for (const { file, reconciliation: r } of rows) {
    for (const k of COUNT_KEYS) counts[k] += r.counts[k];
    for (const k of SUMMED) sums[k] += r[k];
    for (const reason of r.verdict.reasons) reasons.push(`${file}: ${reason}`);
  }
  counts.unexpected += foreign.count;
  if (foreign.count > 0) {
    const n = foreign.count;
    reasons.push(`${n === 1 ? '1 message' : `${n} messages`} read whose id is of none of the ${rows.length} ledgers (unexpected)`);
  }
  const ok = rows.every((r) => r.reconciliation.verdict.ok) && foreign.count === 0;
  return { ledgers: rows.length, counts, ...sums, foreign, verdict: { ok, reasons } };
}
