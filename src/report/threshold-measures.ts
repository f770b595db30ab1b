import type { ResultOf } from './kinds.js';
import type { ThresholdMeasures, ThresholdName } from './thresholds.js';

/**
 * The verdict commands that take thresholds, each with the figures it measures: the flags a
 * command takes are the names listed here (failover measures an election, not lost messages).
 * A command added here gets its flags from threshold-options.ts. Pure.
 */
interface MeasuresOf<R> {
  readonly names: readonly ThresholdName[];
  readonly measure: (r: R) => ThresholdMeasures;
}

const maxOf = (values: readonly (number | null | undefined)[]): number | null => {
  const known = values.filter((v): v is number => typeof v === 'number');
  return known.length === 0 ? null : Math.max(...known);
};

const compare: MeasuresOf<ResultOf<'compare'>> = {
  names: ['lost', 'duplicates', 'stall', 'election'],
  measure: (r) => ({
    lost: r.totals.reduce((a, t) => a + t.lost + t.silentlyLost, 0),
    duplicates: r.totals.reduce((a, t) => a + t.duplicated, 0),
    stall: maxOf(r.totals.map((t) => t.maxStallMs)),
    election: maxOf(r.runs.map((run) => run.fault?.electionMs)),
  }),
};

/** chaos: the confirming producers (the control producer, without confirms, is there to lose). */
const chaos: MeasuresOf<ResultOf<'chaos'>> = {
  names: ['lost', 'duplicates', 'stall'],
  measure: (r) => ({
    lost: r.totals.lost + r.totals.silentlyLost,
    duplicates: r.totals.duplicated,
    stall: maxOf(r.producers.filter((p) => p.confirms).map((p) => p.longestStallMs)),
  }),
};

const failover: MeasuresOf<ResultOf<'failover'>> = {
  names: ['election'],
  measure: (r) => ({ election: r.electionMs }),
};

/** producer-crash: both modes (naive restarts lose by design, as confirms off does in compare). */
const producerCrash: MeasuresOf<ResultOf<'producer-crash'>> = {
  names: ['lost', 'duplicates'],
  measure: (r) => ({ lost: r.totals.reduce((a, t) => a + t.lost, 0), duplicates: r.totals.reduce((a, t) => a + t.duplicated, 0) }),
};

/** consumer-crash: lost is confirmed and never processed; a duplicate, processed twice. */
const consumerCrash: MeasuresOf<ResultOf<'consumer-crash'>> = {
  names: ['lost', 'duplicates'],
  measure: (r) => ({ lost: r.runs.reduce((a, x) => a + x.lost, 0), duplicates: r.runs.reduce((a, x) => a + x.processedTwice, 0) }),
};

/** verify: over every ledger it reconciled. */
const verify: MeasuresOf<ResultOf<'verify'>> = {
  names: ['lost', 'duplicates'],
  measure: (r) => ({ lost: r.total ? r.total.lost + r.total.silentlyLost : null, duplicates: r.total ? r.total.duplicated : null }),
};

export const THRESHOLD_KINDS = { compare, chaos, failover, 'producer-crash': producerCrash, 'consumer-crash': consumerCrash, verify } as const;

export type ThresholdKind = keyof typeof THRESHOLD_KINDS;

/** The figures of a result of one of these kinds. */
export function measuresOf<K extends ThresholdKind>(kind: K, r: ResultOf<K>): ThresholdMeasures {
  return (THRESHOLD_KINDS[kind] as MeasuresOf<ResultOf<K>>).measure(r);
}
