import amqp from 'amqplib';
import rhea, { type Connection, type EventContext, type Receiver } from 'rhea';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  ACTIONS,
  SETTLE_MS,
  type Action10,
  type DeliveryLimitDemoResult,
  type DeliveryLimitRow,
  type Protocol,
} from '../../src/scenarios/demos/delivery-limit-plan.js';
import { AMQP_PORTS, AMQP_URLS, PASSWORD, USER, mgmtGet, parseJson, runCli, uniqueName, type CliResult } from './cli.js';

type Doc = DeliveryLimitDemoResult & { kind: string };

async function leftovers(prefix: string): Promise<{ queues: string[]; exchanges: string[] }> {
  const mine = (list: { name: string }[]) => list.map((x) => x.name).filter((n) => n.startsWith(prefix));
  return {
    queues: mine(await mgmtGet<{ name: string }[]>('/api/queues?columns=name')),
    exchanges: mine(await mgmtGet<{ name: string }[]>('/api/exchanges?columns=name')),
  };
}

/**
 * rabbit1's own count of messages redelivered from quorum queues, by protocol
 * (rabbitmq_global_messages_redelivered_total, Prometheus): the demo connects to rabbit1 first,
 * and this cluster publishes rabbit1's Prometheus endpoint.
 */
async function redelivered(): Promise<Record<Protocol, number>> {
  const port = loadConfig(process.env).prometheusPort;
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const of = (protocol: Protocol): number => {
    const metric = `rabbitmq_global_messages_redelivered_total{protocol="${protocol}",queue_type="rabbit_quorum_queue"}`;
    const line = text.split('\n').find((l) => l.startsWith(metric));
    if (!line) throw new Error(`${metric} not in /metrics`);
    return Number(line.slice(metric.length).trim());
  };
  return { amqp091: of('amqp091'), amqp10: of('amqp10') };
}

/** A row as the broker left it: the delivery count of each delivery (absent: null), the fate, the death reason. */
const summary = (r: DeliveryLimitRow) => [r.action, r.dlx, r.deliveries.map((d) => d.deliveryCount), r.fate, r.deathReason];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll fn until it gives a value other than undefined, or undefined after waitMs. */
async function within<T>(waitMs: number, fn: () => T | undefined | Promise<T | undefined>): Promise<T | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined || Date.now() >= deadline) return v;
    await sleep(25);
  }
}

/** What the test's own reader saw of one AMQP 1.0 trial, and where the broker left the message. */
interface OwnTrial {
  /** The header's delivery-count of each delivery. */
  header: (number | null)[];
  /** The x-delivery-count message annotation of each delivery (absent: null). */
  annotation: (number | null)[];
  /** Messages ready in the trial queue once the link is closed. */
  inQueue: number;
  /** x-first-death-reason of the message found in the DLQ; null when the DLQ is empty (or there is none). */
  deathReason: string | null;
  inDlq: boolean;
}

/** A rhea connection of the test's own, to rabbit1. */
async function connect10(): Promise<Connection> {
  const c = rhea
    .create_container()
    .connect({ host: '127.0.0.1', port: AMQP_PORTS[0]!, username: USER, password: PASSWORD, hostname: 'vhost:/', reconnect: false });
  c.on('connection_error', () => undefined);
  c.on('disconnected', () => undefined);
  const open = await within(10_000, () => (c.is_open() ? true : undefined));
  if (!open) throw new Error('no AMQP 1.0 open within 10 s');
  return c;
}

/** Settle one delivery with the outcome, through rhea's own calls. */
function settle(ctx: EventContext, outcome: Action10): void {
  const d = ctx.delivery!;
  if (outcome === 'amqp10:accepted') d.accept();
  else if (outcome === 'amqp10:released') d.release();
  else if (outcome === 'amqp10:rejected') d.reject();
  else d.modified({ delivery_failed: outcome === 'amqp10:modified-failed', undeliverable_here: outcome === 'amqp10:modified-undeliverable' });
}

/**
 * One AMQP 1.0 trial run by the test itself, on a queue of its own: one message published (and
 * confirmed) over 0-9-1, taken over a receiver link with one credit a round and settled with the
 * outcome, at most 6 times; then the trial queue and the DLQ read over 0-9-1 with amqplib.
 */
