import { describe, expect, it } from 'vitest';
import type { AuditItem } from '../../src/audit/check.js';
import { checkById } from '../../src/audit/checklist.js';
import type { BrokerSnapshot } from '../../src/cluster/snapshot.js';
import { Topology } from '../../src/cluster/topology.js';
import { classicQueue, quorumQueue, stockSnapshot } from './audit.fixtures.js';

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
