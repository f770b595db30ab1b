import type { ConsumeMessage } from 'amqplib';
import type { Message } from 'rhea';
import { describe, expect, it } from 'vitest';
import { deliveryFacts } from '../../src/client/amqp091/consumer.js';
import { deliveryFacts10 } from '../../src/client/amqp10/consumer10.js';
import type { ConsumerResult } from '../../src/client/consumer-result.js';
import { ConsumerTally, type DeliveryFacts, MAX_RECORDS, stopReason, workMsFor } from '../../src/client/consumer-tally.js';
import type { ProcessedStore } from '../../src/store/processed.js';
import { InterruptedError } from '../../src/errors.js';
import type { Clock } from '../../src/util/retry.js';

/**
 * What both consumers share (consumer-tally.ts): when a run stops, the work of a delivery, the
 * counters and records a run keeps and the ConsumerResult made of them; and each protocol's
 * reading of a delivery into its record.
 */

/** A clock whose sleep advances time at once (Ctrl+C: an aborted signal throws, as systemClock's). */
function fakeClock(): Clock & { t: number } {
  const clock = {
    t: 1_000,
    now: () => clock.t,
    sleep: async (ms: number, signal?: AbortSignal) => {
      if (signal?.aborted) throw new InterruptedError();
      clock.t += ms;
    },
  };
  return clock;
}

const facts: DeliveryFacts = { messageId: 'r1-1', redelivered: false, deliveryCount: undefined, acquiredCount: undefined, death: undefined };

describe('stopReason', () => {
  it.each([
    ['going on', { aborted: false, taken: 3, count: 10, idleTimeoutMs: 1_000 }, undefined],
    ['Ctrl+C', { aborted: true, taken: 3, count: 10, idleTimeoutMs: 1_000 }, 'interrupted'],
    ['Ctrl+C before the count', { aborted: true, taken: 10, count: 10, idleTimeoutMs: 1_000 }, 'interrupted'],
    ['the count reached', { aborted: false, taken: 10, count: 10, idleTimeoutMs: 1_000 }, 'count'],
    ['past the count', { aborted: false, taken: 11, count: 10, idleTimeoutMs: 1_000 }, 'count'],
    ['no count', { aborted: false, taken: 1_000_000, count: undefined, idleTimeoutMs: 1_000 }, undefined],
    ['count 0: at once', { aborted: false, taken: 0, count: 0, idleTimeoutMs: 1_000 }, 'count'],
    ['nothing to take, not idle long enough', { aborted: false, taken: 3, count: 10, sinceActivityMs: 999, idleTimeoutMs: 1_000 }, undefined],
    ['nothing to take, idle', { aborted: false, taken: 3, count: 10, sinceActivityMs: 1_000, idleTimeoutMs: 1_000 }, 'idle'],
    ['the count before idle', { aborted: false, taken: 10, count: 10, sinceActivityMs: 5_000, idleTimeoutMs: 1_000 }, 'count'],
  ] as const)('%s → %s', (_name, s, expected) => {
    expect(stopReason(s)).toBe(expected);
  });
});

describe('workMsFor', () => {
  const store = (processed: string[]): ProcessedStore => ({ alreadyProcessed: (id: string) => processed.includes(id) }) as unknown as ProcessedStore;
  const slowR13 = (id: string): number => (id === 'r1-3' ? 5_000 : 10);
  it.each([
    ['workMs', { store: undefined, workMs: 20 }, 'r1-1', 20],
    ['workMsOf over workMs', { store: undefined, workMs: 20, workMsOf: slowR13 }, 'r1-3', 5_000],
    ['workMsOf, another id', { store: undefined, workMs: 20, workMsOf: slowR13 }, 'r1-4', 10],
    ['the store has it: no work', { store: store(['r1-3']), workMs: 20, workMsOf: slowR13 }, 'r1-3', 0],
    ['the store lacks it', { store: store(['r1-3']), workMs: 20 }, 'r1-1', 20],
  ] as const)('%s → %i ms', (_name, opts, id, expected) => {
    expect(workMsFor(opts, id)).toBe(expected);
  });
});