async function ownTrial(outcome: Action10, dlx: boolean): Promise<OwnTrial> {
  const queue = uniqueName(`dl10.${outcome.slice('amqp10:'.length)}.${dlx ? 'dlx' : 'no-dlx'}`);
  const conn = await amqp.connect(AMQP_URLS[0]!);
  let c10: Connection | undefined;
  try {
    const ch = await conn.createConfirmChannel();
    const args: Record<string, unknown> = { 'x-queue-type': 'quorum', 'x-delivery-limit': 2 };
    if (dlx) {
      await ch.assertExchange(`${queue}.dlx`, 'fanout', { durable: true });
      await ch.assertQueue(`${queue}.dlq`, { durable: true });
      await ch.bindQueue(`${queue}.dlq`, `${queue}.dlx`, '');
      args['x-dead-letter-exchange'] = `${queue}.dlx`;
    }
    await ch.assertQueue(queue, { durable: true, arguments: args });
    ch.sendToQueue(queue, Buffer.from('own trial'), { persistent: true });
    await ch.waitForConfirms();
    c10 = await connect10();
    const header: (number | null)[] = [];
    const annotation: (number | null)[] = [];
    const arrived: EventContext[] = [];
    const rcv: Receiver = c10.open_receiver({ source: { address: `/queues/${queue}` }, credit_window: 0, autoaccept: false, rcv_settle_mode: 0 });
    rcv.on('message', (ctx: EventContext) => arrived.push(ctx));
    if (!(await within(10_000, () => (rcv.is_open() ? true : undefined)))) throw new Error(`no attach on ${queue}`);
    for (let i = 0; i < 6; i++) {
      rcv.add_credit(1);
      const ctx = await within(2_000, () => arrived.shift());
      if (!ctx) break;
      const m = ctx.message!;
      header.push(typeof m.delivery_count === 'number' ? m.delivery_count : null);
      const ann: unknown = (m.message_annotations as Record<string, unknown> | undefined)?.['x-delivery-count'];
      annotation.push(typeof ann === 'number' ? ann : null);
      settle(ctx, outcome);
      if (outcome === 'amqp10:accepted' || outcome === 'amqp10:rejected' || outcome === 'amqp10:modified-undeliverable') break;
    }
    rcv.close();
    if (!(await within(10_000, () => (rcv.is_closed() ? true : undefined)))) throw new Error(`no detach on ${queue}`);
    // A returned message is on its way back; a settled one never comes.
    const inQueue = (await within(2_000, async () => ((await ch.checkQueue(queue)).messageCount > 0 ? 1 : undefined))) ?? 0;
    const dead = dlx ? await within(2_000, async () => (await ch.get(`${queue}.dlq`, { noAck: true })) || undefined) : undefined;
    const reason: unknown = dead ? dead.properties.headers?.['x-first-death-reason'] : undefined;
    return { header, annotation, inQueue, deathReason: reason === undefined ? null : String(reason), inDlq: dead !== undefined };
  } finally {
    c10?.close();
    const ch = await conn.createChannel();
    await ch.deleteQueue(queue);
    if (dlx) {
      await ch.deleteQueue(`${queue}.dlq`);
      await ch.deleteExchange(`${queue}.dlx`);
    }
    await conn.close();
  }
}

/** What the test's own consumer-timeout trial saw, and where the broker left the message. */
interface OwnTimeoutTrial {
  /** x-delivery-count of each delivery (absent: null). */
  deliveryCount: (number | null)[];
  /** x-acquired-count of each delivery (absent: null): the broker's own count of returns. */
  acquiredCount: (number | null)[];
  redelivered: boolean[];
  /** ms from each delivery to the broker's basic.cancel. */
  cancelMs: number[];
  /** ms from each basic.consume sent to the broker's basic.cancel (the broker's clock starts between the two). */
  sinceConsumeMs: number[];
  inQueue: number;
  inDlq: boolean;
}

/**
 * A consumer-timeout trial run by the test itself, on a queue of its own (x-delivery-limit 2):
 * one message published and confirmed, then `rounds` times a consumer on a new channel
 * (prefetch 1, x-consumer-timeout timeoutMs) that never acks, waits for the broker's basic.cancel
 * and closes its channel; then the queue and the DLQ read.
 */
