import type { ResultPromise } from 'execa';
import { loadExeca } from '../../util/exec.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { newRunId, publishConfirmed } from '../../client/amqp091/publisher.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { InterruptedError } from '../../errors.js';
import { Ledger } from '../../ledger/ledger.js';
import { reconcile, type Reconciliation } from '../../ledger/reconcile.js';
import { countProcessed, openProcessedStore } from '../../store/processed.js';
import { retryUntil } from '../../util/retry.js';
import type { CrashMode } from './consumer-crash-modes.js';

/**
 * consumer-crash: publish N messages with confirms, run a consumer in a child process, SIGKILL
 * it mid-run, start a fresh one, let it finish, then reconcile what was *processed* (the
 * consumer's own durable SQLite record) against what was confirmed. Autoack, manual ack, and
 * manual ack with an idempotent store, side by side. Returns data; never prints.
 */

export type { CrashMode } from './consumer-crash-modes.js';

/** A read replayed from the store's counts: counted, its order unknown. */
const REPLAYED = { replayed: true } as const;

export interface ConsumerCrashOptions {
  queue: string;
  exchange: string;
  count: number;
  prefetch: number;
  workMs: number;
  /** Manual modes: one multiple-ack every N messages. */
  ackEvery: number;
  /** Share of the messages processed before the SIGKILL. */
  killAt: number;
  runs: number;
  modes: CrashMode[];
  idleTimeoutMs: number;
}

export interface CrashRun {
  mode: CrashMode;
  run: number;
  published: number;
  confirmed: number;
  processedBeforeKill: number;
  /** Distinct confirmed messages the store says were processed. */
  processed: number;
  /** Confirmed, never processed. */
  lost: number;
  /** Processed more than once (the work ran twice). */
  processedTwice: number;
  /** Redeliveries the idempotent store recognised and skipped. */
  duplicatesSkipped: number;
  unexpected: number;
  /**
   * null: the order of the deliveries was not observed. The consumers run in child processes and
   * their store logs what was processed, not the order deliveries arrived in nor which were
   * redeliveries; the reads are replayed from its counts.
   */
  order: Reconciliation['order'];
}

export interface ConsumerCrashResult {
  options: ConsumerCrashOptions;
  runs: CrashRun[];
  /** Manual ack loses nothing; with the idempotent store nothing is processed twice. */
  ok: boolean;
  reasons: string[];
}

function consumerArgs(ctx: Context, o: ConsumerCrashOptions, mode: CrashMode, store: string): string[] {
  return [
    path.join(ctx.config.projectRoot, 'bin', 'rmq-bench.js'),
    'consumer',
    '--queue',
    o.queue,
    '--work',
    `${o.workMs}ms`,
    // Prefetch and acks are manual ack's: the consumer refuses them with --autoack.
    ...(mode === 'autoack' ? [] : ['--prefetch', String(o.prefetch), '--multi-ack-every', String(o.ackEvery)]),
    '--idle-timeout',
    `${o.idleTimeoutMs}ms`,
    '--store',
    store,
    ...(mode === 'autoack' ? ['--autoack'] : []),
    ...(mode === 'idempotent' ? ['--idempotent'] : []),
  ];
}

async function oneRun(ctx: Context, o: ConsumerCrashOptions, mode: CrashMode, run: number): Promise<CrashRun> {
  const execa = await loadExeca();
  const { progress, config } = ctx;
  const label = `${mode} run ${run}/${o.runs}`;
  progress.start(`${label}: purging ${o.queue}`);
  await ctx.management.request('DELETE', `/api/queues/${encodeURIComponent(config.vhost)}/${encodeURIComponent(o.queue)}/contents`);
  const runId = newRunId();
  const ledger = new Ledger({ runId, capacity: o.count });
  progress.update(`${label}: publishing ${o.count} messages with confirms`);
  const pub = await publishConfirmed(
    { urls: config.nodes.map((n) => amqpUrl(config, n)), exchange: o.exchange, routingKey: o.queue, count: o.count, runId, signal: ctx.signal },
    ledger,
  );

  const point = { queue: o.queue, vhost: config.vhost, mode, run };
  await ctx.checkpoint({ name: 'before-consume', ...point });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-crash-'));
  const store = path.join(dir, 'processed.sqlite');
  const env = { RMQ_BENCH_QUIET: '1' };
  let child: ResultPromise | undefined;
  try {
    const killAt = Math.max(1, Math.floor(o.count * o.killAt));
    progress.update(`${label}: consumer running; SIGKILL after ${killAt} processed`);
    child = execa('node', consumerArgs(ctx, o, mode, store), { reject: false, stdin: 'ignore', env });
    const first = child;
    let exitedEarly = false;
    void first.then(() => (exitedEarly = true));
    const processedBeforeKill = await retryUntil(
      async () => countProcessed(store),
      (n) => n >= killAt || exitedEarly,
      { timeoutMs: 300_000, intervalMs: 20, signal: ctx.signal, describe: (l) => `the consumer did not process ${killAt} messages (last: ${l.value ?? 0})` },
    );
    first.kill('SIGKILL');
    await first;
    progress.update(`${label}: killed after ${processedBeforeKill} processed; a fresh consumer finishes the queue`);
    child = execa('node', consumerArgs(ctx, o, mode, store), { reject: false, stdin: 'ignore', env, timeout: 600_000 });
    const second = await child;
    if (second.exitCode !== 0 && !ctx.signal.aborted) {
      throw new Error(`the second consumer failed (exit ${second.exitCode}): ${String(second.stderr).trim().split('\n').pop() ?? ''}`);
    }
    if (ctx.signal.aborted) throw new InterruptedError();
    await ctx.checkpoint({ name: 'after-consume', ...point });

    const s = openProcessedStore(store, { idempotent: false, readonly: true });
    let duplicatesSkipped: number;
    try {
      for (const [id, n] of s.processedCounts()) for (let i = 0; i < n; i++) ledger.recordRead(id, REPLAYED);
      duplicatesSkipped = s.skippedDuplicates();
    } finally {
      s.close();
    }
    const r = reconcile(ledger);
    const result: CrashRun = {
      mode,
      run,
      published: pub.written,
      confirmed: r.counts.confirmed,
      processedBeforeKill,
      processed: r.counts.readDistinct,
      lost: r.lost,
      processedTwice: r.duplicated,
      duplicatesSkipped,
      unexpected: r.counts.unexpected,
      order: r.order,
    };
    progress.succeed(
      `${label}: ${result.processed} of ${result.confirmed} processed, ${result.lost} lost, ${result.processedTwice} processed twice, ${result.duplicatesSkipped} duplicates skipped`,
    );
    return result;
  } finally {
    child?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runConsumerCrash(ctx: Context, o: ConsumerCrashOptions): Promise<ConsumerCrashResult> {
  await requireCluster(ctx);
  const runs: CrashRun[] = [];
  for (let run = 1; run <= o.runs; run++) for (const mode of o.modes) runs.push(await oneRun(ctx, o, mode, run));
  const reasons: string[] = [];
  for (const r of runs) {
    if (r.mode !== 'autoack' && r.lost > 0) reasons.push(`${r.mode} run ${r.run}: ${r.lost} confirmed messages never processed`);
    if (r.mode === 'idempotent' && r.processedTwice > 0) reasons.push(`idempotent run ${r.run}: ${r.processedTwice} messages processed twice`);
    if (r.unexpected > 0) reasons.push(`${r.mode} run ${r.run}: ${r.unexpected} unexpected messages`);
  }
  return { options: o, runs, ok: reasons.length === 0, reasons };
}
