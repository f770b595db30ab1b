import type { FaultKind } from '../../faults/kinds.js';
import type { Reconciliation } from '../../ledger/reconcile.js';
import type { ProducerCrashMode } from './producer-crash-modes.js';

/**
 * producer-crash's data: its options, each run as measured, the totals per mode, and the verdict
 * on the claim under test (the outbox loses nothing). Pure.
 */

export interface ProducerCrashOptions {
  /** Events the application means to send, per run and mode. */
  count: number;
  /** SIGKILLs per run and mode. */
  kills: number;
  runs: number;
  modes: ProducerCrashMode[];
  /** Events the application produces per second (0: as fast as it can). */
  ratePerSec: number;
  /** naive: the producer logs `sent <n>` every this many messages. */
  printEvery: number;
  /** The kill points (and the fault point) follow from it: a run can be repeated. */
  seed: number;
  fault: FaultKind | 'none';
  /** A child that has not finished within this is killed and the run fails. */
  childTimeoutMs: number;
  electionTimeoutMs: number;
  rejoinTimeoutMs: number;
  /** The draining consumer stops once nothing arrived for this long (and the queue is empty). */
  drainIdleMs: number;
}

export interface KillRecord {
  /** Which start of the producer (1 = the first) was killed. */
  life: number;
  /** The planned point: events past it (naive: messages sent; outbox: rows published). */
  plannedAt: number;
  /** The position that triggered the SIGKILL. */
  triggeredAt: number;
  /** The last position the killed child reported (it runs on for a moment after the trigger). */
  atPosition: number;
  /** naive: where the next start resumed (last logged number + 1). */
  restartFrom: number | null;
}

export interface ProducerCrashFault {
  kind: FaultKind;
  /** The position (as for kills) that triggered it. */
  atPosition: number;
  node: string | null;
  newLeader: string | null;
  electionMs: number | null;
  error: string | null;
}

export interface ProducerCrashRun {
  mode: ProducerCrashMode;
  run: number;
  queue: string;
  runId: string;
  /** The planned kill points, ascending. */
  killPlan: number[];
  kills: KillRecord[];
  /** Starts of the producer, the last one ran to completion. */
  starts: number;
  intended: number;
  /** Distinct events read from the queue. */
  read: number;
  /** Intended, never read. */
  lost: number;
  /** Events read more than once. */
  duplicated: number;
  /** Deliveries beyond the first of each event. */
  extraDeliveries: number;
  /** The draining consumer, idempotent (SQLite store of processed ids). */
  idempotent: { received: number; processed: number; duplicatesRemoved: number; processedTwice: number };
  /** outbox: the table at the end (every row should be published). */
  outbox: { written: number; pending: number; published: number; integrity: string } | null;
  fault: ProducerCrashFault | null;
  /** Every drained delivery against the intended events (outbox: published rows count as confirmed). */
  reconciliation: Reconciliation;
  leftInQueue: number;
}

export interface ProducerCrashTotals {
  mode: ProducerCrashMode;
  runs: number;
  intended: number;
  kills: number;
  read: number;
  lost: number;
  duplicated: number;
  extraDeliveries: number;
  duplicatesRemoved: number;
  processed: number;
  processedTwice: number;
  runsWithLoss: number;
  runsWithDuplicates: number;
}

export interface ProducerCrashResult {
  options: ProducerCrashOptions;
  runs: ProducerCrashRun[];
  totals: ProducerCrashTotals[];
  /** The outbox lost nothing, nothing unexpected was read, no outbox row was left pending. */
  ok: boolean;
  reasons: string[];
}

/** Totals of one mode over the runs. Pure. */
export function totalsFor(mode: ProducerCrashMode, runs: readonly ProducerCrashRun[]): ProducerCrashTotals {
  const rs = runs.filter((r) => r.mode === mode);
  const sum = (f: (r: ProducerCrashRun) => number): number => rs.reduce((a, r) => a + f(r), 0);
  return {
    mode,
    runs: rs.length,
    intended: sum((r) => r.intended),
    kills: sum((r) => r.kills.length),
    read: sum((r) => r.read),
    lost: sum((r) => r.lost),
    duplicated: sum((r) => r.duplicated),
    extraDeliveries: sum((r) => r.extraDeliveries),
    duplicatesRemoved: sum((r) => r.idempotent.duplicatesRemoved),
    processed: sum((r) => r.idempotent.processed),
    processedTwice: sum((r) => r.idempotent.processedTwice),
    runsWithLoss: rs.filter((r) => r.lost > 0).length,
    runsWithDuplicates: rs.filter((r) => r.duplicated > 0).length,
  };
}

/** The claim under test. Pure. */
export function verdictOf(runs: readonly ProducerCrashRun[]): { ok: boolean; reasons: string[] } {
  const reasons: string[] = [];
  for (const r of runs) {
    const label = `${r.mode} run ${r.run}`;
    if (r.mode === 'outbox' && r.lost > 0) reasons.push(`${label}: ${r.lost} of ${r.intended} events never read`);
    if (r.mode === 'outbox' && r.outbox && r.outbox.pending > 0) reasons.push(`${label}: ${r.outbox.pending} outbox rows still pending`);
    if (r.mode === 'outbox' && r.outbox && r.outbox.integrity !== 'ok') reasons.push(`${label}: outbox integrity check: ${r.outbox.integrity}`);
    if (r.reconciliation.counts.unexpected > 0) reasons.push(`${label}: ${r.reconciliation.counts.unexpected} unexpected messages read`);
    if (r.idempotent.processedTwice > 0) reasons.push(`${label}: the idempotent consumer processed ${r.idempotent.processedTwice} events twice`);
  }
  return { ok: reasons.length === 0, reasons };
}