async function ownTimeoutTrial(dlx: boolean, rounds: number, timeoutMs: number): Promise<OwnTimeoutTrial> {
  const queue = uniqueName(`dlct.${dlx ? 'dlx' : 'no-dlx'}`);
  const conn = await amqp.connect(AMQP_URLS[0]!);
  try {
    const ch = await conn.createConfirmChannel();
    const args: Record<string, unknown> = { 'x-queue-type': 'quorum', 'x-delivery-limit': 2 };
    if (dlx) {
      await ch.assertExchange(`${queue}.dlx`, 'fanout', { durable: true });
      await ch.assertQueue(`${queue}.dlq`, { durable: true });
      await ch.bindQueue(`${queue}.dlq`, `${queue}.dlx`, '');
      args['x-dead-letter-exchange'] = `${queue}.dlx`;
    }
    await ch.assertQueue(queue, { durable: true, arguments: args });
    ch.sendToQueue(queue, Buffer.from('own timeout trial'), { persistent: true });
    await ch.waitForConfirms();
    const own: OwnTimeoutTrial = { deliveryCount: [], acquiredCount: [], redelivered: [], cancelMs: [], sinceConsumeMs: [], inQueue: 0, inDlq: false };
    const header = (v: unknown): number | null => (typeof v === 'number' ? v : null);
    for (let i = 0; i < rounds; i++) {
      const c = await conn.createChannel();
      await c.prefetch(1);
      let deliveredAt: number | undefined;
      let cancelledAt: number | undefined;
      const consumeSentAt = performance.now();
      await c.consume(
        queue,
        (m) => {
          if (!m) {
            cancelledAt = performance.now();
            return;
          }
          deliveredAt = performance.now();
          own.deliveryCount.push(header(m.properties.headers?.['x-delivery-count']));
          own.acquiredCount.push(header(m.properties.headers?.['x-acquired-count']));
          own.redelivered.push(m.fields.redelivered);
        },
        { noAck: false, arguments: { 'x-consumer-timeout': timeoutMs } },
      );
      const cancelled = await within(timeoutMs + SETTLE_MS, () => cancelledAt);
      if (deliveredAt === undefined || cancelled === undefined) throw new Error(`round ${i + 1} on ${queue}: no delivery or no basic.cancel`);
      own.cancelMs.push(cancelled - deliveredAt);
      own.sinceConsumeMs.push(cancelled - consumeSentAt);
      await c.close();
    }
    own.inQueue = (await within(2_000, async () => ((await ch.checkQueue(queue)).messageCount > 0 ? 1 : undefined))) ?? 0;
    own.inDlq = dlx && (await ch.get(`${queue}.dlq`, { noAck: true })) !== false;
    return own;
  } finally {
    const ch = await conn.createChannel();
    await ch.deleteQueue(queue);
    if (dlx) {
      await ch.deleteQueue(`${queue}.dlq`);
      await ch.deleteExchange(`${queue}.dlx`);
    }
    await conn.close();
  }
}

