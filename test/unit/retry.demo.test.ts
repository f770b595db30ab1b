import { describe, expect, it } from 'vitest';
import { renderRetryDemo } from '../../src/report/kinds/retry-demo/text.js';
import { checkGaps } from '../../src/scenarios/demos/retry-demo.js';

describe('checkGaps', () => {
  it.each([
    ['one attempt: no gap', [0], 5000, 2000, [], 0],
    ['on time', [0, 5100, 10300], 5000, 2000, [5100, 5200], 0],
    ['too early', [0, 4000], 5000, 2000, [4000], 1],
    ['too late', [0, 7500], 5000, 2000, [7500], 1],
    ['exactly the TTL is fine', [0, 5000], 5000, 0, [5000], 0],
  ])('%s', (_name, at, ttl, tol, gaps, problemCount) => {
    const r = checkGaps(
      at.map((atMs) => ({ atMs })),
      ttl,
      tol,
    );
    expect(r.gaps).toEqual(gaps);
    expect(r.problems).toHaveLength(problemCount);
  });
  it('says which attempt and by how much', () => {
    expect(checkGaps([{ atMs: 0 }, { atMs: 5100 }, { atMs: 9000 }], 5000, 2000).problems).toEqual([
      'attempt 3 came 3900 ms after the previous one, before the 5000 ms TTL',
    ]);
  });
});

describe('renderRetryDemo', () => {
  it('one row per attempt with its gap, and the verdict', () => {
    const text = renderRetryDemo({
      messageId: 'retry-demo-x',
      ttlMs: 5000,
      attempts: [
        { attempt: 1, atMs: 10, gapMs: null, outcome: 'nack-drop', death: undefined },
        { attempt: 2, atMs: 5110, gapMs: 5100, outcome: 'processed', death: 'rejected from demo.orders ×1' },
      ],
      processedTimes: 1,
      ok: true,
      problems: [],
    });
    expect(text).toMatch(/^\s*2\s+5\.11 s\s+5\.10 s\s+processed\s+rejected from demo\.orders ×1$/m);
    expect(text).toContain('verdict: OK');
  });
});
