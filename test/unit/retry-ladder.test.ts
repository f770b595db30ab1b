import { describe, expect, it } from 'vitest';
import { durationList, positiveNumber } from '../../src/cli/options.js';
import { renderRetryLadder } from '../../src/report/kinds/retry-demo/text.js';
import { checkLadderGaps, destinationAfter, ladderHistory, ladderTopology } from '../../src/scenarios/demos/retry-ladder.js';
import { ladderAttempt, ladderResult } from './fixtures/retry.js';

describe('ladder routing: attempt k fails → rung k; past the last rung → demo.dlq', () => {
  it.each([
    [1, 3, 'demo.backoff.1'],
    [2, 3, 'demo.backoff.2'],
    [3, 3, 'demo.backoff.3'],
    [4, 3, 'demo.dlq'],
    [1, 1, 'demo.backoff.1'],
    [2, 1, 'demo.dlq'],
  ])('attempt %i of a %i-rung ladder → %s', (attempt, rungs, to) => {
    expect(destinationAfter(attempt, rungs)).toBe(to);
  });

  it('each rung is bound to its attempt key and sends the message back with the next one', () => {
    const t = ladderTopology([5000, 30000, 300000]);
    expect(t.rungs.map((r) => [r.queue, r.bindingKey, r.arguments['x-message-ttl'], r.arguments['x-dead-letter-routing-key']])).toEqual([
      ['demo.backoff.1', 'attempt-1', 5000, 'attempt-2'],
      ['demo.backoff.2', 'attempt-2', 30000, 'attempt-3'],
      ['demo.backoff.3', 'attempt-3', 300000, 'attempt-4'],
    ]);
    expect(t.dlqBindingKey).toBe('attempt-4');
    for (const r of t.rungs) expect(r.arguments).toMatchObject({ 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'demo.backoff.return' });
  });
});

describe('ladderHistory reads x-death', () => {
  const xDeath = (entries: [string, string, number][]) => entries.map(([queue, reason, count]) => ({ queue, reason, count, exchange: '', 'routing-keys': [] }));
  it.each([
    ['first delivery: no x-death', undefined, 0, undefined],
    [
      'after rung 1',
      {
        'x-death': xDeath([
          ['demo.backoff.1', 'expired', 1],
          ['demo.backoff.orders', 'rejected', 1],
        ]),
        'x-last-death-queue': 'demo.backoff.1',
      },
      1,
      'demo.backoff.1',
    ],
    [
      'after rung 2',
      {
        'x-death': xDeath([
          ['demo.backoff.2', 'expired', 1],
          ['demo.backoff.orders', 'rejected', 2],
          ['demo.backoff.1', 'expired', 1],
        ]),
        'x-last-death-queue': 'demo.backoff.2',
      },
      2,
      'demo.backoff.2',
    ],
    [
      'counts only rejections from the work queue',
      {
        'x-death': xDeath([
          ['other', 'rejected', 7],
          ['demo.backoff.orders', 'expired', 1],
        ]),
      },
      0,
      undefined,
    ],
  ] as const)('%s', (_name, headers, earlier, lastRung) => {
    const h = ladderHistory(headers as Record<string, unknown> | undefined, 'demo.backoff.orders');
    expect(h.earlierAttempts).toBe(earlier);
    expect(h.lastRung).toBe(lastRung);
  });
  it('says each death in words', () => {
    expect(ladderHistory({ 'x-death': xDeath([['demo.backoff.orders', 'rejected', 4]]) }, 'demo.backoff.orders').deaths).toEqual([
      'rejected from demo.backoff.orders ×4',
    ]);
  });
});

describe('checkLadderGaps: gap k is rung k’s TTL', () => {
  it.each([
    ['on time', [0, 520, 1540], [500, 1000], 1000, 0],
    ['too early for rung 2', [0, 520, 1100], [500, 1000], 1000, 1],
    ['too late for rung 1', [0, 2000], [500, 1000], 1000, 1],
    ['more attempts than rungs', [0, 600, 1700, 1800], [500, 1000], 1000, 1],
  ])('%s', (_name, at, ttls, tol, problems) => {
    expect(
      checkLadderGaps(
        at.map((atMs) => ({ atMs })),
        ttls,
        tol,
      ).problems,
    ).toHaveLength(problems);
  });
});

describe('--backoff and --time-scale parsing', () => {
  it('parses a list of durations', () => {
    expect(durationList('5s,30s,5m')).toEqual([5000, 30000, 300000]);
    expect(durationList(' 500ms , 1s ')).toEqual([500, 1000]);
  });
  it.each(['5s,,30s', '5s,x', '0s', ''])('rejects %j', (v) => {
    expect(() => durationList(v)).toThrow();
  });
  it('takes a positive factor', () => {
    expect(positiveNumber('0.1')).toBe(0.1);
    expect(() => positiveNumber('0')).toThrow();
    expect(() => positiveNumber('-1')).toThrow();
    expect(() => positiveNumber('x')).toThrow();
  });
});

describe('renderRetryLadder', () => {
  const r = ladderResult({
    rungs: [
      { queue: 'demo.backoff.1', ttlMs: 500 },
      { queue: 'demo.backoff.2', ttlMs: 3000 },
    ],
    toleranceMs: 2000,
    good: { messageId: 'g', failures: 1, processedTimes: 1 },
    poison: { messageId: 'p', attempts: 3, inDlq: true, dlqRoutingKey: 'attempt-3', deaths: ['rejected from demo.backoff.orders ×3'] },
    attempts: [
      ladderAttempt({ messageId: 'g', attempt: 1, atMs: 5, routingKey: 'attempt-1', outcome: 'failed' }),
      ladderAttempt({ messageId: 'g', attempt: 2, atMs: 560, gapMs: 555, expectedGapMs: 500, routingKey: 'attempt-2', outcome: 'processed' }),
    ],
  });

  it('shows the ladder, each attempt with its gap and rung TTL, and where the poison message ended', () => {
    const text = renderRetryLadder(r);
    expect(text).toContain('demo.backoff.orders → demo.backoff.1 0.50 s → demo.backoff.2 3.00 s → demo.dlq (TTLs × 0.1)');
    expect(text).toMatch(/g\s+2\s+0\.56 s\s+0\.56 s\s+0\.50 s\s+attempt-2\s+1\s+processed/);
    expect(text).toContain('p: 3 attempts, in demo.dlq (key attempt-3');
    expect(text).toContain('verdict: OK');
  });
  it('fails when the poison message is not in demo.dlq', () => {
    const text = renderRetryLadder({ ...r, ok: false, poison: { ...r.poison, inDlq: false }, problems: ['poison: not found in demo.dlq after the last rung'] });
    expect(text).toContain('NOT in demo.dlq');
    expect(text).toContain('verdict: FAILED');
  });
});