describe('delivery-limit-demo (x-delivery-limit on RabbitMQ 4.3 quorum queues, AMQP 0-9-1 and 1.0)', { timeout: 120_000 }, () => {
  let r: CliResult;
  let d: Doc;
  let tookMs: number;
  /** rabbit1's redelivery counters before and after the demo. */
  let before: Record<Protocol, number>;
  let after: Record<Protocol, number>;

  beforeAll(async () => {
    before = await redelivered();
    const started = performance.now();
    r = await runCli(['delivery-limit-demo', '--json', '--auto']);
    tookMs = performance.now() - started;
    after = await redelivered();
    d = parseJson<Doc>(r);
    // Its time is a figure, not a verdict: printed here, and docs/WORKSHOP.md has it. A hang is
    // caught by this hook's deadline instead: the run takes under a minute alone and took up to
    // 70 s with four other clusters at work beside it; 180 s is well past both.
    process.stderr.write(`delivery-limit-demo --auto took ${(tookMs / 1000).toFixed(1)} s\n`);
  }, 180_000);

  it('both protocols by default, every row as documented; nothing left behind', async () => {
    expect(d.kind).toBe('delivery-limit-demo');
    expect([d.deliveryLimit, d.rounds, d.protocol]).toEqual([2, 6, 'both']);
    expect(d.rows.map((x) => [x.protocol, x.action, x.dlx])).toEqual([
      ...[false, true].flatMap((dlx) => ACTIONS.amqp091.map((a) => ['amqp091', a, dlx])),
      ...[false, true].flatMap((dlx) => ACTIONS.amqp10.map((a) => ['amqp10', a, dlx])),
    ]);
    expect(d.rows.filter((x) => !x.agrees).map((x) => x.disagreements)).toEqual([]);
    expect(d.ok).toBe(true);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await leftovers('rmq-bench.delivery-limit.')).toEqual({ queues: [], exchanges: [] });
    // The same, asked of the broker directly: a passive declare of each trial's queue (and DLQ) is a 404.
    const names = d.rows.flatMap((x) => (x.dlx ? [x.queue, `${x.queue}.dlq`] : [x.queue]));
    expect(names).toHaveLength(39);
    const conn = await amqp.connect(AMQP_URLS[0]!);
    try {
      for (const q of names) {
        const ch = await conn.createChannel();
        ch.on('error', () => undefined);
        const code = await ch.checkQueue(q).then(
          () => 200,
          (e: { code?: number }) => e.code,
        );
        expect(code, q).toBe(404);
      }
    } finally {
      await conn.close();
    }
  });

  it("AMQP 0-9-1: each action's deliveries and fate, without and with a DLX, as the broker does them", () => {
    // By the broker's own behaviour: a nack with requeue never raises x-delivery-count and the
    // message loops past the limit; a reject with requeue and a closed connection raise it, and the
    // delivery after the limit never comes: dropped without a DLX, dead-lettered (delivery_limit) with one.
    // A consumer timeout never raises it either: limit + 1 rounds, and the message is still there.
    const six = [null, null, null, null, null, null];
    const three = [null, null, null];
    expect(d.rows.filter((x) => x.protocol === 'amqp091').map(summary)).toEqual([
      ['ack', false, [null], 'acked', null],
      ['reject', false, [null], 'dropped', null],
      ['reject-requeue', false, [null, 1, 2], 'dropped', null],
      ['nack', false, [null], 'dropped', null],
      ['nack-requeue', false, six, 'still-looping', null],
      ['close', false, [null, 1, 2], 'dropped', null],
      ['consumer-timeout', false, three, 'still-looping', null],
      ['ack', true, [null], 'acked', null],
      ['reject', true, [null], 'dead-lettered', 'rejected'],
      ['reject-requeue', true, [null, 1, 2], 'dead-lettered', 'delivery_limit'],
      ['nack', true, [null], 'dead-lettered', 'rejected'],
      ['nack-requeue', true, six, 'still-looping', null],
      ['close', true, [null, 1, 2], 'dead-lettered', 'delivery_limit'],
      ['consumer-timeout', true, three, 'still-looping', null],
    ]);
    // Every return comes back flagged redelivered.
    for (const row of d.rows) expect(row.deliveries.map((x) => x.redelivered)).toEqual(row.deliveries.map((_, i) => i > 0));
  });

  it('AMQP 1.0: each outcome as rabbit_amqp_session and rabbit_fifo handle it; counts read from the header', () => {
    // released and modified (delivery-failed false) return the message without raising its
    // delivery-count: it loops; modified with delivery-failed counts like a reject with requeue;
    // rejected and modified with undeliverable-here discard it: dead-lettered (rejected) or dropped.
    const six = [0, 0, 0, 0, 0, 0];
    const rows10 = d.rows.filter((x) => x.protocol === 'amqp10');
    expect(rows10.map(summary)).toEqual([
      ['amqp10:accepted', false, [0], 'acked', null],
      ['amqp10:released', false, six, 'still-looping', null],
      ['amqp10:rejected', false, [0], 'dropped', null],
      ['amqp10:modified', false, six, 'still-looping', null],
      ['amqp10:modified-failed', false, [0, 1, 2], 'dropped', null],
      ['amqp10:modified-undeliverable', false, [0], 'dropped', null],
      ['amqp10:accepted', true, [0], 'acked', null],
      ['amqp10:released', true, six, 'still-looping', null],
      ['amqp10:rejected', true, [0], 'dead-lettered', 'rejected'],
      ['amqp10:modified', true, six, 'still-looping', null],
      ['amqp10:modified-failed', true, [0, 1, 2], 'dead-lettered', 'delivery_limit'],
      ['amqp10:modified-undeliverable', true, [0], 'dead-lettered', 'rejected'],
    ]);
    for (const row of rows10) {
      expect(row.countFrom).toBe('header delivery-count');
      expect(row.deliveries.map((x) => x.from)).toEqual(row.deliveries.map(() => 'header'));
    }
  });

  it('the rows that loop for ever went on looping through the loop window (1 s): delivered again past the rounds, and the broker counted them', () => {
    const looping = d.rows.filter((x) => x.loop !== null);
    expect(d.loopWindowMs).toBe(1_000);
    expect(looping.map((x) => [x.action, x.dlx])).toEqual([
      ['nack-requeue', false],
      ['nack-requeue', true],
      ['amqp10:released', false],
      ['amqp10:modified', false],
      ['amqp10:released', true],
      ['amqp10:modified', true],
    ]);
    for (const row of d.rows) {
      const where = `${row.action} ${row.dlx ? 'with' : 'without'} a DLX`;
      // A consumer timeout loops at the timeout's pace: no loop rate.
      if (row.fate !== 'still-looping' || row.action === 'consumer-timeout') {
        expect(row.loop, where).toBeNull();
        continue;
      }
      const loop = row.loop!;
      // Any delivery in the window is one more past the rounds, all at delivery count 0: the loop
      // goes on past the limit. How many is a rate, which the machine's load sets (100 to 180 a
      // second here on its own, 3 seen under heavy load), not a claim of the demo.
      expect(loop.deliveries, where).toBeGreaterThan(0);
      expect(loop.windowMs, where).toBeGreaterThanOrEqual(1_000);
      expect(loop.perSec, where).toBe(Math.round((loop.deliveries * 1000) / loop.windowMs));
    }
    // Every delivery in a window was a redelivery, counted by the node the demo's consumers were on.
    // Other traffic can only add to the counters: at least the demo's own.
    for (const protocol of ['amqp091', 'amqp10'] as const) {
      const claimed = looping.filter((x) => x.protocol === protocol).reduce((a, x) => a + x.loop!.deliveries, 0);
      expect(after[protocol] - before[protocol], protocol).toBeGreaterThanOrEqual(claimed);
    }
  });

  it("consumer-timeout: each row is what the test's own consumer saw of the same trial; the broker counted the returns (x-acquired-count), not the deliveries", async () => {
    const timeoutMs = d.consumerTimeoutMs!;
    const rows = d.rows.filter((x) => x.action === 'consumer-timeout');
    expect(rows.map((x) => x.dlx)).toEqual([false, true]);
    const own = await Promise.all(rows.map((x) => ownTimeoutTrial(x.dlx, x.deliveries.length, timeoutMs)));
    rows.forEach((row, i) => {
      const mine = own[i]!;
      const where = `consumer-timeout ${row.dlx ? 'with' : 'without'} a DLX`;
      expect(row.deliveries.length, where).toBe(Math.min(d.rounds, d.deliveryLimit + 1));
      expect(
        row.deliveries.map((x) => x.deliveryCount),
        where,
      ).toEqual(mine.deliveryCount);
      expect(
        row.deliveries.map((x) => x.redelivered),
        where,
      ).toEqual(mine.redelivered);
      // Each timeout returned the message: the broker's acquired count rose by one a round, its delivery count never did.
      expect(mine.acquiredCount, where).toEqual(mine.acquiredCount.map((_, k) => (k === 0 ? null : k)));
      expect(row.fate === 'still-looping', where).toBe(mine.inQueue > 0);
      expect([row.inDlq, mine.inDlq], where).toEqual([false, false]);
      // The broker's basic.cancel came the timeout after it handed the message out. Its clock starts
      // between basic.consume and the delivery's arrival here, and on a loaded machine the arrival
      // can be read hundreds of ms late (343 ms after it, once, with a 500 ms timeout): the lower
      // bound is taken from the consume, the upper from the delivery.
      for (const ms of mine.sinceConsumeMs) expect(ms, where).toBeGreaterThanOrEqual(timeoutMs - 50);
      for (const ms of [...row.deliveries.map((x) => x.cancelMs!), ...mine.cancelMs]) {
        expect(ms, where).toBeGreaterThan(0);
        expect(ms, where).toBeLessThan(timeoutMs + SETTLE_MS);
      }
    });
    expect(await leftovers('it.dlct.')).toEqual({ queues: [], exchanges: [] });
  });

  it("AMQP 1.0: each row is what the test's own receiver and amqplib read of the same trial", async () => {
    const trials = ACTIONS.amqp10.flatMap((a) => [false, true].map((dlx) => ({ a, dlx })));
    const own = await Promise.all(trials.map(({ a, dlx }) => ownTrial(a, dlx)));
    trials.forEach(({ a, dlx }, i) => {
      const mine = own[i]!;
      const row = d.rows.find((x) => x.action === a && x.dlx === dlx)!;
      const where = `${a} ${dlx ? 'with' : 'without'} a DLX`;
      expect(
        row.deliveries.map((x) => x.deliveryCount),
        where,
      ).toEqual(mine.header);
      expect(
        row.deliveries.map((x) => x.annotation),
        where,
      ).toEqual(mine.annotation);
      expect(row.fate === 'still-looping', where).toBe(mine.inQueue > 0);
      expect(row.inDlq, where).toBe(mine.inDlq);
      expect(row.deathReason, where).toBe(mine.deathReason);
      if (row.fate === 'acked') expect([mine.inQueue, mine.inDlq], where).toEqual([0, false]);
    });
    expect(await leftovers('it.dl10.')).toEqual({ queues: [], exchanges: [] });
  });
});
