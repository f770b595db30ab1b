import type { Channel, ChannelModel, ConsumeMessage, GetMessage } from 'amqplib';
import type { Connection } from 'rhea';
import { closeWithin, connectAny } from '../../client/amqp091/connect.js';
import { numberHeader } from '../../client/delivery-headers.js';
import { closeWithin10, connectAny10 } from '../../client/amqp10/connection.js';
import { requireCluster } from '../../cluster/lifecycle/readiness.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { InterruptedError, errorMessage } from '../../errors.js';
import { systemClock } from '../../util/retry.js';
import { Receiver10, seenOf10, settle10 } from './delivery-limit-amqp10.js';
import { timeoutRound } from './delivery-limit-timeout.js';
import {
  ACTIONS,
  CONSUMER_TIMEOUT_MS,
  SETTLE_MS,
  assessRow,
  isFinal,
  loopRateOf,
  isAction091,
  loopsForEver,
  PROTOCOL_WORDS,
  protocolsOf,
  roundsOf,
  rulesEraOf,
  tableOrder,
  type RulesEra,
  type Action,
  type Action091,
  type Action10,
  type DeliveryLimitDemoResult,
  type DeliveryLimitOptions,
  type DeliveryLimitRow,
  type LoopRate,
  type Observed,
  type Protocol,
  type ProtocolChoice,
} from './delivery-limit-plan.js';

/**
 * delivery-limit-demo: what a quorum queue with x-delivery-limit does with one message under
 * each AMQP 0-9-1 consumer action and each AMQP 1.0 settlement outcome, without and with a
 * dead-letter exchange. Each trial has a fresh queue (and, with a DLX, its own temporary exchange
 * and DLQ): one message published, then one delivery and the action, round after round (0-9-1:
 * basic.get; 1.0: a receiver link, one credit a round, delivery-limit-amqp10.ts; a consumer
 * timeout: a consumer a round that never acks, delivery-limit-timeout.ts, its two trials side by
 * side, at most limit + 1 rounds). Where the
 * message loops for ever, a push consumer doing the same action at once on each delivery counts
 * its deliveries for --loop-window: the loop's rate. Returns data; never prints. Every queue and
 * exchange is deleted, and every connection closed, on every way out.
 */

export const QUEUE_PREFIX = 'rmq-bench.delivery-limit';

type Step = (title: string) => Promise<void>;

export type DeliveryLimitRunOptions = DeliveryLimitOptions & {
  protocol: ProtocolChoice;
  /** How long a looping message's push consumer counts deliveries; 0: not measured. */
  loopWindowMs: number;
};

/** What became of the message after one round. */
type RoundEnd = 'acked' | 'settled' | 'returned' | 'gone';

/** One trial's consumer: a round takes the message once and acts on it; close on every way out. */
interface TrialConsumer {
  round(seen: Observed['deliveries']): Promise<RoundEnd>;
  close(): Promise<void>;
}

/** A trial's queue, and with a DLX its exchange and dead-letter queue (amqp10:released: rmq-bench.delivery-limit.amqp10.released.dlx). */
export function namesOf(action: Action, dlx: boolean): { queue: string; dlx: string; dlq: string } {
  const queue = `${QUEUE_PREFIX}.${action.replace(':', '.')}.${dlx ? 'dlx' : 'no-dlx'}`;
  return { queue, dlx: `${queue}.dlx`, dlq: `${queue}.dlq` };
}

/** How often basic.get asks again while a message is on its way back. */
const POLL_MS = 50;

/** basic.get until a message comes, or null after waitMs. */
async function getWithin(ch: Channel, queue: string, waitMs: number, signal: AbortSignal): Promise<GetMessage | null> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    const m = await ch.get(queue, { noAck: false });
    if (m) return m;
    if (signal.aborted) throw new InterruptedError();
    if (performance.now() >= deadline) return null;
    await systemClock.sleep(POLL_MS, signal).catch(() => undefined);
  }
}

/** An AMQP 0-9-1 action on one delivery; a close is the caller's (it closes the connection). */
function act091(c: Channel, m: GetMessage | ConsumeMessage, action: Action091): void {
  if (action === 'ack') c.ack(m);
  else if (action === 'reject' || action === 'reject-requeue') c.reject(m, action === 'reject-requeue');
  else if (action === 'nack' || action === 'nack-requeue') c.nack(m, false, action === 'nack-requeue');
}

/** The ready count once it is above zero, or 0 after waitMs (a passive declare: no statistics lag). */
async function readyWithin(ch: Channel, queue: string, waitMs: number, signal: AbortSignal): Promise<number> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    const n = (await ch.checkQueue(queue)).messageCount;
    if (n > 0 || performance.now() >= deadline || signal.aborted) return n;
    await systemClock.sleep(POLL_MS, signal).catch(() => undefined);
  }
}

