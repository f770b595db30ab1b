import { describe, expect, it } from 'vitest';
import { KIND_VIEWS } from '../../src/report/kinds.js';
import { deliveriesText, renderDeliveryLimitDemo } from '../../src/report/kinds/delivery-limit-demo/text.js';
import {
  ACTIONS,
  RULES,
  assessRow,
  classifyFate,
  expectedOf,
  isFinal,
  type Action,
  type DeliveryLimitDemoResult,
  type Observed,
  type SeenDelivery,
} from '../../src/scenarios/delivery-limit-plan.js';

const o = { deliveryLimit: 2, rounds: 6 };

/** Deliveries with these counts (null: header absent), each after the first flagged redelivered. */
const seen = (...counts: (number | null)[]): SeenDelivery[] => counts.map((deliveryCount, i) => ({ deliveryCount, redelivered: i > 0 }));

const observed = (over: Partial<Observed>): Observed => ({ deliveries: seen(null), acked: false, leftInQueue: 0, inDlq: false, deathReason: null, ...over });

describe('classifyFate', () => {
  it.each([
    ['acked wins', { acked: true, leftInQueue: 0, inDlq: false }, 'acked'],
    ['still in the queue', { acked: false, leftInQueue: 1, inDlq: false }, 'still-looping'],
    ['in the DLQ', { acked: false, leftInQueue: 0, inDlq: true }, 'dead-lettered'],
    ['nowhere', { acked: false, leftInQueue: 0, inDlq: false }, 'dropped'],
  ] as const)('%s', (_name, o, fate) => {
    expect(classifyFate(o)).toBe(fate);
  });
});

describe('expectedOf', () => {
  it.each([
    ['ack', false, 'acked', null, 1, [0]],
    ['ack', true, 'acked', null, 1, [0]],
    ['reject', false, 'dropped', null, 1, [0]],
    ['reject', true, 'dead-lettered', 'rejected', 1, [0]],
    ['nack', false, 'dropped', null, 1, [0]],
    ['nack', true, 'dead-lettered', 'rejected', 1, [0]],
    ['nack-requeue', false, 'still-looping', null, 6, [0, 0, 0, 0, 0, 0]],
    ['nack-requeue', true, 'still-looping', null, 6, [0, 0, 0, 0, 0, 0]],
    ['reject-requeue', false, 'dropped', null, 3, [0, 1, 2]],
    ['reject-requeue', true, 'dead-lettered', 'delivery_limit', 3, [0, 1, 2]],
    ['close', false, 'dropped', null, 3, [0, 1, 2]],
    ['close', true, 'dead-lettered', 'delivery_limit', 3, [0, 1, 2]],
  ] as const)('%s, DLX %s: %s', (action, dlx, fate, deathReason, deliveries, counts) => {
    expect(expectedOf(action, dlx, o)).toEqual({ fate, deathReason, deliveries, counts });
  });
  it('fewer rounds than the limit allows: a counting action is still looping', () => {
    expect(expectedOf('close', true, { deliveryLimit: 5, rounds: 3 })).toEqual({ fate: 'still-looping', deathReason: null, deliveries: 3, counts: [0, 1, 2] });
  });
  it('rounds exactly limit + 1: past the limit on the last', () => {
    expect(expectedOf('reject-requeue', false, { deliveryLimit: 2, rounds: 3 }).fate).toBe('dropped');
  });
});

describe('isFinal and RULES', () => {
  it('ack, reject and nack settle at once; the requeues and a close do not', () => {
    expect(ACTIONS.filter(isFinal)).toEqual(['ack', 'reject', 'nack']);
  });
  it('every action has its rule', () => {
    for (const a of ACTIONS) expect(RULES[a]).not.toBe('');
  });
});

