import { formatDuration } from '../util/duration.js';

/**
 * Thresholds a CI job holds a verdict command to (`--max-lost 0 --max-stall 5s`): each names one
 * figure of the run, and a run past one fails its verdict (exit 1), the output naming the
 * threshold and the value ("lost 12 > --max-lost 0"). Pure: the figures come from the result
 * (threshold-measures.ts), the limits from the command line (validated there).
 */
export const THRESHOLDS = {
  lost: { flag: '--max-lost', unit: 'count', help: 'messages written and never read, confirmed or not (lost + silently lost)' },
  duplicates: { flag: '--max-duplicates', unit: 'count', help: 'messages read more than once' },
  stall: { flag: '--max-stall', unit: 'ms', help: 'the longest stretch a producer made no progress (no message written, no confirm)' },
  election: { flag: '--max-election', unit: 'ms', help: 'the longest time from the fault to a new leader' },
} as const;

export type ThresholdName = keyof typeof THRESHOLDS;

export const THRESHOLD_NAMES = Object.keys(THRESHOLDS) as ThresholdName[];

/** The limits given on the command line: a count, or milliseconds for the durations. */
export type ThresholdLimits = Partial<Record<ThresholdName, number>>;

/** A run's figures: null when the run did not measure one (no leader was faulted: no election). */
export type ThresholdMeasures = Partial<Record<ThresholdName, number | null>>;

/** One threshold held against the run, as the --json document lists it. */
export interface ThresholdCheck {
  readonly name: ThresholdName;
  readonly flag: string;
  /** The limit, and the value measured (counts, or milliseconds); null: not measured. */
  readonly limit: number;
  readonly value: number | null;
  readonly ok: boolean;
  /** "lost 12 > --max-lost 0", "stall 1.2s <= --max-stall 5s", "election not measured (--max-election 5s)". */
  readonly message: string;
}

export interface ThresholdReport {
  /** Every check passed (true when none was given). */
  readonly ok: boolean;
  readonly checks: readonly ThresholdCheck[];
}

const shown = (name: ThresholdName, v: number): string => (THRESHOLDS[name].unit === 'ms' ? formatDuration(v) : String(v));

/**
 * Each limit given, in THRESHOLDS' order, against its figure. A figure at the limit passes; above
 * it fails; a figure the run did not measure fails too: a threshold a CI job relies on must never
 * pass silently for want of a number.
 */
export function checkThresholds(limits: ThresholdLimits, measures: ThresholdMeasures): ThresholdReport {
  const checks: ThresholdCheck[] = [];
  for (const name of THRESHOLD_NAMES) {
    const limit = limits[name];
    if (limit === undefined) continue;
    const { flag } = THRESHOLDS[name];
    const value = measures[name] ?? null;
    const ok = value !== null && value <= limit;
    const message =
      value === null
        ? `${name} not measured (${flag} ${shown(name, limit)})`
        : `${name} ${shown(name, value)} ${ok ? '<=' : '>'} ${flag} ${shown(name, limit)}`;
    checks.push({ name, flag, limit, value, ok, message });
  }
  return { ok: checks.every((c) => c.ok), checks };
}

/** The lines a report ends with when thresholds were given; '' when none was. */
export function renderThresholds(report: ThresholdReport): string {
  if (report.checks.length === 0) return '';
  const failed = report.checks.filter((c) => !c.ok);
  return [
    'thresholds:',
    ...report.checks.map((c) => `  ${c.ok ? 'OK    ' : 'FAILED'}  ${c.message}`),
    failed.length === 0 ? 'thresholds: OK' : `thresholds: FAILED (${failed.map((c) => c.message).join('; ')})`,
  ].join('\n');
}
