import type { ResultPromise } from 'execa';
import { loadExeca } from '../util/exec.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { withConnection } from '../amqp/connect.js';
import { runConsumer } from '../amqp/consumer.js';
import { newRunId } from '../amqp/publisher.js';
import { requireCluster } from '../cluster/cluster.js';
import type { FaultKind } from '../cluster/faults.js';
import { startLeaderFault, type LeaderFaultHandle } from '../cluster/leader-fault.js';
import { amqpUrl } from '../config.js';
import type { Context } from '../context.js';
import { DeadlineError, ExitCode, InterruptedError, RmqBenchError, errorMessage, type ExitCodeValue } from '../errors.js';
import { Ledger } from '../ledger/ledger.js';
import { reconcile, type Reconciliation } from '../ledger/reconcile.js';
import { openOutbox } from '../store/outbox.js';
import { openProcessedStore } from '../store/processed.js';
import { type ChildLine, killPlan, parseChildLine } from './producer-crash-plan.js';
import type { ProducerCrashMode } from './producer-crash-modes.js';

/**
 * producer-crash: the application means to send N events. A producer runs as a child process
 * (the real CLI) and is SIGKILLed at K random points; after each kill it is started again, until
 * it reports completion. Then the queue is drained by an idempotent consumer and every event is
 * reconciled against the N intended. Two modes:
 *
 *   naive   the events live in memory; the producer logs `sent <n>` every few messages, and a
 *           restart resumes after the last number it logged;
 *   outbox  each event is written to a SQLite outbox first; a relay publishes it with confirms
 *           and marks it published on the confirm; a restart resumes from the pending rows.
 *
 * Optionally a fault on the queue's leader during the same run. Returns data; never prints.
 */

export type { ProducerCrashMode } from './producer-crash-modes.js';

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

/** The producer child (or the draining consumer) failed: its own exit code when it is one of ours. */
class ChildFailed extends RmqBenchError {
  constructor(message: string, code: number | null | undefined) {
    const known = (Object.values(ExitCode) as number[]).includes(code ?? -1) && code !== 0 ? (code as ExitCodeValue) : ExitCode.internal;
    super(message, known);
  }
}

interface Mode {
  mode: ProducerCrashMode;
  /** argv after `rmq-bench producer`, for the next start. */
  args(): string[];
  onLine(line: ChildLine): void;
  /** After a kill: where the next start resumes (naive), or null. */
  afterKill(): number | null;
  /** After a kill: true when nothing is left to do (naive: the last logged number was the last event). */
  finished(): boolean;
}

/**
 * Drain the queue with the project's own consumer, idempotent (manual ack, SQLite store of
 * processed ids): every delivery goes into the ledger (duplicates included), the store says
 * what the consumer processed and what it recognised as a duplicate. A second pass when the
 * queue still reports messages after the consumer went idle.
 */
async function drainIdempotent(
  ctx: Context,
  d: { urls: string[]; queue: string; storeFile: string; idleMs: number; label: string },
  ledger: Ledger,
): Promise<{ idempotent: ProducerCrashRun['idempotent']; leftInQueue: number }> {
  const totals = { received: 0, processed: 0, duplicatesRemoved: 0, processedTwice: 0 };
  let leftInQueue = 0;
  for (let pass = 1; pass <= 3; pass++) {
    const store = openProcessedStore(d.storeFile, { idempotent: true });
    try {
      const r = await runConsumer(
        {
          urls: d.urls,
          queue: d.queue,
          prefetch: 500,
          autoAck: false,
          crashOnDelivery: false,
          failure: undefined,
          workMs: 0,
          ackEvery: 100,
          count: undefined,
          idleTimeoutMs: d.idleMs,
          heartbeatS: 5,
          reconnectTimeoutMs: 60_000,
          store,
        },
        { signal: ctx.signal, onDelivery: (x) => void ledger.recordRead(x.messageId) },
      );
      if (r.stoppedBecause === 'interrupted') throw new InterruptedError();
      if (r.stoppedBecause === 'gave-up') throw new ChildFailed(`${d.label}: the draining consumer gave up: ${r.gaveUp ?? ''}`, ExitCode.brokerUnavailable);
      totals.received += r.received;
      totals.processed += r.processed;
      totals.duplicatesRemoved += r.duplicatesSkipped;
      totals.processedTwice = [...store.processedCounts().values()].filter((n) => n > 1).length;
    } finally {
      store.close();
    }
    leftInQueue = await withConnection(d.urls, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal }, async ({ connection }) => {
      const ch = await connection.createChannel();
      const q = await ch.checkQueue(d.queue);
      await ch.close();
      return q.messageCount;
    });
    if (leftInQueue === 0) break;
    ctx.progress.info(`${d.label}: ${leftInQueue} messages still in ${d.queue} after the consumer went idle; draining again`);
  }
  return { idempotent: totals, leftInQueue };
}

