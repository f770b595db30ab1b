import type { QueueType } from '../../cluster/broker/queue-types.js';
import type { Protocol } from '../../client/protocol.js';
import type { FaultKind } from '../../faults/kinds.js';
import type { NetemSpec } from '../../faults/net/netem.js';
import type { Reconciliation } from '../../ledger/reconcile.js';
import type { LatencySummary } from '../../measure/histogram.js';
import { pickIndex, seededRandom } from '../../util/random.js';

/**
 * chaos's data and its pure parts: the nemesis schedule (seeded), the totals over several
 * producers and consumers, and what each fault cost in availability. No I/O here: the runner
 * (chaos.ts) and the nemesis (chaos-nemesis.ts) feed these.
 */

/** Whom a fault hits: the leader of one of the chaos queues, any node, or the node a producer is connected to. */
export const CHAOS_TARGETS = ['leader', 'random', 'producer'] as const;
export type ChaosTarget = (typeof CHAOS_TARGETS)[number];

export interface ChaosOptions {
  /** How long traffic flows and the nemesis works; then heal, stop the producers, drain. */
  durationMs: number;
  /** From the start of one fault to the start of the next, at least. */
  intervalMs: number;
  /** How long each fault is held before it is healed. */
  holdMs: number;
  /**
   * Exactly this many faults (the seed's first ones): the traffic goes on until durationMs has
   * passed and the last of them is healed. Undefined: as many as fit in durationMs.
   */
  faultCount?: number | undefined;
  faults: FaultKind[];
  targets: ChaosTarget[];
  seed: number;
  /** Producers with confirms (async window), and consumers (manual ack, idempotent store). */
  producers: number;
  consumers: number;
  /** Polling consumers (basic.get) beside the push ones, after them in the round-robin over the queues; 0 for none. */
  polling: number;
  /** Queues (of queueType), leaders spread over the nodes: queuePrefix.1 .. queuePrefix.N. */
  queues: number;
  queuePrefix: string;
  /** quorum (the default), mirrored (RabbitMQ before 4.0: a classic queue with ha-mode all) or classic. */
  queueType: QueueType;
  vhost: string;
  /** Per producer; > 0 (the ledgers are sized from rate × duration). */
  ratePerSec: number;
  window: number;
  sizeBytes: number;
  confirmTimeoutMs: number;
  heartbeatS: number;
  prefetch: number;
  /** One more producer, without confirms, on its own queue (queuePrefix.control), for contrast. */
  control: boolean;
  /** --latency/--loss for the latency fault. */
  netem?: NetemSpec | undefined;
  /** The slow-link fault's rate (tc's units). */
  bandwidth?: string | undefined;
  /** A cluster that is not ours (default: rabbit1..3 on loopback). */
  urls?: string[] | undefined;
  /** After the heal: how long the cluster may take to be whole again. */
  rejoinTimeoutMs: number;
  /** At the end: the consumers stop once nothing arrived for this long (and the queues are empty). */
  drainIdleMs: number;
  /** The consumers' idempotent store (SQLite); default: a fresh file in the OS temp folder. */
  storeFile?: string | undefined;
  /** The producers' and consumers' protocol (default AMQP 0-9-1): over AMQP 1.0, confirms are the broker's outcomes, acks are accepted. */
  protocol?: Protocol | undefined;
}

/** One step of the nemesis, decided before the run from the seed. */
export interface PlannedFault {
  /** 1-based. */
  index: number;
  kind: FaultKind;
  target: ChaosTarget;
  /**
   * Uniform draws in [0, 1) that the runner turns into a choice among what exists at that moment
   * (which queue's leader, which node, which producer; pick2: quorum-loss's second node), so that
   * one seed gives one schedule whatever the cluster looks like.
   */
  pick: number;
  pick2: number;
}

/**
 * The first `count` faults of the schedule. Pure and deterministic in (seed, faults, targets):
 * kinds come in rounds, each round a seeded shuffle of `faults`, so that every kind appears once
 * per round (a 10-minute run sees each kind about equally often); targets are drawn at random.
 */
export function nemesisSchedule(seed: number, faults: readonly FaultKind[], targets: readonly ChaosTarget[], count: number): PlannedFault[] {
  if (faults.length === 0) throw new RangeError('the nemesis needs at least one fault kind');
  if (targets.length === 0) throw new RangeError('the nemesis needs at least one target');
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`${count} faults: not a non-negative integer`);
  // One stream of draws, always taken in the same order: a round's shuffle, then per fault its target, pick and pick2.
  const r = seededRandom(seed);
  const out: PlannedFault[] = [];
  let round: FaultKind[] = [];
  while (out.length < count) {
    if (round.length === 0) round = shuffled(faults, r);
    const kind = round.shift()!;
    const target = targets[pickIndex(r(), targets.length)]!;
    out.push({ index: out.length + 1, kind, target, pick: r(), pick2: r() });
  }
  return out;
}

