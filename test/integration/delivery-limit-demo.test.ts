import { describe, expect, it } from 'vitest';
import type { DeliveryLimitDemoResult, DeliveryLimitRow } from '../../src/scenarios/delivery-limit-plan.js';
import { mgmtGet, parseJson, runCli } from './cli.js';

type Doc = DeliveryLimitDemoResult & { kind: string };

async function leftovers(): Promise<{ queues: string[]; exchanges: string[] }> {
  const mine = (list: { name: string }[]) => list.map((x) => x.name).filter((n) => n.startsWith('rmq-bench.delivery-limit.'));
  return {
    queues: mine(await mgmtGet<{ name: string }[]>('/api/queues?columns=name')),
    exchanges: mine(await mgmtGet<{ name: string }[]>('/api/exchanges?columns=name')),
  };
}

/** A row as the broker left it: the x-delivery-count of each delivery (absent: null), the fate, the death reason. */
const summary = (r: DeliveryLimitRow) => [r.action, r.dlx, r.deliveries.map((d) => d.deliveryCount), r.fate, r.deathReason];

describe('delivery-limit-demo (x-delivery-limit on RabbitMQ 4.3 quorum queues, AMQP 0-9-1)', { timeout: 120_000 }, () => {
  it("each action's deliveries and fate, without and with a DLX, as the broker does them; nothing left behind", async () => {
    const started = performance.now();
    const r = await runCli(['delivery-limit-demo', '--json', '--auto']);
    const d = parseJson<Doc>(r);
    expect(d.kind).toBe('delivery-limit-demo');
    expect(performance.now() - started).toBeLessThan(60_000);
    expect(d.deliveryLimit).toBe(2);
    expect(d.rounds).toBe(6);
    // By the broker's own behaviour: a nack with requeue never raises x-delivery-count and the
    // message loops past the limit; a reject with requeue and a closed connection raise it, and the
    // delivery after the limit never comes: dropped without a DLX, dead-lettered (delivery_limit) with one.
    const six = [null, null, null, null, null, null];
    expect(d.rows.map(summary)).toEqual([
      ['ack', false, [null], 'acked', null],
      ['reject', false, [null], 'dropped', null],
      ['reject-requeue', false, [null, 1, 2], 'dropped', null],
      ['nack', false, [null], 'dropped', null],
      ['nack-requeue', false, six, 'still-looping', null],
      ['close', false, [null, 1, 2], 'dropped', null],
      ['ack', true, [null], 'acked', null],
      ['reject', true, [null], 'dead-lettered', 'rejected'],
      ['reject-requeue', true, [null, 1, 2], 'dead-lettered', 'delivery_limit'],
      ['nack', true, [null], 'dead-lettered', 'rejected'],
      ['nack-requeue', true, six, 'still-looping', null],
      ['close', true, [null, 1, 2], 'dead-lettered', 'delivery_limit'],
    ]);
    // Every return comes back flagged redelivered.
    for (const row of d.rows) expect(row.deliveries.map((x) => x.redelivered)).toEqual(row.deliveries.map((_, i) => i > 0));
    expect(d.rows.filter((x) => !x.agrees).map((x) => x.disagreements)).toEqual([]);
    expect(d.ok).toBe(true);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await leftovers()).toEqual({ queues: [], exchanges: [] });
  });
});
