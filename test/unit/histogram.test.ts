import { describe, expect, it } from 'vitest';
import { LatencyRecorder, type LatencySummary } from '../../src/measure/histogram.js';

/** 3 significant digits: within 0.1 %, plus the 1 µs the recorder rounds to. */
function expectNear(actual: number | null, expected: number): void {
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - expected)).toBeLessThanOrEqual(expected * 1e-3 + 1e-3);
}

function recorded(values: number[]): LatencySummary {
  const r = new LatencyRecorder();
  for (const v of values) r.recordMs(v);
  return r.summary();
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const times = (n: number, v: number): number[] => Array.from({ length: n }, () => v);

describe('LatencyRecorder', () => {
  it('empty: count 0 and every figure null', () => {
    const r = new LatencyRecorder();
    expect(r.count).toBe(0);
    expect(r.summary()).toEqual({ count: 0, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null, meanMs: null });
  });

  const cases: {
    name: string;
    values: number[];
    expected: Omit<LatencySummary, 'count'> & { p50Ms: number; p95Ms: number; p99Ms: number; maxMs: number; meanMs: number };
  }[] = [
    { name: '1..1000 ms, one each', values: range(1, 1_000), expected: { p50Ms: 500, p95Ms: 950, p99Ms: 990, maxMs: 1_000, meanMs: 500.5 } },
    { name: 'one value', values: [12.345], expected: { p50Ms: 12.345, p95Ms: 12.345, p99Ms: 12.345, maxMs: 12.345, meanMs: 12.345 } },
    { name: 'sub-millisecond', values: times(100, 0.25), expected: { p50Ms: 0.25, p95Ms: 0.25, p99Ms: 0.25, maxMs: 0.25, meanMs: 0.25 } },
    {
      name: 'a slow tail: 90 × 1 ms, 10 × 1 s',
      values: [...times(90, 1), ...times(10, 1_000)],
      expected: { p50Ms: 1, p95Ms: 1_000, p99Ms: 1_000, maxMs: 1_000, meanMs: 100.9 },
    },
    {
      name: 'unsorted input: 10 ms steps from 2 s down to 10 ms',
      values: range(1, 200).map((i) => (201 - i) * 10),
      expected: { p50Ms: 1_000, p95Ms: 1_900, p99Ms: 1_980, maxMs: 2_000, meanMs: 1_005 },
    },
  ];

  it.each(cases)('$name', ({ values, expected }) => {
    const s = recorded(values);
    expect(s.count).toBe(values.length);
    expectNear(s.p50Ms, expected.p50Ms);
    expectNear(s.p95Ms, expected.p95Ms);
    expectNear(s.p99Ms, expected.p99Ms);
    expectNear(s.maxMs, expected.maxMs);
    expectNear(s.meanMs, expected.meanMs);
  });

  it('in order, and no percentile above the max: p50 <= p95 <= p99 <= max', () => {
    const s = recorded([...range(1, 100), ...times(5, 7_500)]);
    expect(s.p50Ms!).toBeLessThanOrEqual(s.p95Ms!);
    expect(s.p95Ms!).toBeLessThanOrEqual(s.p99Ms!);
    expect(s.p99Ms!).toBeLessThanOrEqual(s.maxMs!);
  });

  const TEN_MIN_MS = 600_000;
  it.each([
    { name: '20 minutes', ms: 20 * 60_000 },
    { name: 'an hour', ms: 3_600_000 },
    { name: 'infinity', ms: Infinity },
  ])('above 10 min clamps to 10 min: $name', ({ ms }) => {
    const r = new LatencyRecorder();
    expect(() => r.recordMs(ms)).not.toThrow();
    r.recordMs(5);
    const s = r.summary();
    expect(s.count).toBe(2);
    expectNear(s.maxMs, TEN_MIN_MS);
    expectNear(s.p99Ms, TEN_MIN_MS);
    expectNear(s.p50Ms, 5);
  });

  it('exactly 10 min is kept as is', () => {
    expectNear(recorded([TEN_MIN_MS]).maxMs, TEN_MIN_MS);
  });

  it.each([0, -3])('%d ms counts as the lowest bucket (1 µs)', (ms) => {
    const s = recorded([ms]);
    expect(s.count).toBe(1);
    expect(s.maxMs).toBe(0.001);
  });
});
