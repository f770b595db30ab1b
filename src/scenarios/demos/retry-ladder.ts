import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { DeadlineError, InterruptedError, errorMessage } from '../../errors.js';
import { systemClock } from '../../util/retry.js';

/**
 * retry-demo --backoff: a ladder of retry queues with growing TTLs that ends in demo.dlq,
 * instead of the article's single retry queue that loops for ever.
 *
 * The broker routes the ladder, and the attempt number travels with the message: the work
 * queue dead-letters a failed message to the direct exchange demo.backoff with its routing
 * key `attempt-<k>`; that key is bound to rung k (demo.backoff.<k>, TTL t_k), which
 * dead-letters it back to the work queue with the key `attempt-<k+1>`; after the last rung,
 * `attempt-<N+1>` is bound to demo.dlq. The consumer reads x-death to count earlier attempts
 * and checks that it agrees with the rung the broker chose. (The consumer cannot pick the
 * rung by republishing: RabbitMQ 4.x ignores x-death headers a client publishes, measured on
 * 4.3.6, so the attempt history would start over.) Returns data; never prints.
 */

export interface RetryLadderOptions {
  /** The ladder's TTLs, already scaled. */
  backoffMs: number[];
  /** The factor applied to the given TTLs (for the report). */
  timeScale: number;
  /** Attempts that fail before the good message succeeds (at most the number of rungs). */
  failures: number;
  toleranceMs: number;
}

export interface LadderAttempt {
  messageId: string;
  attempt: number;
  atMs: number;
  gapMs: number | null;
  /** The TTL the previous rung should have held it for. */
  expectedGapMs: number | null;
  routingKey: string;
  /** Earlier attempts counted from x-death (rejected from the work queue). */
  earlierAttempts: number;
  /** The rung it last came back from, per x-death. */
  lastRung: string | undefined;
  outcome: 'failed' | 'processed';
}

export interface RetryLadderResult {
  mode: 'ladder';
  workQueue: string;
  rungs: { queue: string; ttlMs: number }[];
  timeScale: number;
  toleranceMs: number;
  good: { messageId: string; failures: number; processedTimes: number };
  poison: { messageId: string; attempts: number; inDlq: boolean; dlqRoutingKey: string | undefined; deaths: string[] };
  attempts: LadderAttempt[];
  ok: boolean;
  problems: string[];
}

export const WORK_QUEUE = 'demo.backoff.orders';
export const LADDER_EXCHANGE = 'demo.backoff';
export const RETURN_EXCHANGE = 'demo.backoff.return';
const DLQ = 'demo.dlq';

export function rungQueue(k: number): string {
  return `demo.backoff.${k}`;
}

export function attemptKey(attempt: number): string {
  return `attempt-${attempt}`;
}

/** Where a message that failed attempt `attempt` goes: rung `attempt`, or demo.dlq past the last. Pure. */
export function destinationAfter(attempt: number, rungs: number): string {
  return attempt <= rungs ? rungQueue(attempt) : DLQ;
}

/** The ladder's queues and bindings. Pure. */
export function ladderTopology(backoffMs: readonly number[]): {
  rungs: { queue: string; ttlMs: number; arguments: Record<string, unknown>; bindingKey: string }[];
  dlqBindingKey: string;
} {
  return {
    rungs: backoffMs.map((ttlMs, i) => ({
      queue: rungQueue(i + 1),
      ttlMs,
      arguments: {
        'x-queue-type': 'quorum',
        'x-message-ttl': ttlMs,
        'x-dead-letter-exchange': RETURN_EXCHANGE,
        'x-dead-letter-routing-key': attemptKey(i + 2),
      },
      bindingKey: attemptKey(i + 1),
    })),
    dlqBindingKey: attemptKey(backoffMs.length + 1),
  };
}

/** Earlier attempts and the last rung, from a delivery's x-death. Pure. */
export function ladderHistory(
  headers: Record<string, unknown> | undefined,
  workQueue: string,
): { earlierAttempts: number; lastRung: string | undefined; deaths: string[] } {
  const deaths = Array.isArray(headers?.['x-death']) ? (headers['x-death'] as Record<string, unknown>[]) : [];
  let earlier = 0;
  for (const d of deaths) {
    if (d.queue === workQueue && d.reason === 'rejected') earlier += Number(d.count ?? 0);
  }
  const lastQueue = headers?.['x-last-death-queue'];
  const lastRung = typeof lastQueue === 'string' && lastQueue !== workQueue ? lastQueue : undefined;
  return { earlierAttempts: earlier, lastRung, deaths: deaths.map((d) => `${String(d.reason)} from ${String(d.queue)} ×${String(d.count)}`) };
}

