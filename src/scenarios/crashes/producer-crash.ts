import type { Result, ResultPromise } from 'execa';
import { loadExeca } from '../../util/exec.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { withConnection } from '../../client/amqp091/connect.js';
import { consumerOptions } from '../../client/consumer-defaults.js';
import { runConsumer } from '../../client/amqp091/consumer.js';
import { newRunId } from '../../client/amqp091/publisher.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import type { FaultKind } from '../../faults/kinds.js';
import { startLeaderFault, type LeaderFaultHandle } from '../../faults/leader-fault-run.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { DeadlineError, ExitCode, InterruptedError, RmqBenchError, errorMessage, type ExitCodeValue } from '../../errors.js';
import { Ledger } from '../../ledger/ledger.js';
import { reconcile } from '../../ledger/reconcile.js';
import { openOutbox } from '../../store/outbox.js';
import { openProcessedStore } from '../../store/processed.js';
import { type ChildLine, killPlan, parseChildLine } from './producer-crash-plan.js';
import type { ProducerCrashMode } from './producer-crash-modes.js';
import {
  type KillRecord,
  type ProducerCrashFault,
  type ProducerCrashOptions,
  type ProducerCrashResult,
  type ProducerCrashRun,
  totalsFor,
  verdictOf,
} from './producer-crash-result.js';

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
        consumerOptions({
          urls: d.urls,
          queue: d.queue,
          prefetch: 500,
          ackEvery: 100,
          idleTimeoutMs: d.idleMs,
          heartbeatS: 5,
          reconnectTimeoutMs: 60_000,
          store,
        }),
        { signal: ctx.signal, onDelivery: (x) => void ledger.recordRead(x.messageId, { queue: d.queue, redelivered: x.redelivered }) },
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
  const r = new CrashRun(ctx, o, mode, run, execa);
  await r.makeDir();
  const { progress } = ctx;
  try {
    progress.start(`${r.label}: declaring the quorum queue ${r.queue}`);
    await r.declareQueue();
    await r.produce();
    const fault = await r.faultRecord();
    const { ledger, outbox } = r.applicationLedger();
    await ctx.checkpoint({ name: 'before-drain', queue: r.queue, vhost: ctx.config.vhost, mode, run });
    progress.update(`${r.label}: draining ${r.queue} with an idempotent consumer`);
    const drained = await drainIdempotent(ctx, { urls: r.urls, queue: r.queue, storeFile: r.storeFile, idleMs: o.drainIdleMs, label: r.label }, ledger);
    const result = r.result(fault, ledger, outbox, drained);
    progress.succeed(
      `${r.label}: ${result.kills.length} SIGKILLs, ${result.read}/${o.count} read, ${result.lost} lost, ${result.duplicated} duplicated, ${result.idempotent.duplicatesRemoved} removed by the idempotent consumer`,
    );
    return result;
  } finally {
    await r.cleanUp();
  }
}

type Execa = Awaited<ReturnType<typeof loadExeca>>;

/** One start of the producer child: how far it got, and where it was killed. */
interface Life {
  /** The planned kill point this start is to be killed past (undefined: run to completion). */
  nextKill: number | undefined;
  /** The position that triggered its SIGKILL. */
  killedAt: number | undefined;
  /** The highest position it reported. */
  position: number;
  /** The first position it reported: a kill waits for progress past it. */
  start: number | undefined;
}

/** naive: the events live in memory; a restart resumes after the last number the producer logged. */
function naiveMode(common: readonly string[], o: ProducerCrashOptions): Mode {
  // The last number the producer logged (-1: none yet).
  let lastSent = -1;
  return {
    mode: 'naive',
    args: () => [...common, '--start-at', String(lastSent + 1), '--print-sent', String(o.printEvery)],
    onLine: (l) => {
      if (l.kind === 'sent') lastSent = Math.max(lastSent, l.n);
    },
    afterKill: () => lastSent + 1,
    finished: () => lastSent + 1 >= o.count,
  };
}

/** outbox: every start runs on the same outbox file and resumes from its pending rows. */
function outboxMode(common: readonly string[], outboxFile: string): Mode {
  return { mode: 'outbox', args: () => [...common, '--outbox', outboxFile], onLine: () => undefined, afterKill: () => null, finished: () => false };
}

/**
 * One run of one mode: the queue, the producer child started and SIGKILLed at the planned points
 * until a start completes, the optional leader fault, and the application's record of what it
 * meant to send. cleanUp() kills a child still running, heals the fault, deletes the queue and
 * the temporary folder.
 */
