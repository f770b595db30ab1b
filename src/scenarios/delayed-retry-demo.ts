import type { Channel, ConsumeMessage } from 'amqplib';
import { closeChannelWithin, closeWithin, connectAny } from '../amqp/connect.js';
import { askAppliedPolicy } from '../cluster/applied-policy.js';
import { requireCluster } from '../cluster/cluster.js';
import { HttpError } from '../cluster/management.js';
import { amqpUrl } from '../config.js';
import type { Context } from '../context.js';
import { DeadlineError, EnvironmentError, InterruptedError, UsageError, errorMessage } from '../errors.js';
import { systemClock } from '../util/retry.js';
import type { DelayedRetryType, DelayedRetryVia } from './delayed-retry-settings.js';

/**
 * delayed-retry-demo: RabbitMQ 4.3's native delayed retry for quorum queues, measured. A
 * message given back to a quorum queue with delayed retry on is held for
 * min(min × delivery count, max) before it is delivered again, for the kinds of return the
 * type names: "failed" returns (basic.reject requeue=true, or a channel closed with the
 * message unacked: both raise x-delivery-count) and "returned" ones (basic.nack requeue=true:
 * x-delivery-count stays). Measured on 4.3.6: a return the type does not name comes back at
 * once, and a "returned" return with x-delivery-count 0 waits `min`. Returns data; never prints.
 */

/** How the consumer gives a delivery back. */
export type ReturnKind = 'reject' | 'close' | 'nack';
export type ReturnClass = 'failed' | 'returned';

export interface DelayedRetryDemoOptions {
  type: DelayedRetryType;
  minMs: number;
  maxMs: number;
  /** Messages published (they go through the plan together). */
  count: number;
  /** Returns of the kinds the type names, per message. */
  returns: number;
  via: DelayedRetryVia;
  /** Accepted lateness of each redelivery over the formula. */
  toleranceMs: number;
  /** Testing: leave delayed retry off (no policy, no arguments); the verdict must fail. */
  skipSetup: boolean;
}

export interface PlannedReturn {
  kind: ReturnKind;
  class: ReturnClass;
  /** Whether the configured type delays this return. */
  delayed: boolean;
  /** x-delivery-count the redelivery carries (0 = header absent). */
  deliveryCount: number;
  expectedMs: number;
}

export interface MeasuredRedelivery {
  messageId: string;
  delayMs: number;
  deliveryCount: number;
}

export interface RoundResult extends PlannedReturn {
  /** 1-based: the n-th time each message was given back. */
  index: number;
  measured: MeasuredRedelivery[];
  /** Highest messages_delayed the management API showed while waiting (its stats lag up to 5 s). */
  messagesDelayedSeen: number | null;
  ok: boolean;
}

export interface DelayedRetryDemoResult {
  brokerVersion: string;
  via: DelayedRetryVia;
  queue: string;
  type: DelayedRetryType;
  minMs: number;
  maxMs: number;
  toleranceMs: number;
  /** Early slack allowed below the formula (clock and scheduling). */
  earlySlackMs: number;
  setup: {
    /** The temporary policy (via policy), or the queue arguments (via arguments). */
    name: string;
    priority: number | null;
    definition: Record<string, unknown>;
    /** Keys copied from dlx-orders so that its DLX and delivery-limit stay in force. */
    keptFrom: string | null;
    keptKeys: string[];
    /** What the broker reports for the queue while the demo runs. */
    effective: Record<string, unknown> | null;
    skipped: boolean;
  };
  deliveryLimit: number;
  messages: string[];
  rounds: RoundResult[];
  /** Every delivery, for timelines: ms since the first publish. */
  deliveries: { messageId: string; atMs: number; round: number }[];
  processed: number;
  ok: boolean;
  problems: string[];
}

export const TEMP_POLICY = 'rmq-bench-delayed-retry';
export const POLICY_PRIORITY = 15;
const POLICY_QUEUE = 'demo.orders';
const ARGUMENTS_QUEUE = 'demo.delayed-retry';
const EARLY_SLACK_MS = 100;
/** quorum queues' delivery-limit when none is set (RabbitMQ 4.x). */
const DEFAULT_DELIVERY_LIMIT = 20;

export function classOf(kind: ReturnKind): ReturnClass {
  return kind === 'nack' ? 'returned' : 'failed';
}

/** Delay of one redelivery: min × x-delivery-count (at least 1), capped at max. Pure. */
export function delayFor(minMs: number, maxMs: number, deliveryCount: number): number {
  return Math.min(minMs * Math.max(1, deliveryCount), maxMs);
}

/**
 * The returns the consumer makes, in order: `returns` of the kinds the type names (failed:
 * reject and close in turn; returned: nack; all: reject, nack, close in turn), then for a type
 * other than all one return of the other class, which must come back at once. Pure.
 */
