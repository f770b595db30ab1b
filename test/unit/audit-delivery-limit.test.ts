import { describe, expect, it } from 'vitest';
import type { AuditItem } from '../../src/audit/check.js';
import { checkById } from '../../src/audit/checklist.js';
import type { BrokerSnapshot } from '../../src/cluster/broker/snapshot.js';
import { Topology } from '../../src/cluster/broker/topology.js';
import { classicQueue, policy, quorumQueue, stockSnapshot } from './audit.fixtures.js';

/** dlx-configured over the stock snapshot with these queues added, run directly. */
function dlxItems(...queues: BrokerSnapshot['queues']): AuditItem[] {
  const s = stockSnapshot();
  s.queues.push(...queues);
  return checkById('dlx-configured')!.run(s, new Topology(s), { maxUnacked: 1_000 });
}

const itemOf = (items: AuditItem[], object: string): AuditItem => {
  const i = items.find((x) => x.object === object);
  if (!i) throw new Error(`no item for ${object}`);
  return i;
};

describe('dlx-configured: a quorum queue with a delivery limit and no dead-letter exchange drops messages', () => {
  it('warns, names the limit, and says which consumers loop past it (rmq-bench delivery-limit-demo)', () => {
    const i = itemOf(dlxItems(quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 3 } })), 'queue t.work');
    expect(i.status).toBe('warn');
    expect(i.message).toBe('no dead-letter exchange: a message rejected without requeue, expired, or past its delivery limit (3) is dropped');
    expect(i.fix).toMatch(/^set dead-letter-exchange in a policy .* and bind a DLQ to that exchange; /);
    expect(i.fix).toContain('not basic.nack or released: those never raise the delivery count and loop past the limit for ever');
    expect(i.fix).toContain('rmq-bench delivery-limit-demo');
  });

  it('the broker default limit (20) counts as a limit', () => {
    const i = itemOf(dlxItems(quorumQueue('t.work')), 'queue t.work');
    expect(i.message).toContain('past its delivery limit (20) is dropped');
    expect(i.fix).toContain('rmq-bench delivery-limit-demo');
  });

  it('no limit (a classic queue, or x-delivery-limit -1): nothing about the limit', () => {
    const items = dlxItems(
      classicQueue('t.classic'),
      quorumQueue('t.unlimited', { delivery_limit: 'unlimited', arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': -1 } }),
    );
    for (const object of ['queue t.classic', 'queue t.unlimited']) {
      const i = itemOf(items, object);
      expect(i.message).toBe('no dead-letter exchange: a message rejected without requeue, expired is dropped');
      expect(i.fix).toBe('set dead-letter-exchange in a policy matching the queue (or x-dead-letter-exchange) and bind a DLQ to that exchange');
    }
  });

  it('with a dead-letter exchange: passes', () => {
    const i = itemOf(dlxItems(quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'demo.dlx' } })), 'queue t.work');
    expect([i.status, i.fix]).toEqual(['pass', null]);
  });
});

/** requeue-loop over the stock snapshot with these queues added (and this broker version), run directly. */
function requeueItems(version: string | undefined, ...queues: BrokerSnapshot['queues']): AuditItem[] {
  const s = stockSnapshot();
  s.queues.push(...queues);
  s.overview.rabbitmq_version = version;
  s.overview.product_version = version;
  return checkById('requeue-loop')!.run(s, new Topology(s), { maxUnacked: 1_000 });
}

describe('requeue-loop: where a delivery limit is set, a note on the requeues it never counts (RabbitMQ 4.3)', () => {
  it('the stock queues: a passing note each, naming the limit and where it comes from', () => {
    const items = requeueItems('4.3.6');
    expect(items.map((i) => [i.status, i.object, i.fix])).toEqual([
      ['pass', 'queue demo.orders', null],
      ['pass', 'queue demo.retry', null],
    ]);
    expect(itemOf(items, 'queue demo.orders').message).toMatch(/^delivery limit 5 \(policy\) counts failed deliveries only: /);
    expect(itemOf(items, 'queue demo.retry').message).toMatch(
      /^delivery limit 20 \(the broker default: not set on the queue\) counts failed deliveries only: /,
    );
  });

  it('says which requeues loop for ever, which count, that the audit cannot see the consumers, and where it was measured', () => {
    const { message } = itemOf(
      requeueItems('4.3.6', quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 3 } })),
      'queue t.work',
    );
    expect(message).toBe(
      'delivery limit 3 (argument) counts failed deliveries only: since RabbitMQ 4.3 a consumer that requeues with basic.nack (AMQP 0-9-1), ' +
        'or settles with released or with modified without delivery-failed (AMQP 1.0), never raises the delivery count, so a poison message ' +
        "it requeues that way loops past the limit for ever. The audit cannot see how this queue's consumers requeue: a failure requeued with " +
        'basic.reject (AMQP 1.0: modified with delivery-failed) counts, and stops at the limit (rmq-bench delivery-limit-demo measures each way)',
    );
  });

  it('the limit in force: the smaller of policy and argument', () => {
    const s = stockSnapshot();
    s.queues.push(quorumQueue('demo.orders.2', { arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 9 } }));
    s.policies.push(policy('low', '^demo\\.orders\\.2$', { 'delivery-limit': 4 }, 1));
    const items = checkById('requeue-loop')!.run(s, new Topology(s), { maxUnacked: 1_000 });
    expect(itemOf(items, 'queue demo.orders.2').message).toMatch(/^delivery limit 4 \(argument and policy\) /);
  });

  it('no limit, no note: a classic queue, a stream, x-delivery-limit -1', () => {
    const items = requeueItems(
      '4.3.6',
      classicQueue('t.classic'),
      quorumQueue('t.stream', { type: 'stream', arguments: { 'x-queue-type': 'stream' } }),
      quorumQueue('t.unlimited', { delivery_limit: 'unlimited', arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': -1 } }),
    );
    expect(items.map((i) => i.object)).toEqual(['queue demo.orders', 'queue demo.retry']);
  });

  it('before RabbitMQ 4.3 every return counted toward the limit: the note says so; a later or unknown version gets the loop note', () => {
    for (const v of ['4.2.3', '4.0.5', '3.13.7']) {
      expect(requeueItems(v)).toHaveLength(2);
      for (const i of requeueItems(v)) expect(i.message).toMatch(/counts every return before RabbitMQ 4\.3/);
    }
    for (const v of ['4.4.0', undefined]) {
      expect(requeueItems(v)).toHaveLength(2);
      for (const i of requeueItems(v)) expect(i.message).toMatch(/counts failed deliveries only/);
    }
  });
});
