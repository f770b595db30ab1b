import { describe, expect, it } from 'vitest';
import { AdaptiveSamples } from '../../src/measure/samples.js';

/** A run of `durationMs`, offered a sample every `tickMs`, then the final one. */
function run(durationMs: number, tickMs = 10, max = 1_000): AdaptiveSamples<{ tMs: number }> {
  const s = new AdaptiveSamples<{ tMs: number }>(max, 10);
  for (let t = 0; t <= durationMs; t += tickMs) s.offer(t, () => ({ tMs: t }));
  s.push({ tMs: durationMs + 1 });
  return s;
}

describe('AdaptiveSamples', () => {
  it.each([
    // run length → samples kept, final interval
    [150, 17, 10],
    [5_000, 502, 10],
    [10_000, 502, 20],
    [60_000, 752, 80],
    [600_000, 939, 640],
  ])('a %d ms run keeps %d samples, ending at a %d ms interval', (durationMs, count, intervalMs) => {
    const s = run(durationMs);
    expect(s.samples).toHaveLength(count);
    expect(s.intervalMs).toBe(intervalMs);
  });
  it.each([150, 5_000, 60_000, 600_000])('a %d ms run: at most max samples, in order, the first and the last kept, evenly spaced', (durationMs) => {
    const s = run(durationMs);
    const t = s.samples.map((x) => x.tMs);
    expect(t.length).toBeLessThanOrEqual(1_000);
    expect(t[0]).toBe(0);
    expect(t[t.length - 1]).toBe(durationMs + 1);
    for (let i = 1; i < t.length; i++) expect(t[i]!).toBeGreaterThan(t[i - 1]!);
    // Spacing: all gaps but the last (the final sample) within a factor of 2 of each other.
    const gaps = t.slice(1, -1).map((x, i) => x - t[i]!);
    expect(Math.max(...gaps) / Math.min(...gaps)).toBeLessThanOrEqual(2);
  });
  it('offer skips until the interval has passed; push always records', () => {
    const s = new AdaptiveSamples<{ tMs: number }>(10, 100);
    s.offer(0, () => ({ tMs: 0 }));
    s.offer(50, () => ({ tMs: 50 }));
    s.offer(100, () => ({ tMs: 100 }));
    s.push({ tMs: 120 });
    expect(s.samples.map((x) => x.tMs)).toEqual([0, 100, 120]);
  });
  it('make() is not called for a skipped sample', () => {
    const s = new AdaptiveSamples<{ tMs: number }>(10, 100);
    let calls = 0;
    for (let t = 0; t < 100; t += 10) s.offer(t, () => ({ tMs: t, n: ++calls }));
    expect(calls).toBe(1);
  });
  it('max below 2 is refused', () => expect(() => new AdaptiveSamples(1)).toThrow('max must be at least 2'));
});