/**
 * One run of the demo: the admin connection, and every queue and exchange it declared, which
 * cleanUp deletes.
 */
class DeliveryLimitDemo {
  private readonly queues: string[] = [];
  private readonly exchanges: string[] = [];

  constructor(
    private readonly ctx: Context,
    private readonly o: DeliveryLimitOptions & { loopWindowMs: number; era: RulesEra },
    private readonly urls: string[],
    private readonly admin: ChannelModel,
    private readonly ch: Channel,
    /** The AMQP 1.0 connection, when the run has AMQP 1.0 trials. */
    private readonly conn10: Connection | undefined,
  ) {}

  /** A fresh quorum queue with the limit (and the DLX), and with a DLX its exchange and DLQ. */
  private async declare(action: Action, dlx: boolean): Promise<ReturnType<typeof namesOf>> {
    const { ch } = this;
    const n = namesOf(action, dlx);
    this.queues.push(n.queue);
    await ch.deleteQueue(n.queue);
    const args: Record<string, unknown> = { 'x-queue-type': 'quorum', 'x-delivery-limit': this.o.deliveryLimit };
    if (dlx) {
      this.exchanges.push(n.dlx);
      this.queues.push(n.dlq);
      await ch.deleteQueue(n.dlq);
      await ch.assertExchange(n.dlx, 'fanout', { durable: true });
      await ch.assertQueue(n.dlq, { durable: true });
      await ch.bindQueue(n.dlq, n.dlx, '');
      args['x-dead-letter-exchange'] = n.dlx;
    }
    await ch.assertQueue(n.queue, { durable: true, arguments: args });
    return n;
  }

  /** One delivery acted on; for 'close', on a connection of its own closed with the message unacked. What became of it. */
  private async round(action: Action091, queue: string, seen: Observed['deliveries']): Promise<RoundEnd> {
    const own = action === 'close' ? await this.connect('close') : undefined;
    try {
      const c = own ? await own.createChannel() : this.ch;
      const m = await getWithin(c, queue, SETTLE_MS, this.ctx.signal);
      if (!m) return 'gone';
      const h = (m.properties.headers ?? {}) as Record<string, unknown>;
      seen.push({ deliveryCount: numberHeader(h['x-delivery-count']) ?? null, redelivered: m.fields.redelivered });
      act091(c, m, action);
      if (action === 'ack') return 'acked';
      return isFinal(action) ? 'settled' : 'returned';
    } finally {
      if (own) await closeWithin(own);
    }
  }

  /** One AMQP 1.0 delivery settled with the action's outcome. What became of it. */
  private async round10(r: Receiver10, action: Action10, seen: Observed['deliveries']): Promise<RoundEnd> {
    const got = await r.next(SETTLE_MS, this.ctx.signal);
    if (!got?.message || !got.delivery) return 'gone';
    seen.push(seenOf10(got.message));
    settle10(got.delivery, action);
    if (action === 'amqp10:accepted') return 'acked';
    return isFinal(action) ? 'settled' : 'returned';
  }

  /** The trial's consumer: basic.get on the admin channel (0-9-1), a consumer a round (consumer-timeout), or a receiver link of its own (1.0). */
  private async consumerFor(action: Action, queue: string): Promise<TrialConsumer> {
    const { ctx } = this;
    if (action === 'consumer-timeout')
      return { round: (seen) => timeoutRound(this.admin, queue, CONSUMER_TIMEOUT_MS, seen, ctx.signal, ctx.log), close: async () => undefined };
    if (isAction091(action)) return { round: (seen) => this.round(action, queue, seen), close: async () => undefined };
    if (!this.conn10) throw new Error('an AMQP 1.0 trial without an AMQP 1.0 connection');
    const r = await Receiver10.open(this.conn10, queue, this.ctx.signal);
    return { round: (seen) => this.round10(r, action, seen), close: () => r.close() };
  }