/** Fisher–Yates with the given draws: a new array, `items` untouched. */
function shuffled<T>(items: readonly T[], r: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = pickIndex(r(), i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

export { pickIndex } from '../../util/random.js';

/** One fault as it happened. Times in ms since the run started. */
export interface FaultRecord {
  index: number;
  kind: FaultKind;
  target: ChaosTarget;
  /** Nodes faulted, short names (quorum-loss: two). Empty when the fault could not be applied. */
  nodes: string[];
  /** A partition shape's groups ("rabbit2 rabbit4 | rabbit1 rabbit3 rabbit5"); null for the other faults. */
  shape: string | null;
  /** How the target was resolved, for people: "leader of rmq-bench.chaos.2", "producer 1's node", "random". */
  reason: string;
  issuedAtMs: number;
  appliedAtMs: number | null;
  restoredAtMs: number | null;
  /** The cluster whole again after the heal: every node running, every queue member online, stable. */
  wholeAtMs: number | null;
  /** Queue name → short name of its leader just before the fault and once whole again (null: none seen). */
  leadersBefore: Record<string, string | null>;
  leadersAfter: Record<string, string | null>;
  error: string | null;
}

/** A stretch with no confirm for one confirming producer (at least GAP_MIN_MS), ms since the run started. */
export interface ConfirmGap {
  producer: number;
  fromMs: number;
  toMs: number;
}

/** Shorter silences between two confirms are not recorded as gaps. */
export const GAP_MIN_MS = 250;

export interface FaultAvailability {
  index: number;
  /** The longest confirm gap of any producer that overlaps [issuedAtMs, wholeAtMs (or the end)]; 0 if none. */
  stallMs: number;
  /**
   * Over the producers stalled at the heal (a gap spans restoredAtMs), the longest time from the
   * heal to their next confirm; null when no producer was stalled then, or the fault was never healed.
   */
  healToConfirmMs: number | null;
}

/** What each fault cost: pure, from the fault records and the producers' confirm gaps. */
export function availability(faults: readonly FaultRecord[], gaps: readonly ConfirmGap[], endMs: number): FaultAvailability[] {
  return faults.map((f) => {
    const windowEnd = f.wholeAtMs ?? endMs;
    let stallMs = 0;
    for (const g of gaps) if (g.fromMs < windowEnd && g.toMs > f.issuedAtMs) stallMs = Math.max(stallMs, g.toMs - g.fromMs);
    let healToConfirmMs: number | null = null;
    const healedAt = f.restoredAtMs;
    if (healedAt !== null) {
      for (const g of gaps) {
        if (g.fromMs <= healedAt && healedAt < g.toMs) healToConfirmMs = Math.max(healToConfirmMs ?? 0, g.toMs - healedAt);
      }
    }
    return { index: f.index, stallMs, healToConfirmMs };
  });
}

/** One producer's run, reconciled against what the consumers recorded. */
export interface ChaosProducer {
  /** 1-based; the control producer is producers + 1. */
  producer: number;
  queue: string;
  confirms: boolean;
  runId: string;
  reconnects: number;
  longestStallMs: number;
  /** Nodes it was connected to, in order (short names, or the masked URL when unknown). */
  connectedTo: string[];
  reconciliation: Reconciliation;
}

export interface ChaosConsumer {
  consumer: number;
  queue: string;
  received: number;
  processed: number;
  /** Deliveries the idempotent store recognised as already processed, and skipped. */
  duplicatesSkipped: number;
  reconnects: number;
  /** basic.get instead of a subscription (--polling). */
  polling?: boolean;
}

/** Sums over producers (the confirming ones, or the control one). */
export interface ChaosTotals {
  producers: number;
  attempted: number;
  written: number;
  confirmed: number;
  /** Distinct messages consumed. */
  read: number;
  lost: number;
  silentlyLost: number;
  knownFailed: number;
  indeterminateUnread: number;
  neverWritten: number;
  recovered: number;
  /** Messages delivered more than once, and the deliveries beyond the first. */
  duplicated: number;
  duplicateDeliveries: number;
  republished: number;
}

/** Pure: the sum of the producers' reconciliations. */
export function chaosTotals(producers: readonly ChaosProducer[]): ChaosTotals {
  const t: ChaosTotals = {
    producers: producers.length,
    attempted: 0,
    written: 0,
    confirmed: 0,
    read: 0,
    lost: 0,
    silentlyLost: 0,
    knownFailed: 0,
    indeterminateUnread: 0,
    neverWritten: 0,
    recovered: 0,
    duplicated: 0,
    duplicateDeliveries: 0,
    republished: 0,
  };
  for (const { reconciliation: r } of producers) {
    t.attempted += r.counts.attempted;
    t.written += r.counts.written;
    t.confirmed += r.counts.confirmed;
    t.read += r.counts.readDistinct;
    t.republished += r.counts.republished;
    t.lost += r.lost;
    t.silentlyLost += r.silentlyLost;
    t.knownFailed += r.knownFailed;
    t.indeterminateUnread += r.indeterminateUnread;
    t.neverWritten += r.neverWritten;
    t.recovered += r.recovered;
    t.duplicated += r.duplicated;
    t.duplicateDeliveries += r.duplicateDeliveries;
  }
  return t;
}

/** Per-second counters of the whole run (all producers and consumers), for the live line and the HTML timeline. */
export interface ChaosSample {
  tMs: number;
  /** Cumulative: distinct messages written, confirms received, deliveries consumed. */
  written: number;
  confirmed: number;
  consumed: number;
  /** Awaiting a confirm, over all producers, at that moment. */
  inFlight: number;
}

export type LatencyPhase = 'calm' | FaultKind;

interface PhaseLatency {
  /** calm: no fault on, and the cluster whole; a kind: from that fault's issue until the cluster was whole again. */
  phase: LatencyPhase;
  summary: LatencySummary;
}

/** What a queue still held when the drain ended, by the management API. */
export interface LeftInQueue {
  queue: string;
  /** Ready for delivery. */
  ready: number;
  /** Delivered to a consumer and not acknowledged. */
  unacknowledged: number;
  /** The consumers the queue itself counts (`consumers`). */
  consumersCounted: number;
  /** The consumers on channels the management API lists (`consumer_details`). */
  consumersListed: number;
}

/** How the drain ended: every queue empty, messages held unacknowledged with nothing delivered (stuck), or the deadline. */
export interface DrainEnd {
  ended: 'empty' | 'stuck' | 'deadline';
  /** From the drain's start (the producers done) to its end. */
  waitedMs: number;
  /** The queues that were not empty at the end (none when ended is 'empty'). */
  left: LeftInQueue[];
}

/**
 * How long messages may stay unacknowledged, nothing ready and nothing delivered, before the drain
 * calls them stuck: chaos's consumers ack at once, and a consumer whose connection died is seen
 * gone within two heartbeats, its deliveries then ready again.
 */
export const STUCK_UNACKED_MS = 30_000;

/**
 * One look at the queues during the drain: 'empty'; 'held' when nothing is ready (by the
 * management API, and by a passive declare that answered) but some are unacknowledged, nothing
 * having been delivered for the idle time; else 'waiting'. Pure.
 */
export function drainLook(left: readonly LeftInQueue[], readyByDeclare: number, idle: boolean): 'empty' | 'held' | 'waiting' {
  if (!idle) return 'waiting';
  const ready = left.reduce((a, q) => a + q.ready, 0);
  const unacked = left.reduce((a, q) => a + q.unacknowledged, 0);
  if (ready === 0 && unacked === 0) return readyByDeclare === 0 ? 'empty' : 'waiting';
  return ready === 0 && unacked > 0 && readyByDeclare === 0 ? 'held' : 'waiting';
}

export interface ChaosResult {
  /** The options (urls masked). */
  options: ChaosOptions;
  startedAtIso: string;
  durationMs: number;
  queues: { name: string; leaderAtStart: string | null; leaderAtEnd: string | null }[];
  /** Confirming producers first, then the control one (confirms: false). */
  producers: ChaosProducer[];
  consumers: ChaosConsumer[];
  /** Over the confirming producers. */
  totals: ChaosTotals;
  /** Over the control producer; null without --control. */
  control: ChaosTotals | null;
  /** Deliveries whose message id belongs to no producer of this run. */
  unexpected: number;
  unexpectedSamples: string[];
  /** Duplicate deliveries the idempotent store absorbed (sum over consumers). */
  absorbed: number;
  faults: FaultRecord[];
  availability: FaultAvailability[];
  latency: PhaseLatency[];
  samples: ChaosSample[];
  /**
   * How the drain at the end ended, and what the queues still held then (a confirmed message
   * among them never read counts as lost); null when there was none (Ctrl+C). Absent from
   * documents made before it was recorded.
   */
  drain?: DrainEnd | null;
  /** Kinds left out of the default list because this host cannot apply them, each with the reason. */
  skippedKinds: { kind: FaultKind; why: string }[];
  /** Ctrl+C: the nemesis healed, the producers stopped, and the figures are what was measured until then. */
  interrupted: boolean;
  /** No confirmed message lost and nothing unexpected consumed. */
  ok: boolean;
  /** Why not ok, one line each; empty when ok. */
  reasons: string[];
}

/** The verdict: ok, and why not. Pure. */
export function chaosVerdict(totals: ChaosTotals, unexpected: number): { ok: boolean; reasons: string[] } {
  const reasons: string[] = [];
  const lost = totals.lost;
  if (lost === 1) reasons.push('1 confirmed message lost: the broker confirmed it and no consumer ever received it');
  else if (lost > 0) reasons.push(`${lost} confirmed messages lost: the broker confirmed them and no consumer ever received them`);
  if (unexpected === 1) reasons.push('1 unexpected message consumed: an id from no producer of this run');
  else if (unexpected > 0) reasons.push(`${unexpected} unexpected messages consumed: ids from no producer of this run`);
  return { ok: reasons.length === 0, reasons };
}
