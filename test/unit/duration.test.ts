import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { formatDuration, formatMs, parseDurationMs } from '../../src/util/duration.js';

describe('parseDurationMs', () => {
  const valid: { text: string; ms: number }[] = [
    { text: '500ms', ms: 500 },
    { text: '5s', ms: 5_000 },
    { text: '1.5s', ms: 1_500 },
    { text: '2m', ms: 120_000 },
    { text: '1h', ms: 3_600_000 },
    { text: '1m30s', ms: 90_000 },
    { text: '1h2m3s4ms', ms: 3_723_004 },
    { text: '5m', ms: 300_000 },
    { text: '0s', ms: 0 },
    { text: '0', ms: 0 },
    { text: '0.0', ms: 0 },
    { text: ' 5S ', ms: 5_000 },
  ];

  it.each(valid)('$text → $ms ms', ({ text, ms }) => {
    expect(parseDurationMs(text)).toBe(ms);
  });

  const invalid = ['', '   ', '90', '0.25', '500', '5x', 's', 'ms', '-1s', '1m 30s', '.5s', '5.s', '1e3', 'five seconds', '5s!'];

  it.each(invalid)('%j is a UsageError', (text) => {
    expect(() => parseDurationMs(text)).toThrow(UsageError);
  });

  it('names the flag and the text, exit code 2', () => {
    let caught: unknown;
    try {
      parseDurationMs('5x', '--hold');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UsageError);
    expect((caught as UsageError).exitCode).toBe(2);
    expect((caught as UsageError).message).toBe("--hold: '5x' is not a duration (examples: 500ms, 5s, 1m30s)");
  });
});

describe('formatMs', () => {
  const cases: { ms: number; text: string }[] = [
    { ms: 0, text: '0 ms' },
    { ms: 12.4, text: '12 ms' },
    { ms: 999.4, text: '999 ms' },
    { ms: 1_000, text: '1.00 s' },
    { ms: 1_534, text: '1.53 s' },
    { ms: 9_994, text: '9.99 s' },
    { ms: 10_000, text: '10.0 s' },
    { ms: 42_250, text: '42.3 s' },
    { ms: 60_000, text: '1 m 0 s' },
    { ms: 90_000, text: '1 m 30 s' },
    { ms: 119_400, text: '1 m 59 s' },
    // Rounding the seconds up must carry into the minutes.
    { ms: 119_600, text: '2 m 0 s' },
    { ms: 3_600_000, text: '60 m 0 s' },
    { ms: Number.NaN, text: '-' },
    { ms: Number.POSITIVE_INFINITY, text: '-' },
  ];

  it.each(cases)('$ms → $text', ({ ms, text }) => {
    expect(formatMs(ms)).toBe(text);
  });
});

describe('parseDurationMs: a bare number has no unit', () => {
  it.each(['500', '5', '1.5', ' 30 '])('%j is refused with the two spellings it may have meant', (text) => {
    const bare = text.trim();
    expect(() => parseDurationMs(text, '--min')).toThrow(`--min: '${bare}' has no unit: write ${bare}ms or ${bare}s`);
  });
});

describe('formatDuration: milliseconds as a user types them', () => {
  it.each([
    [0, '0s'],
    [1, '1ms'],
    [500, '500ms'],
    [1_234, '1234ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [8_000, '8s'],
    [59_900, '59.9s'],
    [60_000, '1m'],
    [61_500, '61.5s'],
    [90_000, '1m30s'],
    [3_600_000, '1h'],
    [3_723_000, '1h2m3s'],
  ])('%d → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDurationMs(text)).toBe(ms);
  });
});
