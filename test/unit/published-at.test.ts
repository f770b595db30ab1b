import { describe, expect, it } from 'vitest';
import { decodePublishedAtUs, encodePublishedAtUs, endToEndMs, nowUs, PUBLISHED_AT_US_HEADER } from '../../src/measure/published-at.js';

describe('published-at header: encode and decode', () => {
  it('is x-rmq-bench-published-at-us', () => {
    expect(PUBLISHED_AT_US_HEADER).toBe('x-rmq-bench-published-at-us');
  });

  it.each([
    { name: 'now', perfMs: 0 },
    { name: 'later, sub-ms', perfMs: 1234.5678 },
    { name: 'an hour in', perfMs: 3_600_000.001 },
  ])('round trip: $name', ({ perfMs }) => {
    const us = encodePublishedAtUs(perfMs);
    expect(Number.isInteger(us)).toBe(true);
    expect(Math.abs(us - nowUs(perfMs))).toBeLessThanOrEqual(0.5);
    expect(decodePublishedAtUs({ [PUBLISHED_AT_US_HEADER]: us })).toBe(us);
  });

  it.each([
    { name: 'a number', headers: { [PUBLISHED_AT_US_HEADER]: 1_000_000 }, expected: 1_000_000 },
    { name: 'a bigint (AMQP long)', headers: { [PUBLISHED_AT_US_HEADER]: 1_000_000n }, expected: 1_000_000 },
    { name: 'a string', headers: { [PUBLISHED_AT_US_HEADER]: '1000000' }, expected: undefined },
    { name: 'another header only', headers: { 'x-rmq-bench-published-at': 1 }, expected: undefined },
    { name: 'no headers', headers: undefined, expected: undefined },
  ])('decode: $name', ({ headers, expected }) => {
    expect(decodePublishedAtUs(headers)).toBe(expected);
  });

  it('end to end: now minus the header, in ms', () => {
    const sentUs = encodePublishedAtUs(100);
    expect(endToEndMs({ properties: { headers: { [PUBLISHED_AT_US_HEADER]: sentUs } } }, sentUs + 2_500)).toBe(2.5);
    expect(endToEndMs({ properties: { headers: {} } }, 1)).toBeUndefined();
  });
});