  /**
   * The loop's rate: a push consumer on the queue doing the action at once on each delivery for
   * --loop-window (0-9-1: basic.consume with prefetch 1 on a channel of its own; 1.0: a receiver
   * link granting one credit at a time), then cancelled; the message goes back to the queue.
   */
  private async loopRate(action: Action, queue: string): Promise<LoopRate> {
    const { ctx, o } = this;
    if (!isAction091(action)) {
      if (!this.conn10) throw new Error('an AMQP 1.0 trial without an AMQP 1.0 connection');
      const r = await Receiver10.open(this.conn10, queue, ctx.signal);
      try {
        const { deliveries, elapsedMs } = await r.loop(action, o.loopWindowMs, ctx.signal);
        return loopRateOf(deliveries, elapsedMs);
      } finally {
        await r.close();
      }
    }
    const c = await this.admin.createChannel();
    c.on('error', () => undefined);
    try {
      await c.prefetch(1);
      let deliveries = 0;
      let open = true;
      const started = performance.now();
      const { consumerTag } = await c.consume(
        queue,
        (m) => {
          if (!m) return;
          if (open) deliveries++;
          act091(c, m, action as Action091);
        },
        { noAck: false },
      );
      await systemClock.sleep(o.loopWindowMs, ctx.signal);
      open = false;
      const elapsedMs = performance.now() - started;
      await c.cancel(consumerTag);
      return loopRateOf(deliveries, elapsedMs);
    } finally {
      await c.close().catch((e: unknown) => ctx.log(`could not close the loop's channel on ${queue}: ${errorMessage(e)}`));
    }
  }

  private async connect(what: string): Promise<ChannelModel> {
    const c = await connectAny(this.urls, 0, {
      heartbeatS: 5,
      timeoutMs: 30_000,
      signal: this.ctx.signal,
      connectionName: `rmq-bench delivery-limit-demo ${what}`,
    });
    c.connection.on('error', () => undefined);
    return c.connection;
  }

  /** One action on one message, round after round; then where the message is. */
  async trial(action: Action, dlx: boolean): Promise<DeliveryLimitRow> {
    const { ch, o, ctx } = this;
    const n = await this.declare(action, dlx);
    ch.sendToQueue(n.queue, Buffer.from(`delivery-limit-demo ${action}`), { messageId: `dl-${action}`, persistent: true });
    const seen: Observed['deliveries'] = [];
    let last: RoundEnd = 'returned';
    const consumer = await this.consumerFor(action, n.queue);
    try {
      for (let i = 0; i < roundsOf(action, o) && last === 'returned'; i++) {
        if (ctx.signal.aborted) throw new InterruptedError();
        last = await consumer.round(seen);
      }
    } catch (err) {
      await consumer.close().catch((e: unknown) => ctx.log(`could not close the consumer of ${n.queue}: ${errorMessage(e)}`));
      throw err;
    }
    // Before the queue is looked at: an AMQP 1.0 link's outcomes are read by the broker before its detach.
    await consumer.close();
    // Rounds used up on a returned message: it is on its way back to the queue.
    const leftInQueue = last === 'returned' ? await readyWithin(ch, n.queue, SETTLE_MS, ctx.signal) : (await ch.checkQueue(n.queue)).messageCount;
    let inDlq = false;
    let deathReason: string | null = null;
    if (dlx && last !== 'acked' && leftInQueue === 0) {
      const d = await getWithin(ch, n.dlq, SETTLE_MS, ctx.signal);
      if (d) {
        inDlq = true;
        const reason: unknown = d.properties.headers?.['x-first-death-reason'];
        deathReason = reason === undefined ? null : String(reason);
        ch.ack(d);
      }
    }
    const assessed = assessRow(action, dlx, n.queue, { deliveries: seen, acked: last === 'acked', leftInQueue, inDlq, deathReason }, o, o.era);
    const row = { ...assessed, loop: o.loopWindowMs > 0 && loopsForEver(assessed) ? await this.loopRate(action, n.queue) : null };
    ctx.progress.info(
      `  ${action}${dlx ? ' (DLX)' : ''}: ${seen.length} ${seen.length === 1 ? 'delivery' : 'deliveries'}, ${row.fate}${row.deathReason ? ` (${row.deathReason})` : ''}${row.agrees ? '' : ': NOT as documented'}${row.loop ? `; then ${row.loop.deliveries} more in ${row.loop.windowMs} ms` : ''}`,
    );
    return row;
  }

  /** On every way out: every queue and exchange declared deleted, the admin connection closed. */
  async cleanUp(): Promise<void> {
    const { ctx } = this;
    try {
      const ch = await this.admin.createChannel();
      for (const q of this.queues) await ch.deleteQueue(q);
      for (const x of this.exchanges) await ch.deleteExchange(x);
    } catch (err) {
      ctx.log(`could not delete the demo's queues and exchanges (${[...this.queues, ...this.exchanges].join(', ')}): ${errorMessage(err)}`);
    }
    if (this.conn10) await closeWithin10(this.conn10);
    await closeWithin(this.admin);
  }
}