describe('ConsumerTally', () => {
  const opts = { queue: 'q', autoAck: false, count: undefined, idleTimeoutMs: 1_000 };

  it("keeps ConsumerResult's keys in their order", () => {
    const keys: (keyof ConsumerResult)[] = [
      'queue',
      'autoAck',
      'prefetch',
      'received',
      'processed',
      'duplicatesSkipped',
      'acked',
      'nacked',
      'rejected',
      'crashes',
      'byOutcome',
      'reconnects',
      'cancels',
      'channelsClosed',
      'maxHeld',
      'lastProcessedAtMs',
      'durationMs',
      'stoppedBecause',
      'gaveUp',
      'deliveries',
    ];
    expect(Object.keys(new ConsumerTally(fakeClock()).result(opts, 10))).toEqual(keys);
  });

  it('a run with nothing: stopped as idle, no deliveries', () => {
    const clock = fakeClock();
    const tally = new ConsumerTally(clock);
    clock.t += 250;
    expect(tally.result(opts, 0)).toEqual({
      queue: 'q',
      autoAck: false,
      prefetch: 0,
      received: 0,
      processed: 0,
      duplicatesSkipped: 0,
      acked: 0,
      nacked: 0,
      rejected: 0,
      crashes: 0,
      byOutcome: {},
      reconnects: 0,
      cancels: 0,
      channelsClosed: 0,
      maxHeld: 0,
      lastProcessedAtMs: null,
      durationMs: 250,
      stoppedBecause: 'idle',
      gaveUp: null,
      deliveries: [],
    });
  });

  it('counts deliveries, connections and the most held', () => {
    const clock = fakeClock();
    const tally = new ConsumerTally(clock);
    tally.connected();
    tally.held(3);
    expect(tally.taken()).toBe(1);
    clock.t += 10;
    tally.processed('processed');
    tally.record(facts, 'processed');
    tally.connected();
    tally.held(2);
    expect(tally.taken()).toBe(2);
    clock.t += 5;
    tally.processed('duplicate');
    tally.record({ ...facts, redelivered: true }, 'duplicate-skipped');
    expect(tally.taken()).toBe(3);
    tally.record(facts, 'nack-requeue');
    tally.record(facts, 'processed');
    const r = tally.result(opts, 5);
    expect(r).toMatchObject({
      received: 3,
      processed: 1,
      duplicatesSkipped: 1,
      reconnects: 1,
      maxHeld: 3,
      lastProcessedAtMs: 15,
      byOutcome: { processed: 2, 'duplicate-skipped': 1, 'nack-requeue': 1 },
    });
    expect(r.deliveries.map((d) => [d.atMs, d.outcome, d.redelivered])).toEqual([
      [10, 'processed', false],
      [15, 'duplicate-skipped', true],
      [15, 'nack-requeue', false],
      [15, 'processed', false],
    ]);
  });

  it('a record has the keys of DeliveryRecord in their order', () => {
    const d = new ConsumerTally(fakeClock()).record(facts, 'crash');
    expect(Object.keys(d)).toEqual(['atMs', 'messageId', 'redelivered', 'deliveryCount', 'acquiredCount', 'death', 'outcome']);
  });

  it(`keeps the first ${MAX_RECORDS} deliveries and counts them all`, () => {
    const tally = new ConsumerTally(fakeClock());
    for (let i = 0; i < MAX_RECORDS + 2; i++) tally.record({ ...facts, messageId: `r1-${i}` }, 'processed');
    const r = tally.result(opts, 0);
    expect(r.deliveries).toHaveLength(MAX_RECORDS);
    expect(r.deliveries.at(-1)?.messageId).toBe(`r1-${MAX_RECORDS - 1}`);
    expect(r.byOutcome).toEqual({ processed: MAX_RECORDS + 2 });
  });

  it.each([
    ['going on', false, 10, 0, false, undefined],
    ['Ctrl+C', true, 10, 0, false, 'interrupted'],
    ['the count reached (processed and skipped)', false, 2, 0, false, 'count'],
    ['nothing to take, idle', false, 10, 1_000, true, 'idle'],
    ['nothing to take, not yet idle', false, 10, 999, true, undefined],
    ['a delivery to take: never idle', false, 10, 5_000, false, undefined],
  ] as const)('stops: %s', (_name, aborted, count, idleMs, idle, expected) => {
    const clock = fakeClock();
    const tally = new ConsumerTally(clock);
    tally.processed('processed');
    tally.processed('duplicate');
    clock.t += idleMs;
    expect(tally.stops(aborted, { count, idleTimeoutMs: 1_000 }, idle)).toBe(expected !== undefined);
    expect(tally.stoppedBecause).toBe(expected);
    expect(tally.result(opts, 0).stoppedBecause).toBe(expected ?? 'idle');
  });

  it('activity puts idleness off', () => {
    const clock = fakeClock();
    const tally = new ConsumerTally(clock);
    clock.t += 900;
    tally.active();
    clock.t += 900;
    expect(tally.stops(false, opts, true)).toBe(false);
    tally.taken();
    clock.t += 1_000;
    expect(tally.stops(false, opts, true)).toBe(true);
  });

  it.each([
    ['no work', 0, false, true, undefined, 0],
    ['the work done', 40, false, true, undefined, 40],
    ['Ctrl+C during the work', 40, true, false, 'interrupted', 0],
  ] as const)('work: %s', async (_name, ms, aborted, expected, stoppedBecause, elapsed) => {
    const clock = fakeClock();
    const tally = new ConsumerTally(clock);
    const ac = new AbortController();
    if (aborted) ac.abort();
    expect(await tally.work(ms, ac.signal)).toBe(expected);
    expect(tally.stoppedBecause).toBe(stoppedBecause);
    expect(clock.t - 1_000).toBe(elapsed);
  });
});

