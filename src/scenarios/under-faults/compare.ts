import { drainQueue, type DrainResult } from '../../client/amqp091/drain.js';
import { type Endpoints, endpointsFor } from '../../client/amqp091/locate.js';
import { newRunId, type PublishMode } from '../../client/amqp091/publisher.js';
import { publisherFor } from '../../client/clients.js';
import { MODE_RULES, type CompareMode } from './compare-modes.js';
import type { PublisherResult } from '../../client/publisher-result.js';
import { type OutcomeTotals, protocolTotals, type StreamTotals } from './compare-protocol-totals.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import type { FaultKind } from '../../faults/kinds.js';
import type { NetemSpec } from '../../faults/net/netem.js';
import { type FaultPhase, startLeaderFault, type LeaderFaultHandle, type LeaderFaultTimeline } from '../../faults/leader-fault-run.js';
import { type FaultTimeline, relativeTimeline } from './fault-timeline.js';
import { currentLeader, type QueueRef } from '../../cluster/broker/queue-leader-lookup.js';
import { purgeQueue, queueForRun } from '../../cluster/broker/own-queue.js';
import { ELECTS_A_LEADER, QUEUE_TYPE_TRAITS, type QueueType } from '../../cluster/broker/queue-types.js';
import { shortNodeName } from '../../cluster/broker/queue-leadership.js';
import type { Context } from '../../context.js';
import { partitionHandlingOf, type PartitionHandling } from '../../config.js';
import { InterruptedError } from '../../errors.js';
import { Ledger, parseMessageId, type ReadOutcome, type ReadRecorder } from '../../ledger/ledger.js';
import type { ReadSource } from '../../ledger/order.js';
import { maskUrl } from '../../url.js';
import { reconcile, type Reconciliation } from '../../ledger/reconcile.js';
import { type StuckDeliveries, stuckProblem } from '../../measure/stuck-deliveries.js';
import { withStuckWatch } from './stuck-watch.js';

/**
 * How long a producer under a fault held `restoreAfterMs` tries to connect again, and waits for
 * credit or an unblocked connection: past the restore by its own bound (180 s). The fault is
 * always undone: wait for it.
 */
export const faultPatienceMs = (restoreAfterMs: number): number => restoreAfterMs + 180_000;

/**
 * compare: the same producer with confirms on and off (AMQP 0-9-1, 1.0, or the native stream
 * protocol: compare-modes.ts), connected first to the queue's leader, which is faulted part-way
 * through. Then the queue is drained (over 0-9-1), every message reconciled. Returns data.
 */

export type { CompareMode } from './compare-modes.js';
export { type FaultTimeline, relativeTimeline } from './fault-timeline.js';

export interface CompareOptions {
  queue: string;
  /** quorum, mirrored (RabbitMQ before 4.0), classic or stream: what the leader fault runs against. */
  queueType: QueueType;
  /** compare declares the queue itself (of queueType) and deletes it at the end: no --queue was given for a type other than quorum. */
  ownQueue: boolean;
  exchange: string;
  routingKey: string;
  vhost: string;
  count: number;
  ratePerSec: number;
  sizeBytes: number;
  /** Confirms-on side: async with this window. */
  window: number;
  confirmTimeoutMs: number;
  heartbeatS: number;
  fault: FaultKind | 'none';
  /** Share of the messages written before the fault (0..1). */
  faultAt: number;
  /** --fault latency: the delay and loss. */
  netem?: NetemSpec | undefined;
  /** --fault slow-link's rate (tc's units). */
  bandwidth?: string | undefined;
  /** Extra time the node stays faulted after the new leader is seen. */
  restoreAfterMs: number;
  runs: number;
  modes: CompareMode[];
  electionTimeoutMs: number;
  rejoinTimeoutMs: number;
  drainIdleMs: number;
  /** How long a producer tries to connect again: the fault's bound (faultPatienceMs of --hold). */
  reconnectTimeoutMs: number;
  /** --max-stuck: how long after the fault a message may stay held for a consumer no live channel has (stuck-watch.ts). */
  maxStuckMs: number;
  /** AMQP URLs of a cluster that is not ours (default: rabbit1..3 on loopback). */
  urls?: string[] | undefined;
}

