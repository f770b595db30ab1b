import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { deadLetterRow, parseFilter } from '../../src/scenarios/broker-tools/dlq-tools.js';

describe('deadLetterRow', () => {
  it('reads reason, source queue, count and the death times (AMQP timestamps, as amqplib decodes them)', () => {
    const row = deadLetterRow({
      content: Buffer.from('abc'),
      properties: {
        messageId: 'm1',
        headers: {
          'x-first-death-reason': 'expired',
          'x-first-death-queue': 'demo.orders',
          'x-death': [
            { reason: 'expired', queue: 'demo.retry', count: 2, time: { '!': 'timestamp', value: 1_800_000_100 } },
            { reason: 'expired', queue: 'demo.orders', count: 1, time: { '!': 'timestamp', value: 1_800_000_000 } },
          ],
        },
      },
    });
    expect(row).toEqual({
      messageId: 'm1',
      reason: 'expired',
      sourceQueue: 'demo.orders',
      count: 1,
      firstDeathAt: new Date(1_800_000_000_000).toISOString(),
      lastDeathAt: new Date(1_800_000_100_000).toISOString(),
      bytes: 3,
    });
  });
  it('a message that never died: all unknown', () => {
    expect(deadLetterRow({ content: Buffer.alloc(0), properties: {} })).toMatchObject({
      messageId: undefined,
      reason: undefined,
      count: undefined,
      firstDeathAt: undefined,
    });
  });
});

describe('parseFilter', () => {
  const row = { messageId: 'x', reason: 'rejected', sourceQueue: 'demo.orders', count: 1, firstDeathAt: undefined, lastDeathAt: undefined, bytes: 0 };
  it.each([
    [undefined, true],
    ['reason=rejected', true],
    ['reason=expired', false],
    ['queue=demo.orders', true],
    ['queue=other', false],
  ])('%s', (filter, expected) => expect(parseFilter(filter)(row)).toBe(expected));
  it('rejects anything else as a usage error', () => {
    expect(() => parseFilter('colour=red')).toThrow(UsageError);
  });
});
