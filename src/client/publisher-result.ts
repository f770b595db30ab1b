import type { Ledger } from '../ledger/ledger.js';
import type { LatencySummary } from '../measure/histogram.js';
import type { FlushOutcome, TimelineEvent } from './publish-loop.js';
import type { PublishMode } from './publish-rules.js';

/** What runPublisher returns: the run's figures, its samples, and how they are counted from the ledger. */

export interface PublisherResult {
  runId: string;
  mode: PublishMode;
  count: number;
  /** Distinct messages handed to the socket at least once (what a producer without confirms reports as sent). */
  written: number;
  /** All publish calls, republishes included. */
  publishes: number;
  confirmed: number;
  nacked: number;
  returned: number;
  indeterminate: number;
  republished: number;
  reconnects: number;
  /** The most confirms (or uncommitted tx messages) outstanding at once. */
  maxInFlight: number;
  startedAtIso: string;
  durationMs: number;
  publishRatePerSec: number;
  confirmLatency: LatencySummary;
  confirmLatencyAroundFault: LatencySummary;
  /** Longest stretch with no message written and no confirm received. */
  longestStallMs: number;
  /** connection.blocked notifications (resource alarms), and the time spent blocked (ms). */
  blocks: number;
  blockedMs: number;
  /**
   * How the end went (undefined: no connection was open at the end). Without confirms, a channel
   * close that timed out means the broker had not read everything written.
   */
  flush: FlushOutcome | undefined;
  /**
   * The run reached its end: every message ended confirmed (confirm modes) or written (none), or
   * was refused by the broker MAX_REFUSALS times and given up (refusedGivenUp); false when the run
   * gave up or was interrupted.
   */
  completed: boolean;
  /** Ctrl+C stopped it: the figures are what was measured until then. */
  interrupted: boolean;
  gaveUp: string | null;
  events: TimelineEvent[];
  connectedTo: string[];
  /** For timelines (HTML reports): at most MAX_SAMPLES (publish-tally.ts), at an interval from 10 ms up, chosen by the run's length; and once at the end. */
  samples: PublisherSample[];
  /** AMQP 1.0 runs only: the outcomes the broker gave (absent over 0-9-1). */
  amqp10?: Amqp10Outcomes;
  /** Native stream protocol runs only: the confirms, and what deduplication was asked to drop. */
  stream?: StreamPublishCounts;
  /**
   * Messages the broker refused (0-9-1 nack; AMQP 1.0 rejected or modified) MAX_REFUSALS times
   * (refused-resends.ts), each time sent again after a growing backoff, then not sent again: they
   * stay nacked (known failed).
   */
  refusedGivenUp: number;
}

/** Counters at one moment of a run: distinct messages written, confirms received, awaiting a confirm. */
export interface PublisherSample {
  tMs: number;
  written: number;
  confirmed: number;
  inFlight: number;
}

/** A rejected outcome's error, as the broker gave it. */
export interface Rejection {
  condition: string;
  description: string;
}

/**
 * The outcome counts of one AMQP 1.0 publisher run (what each outcome means: amqp10/outcomes.ts):
 * transfers, not messages (a message sent twice can be counted twice).
 */
export interface Amqp10Outcomes {
  /** Pre-settled (AMQP 1.0 without outcomes, the confirms-off mode) or settled on the broker's outcome. */
  settlement: 'on-outcome' | 'pre-settled';
  accepted: number;
  released: number;
  rejected: number;
  modified: number;
  /** Unsettled when the link or connection dropped: sent again. */
  inDoubt: number;
  /** No outcome within the confirm timeout: sent again (a late outcome still counts above). */
  timedOut: number;
  /** Rejections by the broker's condition and description, most frequent first. */
  rejections: (Rejection & { count: number })[];
}

/**
 * What one native stream protocol publisher run saw: sends, not messages (a message sent again is
 * confirmed again, whether the broker stored the copy or dropped it as a duplicate).
 */
export interface StreamPublishCounts {
  /** The run's publisher reference: the broker deduplicates publishing ids under it. */
  publisherRef: string;
  /** Publishing ids the broker confirmed (a dropped duplicate is confirmed too). */
  confirms: number;
  /** Publishing ids the broker answered with a publish error (sent again after a backoff). */
  errors: number;
  /** Unconfirmed when their connection was lost: sent again with the same publishing ids. */
  inDoubtResent: number;
  /** What each new session sent again first (in doubt from the lost one, or late), added up. */
  resentOnReconnect: number;
  /**
   * Of those, how many the broker had stored already (their id at most the last one it held for
   * the reference when the session opened): the copies deduplication drops.
   */
  storedAlready: number;
  /** No confirm within the confirm timeout: sent again with the same publishing ids. */
  timedOut: number;
  /** Sessions opened (1 + the reconnections). */
  sessions: number;
}

/** How many of the ledger's attempted sequences carry each flag (one sequence can carry several). */
export function countFlags(ledger: Ledger): { confirmed: number; nacked: number; returned: number; indeterminate: number; republished: number } {
  const n = { confirmed: 0, nacked: 0, returned: 0, indeterminate: 0, republished: 0 };
  for (let seq = 0; seq < ledger.attempted; seq++) {
    if (ledger.has(seq, 'confirmed')) n.confirmed++;
    if (ledger.has(seq, 'nacked')) n.nacked++;
    if (ledger.has(seq, 'returned')) n.returned++;
    if (ledger.has(seq, 'indeterminate')) n.indeterminate++;
    if (ledger.has(seq, 'republished')) n.republished++;
  }
  return n;
}
