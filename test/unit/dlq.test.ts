import { describe, expect, it } from 'vitest';
import { renderDlqDemo } from '../../src/report/kinds/dlq-demo/text.js';
import { deadMessageOf } from '../../src/scenarios/demos/dlq-demo.js';

describe('deadMessageOf (x-death parsing)', () => {
  it.each([
    [
      'delivery limit',
      {
        messageId: 'a',
        headers: {
          'x-first-death-reason': 'delivery_limit',
          'x-first-death-queue': 'demo.orders',
          'x-delivery-count': 5,
          'x-death': [{ reason: 'delivery_limit', queue: 'demo.orders', count: 1 }],
        },
      },
      { messageId: 'a', firstDeathReason: 'delivery_limit', firstDeathQueue: 'demo.orders', deathCount: 1, deliveryCount: 5 },
    ],
    [
      'several deaths: the first one is matched by reason and queue',
      {
        messageId: 'b',
        headers: {
          'x-first-death-reason': 'rejected',
          'x-first-death-queue': 'demo.orders',
          'x-death': [
            { reason: 'expired', queue: 'demo.retry', count: BigInt(2) },
            { reason: 'rejected', queue: 'demo.orders', count: BigInt(3) },
          ],
        },
      },
      { messageId: 'b', firstDeathReason: 'rejected', firstDeathQueue: 'demo.orders', deathCount: 3, deliveryCount: undefined },
    ],
    [
      'no headers',
      { messageId: undefined, headers: undefined },
      { messageId: undefined, firstDeathReason: undefined, firstDeathQueue: undefined, deathCount: undefined, deliveryCount: undefined },
    ],
  ])('%s', (_name, properties, expected) => {
    expect(deadMessageOf({ properties: properties as { messageId?: unknown; headers?: Record<string, unknown> } })).toEqual(expected);
  });
});

describe('renderDlqDemo', () => {
  it('one row per reason, the problems and the verdict', () => {
    const text = renderDlqDemo({
      ok: false,
      results: [
        {
          reason: 'delivery_limit',
          how: 'crash',
          published: 3,
          deliveriesPerMessage: { a: 6, b: 6, c: 6 },
          expectedInDlq: 3,
          dead: [{ messageId: 'a', firstDeathReason: 'delivery_limit', firstDeathQueue: 'demo.orders', deathCount: 1, deliveryCount: 5 }],
          leftInQueue: 0,
          ok: false,
          problems: ['1 messages in demo.dlq, expected 3'],
        },
        { reason: 'expired', how: 'ttl', published: 3, deliveriesPerMessage: {}, expectedInDlq: 3, dead: [], leftInQueue: 0, ok: true, problems: [] },
      ],
    });
    expect(text).toMatch(/^delivery_limit\s+3\s+6\s+1 of 3 expected\s+delivery_limit\s+FAILED$/m);
    expect(text).toMatch(/^expired\s+3\s+- \(no consumer\)/m);
    expect(text).toContain('delivery_limit: 1 messages in demo.dlq, expected 3');
    expect(text).toContain('verdict: FAILED');
  });
});
