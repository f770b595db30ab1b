import type { FaultKind } from '../../faults/kinds.js';
import { median } from '../../measure/median.js';

/**
 * dlq-demo --strategy, the pure part: the queue arguments of each dead-lettering variant, what
 * a run measured, and what the runs add up to. No I/O (dlx-strategy.ts runs them).
 *
 * RabbitMQ's claims checked here (the quorum queue and dead-lettering guides): at-most-once, the
 * default, may lose a dead letter when its target is unavailable; at-least-once keeps it in the
 * source queue until the target has confirmed it, and needs `overflow: reject-publish` (with
 * another overflow the queue falls back to at-most-once).
 */

export const DLX_VARIANTS = ['at-most-once', 'at-least-once', 'at-least-once-drop-head'] as const;
export type DlxVariant = (typeof DLX_VARIANTS)[number];

export const VARIANT_DESCRIPTIONS: Record<DlxVariant, string> = {
  'at-most-once': 'x-dead-letter-strategy at-most-once (the default)',
  'at-least-once': 'x-dead-letter-strategy at-least-once with x-overflow reject-publish',
  'at-least-once-drop-head': 'x-dead-letter-strategy at-least-once with x-overflow drop-head (the pairing RabbitMQ requires left out)',
};

/** What the docs lead one to expect of each variant (the verdict holds only at-least-once to it). */
const VARIANT_CLAIMS: Record<DlxVariant, string> = {
  'at-most-once': 'may lose dead letters while the target is unavailable',
  'at-least-once': 'loses no dead letter: the source queue keeps each one until the target confirms it',
  'at-least-once-drop-head': 'falls back to at-most-once',
};

/** --strategy values: one variant, both (the two strategies), or all three. */
export function strategyVariants(value: string): DlxVariant[] | undefined {
  if (value === 'both') return ['at-most-once', 'at-least-once'];
  if (value === 'all') return [...DLX_VARIANTS];
  return (DLX_VARIANTS as readonly string[]).includes(value) ? [value as DlxVariant] : undefined;
}

export const STRATEGY_FAULTS = ['pause', 'kill'] as const satisfies readonly FaultKind[];
export type StrategyFault = (typeof STRATEGY_FAULTS)[number];

export interface DlxStrategyOptions {
  variants: DlxVariant[];
  fault: StrategyFault;
  /** Messages published to the source queue, then rejected (requeue=false) while the DLQ's leader is faulted. */
  count: number;
  /** How long the DLQ's leader stays faulted (the rejections happen within it). */
  holdMs: number;
  runs: number;
}

/** The broker's default for dead_letter_worker_publisher_confirm_timeout (rabbit's app env in 4.3). */
const DEFAULT_WORKER_RETRY_MS = 180_000;

/**
 * at-least-once, after the restore: how long to wait for every dead letter to reach the DLQ:
 * the worker's retry period and a minute (measured after a pause: 8.9 to 65 s, also with the
 * period set to 3 s, so it is not what sets the pace). What is missing then is counted as held
 * if the source still reports it, lost otherwise. Pure.
 */
export function settleTimeoutMs(workerRetryMs: number): number {
  return workerRetryMs + 60_000;
}

/** kernel's net_ticktime when a node does not say (rabbit_fifo_client's own default). */
const DEFAULT_NET_TICKTIME_S = 60;

/**
 * How long a quorum queue client waits for a synchronous command, such as the registration
 * its first publish to a queue sends: net_ticktime + 5 s (rabbit_fifo_client:init/2). Pure.
 */
export function registrationTimeoutMs(netTicktimeS: number): number {
  return (netTicktimeS + 5) * 1000;
}

/**
 * What one erl_call (or `rabbitmqctl eval`) printed for the two settings, in this order:
 * rabbit's dead_letter_worker_publisher_confirm_timeout and kernel's net_ticktime, each
 * `{ok,N}` or `undefined` (the defaults then). Pure.
 */
export function parseNodeSettings(output: string): { workerRetryMs: number; netTicktimeS: number } {
  const values = [...output.matchAll(/\{ok,\s*(\d+)\}|undefined/g)].map((m) => (m[1] === undefined ? undefined : Number(m[1])));
  return { workerRetryMs: values[0] ?? DEFAULT_WORKER_RETRY_MS, netTicktimeS: values[1] ?? DEFAULT_NET_TICKTIME_S };
}

/**
 * Whether an at-least-once run's dead letters waited out the dead-letter worker's registration
 * with the DLQ. The worker's first dead letter for a queue registers it as a publisher there,
 * in a blocking call to the leader it knows, which times out after net_ticktime + 5 s. Sent to
 * a paused leader that the others replace meanwhile, the call is never answered (the paused
 * node wakes up, appends it to a log the new leader overwrites, and steps down): every held
 * dead letter leaves only after the timeout (seen on 4.3.6: the worker's stack in
 * rabbit_fifo_client:enqueue/4, 65 s after the first rejection). Here: the fault was a pause,
 * the DLQ's leader changed, and the time from the first rejection to the last dead letter in
 * the DLQ is that timeout, give or take the poll and the delivery. Pure.
 */