describe('deliveryFacts (AMQP 0-9-1)', () => {
  const msg = (messageId: unknown, redelivered: boolean, headers?: Record<string, unknown>): ConsumeMessage =>
    ({ properties: { messageId, headers }, fields: { redelivered } }) as unknown as ConsumeMessage;
  it.each([
    [
      'a first delivery',
      msg('r1-1', false, {}),
      { messageId: 'r1-1', redelivered: false, deliveryCount: undefined, acquiredCount: undefined, death: undefined },
    ],
    [
      'no headers, no id',
      msg(undefined, false),
      { messageId: undefined, redelivered: false, deliveryCount: undefined, acquiredCount: undefined, death: undefined },
    ],
    [
      'redelivered, counted, dead-lettered before',
      msg('r1-2', true, { 'x-delivery-count': 2, 'x-acquired-count': 3, 'x-death': [{ reason: 'rejected', queue: 'demo.orders', count: 1 }] }),
      { messageId: 'r1-2', redelivered: true, deliveryCount: 2, acquiredCount: 3, death: 'rejected from demo.orders ×1' },
    ],
  ])('%s', (_name, m, expected) => {
    const f = deliveryFacts(m);
    expect(f).toEqual(expected);
    expect(Object.keys(f)).toEqual(['messageId', 'redelivered', 'deliveryCount', 'acquiredCount', 'death']);
  });
});

describe('deliveryFacts10 (AMQP 1.0)', () => {
  it.each([
    [
      'a first delivery',
      { message_id: 'r1-1', first_acquirer: true },
      { messageId: 'r1-1', redelivered: false, deliveryCount: undefined, acquiredCount: undefined },
    ],
    [
      'first_acquirer false',
      { message_id: 'r1-1', first_acquirer: false },
      { messageId: 'r1-1', redelivered: true, deliveryCount: undefined, acquiredCount: undefined },
    ],
    ['delivery_count 2', { message_id: 7, delivery_count: 2 }, { messageId: '7', redelivered: true, deliveryCount: 2, acquiredCount: undefined }],
    [
      'x-acquired-count 1',
      { message_id: 'r1-1', message_annotations: { 'x-acquired-count': 1 } },
      { messageId: 'r1-1', redelivered: true, deliveryCount: undefined, acquiredCount: 1 },
    ],
    [
      'x-opt-deaths',
      { message_id: 'r1-1', message_annotations: { 'x-opt-deaths': [{ reason: 'expired', queue: 'demo.retry', count: 3 }] } },
      { messageId: 'r1-1', redelivered: false, deliveryCount: undefined, acquiredCount: undefined, death: 'expired from demo.retry ×3' },
    ],
  ])('%s', (_name, message, expected) => {
    expect(deliveryFacts10(message as Message)).toEqual({ death: undefined, ...expected });
  });
});
