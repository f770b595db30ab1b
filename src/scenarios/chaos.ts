import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Endpoints, endpointsFor } from '../amqp/locate.js';
import { connectAny, closeWithin } from '../amqp/connect.js';
import { runConsumer, type ConsumerResult } from '../amqp/consumer.js';
import { newRunId, runPublisher, type PublisherResult, type PublisherSnapshot } from '../amqp/publisher.js';
import { requireCluster } from '../cluster/cluster.js';
import type { FaultKind } from '../cluster/faults.js';
import { currentLeader, type QueueRef } from '../cluster/leader-fault.js';
import { shortNodeName } from '../cluster/leader.js';
import type { Context } from '../context.js';
import { EnvironmentError, errorMessage } from '../errors.js';
import { Ledger, parseMessageId } from '../ledger/ledger.js';
import { reconcile } from '../ledger/reconcile.js';
import { LatencyRecorder } from '../measure/histogram.js';
import { openProcessedStore } from '../store/processed.js';
import { renderChaosLive } from '../report/chaos.js';
import { maskUrl } from '../url.js';
import { retryUntil, systemClock } from '../util/retry.js';
import { startNemesis, type NemesisHandle } from './chaos-nemesis.js';
import {
  availability,
  type ChaosConsumer,
  type ChaosOptions,
  type ChaosProducer,
  type ChaosResult,
  type ChaosSample,
  chaosTotals,
  chaosVerdict,
  type ConfirmGap,
  GAP_MIN_MS,
  type LatencyPhase,
  nemesisSchedule,
} from './chaos-plan.js';

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

/** Which kinds can run here: the ones the injector refuses are left out of a default list, refused in a given one. */
async function usableFaults(ctx: Context, opts: ChaosRunOptions): Promise<{ kinds: FaultKind[]; skipped: ChaosResult['skippedKinds'] }> {
  const kinds: FaultKind[] = [];
  const skipped: ChaosResult['skippedKinds'] = [];
  for (const kind of opts.faults) {
    try {
      await ctx.faults.check(kind);
      kinds.push(kind);
    } catch (err) {
      if (opts.faultsGiven || !(err instanceof EnvironmentError)) throw err;
      skipped.push({ kind, why: errorMessage(err) });
    }
  }
  if (kinds.length === 0) throw new EnvironmentError(`none of the faults can be applied here (${skipped.map((s) => s.why).join('; ')})`);
  return { kinds, skipped };
}

const queueName = (opts: ChaosOptions, i: number): string => `${opts.queuePrefix}.${i + 1}`;
const controlQueue = (opts: ChaosOptions): string => `${opts.queuePrefix}.control`;

/**
 * Fresh quorum queues, each declared through a connection to node i mod 3 with the client-local
 * leader locator, so that their leaders start spread over the nodes; then awaited until every
 * member is online.
 */
async function declareQueues(ctx: Context, opts: ChaosOptions, endpoints: Endpoints, names: readonly string[]): Promise<void> {
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    await ctx.management.request('DELETE', `/api/queues/${encodeURIComponent(opts.vhost)}/${encodeURIComponent(name)}`).catch((err: unknown) => {
      if (!/404|not found/i.test(errorMessage(err))) throw err;
    });
    const c = await connectAny(endpoints.urls, i % endpoints.urls.length, { heartbeatS: opts.heartbeatS, timeoutMs: 15_000, signal: ctx.signal });
    try {
      const ch = await c.connection.createChannel();
      await ch.assertQueue(name, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-queue-leader-locator': 'client-local' } });
      await ch.close();
    } finally {
      await closeWithin(c.connection);
    }
  }
  for (const name of names) {
    await retryUntil(
      () => currentLeader(ctx, { vhost: opts.vhost, queue: name }),
      (q) => q.online.length >= q.members.length && q.members.length > 0,
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        signal: ctx.signal,
        describe: (l) =>
          `queue '${name}' not ready (${l.value ? `${l.value.online.length} of ${l.value.members.length} members online` : errorMessage(l.error)})`,
      },
    );
  }
}

async function deleteQueues(ctx: Context, vhost: string, names: readonly string[]): Promise<void> {
  for (const name of names)
    await ctx.management.request('DELETE', `/api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}`).catch((err: unknown) => {
      ctx.log(`could not delete queue ${name}: ${errorMessage(err)}`);
    });
}

async function leaderOrNull(ctx: Context, ref: QueueRef): Promise<string | null> {
  try {
    return shortNodeName((await currentLeader(ctx, ref)).leader);
  } catch {
    return null;
  }
}

/** Every producer's ledger, found by the run id in a consumed message's id. */
class Ledgers {
  readonly byRun = new Map<string, Ledger>();
  unexpected = 0;
  readonly unexpectedSamples: string[] = [];