export interface CompareRun {
  mode: CompareMode;
  publishMode: PublishMode;
  run: number;
  runId: string;
  leaderAtStart: string;
  producer: PublisherResult;
  fault: FaultTimeline | null;
  drain: DrainResult;
  reconciliation: Reconciliation;
  /** How long after the fault deliveries stayed held for a consumer gone (stuck-watch.ts); null: a stream (no acknowledgements). */
  stuck: StuckDeliveries | null;
  /**
   * Ids read in this run's drain that an earlier run of this compare published and had already
   * read: late copies (published on a connection the producer gave up, enqueued after that
   * run's drain and the next purge). At-least-once, not foreign messages: not counted unexpected.
   * The first LATE_SAMPLE_LIMIT of them; lateCopyCount counts them all.
   */
  lateCopies: string[];
  lateCopyCount: number;
  /**
   * Messages of an earlier run of this compare that its drain never read (counted lost, or
   * silently lost, there) and that this run's drain read: they were not in the queue when their
   * run looked, and came back after (a mirrored queue's node rejoining). Not foreign either:
   * not counted unexpected. The first LATE_SAMPLE_LIMIT ids, and how many.
   */
  resurfaced: string[];
  resurfacedCount: number;
}

export interface ModeTotals {
  mode: CompareMode;
  runs: number;
  attempted: number;
  /** What the producer reported as sent: distinct messages written to the socket. */
  reportedSent: number;
  confirmed: number;
  read: number;
  lost: number;
  silentlyLost: number;
  duplicated: number;
  recovered: number;
  reconnects: number;
  /** Reads that were not this run's, less an earlier run's messages (late copies and resurfaced). */
  unexpected: number;
  lateCopies: number;
  /** Messages an earlier run never read, read in a later run's drain. */
  resurfaced: number;
  maxStallMs: number;
  /** Runs with at least one lost or silently lost message. */
  runsWithLoss: number;
  /** AMQP 1.0 sides only: the broker's outcomes over all runs (transfers: a message sent twice can count twice). */
  outcomes?: OutcomeTotals;
  /** Native stream protocol sides only: sent again with the same publishing ids, and what of it the broker held already (deduplicated). */
  stream?: StreamTotals;
}

export interface CompareResult {
  options: CompareOptions;
  runs: CompareRun[];
  /** Ctrl+C: the runs finished before it, and the producer side of the run it cut short. */
  interrupted: boolean;
  partial: { mode: CompareMode; run: number; producer: PublisherResult; fault: FaultTimeline | null } | null;
  totals: ModeTotals[];
  /**
   * What a partition does to the cluster: cluster_partition_handling as rmq-bench set it on its own
   * cluster before RabbitMQ 4.3 (ignore when none was chosen); null on 4.3 (no such setting) and
   * for a cluster that is not rmq-bench's own (not known).
   */
  partitionHandling: PartitionHandling | null;
  /** The claim under test: with confirms, no confirmed message is lost (and nothing unexpected is read). */
  ok: boolean;
}

/** A run's unexpected reads that are not an earlier run's messages (late copies or resurfaced). */
export function unexplained(r: Pick<CompareRun, 'reconciliation' | 'lateCopyCount' | 'resurfacedCount'>): number {
  return r.reconciliation.counts.unexpected - (r.lateCopyCount ?? 0) - (r.resurfacedCount ?? 0);
}

/** How many ids of each kind a run keeps as samples. */
export const LATE_SAMPLE_LIMIT = 20;

/**
 * What an id read in a later run's drain is to an earlier run of this compare: a late copy (that
 * run read it), resurfaced (that run never read it), or undefined (not an earlier run's). Pure.
 */
export function earlierRunRead(
  id: string | undefined,
  earlier: ReadonlyMap<string, Pick<Ledger, 'readCount' | 'has'>>,
): 'late-copy' | 'resurfaced' | undefined {
  const parsed = id === undefined ? undefined : parseMessageId(id);
  const ledger = parsed ? earlier.get(parsed.runId) : undefined;
  if (!ledger || !parsed || !ledger.has(parsed.seq, 'attempted')) return undefined;
  return ledger.readCount(parsed.seq) > 0 ? 'late-copy' : 'resurfaced';
}

/**
 * The drain's reads into the run's ledger, and beside it every read of an earlier run's message
 * counted by kind (the ledger keeps only its first unexpected ids: each read is looked at here).
 */
class RunReads implements ReadRecorder {
  readonly late = { count: 0, ids: [] as string[] };
  readonly resurfaced = { count: 0, ids: [] as string[] };

  constructor(
    private readonly ledger: Ledger,
    private readonly earlier: ReadonlyMap<string, Ledger>,
  ) {}

