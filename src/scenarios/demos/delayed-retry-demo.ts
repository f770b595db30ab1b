import type { Channel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { closeChannelWithin, closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { askAppliedPolicy } from '../../cluster/broker/applied-policy.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { HttpError } from '../../cluster/broker/management.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { DeadlineError, EnvironmentError, InterruptedError, UsageError, errorMessage } from '../../errors.js';
import { systemClock } from '../../util/retry.js';
import {
  checkDelay,
  DEFAULT_DELIVERY_LIMIT,
  type DelayedRetryDemoOptions,
  type DelayedRetryDemoResult,
  delayedRetryUnsupported,
  demoQueue,
  demoSetup,
  EARLY_SLACK_MS,
  type KeptPolicy,
  type MeasuredRedelivery,
  numberOf,
  type PlannedReturn,
  POLICY_PRIORITY,
  returnPlan,
  type RoundResult,
  TEMP_POLICY,
} from './delayed-retry-plan.js';

/**
 * delayed-retry-demo: RabbitMQ 4.3's native delayed retry for quorum queues, measured. A
 * message given back to a quorum queue with delayed retry on is held for
 * min(min × delivery count, max) before it is delivered again, for the kinds of return the
 * type names: "failed" returns (basic.reject requeue=true, or a channel closed with the
 * message unacked: both raise x-delivery-count) and "returned" ones (basic.nack requeue=true:
 * x-delivery-count stays). On RabbitMQ 4.3.6, a return the type does not name comes back at
 * once, and a "returned" return with x-delivery-count 0 waits `min`. Returns data; never prints.
 */

type Step = (title: string) => Promise<void>;

/** One delivery, on the channel it came on, and when (performance.now()). */
interface Delivery {
  m: ConsumeMessage;
  ch: Channel;
  at: number;
}

/** Deliveries as they arrive, taken one at a time with a deadline. */
class Inbox {
  private readonly items: Delivery[] = [];
  private wake: (() => void) | undefined;

  push(m: ConsumeMessage, ch: Channel): void {
    this.items.push({ m, ch, at: performance.now() });
    this.wake?.();
  }

  async take(deadline: number, signal: AbortSignal, onTick: () => void): Promise<Delivery | undefined> {
    for (;;) {
      const item = this.items.shift();
      if (item) return item;
      if (signal.aborted) throw new InterruptedError();
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const t = setTimeout(
          () => {
            this.wake = undefined;
            onTick();
            resolve();
          },
          Math.min(left, 1_000),
        );
        this.wake = () => {
          clearTimeout(t);
          this.wake = undefined;
          resolve();
        };
      });
    }
  }
}

