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

export const THRESHOLD_KINDS = { compare, chaos, failover } as const;

export type ThresholdKind = keyof typeof THRESHOLD_KINDS;

/** The figures of a result of one of these kinds. */
export function measuresOf<K extends ThresholdKind>(kind: K, r: ResultOf<K>): ThresholdMeasures {
  return (THRESHOLD_KINDS[kind] as MeasuresOf<ResultOf<K>>).measure(r);
}