  recordRead(id: string | undefined, from?: ReadSource): ReadOutcome {
    const outcome = this.ledger.recordRead(id, from);
    if (outcome === 'unexpected') {
      const kind = earlierRunRead(id, this.earlier);
      const into = kind === 'late-copy' ? this.late : kind === 'resurfaced' ? this.resurfaced : undefined;
      if (into) {
        into.count++;
        if (into.ids.length < LATE_SAMPLE_LIMIT) into.ids.push(id!);
      }
    }
    return outcome;
  }
}

export function totalsFor(mode: CompareMode, runs: readonly CompareRun[]): ModeTotals {
  const rs = runs.filter((r) => r.mode === mode);
  const sum = (f: (r: CompareRun) => number): number => rs.reduce((a, r) => a + f(r), 0);
  return {
    mode,
    runs: rs.length,
    attempted: sum((r) => r.reconciliation.counts.attempted),
    reportedSent: sum((r) => r.producer.written),
    confirmed: sum((r) => r.reconciliation.counts.confirmed),
    read: sum((r) => r.reconciliation.counts.readDistinct),
    lost: sum((r) => r.reconciliation.lost),
    silentlyLost: sum((r) => r.reconciliation.silentlyLost),
    duplicated: sum((r) => r.reconciliation.duplicated),
    recovered: sum((r) => r.reconciliation.recovered),
    reconnects: sum((r) => r.producer.reconnects),
    unexpected: sum(unexplained),
    lateCopies: sum((r) => r.lateCopyCount ?? r.lateCopies.length),
    resurfaced: sum((r) => r.resurfacedCount ?? 0),
    maxStallMs: rs.reduce((a, r) => Math.max(a, r.producer.longestStallMs), 0),
    runsWithLoss: rs.filter((r) => r.reconciliation.lost + r.reconciliation.silentlyLost > 0).length,
    ...protocolTotals(mode, rs),
  };
}

async function oneRun(
  ctx: Context,
  opts: CompareOptions,
  mode: CompareMode,
  run: number,
  endpoints: Endpoints,
  earlier: Map<string, Ledger>,
  empty: () => Promise<void>,
): Promise<CompareRun> {
  const { progress } = ctx;
  const ref = { vhost: opts.vhost, queue: opts.queue };
  const label = `${mode} run ${run}/${opts.runs}`;
  const byOffset = QUEUE_TYPE_TRAITS[opts.queueType].readByOffset;
  progress.start(`${label}: ${byOffset ? 'declaring afresh' : 'purging'} ${opts.queue}`);
  await empty();
  const leader = await currentLeader(ctx, ref);
  const leaderNode = shortNodeName(leader.leader);
  const urls = endpoints.urls;
  const leaderUrl = endpoints.nodes.indexOf(leader.leader);
  if (leaderUrl === -1) ctx.log(`no URL is known to reach the leader ${leader.leader}: the producer starts on the first URL`);
  const startIndex = Math.max(0, leaderUrl);
  const runId = newRunId();
  const ledger = new Ledger({ runId, capacity: opts.count });
  const publishMode: PublishMode = MODE_RULES[mode].publishMode;

  const faulted = new ProducerUnderFault(ctx, opts, { mode, label, ref, leaderNode });
  // A stream keeps no deliveries unacknowledged: nothing to hold, nothing to get stuck.
  // A quorum queue of rmq-bench's own cluster: its checked-out count read live in its member.
  const live = opts.queueType === 'quorum' && !opts.urls;
  const holder = byOffset ? undefined : { urls, startIndex, heartbeatS: opts.heartbeatS, deadlineMs: opts.maxStuckMs, live };
  const {
    value: { producer, timeline },
    stuck,
  } = await withStuckWatch(ctx, ref, holder, () => faulted.publish({ urls, streamUrls: endpoints.streamUrls, startIndex, runId, publishMode }, ledger), {
    measureIf: (v) => !v.producer.interrupted,
  });
  if (producer.interrupted) throw new RunInterrupted({ mode, run, producer, fault: timeline });

  await ctx.checkpoint({ name: 'before-drain', queue: opts.queue, vhost: opts.vhost, mode, run });
  progress.update(`${label}: draining ${opts.queue}`);
  const reads = new RunReads(ledger, earlier);
  const drain = await drainQueue(reads, {
    urls,
    queue: opts.queue,
    fromFirstOffset: byOffset,
    idleMs: opts.drainIdleMs,
    timeoutMs: 300_000,
    heartbeatS: opts.heartbeatS,
    signal: ctx.signal,
    onProgress: (n) => progress.update(`${label}: draining ${opts.queue}: ${n} read`),
  });
  const reconciliation = reconcile(ledger);
  earlier.set(runId, ledger);
  progress.succeed(
    `${label}: ${producer.written} reported sent, ${reconciliation.counts.readDistinct} read, ${reconciliation.lost} lost, ${reconciliation.silentlyLost} silently lost, ${reconciliation.duplicated} duplicated`,
  );
  return {
    mode,
    publishMode,
    run,
    runId,
    leaderAtStart: leaderNode,
    producer,
    fault: timeline,
    drain,
    reconciliation,
    stuck,
    lateCopies: reads.late.ids,
    lateCopyCount: reads.late.count,
    resurfaced: reads.resurfaced.ids,
    resurfacedCount: reads.resurfaced.count,
  };
}