export function returnPlan(type: DelayedRetryType, returns: number, minMs: number, maxMs: number): PlannedReturn[] {
  const cycle: ReturnKind[] = type === 'failed' ? ['reject', 'close'] : type === 'returned' ? ['nack'] : ['reject', 'nack', 'close'];
  const kinds = Array.from({ length: returns }, (_, i) => cycle[i % cycle.length]!);
  if (type === 'failed') kinds.push('nack');
  if (type === 'returned') kinds.push('reject');
  let count = 0;
  return kinds.map((kind) => {
    const cls = classOf(kind);
    if (cls === 'failed') count += 1;
    const delayed = type === 'all' || type === cls;
    return { kind, class: cls, delayed, deliveryCount: count, expectedMs: delayed ? delayFor(minMs, maxMs, count) : 0 };
  });
}

/** Problems with one measured delay against the plan, or none. Pure. */
export function checkDelay(measuredMs: number, expectedMs: number, toleranceMs: number, earlySlackMs = EARLY_SLACK_MS): string | undefined {
  if (measuredMs < expectedMs - earlySlackMs) return `came back after ${Math.round(measuredMs)} ms, before the ${expectedMs} ms delay`;
  if (measuredMs > expectedMs + toleranceMs) return `came back after ${Math.round(measuredMs)} ms, more than ${expectedMs} + ${toleranceMs} ms`;
  return undefined;
}