describe('assessRow', () => {
  it.each([
    ['ack', false, observed({ acked: true })],
    ['reject', true, observed({ inDlq: true, deathReason: 'rejected' })],
    ['nack-requeue', false, observed({ deliveries: seen(null, null, null, null, null, null), leftInQueue: 1 })],
    ['close', false, observed({ deliveries: seen(null, 1, 2) })],
    ['reject-requeue', true, observed({ deliveries: seen(null, 1, 2), inDlq: true, deathReason: 'delivery_limit' })],
  ] as [Action, boolean, Observed][])('%s (DLX %s) as the broker does it: agrees', (action, dlx, seenRow) => {
    const r = assessRow(action, dlx, 'q', seenRow, o);
    expect(r.disagreements).toEqual([]);
    expect(r.agrees).toBe(true);
  });
  it.each([
    [
      'nack-requeue counted and dropped',
      'nack-requeue',
      false,
      observed({ deliveries: seen(null, 1, 2) }),
      ['dropped, the rule says still-looping', '3 deliveries, the rule says 6'],
    ],
    [
      'reject-requeue never counted',
      'reject-requeue',
      false,
      observed({ deliveries: seen(null, null, null, null, null, null), leftInQueue: 1 }),
      ['still-looping, the rule says dropped', '6 deliveries, the rule says 3'],
    ],
    [
      'a close dead-lettered for the wrong reason',
      'close',
      true,
      observed({ deliveries: seen(null, 1, 2), inDlq: true, deathReason: 'rejected' }),
      ['x-first-death-reason rejected, the rule says delivery_limit'],
    ],
    ['counts that do not rise', 'close', false, observed({ deliveries: seen(null, 1, 1) }), ['x-delivery-count 0, 1, 1, the rule says 0, 1, 2']],
    ['a reject dropped with a DLX', 'reject', true, observed({}), ['dropped, the rule says dead-lettered']],
  ] as [string, Action, boolean, Observed, string[]][])('%s: disagrees, and says how', (_name, action, dlx, seenRow, disagreements) => {
    const r = assessRow(action, dlx, 'q', seenRow, o);
    expect(r.agrees).toBe(false);
    expect(r.disagreements).toEqual(disagreements);
  });
});

describe('renderDeliveryLimitDemo', () => {
  const rows = [
    assessRow('nack-requeue', false, 'q1', observed({ deliveries: seen(null, null, null, null, null, null), leftInQueue: 1 }), o),
    assessRow('close', true, 'q2', observed({ deliveries: seen(null, 1, 2), inDlq: true, deathReason: 'delivery_limit' }), o),
  ];
  const result: DeliveryLimitDemoResult = { ...o, brokerVersion: '4.3.6', rows, ok: true };

  it('one table, the documented rule beside each measured row', () => {
    const text = renderDeliveryLimitDemo(result);
    expect(text).toContain('delivery-limit-demo on RabbitMQ 4.3.6: quorum queues with x-delivery-limit 2; one message each, at most 6 deliveries');
    const lines = text.split('\n');
    const nack = lines.find((l) => l.startsWith('nack-requeue'))!;
    expect(nack).toMatch(/nack-requeue\s+no\s+- -r -r -r -r -r\s+still-looping\s+yes\s+4\.3: an explicit return; never counts/);
    const close = lines.find((l) => l.startsWith('close'))!;
    expect(close).toMatch(/close\s+yes\s+- 1r 2r\s+dead-lettered \(delivery_limit\)\s+yes\s+counts toward the limit/);
    expect(text).toContain('verdict: OK');
  });

  it('a disagreement is called out, and the verdict fails', () => {
    const bad = assessRow('nack-requeue', false, 'q1', observed({ deliveries: seen(null, 1, 2) }), o);
    const text = renderDeliveryLimitDemo({ ...result, rows: [bad], ok: false });
    expect(text).toMatch(/nack-requeue\s+no\s+- 1r 2r\s+dropped\s+NO/);
    expect(text).toContain('nack-requeue without a DLX: not as documented: dropped, the rule says still-looping; 3 deliveries, the rule says 6');
    expect(text).toContain('verdict: FAILED');
    expect(KIND_VIEWS['delivery-limit-demo'].reasons({ ...result, rows: [bad], ok: false })).toEqual([
      'nack-requeue without a DLX: dropped, the rule says still-looping; 3 deliveries, the rule says 6',
    ]);
  });

  it('no delivery at all', () => {
    expect(deliveriesText({ deliveries: [] })).toBe('(none)');
  });

  it('figures: one line over the rows', () => {
    expect(KIND_VIEWS['delivery-limit-demo'].figures(result)).toBe('nack-requeue: 6 deliveries, still-looping; close (DLX): 3 deliveries, dead-lettered');
  });
});