  read(messageId: string | undefined): void {
    const parsed = messageId === undefined ? undefined : parseMessageId(messageId);
    const ledger = parsed ? this.byRun.get(parsed.runId) : undefined;
    if (ledger && parsed) {
      ledger.recordReadSeq(parsed.seq);
      return;
    }
    this.unexpected++;
    if (this.unexpectedSamples.length < 20) this.unexpectedSamples.push(String(messageId));
  }
}

export async function runChaos(ctx: Context, opts: ChaosRunOptions): Promise<ChaosResult> {
  await requireCluster(ctx);
  const { progress } = ctx;
  const { kinds, skipped } = await usableFaults(ctx, opts);
  for (const s of skipped) progress.info(`${s.kind} left out: ${s.why}`);
  const endpoints = await endpointsFor(ctx, opts.urls, opts.heartbeatS);
  const names = Array.from({ length: opts.queues }, (_, i) => queueName(opts, i));
  const allQueues = opts.control ? [...names, controlQueue(opts)] : names;
  const refs: QueueRef[] = names.map((queue) => ({ vhost: opts.vhost, queue }));

  progress.start(`declaring ${allQueues.length} quorum queues (${allQueues.join(', ')})`);
  await declareQueues(ctx, opts, endpoints, allQueues);
  const leadersAtStart = await Promise.all(allQueues.map((queue) => leaderOrNull(ctx, { vhost: opts.vhost, queue })));
  progress.succeed(`queues ready, leaders: ${allQueues.map((q, i) => `${q} ${leadersAtStart[i] ?? '?'}`).join(', ')}`);

  const storeDir = opts.storeFile ? undefined : mkdtempSync(path.join(tmpdir(), 'rmq-bench-chaos-'));
  const storeFile = opts.storeFile ?? path.join(storeDir!, 'processed.db');
  const store = openProcessedStore(storeFile, { idempotent: true });

  const t0 = performance.now();
  const startedAtIso = new Date().toISOString();
  const ledgers = new Ledgers();
  const stopProducers = new AbortController();
  const stopConsumers = new AbortController();
  const consumerSignal = AbortSignal.any([ctx.signal, stopConsumers.signal]);
  const latency = new Map<LatencyPhase, LatencyRecorder>();
  const gaps: ConfirmGap[] = [];
  let consumed = 0;
  let lastDeliveryAt = performance.now();
  const producerCount = opts.producers + (opts.control ? 1 : 0);
  const snapshots: (() => PublisherSnapshot)[] = [];
  const lastConfirmAt = new Array<number>(producerCount).fill(t0);
  const nodeOf = new Array<string | undefined>(producerCount).fill(undefined);
  const connectedTo: string[][] = Array.from({ length: producerCount }, () => []);
  const maskedUrls = endpoints.urls.map(maskUrl);

  const schedule = nemesisSchedule(opts.seed, kinds, opts.targets, opts.faultCount ?? Math.ceil(opts.durationMs / Math.max(1, opts.intervalMs)) + 2);
  let nemesis: NemesisHandle | undefined;
  const phaseNow = (): LatencyPhase => nemesis?.active()?.kind ?? 'calm';

  // Ledgers sized for the run at the nominal rate; they grow if a producer writes more.
  const capacity = Math.ceil((opts.ratePerSec * opts.durationMs) / 1000) + opts.window;
  const producerRuns: Promise<PublisherResult>[] = [];
  const runIds: string[] = [];
  for (let p = 0; p < producerCount; p++) {
    const isControl = p === opts.producers;
    const runId = newRunId();
    runIds.push(runId);
    const ledger = new Ledger({ runId, capacity });
    ledgers.byRun.set(runId, ledger);
    const queue = isControl ? controlQueue(opts) : names[p % names.length]!;
    producerRuns.push(
      runPublisher(
        {
          urls: endpoints.urls,
          startIndex: p % endpoints.urls.length,
          exchange: '',
          routingKey: queue,
          count: 2 ** 31 - 1,
          ratePerSec: opts.ratePerSec,
          sizeBytes: opts.sizeBytes,
          persistent: true,
          mandatory: false,
          mode: isControl ? 'none' : 'async',
          window: opts.window,
          batchSize: 100,
          confirmTimeoutMs: opts.confirmTimeoutMs,
          heartbeatS: opts.heartbeatS,
          reconnectTimeoutMs: opts.rejoinTimeoutMs + 60_000,
          runId,
          recordConfirmLatency: false,
        },
        ledger,
        {
          signal: ctx.signal,
          stop: stopProducers.signal,
          onStart: (snapshot) => {
            snapshots[p] = snapshot;
          },
          onConfirm: (ms) => {
            const now = performance.now();
            if (now - lastConfirmAt[p]! >= GAP_MIN_MS) gaps.push({ producer: p + 1, fromMs: lastConfirmAt[p]! - t0, toMs: now - t0 });
            lastConfirmAt[p] = now;
            if (ms === undefined) return;
            const phase = phaseNow();
            let rec = latency.get(phase);
            if (!rec) {
              rec = new LatencyRecorder();
              latency.set(phase, rec);
            }
            rec.recordMs(ms);
          },
          onEvent: (e) => {
            if (e.type === 'connected') {
              const i = maskedUrls.indexOf(e.detail);
              nodeOf[p] = i === -1 ? undefined : endpoints.nodes[i];
              connectedTo[p]!.push(nodeOf[p] ? shortNodeName(nodeOf[p]!) : e.detail);
            } else if (e.type === 'connection-lost' || e.type === 'gave-up') nodeOf[p] = undefined;
          },
        },
      ),
    );
  }

  const consumerCount = opts.consumers + (opts.control ? 1 : 0);
  const consumerQueues = Array.from({ length: consumerCount }, (_, c) =>
    opts.control && c === opts.consumers ? controlQueue(opts) : names[c % names.length]!,
  );
  const consumerRuns: Promise<ConsumerResult>[] = consumerQueues.map((queue, c) =>
    runConsumer(
      {
        urls: endpoints.urls,
        // Spread over the nodes, as the producers are: a fault hits some consumers, not all.
        startIndex: (c + 1) % endpoints.urls.length,
        queue,
        prefetch: opts.prefetch,
        autoAck: false,
        crashOnDelivery: false,
        failure: undefined,
        workMs: 0,
        ackEvery: 1,
        count: undefined,
        idleTimeoutMs: 2 ** 31 - 1,
        heartbeatS: opts.heartbeatS,
        reconnectTimeoutMs: opts.rejoinTimeoutMs + 60_000,
        store,
      },
      {
        signal: consumerSignal,
        onDelivery: (d) => {
          if (d.outcome !== 'processed' && d.outcome !== 'duplicate-skipped') return;
          // The timeline's consumed counts the confirming producers' queues; the control queue is apart.
          if (queue !== controlQueue(opts)) consumed++;
          lastDeliveryAt = performance.now();
          ledgers.read(d.messageId);
        },
        onEvent: (line) => {
          if (line.startsWith('connection lost')) ctx.log(`consumer ${c + 1}: ${line}`);
        },
      },
    ),
  );

  // Awaited only at the end: a failure before then must not be an unhandled rejection.
  for (const run of [...producerRuns, ...consumerRuns]) run.catch(() => undefined);

  const samples: ChaosSample[] = [];
  /** The confirming producers' live counters, summed (the control producer's are apart). */
  const counters = (): { written: number; confirmed: number; inFlight: number; control: number } => {
    const c = { written: 0, confirmed: 0, inFlight: 0, control: 0 };
    snapshots.forEach((snap, p) => {
      const s = snap();
      if (p === opts.producers) c.control += s.written;
      else {
        c.written += s.written;
        c.confirmed += s.confirmed;
        c.inFlight += s.inFlight;
      }
    });
    return c;
  };
  const sample = (): void => {
    const { written, confirmed, inFlight } = counters();
    samples.push({ tMs: Math.round(performance.now() - t0), written, confirmed, consumed, inFlight });
  };
  let stage = 'traffic';
  const ticker = setInterval(() => {
    sample();
    const a = nemesis?.active();
    const c = counters();
    progress.update(
      renderChaosLive({
        elapsedMs: performance.now() - t0,
        durationMs: opts.durationMs,
        written: c.written,
        confirmed: c.confirmed,
        consumed,
        inFlight: c.inFlight,
        phase: a ? `${a.kind} ${a.nodes.join('+') || '…'} (${a.phase})` : stage === 'traffic' ? 'calm' : stage,
      }) + (opts.control ? `, control written ${c.control}` : ''),
    );
  }, 1_000);

  let interrupted = false;
  let producers: PublisherResult[] = [];
  let consumers: ConsumerResult[] = [];
  try {
    progress.start(`chaos: ${opts.producers} producers, ${opts.consumers} consumers, ${opts.queues} queues, a fault every ${opts.intervalMs / 1000} s`);
    nemesis = startNemesis(ctx, {
      schedule,
      queues: refs,
      intervalMs: opts.intervalMs,
      holdMs: opts.holdMs,
      rejoinTimeoutMs: opts.rejoinTimeoutMs,
      firstAtMs: Math.min(opts.intervalMs, 10_000),
      netem: opts.netem,
      producerNodes: () => nodeOf.slice(0, opts.producers),
      t0,
      onLine: (line) => progress.info(line),
    });
    await systemClock.sleep(opts.durationMs, ctx.signal);
    if (opts.faultCount !== undefined) {
      stage = `until fault ${opts.faultCount} of ${opts.faultCount} is healed`;
      await allFaultsRun(ctx, nemesis, opts);
    }
    stage = 'healing the last fault';
    await nemesis.finish();
    stage = 'stopping the producers';
    stopProducers.abort();
    producers = await Promise.all(producerRuns);
    stage = 'draining';
    await drained(ctx, opts, allQueues, () => lastDeliveryAt);
  } catch (err) {
    if (!ctx.signal.aborted) throw err;
    interrupted = true;
  } finally {
    clearInterval(ticker);
    // Ctrl+C or an error: heal at once, stop everything, close the store.
    await nemesis?.close();
    stopProducers.abort();
    stopConsumers.abort();
    if (producers.length === 0) producers = await Promise.all(producerRuns);
    consumers = await Promise.all(consumerRuns);
    sample();
    store.close();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  }
  const endMs = performance.now() - t0;
  for (let p = 0; p < opts.producers; p++)
    if (endMs - (lastConfirmAt[p]! - t0) >= GAP_MIN_MS) gaps.push({ producer: p + 1, fromMs: lastConfirmAt[p]! - t0, toMs: endMs });

  const chaosProducers: ChaosProducer[] = producers.map((r, p) => ({
    producer: p + 1,
    queue: p === opts.producers ? controlQueue(opts) : names[p % names.length]!,
    confirms: p !== opts.producers,
    runId: runIds[p]!,
    reconnects: r.reconnects,
    longestStallMs: r.longestStallMs,
    connectedTo: connectedTo[p]!,
    reconciliation: reconcile(ledgers.byRun.get(runIds[p]!)!),
  }));
  const chaosConsumers: ChaosConsumer[] = consumers.map((r, c) => ({
    consumer: c + 1,
    queue: consumerQueues[c]!,
    received: r.received,
    processed: r.processed,
    duplicatesSkipped: r.duplicatesSkipped,
    reconnects: r.reconnects,
  }));
  const confirming = chaosProducers.filter((p) => p.confirms);
  const totals = chaosTotals(confirming);
  const control = opts.control ? chaosTotals(chaosProducers.filter((p) => !p.confirms)) : null;
  const verdict = chaosVerdict(totals, ledgers.unexpected);
  const reasons = [...verdict.reasons];
  if (interrupted) reasons.push('interrupted before the drain: messages still queued count as unread');
  const nemesisError = nemesis?.error() ?? null;
  if (nemesisError) reasons.push(`the nemesis stopped early: ${nemesisError}`);
  const history = [...(nemesis?.history ?? [])];
  const leadersAtEnd = await Promise.all(allQueues.map((queue) => leaderOrNull(ctx, { vhost: opts.vhost, queue })));
  if (!interrupted && verdict.ok) await deleteQueues(ctx, opts.vhost, allQueues);
  return {
    // The kinds that ran (a default list without the ones this host cannot apply); never a password.
    options: { ...stripRun(opts), faults: kinds, ...(opts.urls ? { urls: opts.urls.map(maskUrl) } : {}) },
    startedAtIso,
    durationMs: Math.round(endMs),
    queues: allQueues.map((name, i) => ({ name, leaderAtStart: leadersAtStart[i] ?? null, leaderAtEnd: leadersAtEnd[i] ?? null })),
    producers: chaosProducers,
    consumers: chaosConsumers,
    totals,
    control,
    unexpected: ledgers.unexpected,
    unexpectedSamples: ledgers.unexpectedSamples,
    absorbed: chaosConsumers.reduce((a, c) => a + c.duplicatesSkipped, 0),
    faults: history,
    availability: availability(history, gaps, endMs),
    latency: [...latency.entries()].map(([phase, rec]) => ({ phase, summary: rec.summary() })),
    samples,
    skippedKinds: skipped,
    interrupted,
    ok: verdict.ok && !interrupted && nemesisError === null,
    reasons,
  };
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

/**
 * The end of the drain: nothing delivered for drainIdleMs and every queue empty in the management
 * API (ready and unacked), or a 5-minute deadline, after which what is still queued counts as unread.
 */
async function drained(ctx: Context, opts: ChaosOptions, queues: readonly string[], lastDeliveryAt: () => number): Promise<void> {
  const deadline = performance.now() + 300_000;
  while (performance.now() < deadline) {
    await systemClock.sleep(500, ctx.signal);
    if (performance.now() - lastDeliveryAt() < opts.drainIdleMs) continue;
    let left = 0;
    for (const q of queues) {
      const info = await ctx.management.queue(opts.vhost, q).catch(() => undefined);
      const raw = info?.raw ?? {};
      left += Number(raw.messages ?? 0);
    }
    if (left === 0) return;
  }
  ctx.log('the queues were not empty after 5 minutes of draining: what is still queued counts as unread');
}