/** Gap checks for one message's attempts against the rungs it went through. Pure. */
export function checkLadderGaps(
  attempts: readonly { atMs: number }[],
  backoffMs: readonly number[],
  toleranceMs: number,
): { gaps: number[]; problems: string[] } {
  const gaps: number[] = [];
  const problems: string[] = [];
  for (let i = 1; i < attempts.length; i++) {
    const gap = attempts[i]!.atMs - attempts[i - 1]!.atMs;
    gaps.push(gap);
    const ttl = backoffMs[i - 1];
    if (ttl === undefined) {
      problems.push(`attempt ${i + 1} happened, but the ladder has only ${backoffMs.length} rungs`);
      continue;
    }
    if (gap < ttl) problems.push(`attempt ${i + 1} came ${Math.round(gap)} ms after attempt ${i}, before rung ${i}'s ${ttl} ms TTL`);
    else if (gap > ttl + toleranceMs)
      problems.push(`attempt ${i + 1} came ${Math.round(gap)} ms after attempt ${i}, more than rung ${i}'s ${ttl} ms + ${toleranceMs} ms`);
  }
  return { gaps, problems };
}

type Step = (title: string) => Promise<void>;

export async function runRetryLadder(ctx: Context, o: RetryLadderOptions, step: Step): Promise<RetryLadderResult> {
  await requireCluster(ctx);
  const { config } = ctx;
  const urls = config.nodes.map((n) => amqpUrl(config, n));
  const c = await connectAny(urls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench retry-demo --backoff' });
  c.connection.on('error', () => undefined);
  const topo = ladderTopology(o.backoffMs);
  const n = topo.rungs.length;
  const failures = Math.min(o.failures, n);
  const runId = Date.now().toString(36);
  const good = `ladder-${runId}-good`;
  const poison = `ladder-${runId}-poison`;
  let declared = false;
  let admin: ConfirmChannel | undefined;
  try {
    admin = await c.connection.createConfirmChannel();
    admin.on('error', () => undefined);
    await step(
      `setup: work queue ${WORK_QUEUE} dead-letters to ${LADDER_EXCHANGE} (direct); rungs ${topo.rungs.map((r) => `${r.queue} (${r.bindingKey}, TTL ${r.ttlMs} ms)`).join(', ')}; ${topo.dlqBindingKey} → ${DLQ}`,
    );
    await teardown(admin);
    declared = true;
    await declareLadder(admin, topo);

    await step(
      `publish two messages with the key ${attemptKey(1)}: ${good} fails ${failures} time(s) and then succeeds; ${poison} always fails, climbs all ${n} rungs and ends in ${DLQ}`,
    );
    const t0 = performance.now();
    for (const id of [good, poison]) admin.publish(RETURN_EXCHANGE, attemptKey(1), Buffer.from(`retry-ladder ${id}`), { messageId: id, persistent: true });
    await admin.waitForConfirms();

    const ladder = new LadderConsumer(ctx, o, { good, poison, failures, rungs: n, t0 });
    await ladder.consume(c.connection);
    await ladder.untilDone();

    await step(`${poison} failed its attempt ${n + 1}: the ladder is exhausted; looking for it in ${DLQ}`);
    const dead = await findInDlq(admin, poison, 10_000, ctx.signal);
    return ladder.result(topo, dead);
  } finally {
    if (declared && admin) {
      await teardown(admin).catch((err: unknown) => ctx.log(`could not remove the ladder: ${errorMessage(err)}`));
    }
    await closeWithin(c.connection);
  }
}

/** The work queue (dead-lettering to the ladder), the rungs, and demo.dlq bound past the last rung. */
async function declareLadder(admin: ConfirmChannel, topo: ReturnType<typeof ladderTopology>): Promise<void> {
  await admin.assertExchange(LADDER_EXCHANGE, 'direct', { durable: true });
  await admin.assertExchange(RETURN_EXCHANGE, 'fanout', { durable: true });
  await admin.assertQueue(WORK_QUEUE, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': LADDER_EXCHANGE } });
  await admin.bindQueue(WORK_QUEUE, RETURN_EXCHANGE, '');
  for (const r of topo.rungs) {
    await admin.assertQueue(r.queue, { durable: true, arguments: r.arguments });
    await admin.bindQueue(r.queue, LADDER_EXCHANGE, r.bindingKey);
  }
  await admin.assertQueue(DLQ, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await admin.bindQueue(DLQ, LADDER_EXCHANGE, topo.dlqBindingKey);
}

type DlqFind = { routingKey: string; deaths: string[] } | undefined;

interface LadderMessages {
  /** Fails `failures` times, then succeeds. */
  good: string;
  /** Always fails: climbs every rung and ends in demo.dlq. */
  poison: string;
  failures: number;
  rungs: number;
  /** performance.now() when they were published: attempts are timed from it. */
  t0: number;
}

/**
 * The consumer on the work queue: it fails (nacks) the good message until x-death counts
 * `failures` earlier attempts and the poison message always, records every attempt, and checks
 * the attempts against the ladder at the end.
 */
class LadderConsumer {
  readonly attempts: LadderAttempt[] = [];
  readonly problems: string[] = [];
  /** Messages finished: the good one processed, the poison one past its last rung. */
  private done = 0;
  /** Wakes untilDone when an attempt arrives. */
  private wake: (() => void) | undefined;

  constructor(
    private readonly ctx: Context,
    private readonly o: RetryLadderOptions,
    private readonly m: LadderMessages,
  ) {}

  async consume(connection: ChannelModel): Promise<void> {
    const ch = await connection.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(10);
    await ch.consume(WORK_QUEUE, (m: ConsumeMessage | null) => {
      if (m) this.onDelivery(ch, m);
    });
  }

  private onDelivery(ch: Channel, m: ConsumeMessage): void {
    const { good, poison, failures, rungs: n } = this.m;
    const id = typeof m.properties.messageId === 'string' ? m.properties.messageId : '';
    if (id !== good && id !== poison) {
      this.problems.push(`a message that is not the demo's (${id || 'no id'}) was in ${WORK_QUEUE}; acked and ignored`);
      ch.ack(m);
      return;
    }
    const atMs = performance.now() - this.m.t0;
    const mine = this.attempts.filter((a) => a.messageId === id);
    const h = ladderHistory(m.properties.headers, WORK_QUEUE);
    const attempt = mine.length + 1;
    const fail = id === poison || h.earlierAttempts < failures;
    const prev = mine[mine.length - 1];
    this.attempts.push({
      messageId: id,
      attempt,
      atMs,
      gapMs: prev ? atMs - prev.atMs : null,
      expectedGapMs: prev ? (this.o.backoffMs[attempt - 2] ?? null) : null,
      routingKey: m.fields.routingKey,
      earlierAttempts: h.earlierAttempts,
      lastRung: h.lastRung,
      outcome: fail ? 'failed' : 'processed',
    });
    this.ctx.progress.info(
      `  ${id} attempt ${attempt} at ${(atMs / 1000).toFixed(2)} s (key ${m.fields.routingKey}, x-death: ${h.earlierAttempts} earlier) → ${fail ? `failed: nack → ${destinationAfter(attempt, n)}` : 'processed'}`,
    );
    if (fail) ch.nack(m, false, false);
    else ch.ack(m);
    if ((id === good && !fail) || (id === poison && attempt === n + 1)) this.done += 1;
    this.wake?.();
  }

  /** Until both messages are done, within the ladder's TTLs plus the tolerance per attempt and 15 s. */
  async untilDone(): Promise<void> {
    const { o, ctx } = this;
    const n = this.m.rungs;
    const budgetMs = o.backoffMs.reduce((s, t) => s + t, 0) + (n + 1) * o.toleranceMs + 15_000;
    const deadline = performance.now() + budgetMs;
    while (this.done < 2) {
      if (ctx.signal.aborted) throw new InterruptedError();
      const left = deadline - performance.now();
      if (left <= 0) throw new DeadlineError(`the ladder did not finish within ${budgetMs} ms (${this.attempts.length} attempts seen)`, budgetMs);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 500));
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** The attempts checked against the ladder (gaps, keys, x-death, rungs, counts, the DLQ), and the result. */
  result(topo: ReturnType<typeof ladderTopology>, dead: DlqFind): RetryLadderResult {
    const { o, problems, attempts } = this;
    const { good, poison, failures, rungs: n } = this.m;
    const goodAttempts = attempts.filter((a) => a.messageId === good);
    const poisonAttempts = attempts.filter((a) => a.messageId === poison);
    for (const [label, list] of [
      ['good', goodAttempts],
      ['poison', poisonAttempts],
    ] as const) {
      const { problems: gapProblems } = checkLadderGaps(list, o.backoffMs, o.toleranceMs);
      problems.push(...gapProblems.map((p) => `${label}: ${p}`));
      for (const a of list) problems.push(...attemptProblems(label, a));
    }
    const processedTimes = goodAttempts.filter((a) => a.outcome === 'processed').length;
    if (goodAttempts.length !== failures + 1) problems.push(`good: ${goodAttempts.length} attempts, expected ${failures + 1}`);
    if (processedTimes !== 1) problems.push(`good: processed ${processedTimes} times, expected once`);
    if (poisonAttempts.length !== n + 1) problems.push(`poison: ${poisonAttempts.length} attempts, expected ${n + 1}`);
    if (!dead) problems.push(`poison: not found in ${DLQ} after the last rung`);
    else if (dead.routingKey !== topo.dlqBindingKey) problems.push(`poison: reached ${DLQ} with the key ${dead.routingKey}, expected ${topo.dlqBindingKey}`);
    return {
      mode: 'ladder',
      workQueue: WORK_QUEUE,
      rungs: topo.rungs.map((r) => ({ queue: r.queue, ttlMs: r.ttlMs })),
      timeScale: o.timeScale,
      toleranceMs: o.toleranceMs,
      good: { messageId: good, failures, processedTimes },
      poison: { messageId: poison, attempts: poisonAttempts.length, inDlq: dead !== undefined, dlqRoutingKey: dead?.routingKey, deaths: dead?.deaths ?? [] },
      attempts,
      ok: problems.length === 0,
      problems,
    };
  }
}

/** One attempt against the rung it should have come from: its routing key, its x-death count, its last rung. */
function attemptProblems(label: string, a: LadderAttempt): string[] {
  const problems: string[] = [];
  if (a.routingKey !== attemptKey(a.attempt))
    problems.push(`${label}: attempt ${a.attempt} arrived with the key ${a.routingKey}, not ${attemptKey(a.attempt)}`);
  if (a.earlierAttempts !== a.attempt - 1)
    problems.push(`${label}: attempt ${a.attempt} has ${a.earlierAttempts} earlier attempts in x-death, not ${a.attempt - 1}`);
  if (a.attempt > 1 && a.lastRung !== rungQueue(a.attempt - 1))
    problems.push(`${label}: attempt ${a.attempt} came back from ${a.lastRung ?? 'nowhere'}, not ${rungQueue(a.attempt - 1)}`);
  return problems;
}

/** Remove the ladder (the work queue, rungs, exchanges and demo.dlq's ladder binding); demo.dlq itself stays. */
async function teardown(ch: Channel): Promise<void> {
  // Rungs from an earlier, longer ladder too.
  for (let k = 1; k <= 20; k++) await ch.deleteQueue(rungQueue(k));
  await ch.deleteQueue(WORK_QUEUE);
  await ch.deleteExchange(LADDER_EXCHANGE);
  await ch.deleteExchange(RETURN_EXCHANGE);
}

/**
 * Find one message in demo.dlq by id without disturbing the others: read them all unacked,
 * then give them back with nack-requeue (which does not count as a failed delivery).
 */
async function findInDlq(ch: Channel, messageId: string, timeoutMs: number, signal: AbortSignal): Promise<DlqFind> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const got = [];
    let found: { routingKey: string; deaths: string[] } | undefined;
    for (;;) {
      const m = await ch.get(DLQ, { noAck: false });
      if (!m) break;
      got.push(m);
      if (m.properties.messageId === messageId) found = { routingKey: m.fields.routingKey, deaths: ladderHistory(m.properties.headers, WORK_QUEUE).deaths };
    }
    if (got.length > 0) ch.nack(got[got.length - 1]!, true, true);
    if (found || performance.now() > deadline) return found;
    await systemClock.sleep(250, signal);
  }
}