/** "4.3.6" → [4, 3, 6]; undefined when it does not look like a version. Pure. */
export function parseVersion(v: string): [number, number, number] | undefined {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(v.trim());
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

/**
 * Whether a broker of this version takes delayed retry the given way: queue arguments from
 * 4.3.0, policy keys from 4.3.1. Returns the explanation when it does not. Pure.
 */
export function delayedRetryUnsupported(version: string, via: DelayedRetryVia): string | undefined {
  const v = parseVersion(version);
  if (!v) return `cannot tell the broker's version from '${version}'`;
  const need: [number, number, number] = via === 'policy' ? [4, 3, 1] : [4, 3, 0];
  const older = v[0] !== need[0] ? v[0] < need[0] : v[1] !== need[1] ? v[1] < need[1] : v[2] < need[2];
  if (!older) return undefined;
  if (via === 'policy' && v[0] === 4 && v[1] === 3) {
    return `RabbitMQ ${version} takes native delayed retry only as queue arguments (the delayed-retry-* policy keys came in 4.3.1): use --via arguments, or upgrade`;
  }
  return `RabbitMQ ${version} has no native delayed retry (x-delayed-retry-* queue arguments need 4.3.0, the policy keys 4.3.1); retry-demo shows the TTL-queue way, which works on any version`;
}

/** The temporary policy's definition: dlx-orders' keys, plus delayed retry. Pure. */
export function policyDefinition(base: Record<string, unknown>, type: DelayedRetryType, minMs: number, maxMs: number): Record<string, unknown> {
  return { ...base, 'delayed-retry-type': type, 'delayed-retry-min': minMs, 'delayed-retry-max': maxMs };
}

function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

type Step = (title: string) => Promise<void>;

/** Deliveries as they arrive, taken one at a time with a deadline. */
class Inbox {
  private readonly items: { m: ConsumeMessage; ch: Channel; at: number }[] = [];
  private wake: (() => void) | undefined;

  push(m: ConsumeMessage, ch: Channel): void {
    this.items.push({ m, ch, at: performance.now() });
    this.wake?.();
  }

  async take(deadline: number, signal: AbortSignal, onTick: () => void): Promise<{ m: ConsumeMessage; ch: Channel; at: number } | undefined> {
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
  const { config, management: m } = ctx;
  const vh = encodeURIComponent(config.vhost);
  const overview = (await m.get('/api/overview')) as { rabbitmq_version?: string };
  const brokerVersion = overview.rabbitmq_version ?? 'unknown';
  const unsupported = delayedRetryUnsupported(brokerVersion, o.via);
  if (unsupported) throw new EnvironmentError(unsupported);

  // dlx-orders: the policy a priority-15 policy on demo.orders would shadow.
  let base: Record<string, unknown> = {};
  let keptFrom: string | null = null;
  try {
    const p = (await m.get(`/api/policies/${vh}/dlx-orders`)) as { definition?: Record<string, unknown> };
    base = p.definition ?? {};
    keptFrom = 'dlx-orders';
  } catch (err) {
    if (!(err instanceof HttpError && err.status === 404)) throw err;
  }
  const deliveryLimit = numberOf(base['delivery-limit']) ?? DEFAULT_DELIVERY_LIMIT;
  const plan = returnPlan(o.type, o.returns, o.minMs, o.maxMs);
  const counted = plan.filter((p) => p.class === 'failed').length;
  if (counted > deliveryLimit) {
    throw new UsageError(
      `--returns ${o.returns} makes ${counted} counted returns, more than the delivery-limit ${deliveryLimit}: the message would be dead-lettered`,
      {
        hint: `use --returns ${o.returns - (counted - deliveryLimit)} or less`,
      },
    );
  }

  const queue = o.via === 'policy' ? POLICY_QUEUE : ARGUMENTS_QUEUE;
  const qPath = `/api/queues/${vh}/${encodeURIComponent(queue)}`;
  const definition =
    o.via === 'policy'
      ? policyDefinition(base, o.type, o.minMs, o.maxMs)
      : {
          'x-queue-type': 'quorum',
          ...(base['dead-letter-exchange'] === undefined ? {} : { 'x-dead-letter-exchange': base['dead-letter-exchange'] }),
          'x-delivery-limit': deliveryLimit,
          ...(o.skipSetup ? {} : { 'x-delayed-retry-type': o.type, 'x-delayed-retry-min': o.minMs, 'x-delayed-retry-max': o.maxMs }),
        };
  const setup: DelayedRetryDemoResult['setup'] = {
    name: o.via === 'policy' ? TEMP_POLICY : `${queue} (queue arguments)`,
    priority: o.via === 'policy' ? POLICY_PRIORITY : null,
    definition,
    keptFrom,
    keptKeys: Object.keys(base),
    effective: null,
    skipped: o.skipSetup,
  };

  const urls = config.nodes.map((n) => amqpUrl(config, n));
  const c = await connectAny(urls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench delayed-retry-demo' });
  c.connection.on('error', () => undefined);
  let policySet = false;
  let queueDeclared = false;
  const problems: string[] = [];
  try {
    const admin = await c.connection.createConfirmChannel();
    admin.on('error', () => undefined);
    if (o.via === 'policy') {
      const kept = keptFrom
        ? `it carries ${keptFrom}' ${Object.keys(base).join(' and ')} too, so they stay in force`
        : 'no dlx-orders policy was found to keep';
      await step(
        o.skipSetup
          ? `setup: NO delayed-retry policy (--skip-setup): ${queue} gives messages back at once, and the verdict must say so`
          : `setup: policy ${TEMP_POLICY} (priority ${POLICY_PRIORITY}) on ^demo\\.orders$ with delayed-retry-type ${o.type}, min ${o.minMs} ms, max ${o.maxMs} ms; ${kept}. The article's policy left them out and silently replaced dlx-orders`,
      );
      await admin.purgeQueue(queue);
      if (!o.skipSetup) {
        policySet = true;
        const put = async (): Promise<void> => {
          await m.request('PUT', `/api/policies/${vh}/${TEMP_POLICY}`, {
            body: { pattern: '^demo\\.orders$', 'apply-to': 'queues', priority: POLICY_PRIORITY, definition },
          });
        };
        await put();
        setup.effective = await waitForPolicy(ctx, { vhost: ctx.config.vhost, queue }, qPath, put);
      }
    } else {
      await step(
        `setup: quorum queue ${queue} declared with ${Object.entries(definition)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(', ')}${o.skipSetup ? ' (--skip-setup: no x-delayed-retry-* arguments)' : ''}`,
      );
      await admin.deleteQueue(queue);
      queueDeclared = true;
      await admin.assertQueue(queue, { durable: true, arguments: definition });
    }

    const runId = Date.now().toString(36);
    const messages = Array.from({ length: o.count }, (_, i) => `delayed-${runId}-${i + 1}`);
    const expectedTotal = plan.reduce((s, p) => s + p.expectedMs, 0);
    await step(
      `publish ${o.count} message(s) with confirms; each will be given back ${plan.length} times (${plan.map((p) => p.kind).join(', ')}), expecting ${plan
        .map((p) => `${(p.expectedMs / 1000).toFixed(1)} s`)
        .join(', ')} (≈ ${(expectedTotal / 1000).toFixed(1)} s in all)`,
    );
    const t0 = performance.now();
    for (const id of messages) admin.sendToQueue(queue, Buffer.from(`delayed-retry-demo ${id}`), { messageId: id, persistent: true });
    await admin.waitForConfirms();

    const inbox = new Inbox();
    const mine = new Set(messages);
    let consumerCh: Channel | undefined;
    const subscribe = async (): Promise<void> => {
      const ch = await c.connection.createChannel();
      ch.on('error', () => undefined);
      await ch.prefetch(o.count + 10);
      await ch.consume(queue, (msg) => {
        if (msg) inbox.push(msg, ch);
      });
      consumerCh = ch;
    };
    await subscribe();

    const deliveries: DelayedRetryDemoResult['deliveries'] = [];
    const rounds: RoundResult[] = [];
    const returnedAt = new Map<string, number>();
    let processed = 0;
    for (let r = 0; r <= plan.length; r++) {
      const planned = r === 0 ? undefined : plan[r - 1]!;
      let delayedSeen: number | null = null;
      const onTick = (): void => {
        void m
          .get(qPath)
          .then((q) => {
            const d = numberOf((q as Record<string, unknown>).messages_delayed);
            if (d !== undefined) delayedSeen = Math.max(delayedSeen ?? 0, d);
            ctx.progress.update(
              `waiting for return #${r}'s redeliveries (expected after ${((planned?.expectedMs ?? 0) / 1000).toFixed(1)} s): messages_delayed ${d ?? '?'}`,
            );
          })
          .catch(() => undefined);
      };
      const deadline = performance.now() + (planned?.expectedMs ?? 0) + o.toleranceMs + 15_000;
      const got = new Map<string, { m: ConsumeMessage; ch: Channel; at: number }>();
      while (got.size < messages.length) {
        const item = await inbox.take(deadline, ctx.signal, onTick);
        if (!item) break;
        const id = typeof item.m.properties.messageId === 'string' ? item.m.properties.messageId : '';
        if (!mine.has(id)) {
          problems.push(`a message that is not the demo's (${id || 'no id'}) was in ${queue}; it was left unacked and given back`);
          continue;
        }
        if (got.has(id)) problems.push(`${id} was delivered twice in round ${r}`);
        got.set(id, item);
        deliveries.push({ messageId: id, atMs: item.at - t0, round: r });
      }
      if (got.size < messages.length) {
        const missing = messages.filter((id) => !got.has(id));
        const waitedMs = (planned?.expectedMs ?? 0) + o.toleranceMs + 15_000;
        throw new DeadlineError(
          `${missing.length} of ${messages.length} message(s) not back within ${waitedMs} ms of ${r === 0 ? 'the publish' : `return #${r}`} (${missing.join(', ')})`,
          waitedMs,
        );
      }
      if (planned) {
        const measured: MeasuredRedelivery[] = messages.map((id) => {
          const item = got.get(id)!;
          const deliveryCount = numberOf(item.m.properties.headers?.['x-delivery-count']) ?? 0;
          return { messageId: id, delayMs: item.at - returnedAt.get(id)!, deliveryCount };
        });
        const roundProblems: string[] = [];
        for (const x of measured) {
          const p = checkDelay(x.delayMs, planned.expectedMs, o.toleranceMs);
          if (p) roundProblems.push(`return #${r} (${planned.kind}) of ${x.messageId}: ${p}`);
          if (x.deliveryCount !== planned.deliveryCount)
            roundProblems.push(`return #${r} of ${x.messageId}: x-delivery-count ${x.deliveryCount}, expected ${planned.deliveryCount}`);
        }
        problems.push(...roundProblems);
        rounds.push({ ...planned, index: r, measured, messagesDelayedSeen: delayedSeen, ok: roundProblems.length === 0 });
        const spread = measured.map((x) => x.delayMs);
        ctx.progress.info(
          `  return #${r} (${planned.kind}, ${planned.class}${planned.delayed ? '' : ', not delayed by this type'}): back after ${(Math.min(...spread) / 1000).toFixed(2)}–${(Math.max(...spread) / 1000).toFixed(2)} s, expected ${(planned.expectedMs / 1000).toFixed(2)} s`,
        );
      }
      const next = plan[r];
      if (!next) {
        for (const item of got.values()) item.ch.ack(item.m);
        processed = got.size;
        break;
      }
      // Give every message back the same way, at the same moment.
      const now = performance.now();
      for (const id of messages) returnedAt.set(id, now);
      if (next.kind === 'close') {
        await closeChannelWithin(consumerCh!, 5_000);
        await subscribe();
      } else {
        for (const item of got.values()) {
          if (next.kind === 'reject') item.ch.reject(item.m, true);
          else item.ch.nack(item.m, false, true);
        }
      }
    }
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
      rounds,
      deliveries,
      processed,
      ok: problems.length === 0,
      problems,
    };
  } finally {
    if (policySet) {
      await m
        .request('DELETE', `/api/policies/${vh}/${TEMP_POLICY}`)
        .catch((err: unknown) => ctx.log(`could not remove policy ${TEMP_POLICY}: ${errorMessage(err)}`));
    }
    if (queueDeclared) {
      await m.request('DELETE', qPath).catch((err: unknown) => ctx.log(`could not delete ${queue}: ${errorMessage(err)}`));
    }
    await closeWithin(c.connection);
  }
}

/**
 * Wait until the queue has the temporary policy in force; returns its effective definition. The
 * management API says so within a tick (5 s) as a rule; after a leader change its statistics can
 * name the old policy for most of a minute (src/cluster/applied-policy.ts),
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
