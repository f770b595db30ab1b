import { describe, expect, it } from 'vitest';
import { renderDelayedRetryDemo } from '../../src/report/kinds/delayed-retry-demo/text.js';
import { expectedSurvivors } from '../../src/scenarios/demos/durability-demo.js';
import { checkDelay, delayFor, delayedRetryUnsupported, parseVersion, policyDefinition, returnPlan } from '../../src/scenarios/demos/delayed-retry-plan.js';
import { delayedRetryResult, delayedRound } from './fixtures/delayed-retry.js';

describe('delayFor: min(min × x-delivery-count (at least 1), max)', () => {
  it.each([
    [2000, 10000, 0, 2000],
    [2000, 10000, 1, 2000],
    [2000, 10000, 2, 4000],
    [2000, 10000, 3, 6000],
    [2000, 10000, 5, 10000],
    [2000, 10000, 9, 10000],
    [500, 1200, 3, 1200],
    [1000, 1000, 4, 1000],
  ])('min %i, max %i, count %i → %i ms', (min, max, count, expected) => {
    expect(delayFor(min, max, count)).toBe(expected);
  });
});

describe('returnPlan', () => {
  const brief = (type: 'all' | 'failed' | 'returned', n: number, min = 2000, max = 10000) =>
    returnPlan(type, n, min, max).map((p) => `${p.kind}:${p.deliveryCount}:${p.expectedMs}`);
  it.each([
    [
      'failed: reject and close in turn, counted, then one nack back at once',
      'failed',
      4,
      ['reject:1:2000', 'close:2:4000', 'reject:3:6000', 'close:4:8000', 'nack:4:0'],
    ],
    ['returned: nacks wait min (count stays 0), then one reject back at once', 'returned', 3, ['nack:0:2000', 'nack:0:2000', 'nack:0:2000', 'reject:1:0']],
    [
      'all: reject, nack, close; a nack waits min × the count so far',
      'all',
      5,
      ['reject:1:2000', 'nack:1:2000', 'close:2:4000', 'reject:3:6000', 'nack:3:6000'],
    ],
  ] as const)('%s', (_name, type, n, expected) => {
    expect(brief(type, n)).toEqual(expected);
  });
  it('caps at max', () => {
    expect(brief('failed', 5, 2000, 5000).map((s) => Number(s.split(':')[2]))).toEqual([2000, 4000, 5000, 5000, 5000, 0]);
  });
  it('marks what the type delays', () => {
    expect(returnPlan('failed', 1, 1, 1).map((p) => [p.class, p.delayed])).toEqual([
      ['failed', true],
      ['returned', false],
    ]);
  });
});

describe('checkDelay', () => {
  it.each([
    [2000, 2000, 1000, undefined],
    [2950, 2000, 1000, undefined],
    [1950, 2000, 1000, undefined],
    [1800, 2000, 1000, 'came back after 1800 ms, before the 2000 ms delay'],
    [3100, 2000, 1000, 'came back after 3100 ms, more than 2000 + 1000 ms'],
    [12, 0, 1000, undefined],
  ])('measured %i, expected %i, tolerance %i', (measured, expected, tolerance, problem) => {
    expect(checkDelay(measured, expected, tolerance)).toBe(problem);
  });
});

describe('version gate: arguments from 4.3.0, policy keys from 4.3.1', () => {
  it.each([
    ['4.3.6', 'policy', false],
    ['4.3.1', 'policy', false],
    ['4.3.0', 'arguments', false],
    ['4.4.0', 'policy', false],
    ['5.0.1', 'policy', false],
    ['4.3.0', 'policy', true],
    ['4.2.3', 'arguments', true],
    ['3.13.7', 'policy', true],
    ['nonsense', 'policy', true],
  ] as const)('%s via %s → unsupported %s', (version, via, unsupported) => {
    expect(delayedRetryUnsupported(version, via) !== undefined).toBe(unsupported);
  });
  it('explains the 4.3.0 policy case and points to --via arguments', () => {
    expect(delayedRetryUnsupported('4.3.0', 'policy')).toContain('--via arguments');
  });
  it('parses versions', () => {
    expect(parseVersion('4.3.6')).toEqual([4, 3, 6]);
    expect(parseVersion('4.3')).toEqual([4, 3, 0]);
    expect(parseVersion('4.3.6+1.g')).toEqual([4, 3, 6]);
    expect(parseVersion('x')).toBeUndefined();
  });
});

describe('policyDefinition keeps the shadowed policy’s keys', () => {
  it('dlx-orders’ DLX and delivery-limit stay', () => {
    expect(policyDefinition({ 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 5 }, 'all', 2000, 10000)).toEqual({
      'dead-letter-exchange': 'demo.dlx',
      'delivery-limit': 5,
      'delayed-retry-type': 'all',
      'delayed-retry-min': 2000,
      'delayed-retry-max': 10000,
    });
  });
});

describe('renderDelayedRetryDemo', () => {
  const base = delayedRetryResult({
    type: 'failed',
    minMs: 500,
    maxMs: 1200,
    toleranceMs: 1000,
    setup: {
      ...delayedRetryResult().setup,
      definition: { 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 5, 'delayed-retry-type': 'failed' },
      keptKeys: ['dead-letter-exchange', 'delivery-limit'],
    },
    deliveryLimit: 5,
    messages: ['a', 'b'],
    rounds: [
      delayedRound({ index: 1, kind: 'reject', class: 'failed', deliveryCount: 1, expectedMs: 500, delays: { a: 503, b: 540 }, messagesDelayedSeen: 2 }),
      delayedRound({ index: 2, kind: 'nack', class: 'returned', delayed: false, deliveryCount: 1, expectedMs: 0, delays: { a: 4, b: 4 } }),
    ],
    deliveries: [],
  });

  it('a row per return, the kept keys and the verdict', () => {
    const text = renderDelayedRetryDemo(base);
    expect(text).toContain('#1      reject  failed');
    expect(text).toContain('0.50 s–0.54 s');
    expect(text).toContain('returned (not delayed)');
    expect(text).toContain("it keeps dlx-orders' keys: dead-letter-exchange, delivery-limit");
    expect(text).toContain('verdict: OK');
  });
  it('a failed run lists its problems and fails', () => {
    const text = renderDelayedRetryDemo({
      ...base,
      ok: false,
      problems: ['return #1 (reject) of a: came back after 6 ms, before the 500 ms delay'],
      setup: { ...base.setup, skipped: true },
    });
    expect(text).toContain('setup: none (--skip-setup)');
    expect(text).toContain('came back after 6 ms');
    expect(text).toContain('verdict: FAILED');
  });
});

describe('durability: the article’s claim', () => {
  it.each([
    ['classic', 'transient', 100, 0],
    ['classic', 'persistent', 100, 100],
    ['quorum', 'transient', 100, 100],
    ['quorum', 'persistent', 100, 100],
  ] as const)('%s %s: %i confirmed → %i expected', (type, mode, confirmed, expected) => {
    expect(expectedSurvivors(type, mode, confirmed)).toBe(expected);
  });
});
