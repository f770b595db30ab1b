import amqp from 'amqplib';
import { describe, expect, it } from 'vitest';
import type { DeliveryLimitDemoResult, DeliveryLimitRow } from '../../src/scenarios/demos/delivery-limit-plan.js';
import type { ConsumerTimeoutDemoResult } from '../../src/scenarios/demos/consumer-timeout-plan.js';
import { AMQP_URLS, mgmtGet, parseJson, runCli, uniqueName } from './cli.js';

/*
 * A RabbitMQ 4.0 cluster (shard h: `cluster up` with RMQ_BENCH_RABBITMQ=4.0, the image built from
 * Debian trixie): what changed between 4.0 and 4.3, measured on it. The delivery limit counts
 * every return (4.3 stopped counting basic.nack with requeue), and a consumer past its timeout
 * has its channel closed at the broker's once-a-minute check (4.3 cancels it at the timeout).
 * The broker's own view is read beside the demos' documents: the queues' message counts and the
 * DLQs, by the management API.
 */

type LimitDoc = DeliveryLimitDemoResult & { broker: { version: string } };

/**
 * The tests' own trial, plain amqplib: a quorum queue with x-delivery-limit 2 and no DLX, one
 * message, basic.get and basic.nack with requeue until the queue is empty or `rounds` are done;
 * the deliveries seen, and the broker's count of the queue at the end.
 */
async function nackRequeueTrial(rounds: number): Promise<{ deliveries: number; left: number }> {
  const c = await amqp.connect(AMQP_URLS[0]!);
  const queue = uniqueName('v40-nack');
  try {
    const ch = await c.createConfirmChannel();
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 2 } });
    await new Promise<void>((resolve, reject) => ch.sendToQueue(queue, Buffer.from('poison'), { persistent: true }, (err) => (err ? reject(err) : resolve())));
    let deliveries = 0;
    for (let i = 0; i < rounds; i++) {
      let m: amqp.GetMessage | false = false;
      for (let tries = 0; tries < 40 && m === false; tries++) {
        m = await ch.get(queue, { noAck: false });
        if (m === false) await new Promise((r) => setTimeout(r, 50));
      }
      if (m === false) break;
      deliveries++;
      ch.nack(m, false, true);
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const left = (await ch.checkQueue(queue)).messageCount;
    await ch.deleteQueue(queue);
    return { deliveries, left };
  } finally {
    await c.close().catch(() => undefined);
  }
}

describe('RabbitMQ 4.0 (Debian trixie)', { timeout: 600_000 }, () => {
  it('what 3.x had and 4.0 removed, and what only 4.3 has or lacks, refused with one line (exit 69); a cluster is not moved to another version in place (exit 2)', async () => {
    for (const { args, line } of [
      { args: ['compare', '--queue-type', 'mirrored', '-n', '10'], line: '--queue-type mirrored needs RabbitMQ before 4.0; this broker runs 4.0.' },
      { args: ['delayed-retry-demo', '--auto'], line: 'delayed-retry-demo (native delayed retry) needs RabbitMQ 4.3 or later; this broker runs 4.0.' },
    ]) {
      const r = await runCli(args);
      expect(r.exitCode, r.stderr).toBe(69);
      expect(r.stderr.trim().split('\n'), r.stderr).toEqual([expect.stringContaining(line)]);
    }
    // 4.3 has no partition handling (Khepri): refused before anything is created.
    const handling = await runCli(['cluster', 'up', '--name', 'it-none', '--rabbitmq', '4.3', '--partition-handling', 'autoheal']);
    expect(handling.exitCode, handling.stderr).toBe(69);
    expect(handling.stderr.trim().split('\n')).toEqual([
      expect.stringContaining('--partition-handling needs RabbitMQ before 4.3; the cluster is RabbitMQ 4.3'),
    ]);
    const moved = await runCli(['cluster', 'up', '--rabbitmq', '4.3']);
    expect(moved.exitCode, moved.stderr).toBe(2);
    expect(moved.stderr.trim().split('\n')).toEqual([expect.stringContaining('runs RabbitMQ 4.0, not 4.3: it is not changed in place')]);
  });

  it('delivery-limit-demo: every return counts toward the limit (nack with requeue too); AMQP 1.0 counts a released message in the annotation; each row as 4.0 documents it', async () => {
    const r = await runCli(['delivery-limit-demo', '--auto', '--json'], { timeoutMs: 300_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    const d = parseJson<LimitDoc>(r);
    expect(d.broker.version).toMatch(/^4\.0\./);
    expect(d.rulesEra).toBe('4.0');
    expect(d.rows.filter((x) => !x.agrees).map((x) => `${x.action} ${x.dlx}: ${x.disagreements.join('; ')}`)).toEqual([]);
    const row = (action: string, dlx: boolean): DeliveryLimitRow => d.rows.find((x) => x.action === action && x.dlx === dlx)!;
    const counts = (x: DeliveryLimitRow): (number | null)[] => x.deliveries.map((y) => y.deliveryCount);
    // The limit is 2: a message returned twice and delivered a third time is past it.
    for (const action of ['nack-requeue', 'reject-requeue', 'close', 'consumer-timeout']) {
      expect([action, counts(row(action, false)), row(action, false).fate]).toEqual([action, [null, 1, 2], 'dropped']);
      expect([action, row(action, true).fate, row(action, true).deathReason]).toEqual([action, 'dead-lettered', 'delivery_limit']);
    }
    const released = row('amqp10:released', true);
    expect(released.deliveries.map((y) => [y.deliveryCount, y.annotation ?? null])).toEqual([
      [0, null],
      [0, 1],
      [0, 2],
    ]);
    expect([released.fate, released.deathReason]).toEqual(['dead-lettered', 'delivery_limit']);
    // The tests' own trial agrees: 3 deliveries, then the broker dropped the message (4.3 would keep it looping).
    expect(await nackRequeueTrial(6)).toEqual({ deliveries: 3, left: 0 });
    // The broker's own view after the demo: its queues are gone (none left behind to count).
    const left = (await mgmtGet<{ name: string }[]>('/api/queues?columns=name')).filter((q) => q.name.startsWith('rmq-bench.delivery-limit'));
    expect(left).toEqual([]);
  });

  it("consumer-timeout-demo: the channel closed (PRECONDITION_FAILED) within a minute after the timeout, the delivery returned; rmq-bench's consumer subscribed again and processed every message once", async () => {
    const r = await runCli(['consumer-timeout-demo', '--auto', '--via', 'queue-argument', '--json'], { timeoutMs: 300_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    const d = parseJson<ConsumerTimeoutDemoResult & { broker: { version: string } }>(r);
    expect(d.broker.version).toMatch(/^4\.0\./);
    expect(d.ending).toBe('channel-close');
    const x = d.runs[0]!;
    expect(x.problems).toEqual([]);
    expect(x.naive.cancelAtMs).toBeNull();
    expect(x.naive.channelError).toMatch(/PRECONDITION_FAILED - delivery acknowledgement on channel \d+ timed out/);
    expect(x.measuredTimeoutMs!).toBeGreaterThan(d.timeoutMs - 500);
    expect(x.measuredTimeoutMs!).toBeLessThan(d.timeoutMs + 60_000 + d.toleranceMs);
    expect(x.handling.channelsClosed).toBe(1);
    expect(x.handling.resubscribedAtMs).not.toBeNull();
    expect(Object.values(x.handling.processed)).toEqual(x.messageIds.map(() => 1));
    expect(x.handlingEnd.ready).toBe(0);
  });
});