export async function runDelayedRetryDemo(ctx: Context, o: DelayedRetryDemoOptions, step: Step): Promise<DelayedRetryDemoResult> {
  await requireCluster(ctx);
  const { config } = ctx;
  const brokerVersion = await supportedBrokerVersion(ctx, o);
  const kept = await dlxOrders(ctx);
  const deliveryLimit = numberOf(kept.base['delivery-limit']) ?? DEFAULT_DELIVERY_LIMIT;
  const plan = returnPlan(o.type, o.returns, o.minMs, o.maxMs);
  refuseOverLimit(o, plan, deliveryLimit);
  const queue = demoQueue(o.via);
  const setup = demoSetup(o, queue, kept, deliveryLimit);

  const urls = config.nodes.map((n) => amqpUrl(config, n));
  const c = await connectAny(urls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench delayed-retry-demo' });
  c.connection.on('error', () => undefined);
  const demo = new DelayedRetryRun(ctx, o, queue, c.connection);
  try {
    const admin = await c.connection.createConfirmChannel();
    admin.on('error', () => undefined);
    if (o.via === 'policy') await demo.setPolicy(admin, setup, kept, step);
    else await demo.declareWithArguments(admin, setup.definition, step);
    await demo.publish(admin, plan, step);
    await demo.subscribe();
    const processed = await demo.playRounds(plan);
    const { messages, problems } = demo;
    if (processed !== messages.length) problems.push(`${processed} of ${messages.length} messages processed`);
    return {
      brokerVersion,
      via: o.via,
      queue,
      type: o.type,
      minMs: o.minMs,
      maxMs: o.maxMs,
      toleranceMs: o.toleranceMs,
      earlySlackMs: EARLY_SLACK_MS,
      setup,
      deliveryLimit,
      messages,
      rounds: demo.rounds,
      deliveries: demo.deliveries,
      processed,
      ok: problems.length === 0,
      problems,
    };
  } finally {
    await demo.cleanUp();
  }
}

/** The broker's version; an EnvironmentError when it does not take delayed retry the way asked. */
async function supportedBrokerVersion(ctx: Context, o: DelayedRetryDemoOptions): Promise<string> {
  const overview = (await ctx.management.get('/api/overview')) as { rabbitmq_version?: string };
  const brokerVersion = overview.rabbitmq_version ?? 'unknown';
  const unsupported = delayedRetryUnsupported(brokerVersion, o.via);
  if (unsupported) throw new EnvironmentError(unsupported);
  return brokerVersion;
}

/** dlx-orders: the policy a priority-15 policy on demo.orders would shadow (none: nothing to keep). */
async function dlxOrders(ctx: Context): Promise<KeptPolicy> {
  try {
    const p = (await ctx.management.get(`/api/policies/${encodeURIComponent(ctx.config.vhost)}/dlx-orders`)) as { definition?: Record<string, unknown> };
    return { base: p.definition ?? {}, keptFrom: 'dlx-orders' };
  } catch (err) {
    if (!(err instanceof HttpError && err.status === 404)) throw err;
    return { base: {}, keptFrom: null };
  }
}

/** More counted returns than the delivery-limit would dead-letter the message: a UsageError. */
function refuseOverLimit(o: DelayedRetryDemoOptions, plan: readonly PlannedReturn[], deliveryLimit: number): void {
  const counted = plan.filter((p) => p.class === 'failed').length;
  if (counted > deliveryLimit) {
    throw new UsageError(
      `--returns ${o.returns} makes ${counted} counted returns, more than the delivery-limit ${deliveryLimit}: the message would be dead-lettered`,
      {
        hint: `use --returns ${o.returns - (counted - deliveryLimit)} or less`,
      },
    );
  }
}

/**
 * The demo on one connection: the setup, the messages published together, and each round of
 * returns measured against the plan. Undoes its setup in cleanUp().
 */
class DelayedRetryRun {
  readonly problems: string[] = [];
  readonly rounds: RoundResult[] = [];
  /** Every delivery, for timelines: ms since the publish. */
  readonly deliveries: DelayedRetryDemoResult['deliveries'] = [];
  messages: string[] = [];
  private mine = new Set<string>();
  private policySet = false;
  private queueDeclared = false;
  private readonly qPath: string;
  private readonly inbox = new Inbox();
  private consumerCh: Channel | undefined;
  /** performance.now() of the publish. */
  private t0 = 0;
  /** When each message was last given back. */
  private readonly returnedAt = new Map<string, number>();

  constructor(
    private readonly ctx: Context,
    private readonly o: DelayedRetryDemoOptions,
    private readonly queue: string,
    private readonly connection: Awaited<ReturnType<typeof connectAny>>['connection'],
  ) {
    this.qPath = `/api/queues/${encodeURIComponent(ctx.config.vhost)}/${encodeURIComponent(queue)}`;
  }

  /** Via policy: demo.orders purged, and the temporary policy set (unless skipSetup) and awaited in force. */
  async setPolicy(admin: ConfirmChannel, setup: DelayedRetryDemoResult['setup'], kept: KeptPolicy, step: Step): Promise<void> {
    const { ctx, o, queue } = this;
    const keptText = kept.keptFrom
      ? `it carries ${kept.keptFrom}' ${Object.keys(kept.base).join(' and ')} too, so they stay in force`
      : 'no dlx-orders policy was found to keep';
    await step(
      o.skipSetup
        ? `setup: NO delayed-retry policy (--skip-setup): ${queue} gives messages back at once, and the verdict must say so`
        : `setup: policy ${TEMP_POLICY} (priority ${POLICY_PRIORITY}) on ^demo\\.orders$ with delayed-retry-type ${o.type}, min ${o.minMs} ms, max ${o.maxMs} ms; ${keptText}. The article's policy left them out and silently replaced dlx-orders`,
    );
    await admin.purgeQueue(queue);
    if (o.skipSetup) return;
    this.policySet = true;
    const put = async (): Promise<void> => {
      await ctx.management.request('PUT', `/api/policies/${encodeURIComponent(ctx.config.vhost)}/${TEMP_POLICY}`, {
        body: { pattern: '^demo\\.orders$', 'apply-to': 'queues', priority: POLICY_PRIORITY, definition: setup.definition },
      });
    };
    await put();
    setup.effective = await waitForPolicy(ctx, { vhost: ctx.config.vhost, queue }, this.qPath, put);
  }

  /** Via arguments: the queue deleted and declared again with them. */
  async declareWithArguments(admin: ConfirmChannel, definition: Record<string, unknown>, step: Step): Promise<void> {
    const { o, queue } = this;
    await step(
      `setup: quorum queue ${queue} declared with ${Object.entries(definition)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(', ')}${o.skipSetup ? ' (--skip-setup: no x-delayed-retry-* arguments)' : ''}`,
    );
    await admin.deleteQueue(queue);
    this.queueDeclared = true;
    await admin.assertQueue(queue, { durable: true, arguments: definition });
  }

  /** The messages, published together with confirms: t0. */
  async publish(admin: ConfirmChannel, plan: readonly PlannedReturn[], step: Step): Promise<void> {
    const { o, queue } = this;
    const runId = Date.now().toString(36);
    this.messages = Array.from({ length: o.count }, (_, i) => `delayed-${runId}-${i + 1}`);
    const expectedTotal = plan.reduce((s, p) => s + p.expectedMs, 0);
    await step(
      `publish ${o.count} message(s) with confirms; each will be given back ${plan.length} times (${plan.map((p) => p.kind).join(', ')}), expecting ${plan
        .map((p) => `${(p.expectedMs / 1000).toFixed(1)} s`)
        .join(', ')} (≈ ${(expectedTotal / 1000).toFixed(1)} s in all)`,
    );
    this.t0 = performance.now();
    for (const id of this.messages) admin.sendToQueue(queue, Buffer.from(`delayed-retry-demo ${id}`), { messageId: id, persistent: true });
    await admin.waitForConfirms();
    this.mine = new Set(this.messages);
  }

  /** A consumer on a fresh channel, with room for every message at once. */
  async subscribe(): Promise<void> {
    const ch = await this.connection.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(this.o.count + 10);
    await ch.consume(this.queue, (msg) => {
      if (msg) this.inbox.push(msg, ch);
    });
    this.consumerCh = ch;
  }

  /**
   * Round 0 is the first delivery, round r the redeliveries after return #r. After each round every
   * message is given back the next planned way; after the last one they are acked. Returns how many.
   */
  async playRounds(plan: readonly PlannedReturn[]): Promise<number> {
    for (let r = 0; ; r++) {
      const planned = r === 0 ? undefined : plan[r - 1]!;
      const { got, seen } = await this.collect(r, planned);
      if (planned) this.measure(r, planned, got, seen.delayed);
      const next = plan[r];
      if (!next) {
        for (const item of got.values()) item.ch.ack(item.m);
        return got.size;
      }
      await this.giveBack(next, got);
    }
  }

  /**
   * Every message's delivery in round r, by id; a DeadlineError when some are not back within the
   * expected delay, the tolerance and 15 s. While waiting, the highest messages_delayed seen.
   */
  private async collect(r: number, planned: PlannedReturn | undefined): Promise<{ got: Map<string, Delivery>; seen: { delayed: number | null } }> {
    const { ctx, o, messages } = this;
    const seen: { delayed: number | null } = { delayed: null };
    const onTick = (): void => {
      void ctx.management
        .get(this.qPath)
        .then((q) => {
          const d = numberOf((q as Record<string, unknown>).messages_delayed);
          if (d !== undefined) seen.delayed = Math.max(seen.delayed ?? 0, d);
          ctx.progress.update(
            `waiting for return #${r}'s redeliveries (expected after ${((planned?.expectedMs ?? 0) / 1000).toFixed(1)} s): messages_delayed ${d ?? '?'}`,
          );
        })
        .catch(() => undefined);
    };
    const deadline = performance.now() + (planned?.expectedMs ?? 0) + o.toleranceMs + 15_000;
    const got = new Map<string, Delivery>();
    while (got.size < messages.length) {
      const item = await this.inbox.take(deadline, ctx.signal, onTick);
      if (!item) break;
      const id = typeof item.m.properties.messageId === 'string' ? item.m.properties.messageId : '';
      if (!this.mine.has(id)) {
        this.problems.push(`a message that is not the demo's (${id || 'no id'}) was in ${this.queue}; it was left unacked and given back`);
        continue;
      }
      if (got.has(id)) this.problems.push(`${id} was delivered twice in round ${r}`);
      got.set(id, item);
      this.deliveries.push({ messageId: id, atMs: item.at - this.t0, round: r });
    }
    if (got.size < messages.length) {
      const missing = messages.filter((id) => !got.has(id));
      const waitedMs = (planned?.expectedMs ?? 0) + o.toleranceMs + 15_000;
      throw new DeadlineError(
        `${missing.length} of ${messages.length} message(s) not back within ${waitedMs} ms of ${r === 0 ? 'the publish' : `return #${r}`} (${missing.join(', ')})`,
        waitedMs,
      );
    }
    return { got, seen };
  }

  /** Each redelivery's delay and x-delivery-count against the plan: the round's result. */
  private measure(r: number, planned: PlannedReturn, got: Map<string, Delivery>, delayedSeen: number | null): void {
    const { ctx, o } = this;
    const measured: MeasuredRedelivery[] = this.messages.map((id) => {
      const item = got.get(id)!;
      const deliveryCount = numberOf(item.m.properties.headers?.['x-delivery-count']) ?? 0;
      return { messageId: id, delayMs: item.at - this.returnedAt.get(id)!, deliveryCount };
    });
    const roundProblems: string[] = [];
    for (const x of measured) {
      const p = checkDelay(x.delayMs, planned.expectedMs, o.toleranceMs);
      if (p) roundProblems.push(`return #${r} (${planned.kind}) of ${x.messageId}: ${p}`);
      if (x.deliveryCount !== planned.deliveryCount)
        roundProblems.push(`return #${r} of ${x.messageId}: x-delivery-count ${x.deliveryCount}, expected ${planned.deliveryCount}`);
    }
    this.problems.push(...roundProblems);
    this.rounds.push({ ...planned, index: r, measured, messagesDelayedSeen: delayedSeen, ok: roundProblems.length === 0 });
    const spread = measured.map((x) => x.delayMs);
    ctx.progress.info(
      `  return #${r} (${planned.kind}, ${planned.class}${planned.delayed ? '' : ', not delayed by this type'}): back after ${(Math.min(...spread) / 1000).toFixed(2)}–${(Math.max(...spread) / 1000).toFixed(2)} s, expected ${(planned.expectedMs / 1000).toFixed(2)} s`,
    );
  }

  /** Give every message back the same way, at the same moment. */
  private async giveBack(next: PlannedReturn, got: Map<string, Delivery>): Promise<void> {
    const now = performance.now();
    for (const id of this.messages) this.returnedAt.set(id, now);
    if (next.kind === 'close') {
      await closeChannelWithin(this.consumerCh!, 5_000);
      await this.subscribe();
    } else {
      for (const item of got.values()) {
        if (next.kind === 'reject') item.ch.reject(item.m, true);
        else item.ch.nack(item.m, false, true);
      }
    }
  }

  /** Every way out: the temporary policy removed, the arguments queue deleted, the connection closed. */
  async cleanUp(): Promise<void> {
    const { ctx } = this;
    if (this.policySet) {
      await ctx.management
        .request('DELETE', `/api/policies/${encodeURIComponent(ctx.config.vhost)}/${TEMP_POLICY}`)
        .catch((err: unknown) => ctx.log(`could not remove policy ${TEMP_POLICY}: ${errorMessage(err)}`));
    }
    if (this.queueDeclared) {
      await ctx.management.request('DELETE', this.qPath).catch((err: unknown) => ctx.log(`could not delete ${this.queue}: ${errorMessage(err)}`));
    }
    await closeWithin(this.connection);
  }
}

/**
 * Wait until the queue has the temporary policy in force; returns its effective definition. The
 * management API says so within a tick (5 s) as a rule; after a leader change its statistics can
 * name the old policy for most of a minute (src/cluster/broker/applied-policy.ts),
 * so after POLICY_ASK_LEADER_AFTER_MS the queue's leader is asked itself, every 2 s. When the
 * leader has no delayed retry by POLICY_RETRY_AFTER_MS, the policy is set again; the wait ends at
 * POLICY_DEADLINE_MS.
 */
const POLICY_ASK_LEADER_AFTER_MS = 10_000;
const POLICY_RETRY_AFTER_MS = 20_000;
const POLICY_DEADLINE_MS = 60_000;

async function waitForPolicy(ctx: Context, ref: { vhost: string; queue: string }, qPath: string, put: () => Promise<void>): Promise<Record<string, unknown>> {
  const started = performance.now();
  let retried = false;
  let askedAt = 0;
  for (;;) {
    const q = (await ctx.management.get(qPath)) as { policy?: string; effective_policy_definition?: Record<string, unknown> };
    if (q.policy === TEMP_POLICY && q.effective_policy_definition?.['delayed-retry-type'] !== undefined) return q.effective_policy_definition;
    const waited = performance.now() - started;
    if (waited > POLICY_ASK_LEADER_AFTER_MS && performance.now() - askedAt >= 2_000) {
      askedAt = performance.now();
      const applied = await askAppliedPolicy(ctx, ref);
      if (applied?.policy === TEMP_POLICY && applied.delayedRetry) {
        ctx.progress.info(
          `the management API still names policy ${q.policy ?? 'none'} ${Math.round(waited / 1000)} s after the PUT (its statistics lag after a leader change); the queue's leader has ${TEMP_POLICY} and delayed retry in force`,
        );
        return applied.effective;
      }
    }
    if (!retried && waited > POLICY_RETRY_AFTER_MS) {
      retried = true;
      ctx.progress.info(`the queue still reports policy ${q.policy ?? 'none'} ${Math.round(waited / 1000)} s after the PUT; setting ${TEMP_POLICY} again`);
      await put();
    }
    if (waited > POLICY_DEADLINE_MS)
      throw new DeadlineError(
        `queue did not report policy ${TEMP_POLICY} within ${POLICY_DEADLINE_MS} ms, set twice (it reports ${q.policy ?? 'none'})`,
        POLICY_DEADLINE_MS,
      );
    await systemClock.sleep(200, ctx.signal);
  }
}