async function oneRun(ctx: Context, o: ProducerCrashOptions, mode: ProducerCrashMode, run: number): Promise<ProducerCrashRun> {
  const execa = await loadExeca();
  const { progress, config } = ctx;
  const label = `${mode} run ${run}/${o.runs}`;
  const urls = config.nodes.map((n) => amqpUrl(config, n));
  const queue = `producer-crash-${mode}-${newRunId()}`;
  const runId = newRunId();
  const plan = killPlan(o.seed, run, o.count, o.kills);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-producer-crash-'));
  const outboxFile = path.join(dir, 'outbox.sqlite');
  const storeFile = path.join(dir, 'processed.sqlite');
  const bin = path.join(config.projectRoot, 'bin', 'rmq-bench.js');
  const common = [
    '--queue',
    queue,
    '--exchange',
    '',
    '--routing-key',
    queue,
    '-n',
    String(o.count),
    '--rate',
    String(o.ratePerSec),
    '--run-id',
    runId,
    '--progress-lines',
  ];

  // naive: the last number the producer logged (-1: none yet); a restart resumes after it.
  let lastSent = -1;
  const m: Mode =
    mode === 'naive'
      ? {
          mode,
          args: () => [...common, '--start-at', String(lastSent + 1), '--print-sent', String(o.printEvery)],
          onLine: (l) => {
            if (l.kind === 'sent') lastSent = Math.max(lastSent, l.n);
          },
          afterKill: () => lastSent + 1,
          finished: () => lastSent + 1 >= o.count,
        }
      : { mode, args: () => [...common, '--outbox', outboxFile], onLine: () => undefined, afterKill: () => null, finished: () => false };

  let child: ResultPromise | undefined;
  let fault: LeaderFaultHandle | undefined;
  let faultAtPosition = 0;
  const onAbort = (): void => {
    child?.kill('SIGKILL');
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    progress.start(`${label}: declaring the quorum queue ${queue}`);
    await withConnection(urls, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal }, async ({ connection }) => {
      const ch = await connection.createChannel();
      // client-local: the leader is on the node the producer connects to first, so a leader fault also cuts it off.
      await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-queue-leader-locator': 'client-local' } });
      await ch.close();
    });

    const startFault = (kind: FaultKind, atPosition: number): void => {
      faultAtPosition = atPosition;
      fault = startLeaderFault(ctx, { vhost: config.vhost, queue }, kind, {
        restoreAfterMs: 0,
        electionTimeoutMs: o.electionTimeoutMs,
        rejoinTimeoutMs: o.rejoinTimeoutMs,
        onPhase: (phase, t) => {
          if (phase === 'electing') progress.info(`${label}: ${kind} of ${t.node}, the leader of ${queue}, at ${atPosition}/${o.count}`);
        },
      });
    };

    // Start, kill at the planned points, start again, until a start runs to completion.
    const kills: KillRecord[] = [];
    let position = 0;
    let starts = 0;
    const deadline = performance.now() + o.childTimeoutMs * (o.kills + 1);
    for (;;) {
      if (ctx.signal.aborted) throw new InterruptedError();
      if (performance.now() > deadline)
        throw new DeadlineError(`${label}: the producer did not complete within ${o.childTimeoutMs * (o.kills + 1)} ms`, o.childTimeoutMs * (o.kills + 1));
      starts++;
      const nextKill = plan.killAt[kills.length];
      let killedAt: number | undefined;
      let lifePosition = 0;
      /** The first position this start reported: a kill waits for progress past it. */
      let lifeStart: number | undefined;
      progress.update(`${label}: producer start ${starts}${nextKill === undefined ? '' : `, SIGKILL at ${nextKill}/${o.count}`}`);
      const c = execa('node', [bin, 'producer', ...m.args()], {
        cwd: config.projectRoot,
        reject: false,
        stdin: 'ignore',
        env: { RMQ_BENCH_QUIET: '1' },
        timeout: o.childTimeoutMs,
        killSignal: 'SIGKILL',
      });
      child = c;
      let partial = '';
      c.stdout?.on('data', (chunk: Buffer | string) => {
        const text = partial + String(chunk);
        const lines = text.split('\n');
        partial = lines.pop() ?? '';
        for (const raw of lines) {
          const l = parseChildLine(raw);
          if (!l) continue;
          m.onLine(l);
          if (l.kind !== 'at') continue;
          position = Math.max(position, l.n);
          lifePosition = Math.max(lifePosition, l.n);
          lifeStart ??= l.n;
          if (o.fault !== 'none' && !fault && position >= plan.faultAt) startFault(o.fault, position);
          // A point the previous start already ran past: kill once this start has made some progress of its own.
          if (nextKill !== undefined && killedAt === undefined && position >= nextKill && l.n > lifeStart) {
            killedAt = position;
            c.kill('SIGKILL');
          }
        }
        if (killedAt === undefined)
          progress.update(`${label}: producer start ${starts} at ${position}/${o.count}${nextKill === undefined ? '' : `, SIGKILL at ${nextKill}`}`);
      });
      const r = await c;
      child = undefined;
      if (ctx.signal.aborted) throw new InterruptedError();
      if (killedAt !== undefined && r.signal === 'SIGKILL' && !r.timedOut) {
        const restartFrom = m.afterKill();
        kills.push({ life: starts, plannedAt: nextKill!, triggeredAt: killedAt, atPosition: lifePosition, restartFrom });
        progress.info(
          `${label}: SIGKILL at ${lifePosition}/${o.count}${restartFrom === null ? '; restarting on the same outbox' : `; restarting from the last logged number + 1: ${restartFrom}`}`,
        );
        if (m.finished()) break;
        continue;
      }
      if (r.exitCode === 0) break;
      const lastErr =
        String(r.stderr ?? '')
          .trim()
          .split('\n')
          .filter(Boolean)
          .pop() ?? '';
      throw new ChildFailed(
        r.timedOut
          ? `${label}: the producer did not finish within ${o.childTimeoutMs} ms`
          : `${label}: the producer failed (exit ${r.exitCode ?? r.signal ?? '?'}): ${lastErr}`,
        r.timedOut ? ExitCode.timeout : r.exitCode,
      );
    }

    let faultRecord: ProducerCrashFault | null = null;
    if (fault) {
      progress.update(`${label}: producer done; waiting for ${fault.timeline.node ?? 'the faulted node'} to rejoin`);
      const { timeline: t } = await fault.done;
      faultRecord = { kind: t.kind, atPosition: faultAtPosition, node: t.node, newLeader: t.newLeader, electionMs: t.electionMs, error: t.error };
    }

    // The application's record, and what reached the queue.
    const ledger = new Ledger({ runId, capacity: o.count });
    for (let seq = 0; seq < o.count; seq++) ledger.attempt(seq);
    let outbox: ProducerCrashRun['outbox'] = null;
    if (mode === 'outbox') {
      const box = openOutbox(outboxFile, { readonly: true });
      try {
        for (const row of box.states()) {
          ledger.written(row.seq);
          if (row.state === 'published') ledger.confirm(row.seq);
        }
        outbox = { ...box.counts(), integrity: box.integrity() };
      } finally {
        box.close();
      }
    } else {
      // Every number up to the last one it logged, the naive producer believes sent.
      for (let seq = 0; seq < o.count; seq++) ledger.written(seq);
    }

    await ctx.checkpoint({ name: 'before-drain', queue, vhost: config.vhost, mode, run });
    progress.update(`${label}: draining ${queue} with an idempotent consumer`);
    const drained = await drainIdempotent(ctx, { urls, queue, storeFile, idleMs: o.drainIdleMs, label }, ledger);

    const rec = reconcile(ledger);
    const result: ProducerCrashRun = {
      mode,
      run,
      queue,
      runId,
      killPlan: plan.killAt,
      kills,
      starts,
      intended: o.count,
      read: rec.counts.readDistinct,
      lost: o.count - rec.counts.readDistinct,
      duplicated: rec.duplicated,
      extraDeliveries: rec.duplicateDeliveries,
      idempotent: drained.idempotent,
      outbox,
      fault: faultRecord,
      reconciliation: rec,
      leftInQueue: drained.leftInQueue,
    };
    progress.succeed(
      `${label}: ${kills.length} SIGKILLs, ${result.read}/${o.count} read, ${result.lost} lost, ${result.duplicated} duplicated, ${result.idempotent.duplicatesRemoved} removed by the idempotent consumer`,
    );
    return result;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    if (child) {
      child.kill('SIGKILL');
      await child.catch(() => undefined);
    }
    if (fault && !fault.timeline.restored && fault.timeline.phase !== 'failed') progress.info(`restoring ${fault.timeline.node ?? 'the faulted leader'}`);
    await fault?.close();
    await withConnection(urls, { heartbeatS: 5, timeoutMs: 30_000 }, async ({ connection }) => {
      const ch = await connection.createChannel();
      await ch.deleteQueue(queue);
      await ch.close();
    }).catch((err: unknown) => ctx.log(`could not delete the queue ${queue}: ${errorMessage(err)}`));
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runProducerCrash(ctx: Context, o: ProducerCrashOptions): Promise<ProducerCrashResult> {
  await requireCluster(ctx);
  if (o.fault !== 'none') await ctx.faults.check(o.fault);
  const runs: ProducerCrashRun[] = [];
  for (let run = 1; run <= o.runs; run++) for (const mode of o.modes) runs.push(await oneRun(ctx, o, mode, run));
  const { ok, reasons } = verdictOf(runs);
  return { options: o, runs, totals: o.modes.map((m) => totalsFor(m, runs)), ok, reasons };
}