class CrashRun {
  readonly label: string;
  readonly urls: string[];
  readonly queue: string;
  readonly runId: string;
  private readonly plan: ReturnType<typeof killPlan>;
  private dir = '';
  private outboxFile = '';
  storeFile = '';
  private m: Mode | undefined;
  private child: ResultPromise | undefined;
  private fault: LeaderFaultHandle | undefined;
  private faultAtPosition = 0;
  /** The highest position any start reported. */
  private position = 0;
  private readonly kills: KillRecord[] = [];
  private starts = 0;
  private readonly onAbort = (): void => {
    this.child?.kill('SIGKILL');
  };

  constructor(
    private readonly ctx: Context,
    private readonly o: ProducerCrashOptions,
    private readonly mode: ProducerCrashMode,
    private readonly run: number,
    private readonly execa: Execa,
  ) {
    const { config } = ctx;
    this.label = `${mode} run ${run}/${o.runs}`;
    this.urls = config.nodes.map((n) => amqpUrl(config, n));
    this.queue = `producer-crash-${mode}-${newRunId()}`;
    this.runId = newRunId();
    this.plan = killPlan(o.seed, run, o.count, o.kills);
  }

  /** The run's temporary folder (outbox and processed store), the child's arguments, and the abort listener. */
  async makeDir(): Promise<void> {
    const { o, queue } = this;
    this.dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-producer-crash-'));
    this.outboxFile = path.join(this.dir, 'outbox.sqlite');
    this.storeFile = path.join(this.dir, 'processed.sqlite');
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
      this.runId,
      '--progress-lines',
    ];
    this.m = this.mode === 'naive' ? naiveMode(common, o) : outboxMode(common, this.outboxFile);
    this.ctx.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  async declareQueue(): Promise<void> {
    await withConnection(this.urls, { heartbeatS: 5, timeoutMs: 30_000, signal: this.ctx.signal }, async ({ connection }) => {
      const ch = await connection.createChannel();
      // client-local: the leader is on the node the producer connects to first, so a leader fault also cuts it off.
      await ch.assertQueue(this.queue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-queue-leader-locator': 'client-local' } });
      await ch.close();
    });
  }

  /** Start, kill at the planned points, start again, until a start runs to completion. */
  async produce(): Promise<void> {
    const { ctx, o, label } = this;
    const deadline = performance.now() + o.childTimeoutMs * (o.kills + 1);
    for (;;) {
      if (ctx.signal.aborted) throw new InterruptedError();
      if (performance.now() > deadline)
        throw new DeadlineError(`${label}: the producer did not complete within ${o.childTimeoutMs * (o.kills + 1)} ms`, o.childTimeoutMs * (o.kills + 1));
      this.starts++;
      const life: Life = { nextKill: this.plan.killAt[this.kills.length], killedAt: undefined, position: 0, start: undefined };
      const r = await this.startOnce(life);
      if (ctx.signal.aborted) throw new InterruptedError();
      if (life.killedAt !== undefined && r.signal === 'SIGKILL' && !r.timedOut) {
        this.recordKill(life);
        if (this.m!.finished()) return;
        continue;
      }
      if (r.exitCode === 0) return;
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
  }

  /** One start of `rmq-bench producer`, its progress lines read as they come; resolves once it has exited. */
  private async startOnce(life: Life): Promise<Result> {
    const { ctx, o, label, starts } = this;
    const { progress, config } = ctx;
    const { nextKill } = life;
    progress.update(`${label}: producer start ${starts}${nextKill === undefined ? '' : `, SIGKILL at ${nextKill}/${o.count}`}`);
    const bin = path.join(config.projectRoot, 'bin', 'rmq-bench.js');
    const c = this.execa('node', [bin, 'producer', ...this.m!.args()], {
      cwd: config.projectRoot,
      reject: false,
      stdin: 'ignore',
      env: { RMQ_BENCH_QUIET: '1' },
      timeout: o.childTimeoutMs,
      killSignal: 'SIGKILL',
    });
    this.child = c;
    let partial = '';
    c.stdout?.on('data', (chunk: Buffer | string) => {
      const text = partial + String(chunk);
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      for (const raw of lines) {
        const l = parseChildLine(raw);
        if (l) this.onLine(l, life, c);
      }
      if (life.killedAt === undefined)
        progress.update(`${label}: producer start ${starts} at ${this.position}/${o.count}${nextKill === undefined ? '' : `, SIGKILL at ${nextKill}`}`);
    });
    const r = await c;
    this.child = undefined;
    return r;
  }

  /** A line from the child: the mode's bookkeeping, then (a position) the fault and the kill once their points are passed. */
  private onLine(l: ChildLine, life: Life, c: ResultPromise): void {
    const { o, plan } = this;
    this.m!.onLine(l);
    if (l.kind !== 'at') return;
    this.position = Math.max(this.position, l.n);
    life.position = Math.max(life.position, l.n);
    life.start ??= l.n;
    if (o.fault !== 'none' && !this.fault && this.position >= plan.faultAt) this.startFault(o.fault, this.position);
    // A point the previous start already ran past: kill once this start has made some progress of its own.
    if (life.nextKill !== undefined && life.killedAt === undefined && this.position >= life.nextKill && l.n > life.start) {
      life.killedAt = this.position;
      c.kill('SIGKILL');
    }
  }

  private startFault(kind: FaultKind, atPosition: number): void {
    const { ctx, o, label, queue } = this;
    this.faultAtPosition = atPosition;
    this.fault = startLeaderFault(ctx, { vhost: ctx.config.vhost, queue }, kind, {
      restoreAfterMs: 0,
      electionTimeoutMs: o.electionTimeoutMs,
      rejoinTimeoutMs: o.rejoinTimeoutMs,
      onPhase: (phase, t) => {
        if (phase === 'electing') ctx.progress.info(`${label}: ${kind} of ${t.node}, the leader of ${queue}, at ${atPosition}/${o.count}`);
      },
    });
  }

  private recordKill(life: Life): void {
    const restartFrom = this.m!.afterKill();
    this.kills.push({ life: this.starts, plannedAt: life.nextKill!, triggeredAt: life.killedAt!, atPosition: life.position, restartFrom });
    this.ctx.progress.info(
      `${this.label}: SIGKILL at ${life.position}/${this.o.count}${restartFrom === null ? '; restarting on the same outbox' : `; restarting from the last logged number + 1: ${restartFrom}`}`,
    );
  }

  /** The fault's record once its node has rejoined; null without a fault. */
  async faultRecord(): Promise<ProducerCrashFault | null> {
    const { fault } = this;
    if (!fault) return null;
    this.ctx.progress.update(`${this.label}: producer done; waiting for ${fault.timeline.node ?? 'the faulted node'} to rejoin`);
    const { timeline: t } = await fault.done;
    return { kind: t.kind, atPosition: this.faultAtPosition, node: t.node, newLeader: t.newLeader, electionMs: t.electionMs, error: t.error };
  }

  /** The application's record: every event attempted; written, and confirmed when the outbox marked it published. */
  applicationLedger(): { ledger: Ledger; outbox: ProducerCrashRun['outbox'] } {
    const { o } = this;
    const ledger = new Ledger({ runId: this.runId, capacity: o.count });
    for (let seq = 0; seq < o.count; seq++) ledger.attempt(seq);
    if (this.mode !== 'outbox') {
      // Every number up to the last one it logged, the naive producer believes sent.
      for (let seq = 0; seq < o.count; seq++) ledger.written(seq);
      return { ledger, outbox: null };
    }
    const box = openOutbox(this.outboxFile, { readonly: true });
    try {
      for (const row of box.states()) {
        ledger.written(row.seq);
        if (row.state === 'published') ledger.confirm(row.seq);
      }
      return { ledger, outbox: { ...box.counts(), integrity: box.integrity() } };
    } finally {
      box.close();
    }
  }

  /** What reached the queue against what the application meant to send. */
  result(
    fault: ProducerCrashFault | null,
    ledger: Ledger,
    outbox: ProducerCrashRun['outbox'],
    drained: { idempotent: ProducerCrashRun['idempotent']; leftInQueue: number },
  ): ProducerCrashRun {
    const { o } = this;
    const rec = reconcile(ledger);
    return {
      mode: this.mode,
      run: this.run,
      queue: this.queue,
      runId: this.runId,
      killPlan: this.plan.killAt,
      kills: this.kills,
      starts: this.starts,
      intended: o.count,
      read: rec.counts.readDistinct,
      lost: o.count - rec.counts.readDistinct,
      duplicated: rec.duplicated,
      extraDeliveries: rec.duplicateDeliveries,
      idempotent: drained.idempotent,
      outbox,
      fault,
      reconciliation: rec,
      leftInQueue: drained.leftInQueue,
    };
  }

  /** Every way out: the child killed, the fault healed, the queue and the temporary folder removed. */
  async cleanUp(): Promise<void> {
    const { ctx, fault, queue } = this;
    ctx.signal.removeEventListener('abort', this.onAbort);
    if (this.child) {
      this.child.kill('SIGKILL');
      await this.child.catch(() => undefined);
    }
    if (fault && !fault.timeline.restored && fault.timeline.phase !== 'failed') ctx.progress.info(`restoring ${fault.timeline.node ?? 'the faulted leader'}`);
    await fault?.close();
    await withConnection(this.urls, { heartbeatS: 5, timeoutMs: 30_000 }, async ({ connection }) => {
      const ch = await connection.createChannel();
      await ch.deleteQueue(queue);
      await ch.close();
    }).catch((err: unknown) => ctx.log(`could not delete the queue ${queue}: ${errorMessage(err)}`));
    await rm(this.dir, { recursive: true, force: true });
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