const STEP_TITLES = {
  amqp091: (where: string, queue: string, rounds: number) =>
    `${where}: for each AMQP 0-9-1 action (${ACTIONS.amqp091.filter((a) => a !== 'consumer-timeout').join(', ')}), ${queue}, at most ${rounds} rounds of basic.get and the action`,
  amqp10: (where: string, queue: string, rounds: number) =>
    `${where}: for each AMQP 1.0 outcome (${ACTIONS.amqp10.map((a) => a.slice('amqp10:'.length)).join(', ')}), ${queue}, at most ${rounds} deliveries over a receiver link (credit 1, settle mode first), each settled with the outcome`,
} satisfies { [P in Protocol]: (where: string, queue: string, rounds: number) => string };

/** The step announcing one protocol's trials, without or with a DLX. */
function stepTitle(protocol: Protocol, dlx: boolean, o: DeliveryLimitRunOptions): string {
  const where = dlx ? 'with a dead-letter exchange (a temporary DLX and DLQ per queue)' : 'without a dead-letter exchange';
  const queue = `a fresh quorum queue with x-delivery-limit ${o.deliveryLimit}, one message`;
  return STEP_TITLES[protocol](where, queue, o.rounds);
}

/** The step announcing the consumer-timeout trials. */
function timeoutTitle(o: DeliveryLimitRunOptions): string {
  return `without and with a dead-letter exchange, side by side: consumer-timeout, a fresh quorum queue with x-delivery-limit ${o.deliveryLimit}, one message, at most ${roundsOf('consumer-timeout', o)} rounds of basic.consume (prefetch 1, x-consumer-timeout ${CONSUMER_TIMEOUT_MS} ms) never acked, a new consumer after each of the broker's basic.cancel; no loop rate (a timeout loop runs at the timeout's pace)`;
}

/** Both DLX trials of an action at once; the first failure thrown once both are over. */
async function sideBySide(demo: DeliveryLimitDemo, action: Action): Promise<DeliveryLimitRow[]> {
  const settled = await Promise.allSettled([false, true].map((dlx) => demo.trial(action, dlx)));
  const failed = settled.find((x) => x.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.flatMap((x) => (x.status === 'fulfilled' ? [x.value] : []));
}

/** What the step does after the rounds where the message still loops. */
function loopTitle(protocol: Protocol, o: DeliveryLimitRunOptions): string {
  if (o.loopWindowMs <= 0) return '';
  return `; where the message still loops, ${PROTOCOL_WORDS[protocol].loopConsumer} doing the same at once on each delivery for ${o.loopWindowMs} ms`;
}

export async function runDeliveryLimitDemo(ctx: Context, o: DeliveryLimitRunOptions, step: Step): Promise<DeliveryLimitDemoResult> {
  await requireCluster(ctx);
  const { config } = ctx;
  const overview = (await ctx.management.get('/api/overview')) as { rabbitmq_version?: string };
  const brokerVersion = overview.rabbitmq_version ?? 'unknown';
  const era = rulesEraOf(brokerVersion);
  const urls = config.nodes.map((n) => amqpUrl(config, n));
  const admin = await connectAny(urls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal, connectionName: 'rmq-bench delivery-limit-demo' });
  admin.connection.on('error', () => undefined);
  const protocols = protocolsOf(o.protocol);
  let demo: DeliveryLimitDemo | undefined;
  let conn10: Connection | undefined;
  try {
    const ch = await admin.connection.createChannel();
    ch.on('error', () => undefined);
    if (protocols.some((p) => !ACTIONS[p].every(isAction091)))
      conn10 = (await connectAny10(urls, 0, { heartbeatS: 5, timeoutMs: 30_000, signal: ctx.signal })).connection;
    demo = new DeliveryLimitDemo(ctx, { ...o, era }, urls, admin.connection, ch, conn10);
    const rows: DeliveryLimitRow[] = [];
    for (const protocol of protocols) {
      for (const dlx of [false, true]) {
        await step(`${stepTitle(protocol, dlx, o)}${loopTitle(protocol, o)}`);
        for (const action of ACTIONS[protocol]) if (action !== 'consumer-timeout') rows.push(await demo.trial(action, dlx));
      }
      if ((ACTIONS[protocol] as readonly Action[]).includes('consumer-timeout')) {
        await step(timeoutTitle(o));
        rows.push(...(await sideBySide(demo, 'consumer-timeout')));
      }
    }
    rows.sort(tableOrder);
    return {
      deliveryLimit: o.deliveryLimit,
      rounds: o.rounds,
      brokerVersion,
      rulesEra: era,
      rows,
      ok: rows.every((r) => r.agrees),
      protocol: o.protocol,
      loopWindowMs: o.loopWindowMs,
      consumerTimeoutMs: CONSUMER_TIMEOUT_MS,
    };
  } finally {
    if (demo) await demo.cleanUp();
    else {
      if (conn10) await closeWithin10(conn10);
      await closeWithin(admin.connection);
    }
  }
}
