import { afterAll, describe, expect, it } from 'vitest';
import { parseJson, runCli, uniqueName, withChannel } from './cli.js';

/*
 * `consumer --protocol amqp10` against RabbitMQ 4.3 quorum queues, counted by the broker: the
 * test publishes with its own amqplib publisher (confirms), the consumer takes them over AMQP 1.0,
 * and a passive declare says what is left. A released delivery comes back (redelivered, and
 * counted as received twice but processed once); modified with delivery_failed raises the
 * header's delivery_count; a pre-settled link (--autoack) takes every message without accepts.
 */

interface DeliveryJson {
  messageId?: string;
  deliveryCount?: number;
  acquiredCount?: number;
  redelivered: boolean;
  outcome: string;
}
interface ConsumerJson {
  queue: string;
  autoAck: boolean;
  prefetch: number;
  received: number;
  processed: number;
  acked: number;
  nacked: number;
  rejected: number;
  byOutcome: Record<string, number>;
  stoppedBecause: string;
  deliveries: DeliveryJson[];
  protocol: string;
}

const N = 500;
const created: string[] = [];

/** A quorum queue of its own with `n` messages r-0..r-(n-1), each confirmed by the broker. */
async function queueWith(prefix: string, n: number): Promise<{ queue: string; ids: string[] }> {
  const queue = uniqueName(prefix);
  created.push(queue);
  const ids = Array.from({ length: n }, (_, i) => `r-${i}`);
  await withChannel(async (ch) => {
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    for (const id of ids) ch.sendToQueue(queue, Buffer.from(id), { messageId: id, persistent: true });
    await ch.waitForConfirms();
  });
  // The broker's count before: every message is there.
  expect(await ready(queue)).toBe(n);
  return { queue, ids };
}

/** The queue's ready messages, by a passive declare. */
async function ready(queue: string): Promise<number> {
  return (await withChannel((ch) => ch.checkQueue(queue))).messageCount;
}

/** The ids processed, each as often as it was. */
function processedIds(c: ConsumerJson): string[] {
  return c.deliveries
    .filter((d) => d.outcome === 'processed')
    .map((d) => d.messageId ?? '?')
    .sort();
}

async function consume(args: string[]): Promise<ConsumerJson> {
  const r = await runCli(['consumer', '--protocol', 'amqp10', '--idle-timeout', '5s', '--json', ...args]);
  expect(r.exitCode, r.stderr).toBe(0);
  return parseJson<ConsumerJson>(r);
}

describe('consumer --protocol amqp10 (AMQP 1.0 receiver link), counted by the broker', { timeout: 120_000 }, () => {
  afterAll(async () => {
    await withChannel(async (ch) => {
      for (const q of created) await ch.deleteQueue(q);
    }).catch(() => undefined);
  });

  it('-n N: every message processed once and accepted; the queue is empty after', async () => {
    const { queue, ids } = await queueWith('amqp10.consume', N);
    const c = await consume(['--queue', queue, '--prefetch', '20', '--count', String(N)]);
    expect(c.protocol).toBe('amqp10');
    expect(Object.keys(c).at(-1), 'protocol is the last key').toBe('protocol');
    expect(c.stoppedBecause).toBe('count');
    expect(c.processed).toBe(N);
    expect(c.acked).toBe(N);
    expect(processedIds(c)).toEqual([...ids].sort());
    expect(await ready(queue)).toBe(0);
  });

  it.each([
    ['release', 'unchanged', undefined],
    ['modify-failed', 'raised to 1', 1],
  ] as const)('--on-failure %s --fail-first 1: the failed delivery comes back and is counted (delivery_count %s)', async (action, _label, deliveryCount) => {
    const n = 50;
    const { queue, ids } = await queueWith(`amqp10.${action}`, n);
    const c = await consume(['--queue', queue, '--count', String(n), '--on-failure', action, '--fail-first', '1']);
    const failed = c.deliveries[0]!;
    expect(failed.outcome).toBe(action);
    expect(failed.redelivered).toBe(false);
    // The same message again: redelivered, acquired once before, and (modify-failed only) a failed delivery.
    const again = c.deliveries.filter((d) => d.messageId === failed.messageId);
    expect(again.map((d) => d.outcome)).toEqual([action, 'processed']);
    expect(again[1]).toMatchObject({ redelivered: true, acquiredCount: 1 });
    expect(again[1]!.deliveryCount).toBe(deliveryCount);
    expect(c.received).toBe(n + 1);
    expect(c.processed).toBe(n);
    expect(c.nacked).toBe(1);
    expect(c.byOutcome).toEqual({ [action]: 1, processed: n });
    // Each message processed exactly once: no accept went out as the failure's outcome, nor the reverse.
    expect(processedIds(c)).toEqual([...ids].sort());
    expect(await ready(queue)).toBe(0);
  });

  it('--autoack: a pre-settled link; every message taken, nothing accepted, the queue empty after', async () => {
    const { queue, ids } = await queueWith('amqp10.autoack', N);
    const c = await consume(['--queue', queue, '--autoack', '--count', String(N)]);
    expect(c.autoAck).toBe(true);
    expect(c.processed).toBe(N);
    expect(c.acked).toBe(0);
    expect(processedIds(c)).toEqual([...ids].sort());
    expect(await ready(queue)).toBe(0);
  });

  it('a queue that does not exist: exit 66, one line', async () => {
    const r = await runCli(['consumer', '--protocol', 'amqp10', '--queue', uniqueName('amqp10.none'), '--idle-timeout', '1s']);
    expect(r.exitCode).toBe(66);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('rmq-bench:')),
    ).toEqual([expect.stringContaining('amqp:not-found')]);
  });
});