/**
 * One run's producer, with the fault started on the queue's leader once --fault-at of the
 * messages are written, and restored (and its rejoin awaited) when the producer is done. The
 * status line shows what is written, confirmed and faulted.
 */
class ProducerUnderFault {
  private fault: LeaderFaultHandle | undefined;
  private written = 0;
  private confirmed = 0;
  private electionTold = false;

  constructor(
    private readonly ctx: Context,
    private readonly opts: CompareOptions,
    private readonly info: { mode: CompareMode; label: string; ref: QueueRef; leaderNode: string },
  ) {}

  async publish(
    p: { urls: readonly string[]; streamUrls: readonly string[] | undefined; startIndex: number; runId: string; publishMode: PublishMode },
    ledger: Ledger,
  ): Promise<{ producer: PublisherResult; timeline: FaultTimeline | null }> {
    const { ctx, opts } = this;
    const { label, leaderNode } = this.info;
    const { progress } = ctx;
    const t0 = performance.now();
    const faultAtCount = Math.max(1, Math.floor(opts.count * opts.faultAt));
    const ticker = setInterval(() => progress.update(this.statusLine()), 250);
    let producer: PublisherResult;
    let timeline: FaultTimeline | null = null;
    try {
      progress.update(`${label}: publishing ${opts.count} messages to ${leaderNode} (the leader of ${opts.queue})`);
      producer = await publisherFor(MODE_RULES[this.info.mode].protocol)(
        {
          urls: p.urls,
          streamUrls: p.streamUrls,
          startIndex: p.startIndex,
          exchange: opts.exchange,
          routingKey: opts.routingKey,
          count: opts.count,
          ratePerSec: opts.ratePerSec,
          sizeBytes: opts.sizeBytes,
          persistent: true,
          mandatory: false,
          mode: p.publishMode,
          window: opts.window,
          batchSize: 100,
          confirmTimeoutMs: opts.confirmTimeoutMs,
          heartbeatS: opts.heartbeatS,
          // A quorum loss or a power cut holds the queue (no node, no credit, a blocked connection)
          // until the restore's nodes have booted: over a minute on a loaded machine. A broker
          // that refuses the first connection still fails at once (NoBrokerError).
          reconnectTimeoutMs: opts.reconnectTimeoutMs,
          blockedTimeoutMs: faultPatienceMs(opts.restoreAfterMs),
          runId: p.runId,
        },
        ledger,
        {
          signal: ctx.signal,
          onWritten: (n) => this.onWritten(n, faultAtCount),
          onConfirm: () => {
            this.confirmed++;
          },
          inFaultWindow: () => this.inFaultWindow(),
        },
      );
      const fault = this.fault;
      if (fault) {
        progress.update(`${label}: producer done; waiting for ${fault.timeline.node ?? 'the faulted node'} to be restored and rejoin`);
        const { timeline: t } = await fault.done;
        timeline = relativeTimeline(t, t0, leaderNode, producer);
      }
    } finally {
      clearInterval(ticker);
      // An error or Ctrl+C on the producer's side: undo the fault at once.
      const fault = this.fault;
      if (fault && !fault.timeline.restored && fault.timeline.phase !== 'failed') progress.info(`restoring ${fault.timeline.node ?? leaderNode}`);
      await fault?.close();
    }
    return { producer, timeline };
  }

