import { requireBrokerFeature } from '../../cluster/broker/broker-info.js';
import { type FaultKind, faultProblem, oneShotProblem } from '../../faults/kinds.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConsumerResult } from '../../client/consumer-result.js';
import { type Endpoints, endpointsFor } from '../../client/amqp091/locate.js';
import type { PublisherResult } from '../../client/publisher-result.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { FaultNeedsNodesError } from '../../faults/injector.js';
import type { Context } from '../../context.js';
import type { LedgerDocument } from '../../ledger/ledger.js';
import { EnvironmentError, errorMessage, UsageError } from '../../errors.js';
import { openProcessedStore, type ProcessedStore } from '../../store/processed.js';
import { maskUrl } from '../../url.js';
import { retryUntil, systemClock } from '../../util/retry.js';
import { startNemesis, type NemesisHandle } from './chaos-nemesis.js';
import {
  availability,
  type ChaosOptions,
  type ChaosResult,
  type ChaosSample,
  chaosTotals,
  chaosVerdict,
  type DrainEnd,
  type LatencyPhase,
  nemesisSchedule,
  type PlannedFault,
} from './chaos-plan.js';
import { type ChaosQueues, chaosQueues, declareQueues, deleteQueues, drained, leadersOf } from './chaos-queues.js';
import { ChaosTraffic } from './chaos-traffic.js';

/**
 * chaos: P producers with confirms and C consumers with manual ack and an idempotent store, over
 * Q quorum queues whose leaders are spread over the nodes, while the nemesis faults a node every
 * interval. At the end: heal, stop the producers, let the consumers drain, and reconcile every
 * producer's ledger against what the consumers received. Returns data; never prints.
 */

export type { ChaosOptions, ChaosResult };

/** chaos's options, and whether the user named the faults (a kind this host cannot apply is then refused, not left out). */
export interface ChaosRunOptions extends ChaosOptions {
  /** The user named the faults: one this host cannot apply is refused (exit 69), not left out. */
  faultsGiven: boolean;
}

/** Where the run stands, once a second while it runs: the caller's progress line. */
export interface ChaosLiveSample {
  elapsedMs: number;
  durationMs: number;
  /** The confirming producers' counters, summed. */
  written: number;
  confirmed: number;
  consumed: number;
  inFlight: number;
  /** What the nemesis is doing now ("kill rabbit2 (holding)"), "calm", or the stage of the end. */
  phase: string;
  /** The kind of the fault on now; null in calm. */
  faultKind: FaultKind | null;
  /** What the control producer wrote; null without --control. */
  controlWritten: number | null;
}

export interface ChaosHooks {
  /** Once a second while traffic flows and until everything has stopped. */
  onLive?: (live: ChaosLiveSample) => void;
  /** Once, after the drain: every producer's per-message ledger (what --ledger writes). */
  onLedgers?: (ledgers: ChaosLedgers) => void;
}

/** What `chaos --ledger` writes: each producer's ledger, its flags per message id (`<runId>-<seq>`). */
export interface ChaosLedgers {
  schemaVersion: 1;
  kind: 'chaos-ledgers';
  producers: { producer: number; queue: string; confirms: boolean; ledger: LedgerDocument }[];
}