export function waitedOutRegistration(run: StrategyRun, netTicktimeS: number): boolean {
  if (run.variant === 'at-most-once' || run.fault !== 'pause') return false;
  if (run.settledMs === null || run.restoredAtMs === null || run.firstRejectedAtMs === null) return false;
  if (run.dlqLeaderAfter === null || run.dlqLeaderAfter === run.dlqLeader) return false;
  const waitedMs = run.restoredAtMs + run.settledMs - run.firstRejectedAtMs;
  const timeoutMs = registrationTimeoutMs(netTicktimeS);
  return waitedMs >= timeoutMs - 1_000 && waitedMs <= timeoutMs + 10_000;
}

interface DlxNames {
  source: string;
  dlq: string;
  dlx: string;
}

export function dlxNames(variant: DlxVariant): DlxNames {
  const base = `rmq-bench.dlx-strategy.${variant}`;
  return { source: `${base}.source`, dlq: `${base}.dlq`, dlx: `${base}.dlx` };
}

/** The source queue's arguments. Pure. */
export function sourceArguments(variant: DlxVariant, dlx: string): Record<string, string> {
  return {
    'x-queue-type': 'quorum',
    'x-dead-letter-exchange': dlx,
    'x-dead-letter-strategy': variant === 'at-most-once' ? 'at-most-once' : 'at-least-once',
    ...(variant === 'at-least-once' ? { 'x-overflow': 'reject-publish' } : variant === 'at-least-once-drop-head' ? { 'x-overflow': 'drop-head' } : {}),
  };
}

export interface StrategyRun {
  variant: DlxVariant;
  /** 1-based. */
  run: number;
  fault: StrategyFault;
  dlqLeader: string;
  /** The DLQ's leader once the run had settled (null: not known): another node when the fault cost it the leadership. */
  dlqLeaderAfter: string | null;
  sourceLeader: string;
  published: number;
  rejected: number;
  /** Rejected before the DLQ's leader was restored. */
  rejectedDuringFault: number;
  /** Distinct messages in the DLQ once the source had handed over what it held (or the settle wait ended). */
  inDlq: number;
  /** Extra copies in the DLQ (at-least-once resends a dead letter whose confirm it did not get). */
  duplicatesInDlq: number;
  /** Still in the source queue at the end (at-least-once: dead letters it holds, messages_dlx). */
  leftInSource: number;
  lost: number;
  /** ms since the run's publish: fault issued, restored, node back. */
  faultAtMs: number | null;
  restoredAtMs: number | null;
  rejoinedAtMs: number | null;
  /** ms since the run's publish: the first message rejected (its dead letter's journey starts). */
  firstRejectedAtMs: number | null;
  /** Restore → the source holding nothing more for the DLQ; null: it still held some at the end of the wait. */
  settledMs: number | null;
  /** Dead letters the source still held for the DLQ when the wait ended (part of leftInSource). */
  heldAtEnd: number;
  /** The dead letters waited out the worker's registration call to the paused, replaced leader (waitedOutRegistration). */
  waitedOutRegistration: boolean;
  problems: string[];
}

export interface VariantSummary {
  variant: DlxVariant;
  setBy: string;
  claim: string;
  runs: number;
  published: number;
  lost: number;
  lostPerRun: number[];
  medianLost: number;
  /** Whether the variant kept every dead letter in every run. */
  keptAll: boolean;
}

export interface DlxStrategyResult {
  mode: 'strategy';
  brokerVersion: string;
  /** dead_letter_worker_publisher_confirm_timeout on the first node (how often the worker resends what is unconfirmed). */
  workerRetryMs: number;
  /** kernel's net_ticktime on the first node, s: a quorum queue client's synchronous calls time out after it + 5 s. */
  netTicktimeS: number;
  fault: StrategyFault;
  count: number;
  holdMs: number;
  runs: StrategyRun[];
  summaries: VariantSummary[];
  ok: boolean;
  problems: string[];
}

/** Lost = published − in the DLQ − still in the source (never negative: a duplicate would show as a problem instead). Pure. */
export function countLost(published: number, inDlq: number, leftInSource: number): number {
  return Math.max(0, published - inDlq - leftInSource);
}

/** Per variant, in the order given; the verdict: at-least-once (with reject-publish) lost nothing, and every run did what it set out to. Pure. */
export function summarizeStrategies(
  variants: readonly DlxVariant[],
  runs: readonly StrategyRun[],
): { summaries: VariantSummary[]; ok: boolean; problems: string[] } {
  const summaries = variants.map((variant): VariantSummary => {
    const mine = runs.filter((r) => r.variant === variant);
    const lostPerRun = mine.map((r) => r.lost);
    const lost = lostPerRun.reduce((a, b) => a + b, 0);
    return {
      variant,
      setBy: VARIANT_DESCRIPTIONS[variant],
      claim: VARIANT_CLAIMS[variant],
      runs: mine.length,
      published: mine.reduce((a, r) => a + r.published, 0),
      lost,
      lostPerRun,
      medianLost: median(lostPerRun),
      keptAll: lost === 0 && mine.every((r) => r.leftInSource === 0),
    };
  });
  const problems = runs.flatMap((r) => r.problems.map((p) => `${r.variant} run ${r.run}: ${p}`));
  const alo = summaries.find((s) => s.variant === 'at-least-once');
  if (alo && alo.lost > 0) problems.push(`at-least-once lost ${alo.lost} of ${alo.published} dead letters`);
  return { summaries, ok: problems.length === 0, problems };
}