  private statusLine(): string {
    const { opts, fault } = this;
    const node = fault?.timeline.node;
    return `${this.info.label}: written ${this.written}/${opts.count}${MODE_RULES[this.info.mode].confirms ? `, confirmed ${this.confirmed}` : ''}${node ? `, fault: ${opts.fault} ${node} (${fault?.timeline.phase})` : ''}`;
  }

  /** The fault starts at the faultAtCount-th message written. */
  private onWritten(n: number, faultAtCount: number): void {
    const { opts } = this;
    this.written = n;
    if (n >= faultAtCount && !this.fault && opts.fault !== 'none')
      this.fault = startLeaderFault(this.ctx, this.info.ref, opts.fault, {
        restoreAfterMs: opts.restoreAfterMs,
        electionTimeoutMs: opts.electionTimeoutMs,
        rejoinTimeoutMs: opts.rejoinTimeoutMs,
        // A classic queue without mirrors is not taken over by another node: nothing to wait for.
        ...(ELECTS_A_LEADER[opts.queueType] ? {} : { awaitElection: false }),
        faultOptions: { ...(opts.netem ? { netem: opts.netem } : {}), ...(opts.bandwidth ? { bandwidth: opts.bandwidth } : {}) },
        onPhase: (phase, t) => this.onFaultPhase(phase, t),
      });
  }

  /** A line for each milestone of the fault (also in plain output, where the status line shows every 10 s). */
  private onFaultPhase(phase: FaultPhase, t: Readonly<LeaderFaultTimeline>): void {
    const { progress } = this.ctx;
    const { label } = this.info;
    const { fault } = this.opts;
    if (phase === 'electing') progress.info(`${label}: '${fault}' applied to ${t.node} (the leader)`);
    else if ((phase === 'holding' || phase === 'restoring') && t.newLeader !== null && !this.electionTold) {
      this.electionTold = true;
      progress.info(`${label}: new leader ${t.newLeader}, seen ${Math.round(t.electionMs ?? 0)} ms after the fault (${t.electionSource})`);
    }
    if (phase === 'rejoined') progress.info(`${label}: ${t.node} back, ${t.onlineAfter?.length} of ${t.membersAfter?.length} members online`);
  }

  /** Whether a confirm arriving now falls in the fault's window (for the second histogram). */
  private inFaultWindow(): boolean {
    const { fault } = this;
    return fault !== undefined && !['rejoined', 'left-faulted', 'failed'].includes(fault.timeline.phase);
  }
}

class RunInterrupted extends Error {
  constructor(readonly partial: NonNullable<CompareResult['partial']>) {
    super('interrupted');
  }
}

export async function runCompare(ctx: Context, opts: CompareOptions): Promise<CompareResult> {
  await requireCluster(ctx);
  if (opts.fault !== 'none') await ctx.faults.check(opts.fault);
  const ref = { vhost: opts.vhost, queue: opts.queue };
  const own = await queueForRun(ctx, ref, opts.queueType, opts.ownQueue);
  try {
    return await compareRuns(ctx, opts, own ? () => own.empty() : () => purgeQueue(ctx, ref));
  } finally {
    await own?.remove();
  }
}

async function compareRuns(ctx: Context, opts: CompareOptions, empty: () => Promise<void>): Promise<CompareResult> {
  const runs: CompareRun[] = [];
  // Every finished run's ledger: a late copy of one of its messages in a later drain is recognised.
  const earlier = new Map<string, Ledger>();
  let partial: CompareResult['partial'] = null;
  let interrupted = false;
  const endpoints = await endpointsFor(ctx, opts.urls, opts.heartbeatS);
  try {
    for (let run = 1; run <= opts.runs; run++) {
      for (const mode of opts.modes) runs.push(await oneRun(ctx, opts, mode, run, endpoints, earlier, empty));
    }
  } catch (err) {
    // Ctrl+C: keep what was measured (the fault was undone in oneRun's finally).
    if (err instanceof RunInterrupted) partial = err.partial;
    else if (!(err instanceof InterruptedError)) throw err;
    interrupted = true;
  }
  const totals = opts.modes.map((m) => totalsFor(m, runs));
  const ok = runs.every((r) => unexplained(r) === 0 && (!MODE_RULES[r.mode].confirms || r.reconciliation.lost === 0) && stuckProblem(r.stuck) === null);
  // The options go into reports: never with a password.
  const options = opts.urls ? { ...opts, urls: opts.urls.map(maskUrl) } : opts;
  return { options, runs, totals, partitionHandling: opts.urls ? null : partitionHandlingOf(ctx.config), ok, interrupted, partial };
}