/** Which kinds can run here: the ones the injector refuses are left out of a default list, refused in a given one. */
async function usableFaults(ctx: Context, opts: ChaosRunOptions): Promise<{ kinds: FaultKind[]; skipped: ChaosResult['skippedKinds'] }> {
  const kinds: FaultKind[] = [];
  const skipped: ChaosResult['skippedKinds'] = [];
  for (const kind of opts.faults) {
    // A fault about a quorum queue's members on another queue type, or one applied once per cluster: left out of a default list, refused in a given one.
    const typeProblem = faultProblem(opts.queueType, kind) ?? oneShotProblem(kind, Infinity, 'chaos', `once: 'compare --fault ${kind} --runs 1 --confirms on'`);
    if (typeProblem !== undefined) {
      if (opts.faultsGiven) throw new UsageError(typeProblem);
      skipped.push({ kind, why: typeProblem });
      continue;
    }
    try {
      await ctx.faults.check(kind);
      kinds.push(kind);
    } catch (err) {
      // Left out of a default list: what this host cannot apply, and what needs more nodes (a ring on 3).
      if (opts.faultsGiven || !(err instanceof EnvironmentError || err instanceof FaultNeedsNodesError)) throw err;
      skipped.push({ kind, why: errorMessage(err) });
    }
  }
  if (kinds.length === 0) throw new EnvironmentError(`none of the faults can be applied here (${skipped.map((s) => s.why).join('; ')})`);
  return { kinds, skipped };
}

/** The consumers' idempotent store: the user's file, or one in a temporary folder removed at close. */
function openStore(opts: ChaosOptions): { store: ProcessedStore; closeStore: () => void } {
  const storeDir = opts.storeFile ? undefined : mkdtempSync(path.join(tmpdir(), 'rmq-bench-chaos-'));
  const storeFile = opts.storeFile ?? path.join(storeDir!, 'processed.db');
  const store = openProcessedStore(storeFile, { idempotent: true });
  return {
    store,
    closeStore: () => {
      store.close();
      if (storeDir) rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

export async function runChaos(ctx: Context, opts: ChaosRunOptions, hooks: ChaosHooks = {}): Promise<ChaosResult> {
  await requireCluster(ctx);
  const { progress } = ctx;
  const { kinds, skipped } = await usableFaults(ctx, opts);
  // Once the cluster answers: an error before it is the one line a failed start prints.
  progress.info(`chaos: seed ${opts.seed} (replay the same schedule with --seed ${opts.seed})`);
  for (const s of skipped) progress.info(`${s.kind} left out: ${s.why}`);
  const endpoints = await endpointsFor(ctx, opts.urls, opts.heartbeatS);
  const queues = chaosQueues(opts);

  if (opts.queueType === 'mirrored') await requireBrokerFeature(ctx, 'mirrored-queues', '--queue-type mirrored');
  progress.start(`declaring ${queues.all.length} ${opts.queueType} queues (${queues.all.join(', ')})`);
  await declareQueues(ctx, opts, endpoints, queues.all);
  const leadersAtStart = await leadersOf(ctx, opts.vhost, queues.all);
  progress.succeed(`queues ready, leaders: ${queues.all.map((q, i) => `${q} ${leadersAtStart[i] ?? '?'}`).join(', ')}`);

  const { store, closeStore } = openStore(opts);
  const t0 = performance.now();
  const startedAtIso = new Date().toISOString();
  const schedule = nemesisSchedule(opts.seed, kinds, opts.targets, opts.faultCount ?? Math.ceil(opts.durationMs / Math.max(1, opts.intervalMs)) + 2);
  const run = new ChaosRun(ctx, opts, hooks, { endpoints, queues, store, closeStore, t0 });
  await run.play(schedule);

  const endMs = performance.now() - t0;
  const { traffic, nemesis, interrupted } = run;
  traffic.closeGaps(endMs);
  const chaosProducers = traffic.producerReports(run.producers);
  const chaosConsumers = traffic.consumerReports(run.consumers);
  hooks.onLedgers?.({
    schemaVersion: 1,
    kind: 'chaos-ledgers',
    producers: chaosProducers.map((p) => ({
      producer: p.producer,
      queue: p.queue,
      confirms: p.confirms,
      ledger: traffic.ledgers.byRun.get(p.runId)!.toJSON(),
    })),
  });
  const confirming = chaosProducers.filter((p) => p.confirms);
  const totals = chaosTotals(confirming);
  const control = opts.control ? chaosTotals(chaosProducers.filter((p) => !p.confirms)) : null;
  const verdict = chaosVerdict(totals, traffic.ledgers.unexpected);
  const reasons = [...verdict.reasons];
  if (interrupted) reasons.push('interrupted before the drain: messages still queued count as unread');
  const nemesisError = nemesis?.error() ?? null;
  if (nemesisError) reasons.push(`the nemesis stopped early: ${nemesisError}`);
  const history = [...(nemesis?.history ?? [])];
  const leadersAtEnd = await leadersOf(ctx, opts.vhost, queues.all);
  if (!interrupted && verdict.ok) await deleteQueues(ctx, opts, queues.all);
  return {
    // The kinds that ran (a default list without the ones this host cannot apply); never a password.
    options: { ...stripRun(opts), faults: kinds, ...(opts.urls ? { urls: opts.urls.map(maskUrl) } : {}) },
    startedAtIso,
    durationMs: Math.round(endMs),
    queues: queues.all.map((name, i) => ({ name, leaderAtStart: leadersAtStart[i] ?? null, leaderAtEnd: leadersAtEnd[i] ?? null })),
    producers: chaosProducers,
    consumers: chaosConsumers,
    totals,
    control,
    unexpected: traffic.ledgers.unexpected,
    unexpectedSamples: traffic.ledgers.unexpectedSamples,
    absorbed: chaosConsumers.reduce((a, c) => a + c.duplicatesSkipped, 0),
    faults: history,
    availability: availability(history, traffic.gaps, endMs),
    latency: [...traffic.latency.entries()].map(([phase, rec]) => ({ phase, summary: rec.summary() })),
    samples: run.samples,
    drain: run.drain,
    skippedKinds: skipped,
    interrupted,
    ok: verdict.ok && !interrupted && nemesisError === null,
    reasons,
  };
}

interface RunSetup {
  endpoints: Endpoints;
  queues: ChaosQueues;
  store: ProcessedStore;
  /** Closes the store (and removes its temporary folder). */
  closeStore: () => void;
  /** performance.now() of the run's start. */
  t0: number;
}

/**
 * One run from the first message to the last: the traffic starts with the run, the nemesis with
 * play(); play() ends once the traffic has stopped, on every way out.
 */
class ChaosRun {
  readonly traffic: ChaosTraffic;
  nemesis: NemesisHandle | undefined;
  /** The timeline: one sample a second, and one at the end. */
  readonly samples: ChaosSample[] = [];
  /** Ctrl+C before the end of the drain. */
  interrupted = false;
  /** How the drain ended; null when it did not (Ctrl+C, an error). */
  drain: DrainEnd | null = null;
  producers: PublisherResult[] = [];
  consumers: ConsumerResult[] = [];
  /** What the run is doing past its traffic, for the live line. */
  private stage = 'traffic';

  constructor(
    private readonly ctx: Context,
    private readonly opts: ChaosOptions,
    private readonly hooks: ChaosHooks,
    private readonly setup: RunSetup,
  ) {
    this.traffic = new ChaosTraffic(ctx, opts, {
      endpoints: setup.endpoints,
      names: setup.queues.names,
      store: setup.store,
      t0: setup.t0,
      phaseNow: () => this.phaseNow(),
    });
  }

  private phaseNow(): LatencyPhase {
    return this.nemesis?.active()?.kind ?? 'calm';
  }

  /** The faults, then the end (heal, stop the producers, drain); on Ctrl+C or an error, heal at once and stop everything. */
  async play(schedule: readonly PlannedFault[]): Promise<void> {
    const ticker = setInterval(() => this.tick(), 1_000);
    try {
      await this.underNemesis(schedule);
      await this.windDown();
    } catch (err) {
      if (!this.ctx.signal.aborted) throw err;
      this.interrupted = true;
    } finally {
      clearInterval(ticker);
      await this.stopAll();
    }
  }

  /** Traffic under the nemesis for durationMs, and (--fault-count) until every planned fault has run. */
  private async underNemesis(schedule: readonly PlannedFault[]): Promise<void> {
    const { ctx, opts } = this;
    ctx.progress.start(`chaos: ${opts.producers} producers, ${opts.consumers} consumers, ${opts.queues} queues, a fault every ${opts.intervalMs / 1000} s`);
    this.nemesis = startNemesis(ctx, {
      schedule,
      queues: this.setup.queues.refs,
      intervalMs: opts.intervalMs,
      holdMs: opts.holdMs,
      rejoinTimeoutMs: opts.rejoinTimeoutMs,
      firstAtMs: Math.min(opts.intervalMs, 10_000),
      netem: opts.netem,
      bandwidth: opts.bandwidth,
      producerNodes: () => this.traffic.producerNodes(),
      t0: this.setup.t0,
      onLine: (line) => ctx.progress.info(line),
    });
    await systemClock.sleep(opts.durationMs, ctx.signal);
    if (opts.faultCount !== undefined) {
      this.stage = `until fault ${opts.faultCount} of ${opts.faultCount} is healed`;
      await allFaultsRun(ctx, this.nemesis, opts);
    }
  }

  /** The last fault healed, the producers stopped (their confirms awaited), the queues drained. */
  private async windDown(): Promise<void> {
    this.stage = 'healing the last fault';
    await this.nemesis!.finish();
    this.stage = 'stopping the producers';
    this.traffic.stopProducers();
    this.producers = await this.traffic.producersDone();
    this.stage = 'draining';
    this.drain = await drained(this.ctx, this.opts, this.setup.endpoints, this.setup.queues.all, () => this.traffic.lastDeliveryAt);
  }

  /** Heal at once, stop everything, take the last sample, close the store. */
  private async stopAll(): Promise<void> {
    await this.nemesis?.close();
    this.traffic.stopProducers();
    this.traffic.stopConsumers();
    if (this.producers.length === 0) this.producers = await this.traffic.producersDone();
    this.consumers = await this.traffic.consumersDone();
    this.sample();
    this.setup.closeStore();
  }

  private sample(): void {
    const { written, confirmed, inFlight } = this.traffic.counters();
    const consumed = this.traffic.consumed;
    this.samples.push({ tMs: Math.round(performance.now() - this.setup.t0), written, confirmed, consumed, inFlight });
  }

  /** Once a second: a timeline sample, and the live line. */
  private tick(): void {
    this.sample();
    const a = this.nemesis?.active();
    const c = this.traffic.counters();
    this.hooks.onLive?.({
      elapsedMs: performance.now() - this.setup.t0,
      durationMs: this.opts.durationMs,
      written: c.written,
      confirmed: c.confirmed,
      consumed: this.traffic.consumed,
      inFlight: c.inFlight,
      phase: a ? `${a.kind} ${a.nodes.join('+') || '…'} (${a.phase})` : this.stage === 'traffic' ? 'calm' : this.stage,
      faultKind: a ? a.kind : null,
      controlWritten: this.opts.control ? c.control : null,
    });
  }
}

/**
 * --fault-count: past --duration, until the nemesis has run every planned fault, each one at
 * most an interval, its hold and a rejoin away.
 */
async function allFaultsRun(ctx: Context, nemesis: NemesisHandle, opts: ChaosOptions): Promise<void> {
  let allRan = false;
  void nemesis.allRun.then(() => {
    allRan = true;
  });
  const left = Math.max(1, (opts.faultCount ?? 0) - nemesis.history.length + 1);
  await retryUntil(
    async () => allRan,
    (ran) => ran,
    {
      timeoutMs: left * (opts.intervalMs + opts.holdMs + opts.rejoinTimeoutMs),
      intervalMs: 500,
      signal: ctx.signal,
      describe: () => `the nemesis ran ${nemesis.history.length} of the ${opts.faultCount} faults (--fault-count) past --duration`,
    },
  );
}

function stripRun(opts: ChaosRunOptions): ChaosOptions {
  const { faultsGiven: _f, ...rest } = opts;
  return rest;
}
