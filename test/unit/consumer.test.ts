import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { shouldFail } from '../../src/client/consumer-failures.js';
import { Subscription } from '../../src/client/amqp091/subscription.js';
import type { ConsumerResult, DeliveryRecord } from '../../src/client/consumer-result.js';
import { deathSummary } from '../../src/client/delivery-headers.js';
import { renderConsumer, renderDelivery } from '../../src/report/kinds/consumer/text.js';
import { renderConsumerCrash } from '../../src/report/kinds/consumer-crash/text.js';
import { renderPrefetchDemo } from '../../src/report/kinds/prefetch-demo/text.js';
import type { ConsumerCrashResult, CrashRun } from '../../src/scenarios/crashes/consumer-crash.js';

describe('shouldFail', () => {
  const never = (): number => 0.99;
  const always = (): number => 0;
  it.each([
    ['no failure configured', 1, undefined, never, false],
    ['every 3rd: 3', 3, { action: 'close', every: 3, rate: undefined }, never, true],
    ['every 3rd: 4', 4, { action: 'close', every: 3, rate: undefined }, never, false],
    ['rate 0.5, random 0.99', 7, { action: 'nack-drop', every: undefined, rate: 0.5 }, never, false],
    ['rate 0.5, random 0', 7, { action: 'nack-drop', every: undefined, rate: 0.5 }, always, true],
    ['first 2: delivery 2', 2, { action: 'reject-requeue', every: undefined, rate: undefined, first: 2 }, never, true],
    ['first 2: delivery 3', 3, { action: 'reject-requeue', every: undefined, rate: undefined, first: 2 }, always, false],
    ['no every/rate/first: always', 9, { action: 'close', every: undefined, rate: undefined }, never, true],
  ] as const)('%s', (_name, n, failure, random, expected) => {
    expect(shouldFail(n, failure as Parameters<typeof shouldFail>[1], random)).toBe(expected);
  });
});

describe('deathSummary', () => {
  it.each([
    [undefined, undefined],
    [{}, undefined],
    [{ 'x-death': [] }, undefined],
    [{ 'x-death': [{ reason: 'delivery_limit', queue: 'demo.orders', count: 1 }] }, 'delivery_limit from demo.orders ×1'],
    [
      {
        'x-death': [
          { reason: 'expired', queue: 'demo.retry', count: BigInt(3) },
          { reason: 'rejected', queue: 'x', count: 1 },
        ],
      },
      'expired from demo.retry ×3',
    ],
  ])('case %#', (headers, expected) => {
    expect(deathSummary(headers as Record<string, unknown> | undefined)).toBe(expected);
  });
});

describe('renderDelivery', () => {
  const base: DeliveryRecord = {
    atMs: 1,
    messageId: 'r1-7',
    redelivered: false,
    deliveryCount: undefined,
    acquiredCount: undefined,
    death: undefined,
    outcome: 'processed',
  };
  it.each([
    [base, 'delivery #1 of r1-7 (first delivery) → processed'],
    [
      { ...base, deliveryCount: 2, acquiredCount: 3, redelivered: true, outcome: 'crash' as const },
      'delivery #3 of r1-7 (x-delivery-count 2, x-acquired-count 3, redelivered) → crash',
    ],
    [
      { ...base, messageId: undefined, death: 'expired from demo.retry ×1' },
      'delivery #1 of (no message id) (first delivery, x-death: expired from demo.retry ×1) → processed',
    ],
  ])('case %#', (d, expected) => expect(renderDelivery(d)).toBe(expected));
});

describe('renderConsumer', () => {
  const r: ConsumerResult = {
    queue: 'q',
    autoAck: false,
    prefetch: 0,
    received: 5,
    processed: 3,
    duplicatesSkipped: 1,
    acked: 4,
    nacked: 1,
    rejected: 0,
    crashes: 0,
    byOutcome: { processed: 3, 'duplicate-skipped': 1, 'nack-requeue': 1 },
    reconnects: 0,
    cancels: 0,
    channelsClosed: 0,
    maxHeld: 5,
    lastProcessedAtMs: 10,
    durationMs: 1500,
    stoppedBecause: 'idle',
    gaveUp: null,
    deliveries: [],
  };
  it('names the ack mode, the failure action and every count', () => {
    const text = renderConsumer(r, 'nack-requeue');
    expect(text).toContain('manual ack, prefetch unlimited');
    expect(text).toContain('nack-requeue: basic.nack requeue=true');
    expect(text).toMatch(/duplicates skipped\s+1/);
    expect(text).toContain('processed 3, duplicate-skipped 1, nack-requeue 1');
  });
  it.each([
    [0, false],
    [2, true],
  ])('broker cancels (%i) are shown only when there were some', (cancels, shown) => {
    const text = renderConsumer({ ...r, cancels }, undefined);
    expect(new RegExp(`cancelled by the broker\\s+${cancels} \\(subscribed again each time\\)`).test(text)).toBe(shown);
  });
  it('autoack has no ack count', () => {
    expect(renderConsumer({ ...r, autoAck: true }, undefined)).toMatch(/acked\s+- \(autoack\)/);
  });
});

describe('renderConsumerCrash', () => {
  const run = (mode: CrashRun['mode'], over: Partial<CrashRun> = {}): CrashRun => ({
    mode,
    run: 1,
    published: 100,
    confirmed: 100,
    processedBeforeKill: 30,
    processed: 100,
    lost: 0,
    processedTwice: 0,
    duplicatesSkipped: 0,
    unexpected: 0,
    order: null,
    ...over,
  });
  const result = (runs: CrashRun[], ok = true, reasons: string[] = []): ConsumerCrashResult => ({
    options: {
      queue: 'q',
      exchange: '',
      count: 100,
      prefetch: 50,
      workMs: 2,
      ackEvery: 10,
      killAt: 0.3,
      runs: 1,
      modes: ['autoack', 'manual', 'idempotent'],
      idleTimeoutMs: 3000,
    },
    runs,
    ok,
    reasons,
  });
  it('one column per mode, verdict lines in plain words', () => {
    const text = renderConsumerCrash(
      result([run('autoack', { processed: 31, lost: 69 }), run('manual', { processedTwice: 4 }), run('idempotent', { duplicatesSkipped: 3 })]),
    );
    expect(text).toMatch(/lost\s+69\s+0\s+0/);
    expect(text).toContain('autoack: 69 messages lost');
    expect(text).toContain('manual ack: 0 lost; 4 processed twice');
    expect(text).toContain('3 redeliveries recognised and skipped');
    // The store's counts are replayed: the order of the deliveries is said not observed, never invented.
    expect(text).toContain('order of the reads: not observed (the reads were replayed from counts, not seen as they arrived)');
    expect(text).toContain('verdict: OK');
  });
  it('a failed verdict lists its reasons', () => {
    expect(renderConsumerCrash(result([run('manual', { lost: 2 })], false, ['manual run 1: 2 confirmed messages never processed']))).toContain(
      'verdict: FAILED: manual run 1: 2 confirmed messages never processed',
    );
  });
});

describe('renderPrefetchDemo', () => {
  it('shows the split, the slow share and the peaks', () => {
    const text = renderPrefetchDemo({
      options: { queue: 'q', exchange: '', count: 300, prefetches: [1, 0], fastWorkMs: 1, slowWorkMs: 20 },
      rows: [
        { prefetch: 1, fastProcessed: 261, slowProcessed: 39, totalMs: 944, fastMaxHeld: 1, slowMaxHeld: 1 },
        { prefetch: 0, fastProcessed: 0, slowProcessed: 300, totalMs: 6200, fastMaxHeld: 0, slowMaxHeld: 299 },
      ],
    });
    expect(text).toMatch(/^1\s+261\s+39\s+13 %/m);
    expect(text).toMatch(/^0 \(unlimited\)\s+0\s+300\s+100 %/m);
  });
});

describe("Subscription.openChannel: the broker's channel.close ends the subscription", () => {
  const reason = 'PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out';
  it.each([
    ['closed by the broker', `Channel closed by server: ${reason}`, false, reason],
    ['closed by the broker, another wording', `channel closed by server (${reason})`, false, `channel closed by server (${reason})`],
    ['an error of another kind', 'Channel ended, no reply will be forthcoming', false, null],
    ['no error: closed by the consumer', undefined, false, null],
    ['closed by the broker while leaving', `Channel closed by server: ${reason}`, true, null],
  ] as const)('%s', async (_name, error, leaving, expected) => {
    const channel = new EventEmitter();
    const connection = Object.assign(new EventEmitter(), { createChannel: async () => channel });
    const sub = new Subscription(connection as unknown as ChannelModel);
    const reasons: string[] = [];
    expect(await sub.openChannel((r) => reasons.push(r))).toBe(channel);
    expect(sub.channel).toBe(channel);
    sub.leaving = leaving;
    if (error !== undefined) channel.emit('error', new Error(error));
    channel.emit('close');
    expect(sub.channelClosedBy).toBe(expected);
    expect(sub.closed).toBe(expected !== null);
    expect(reasons).toEqual(expected === null ? [] : [expected]);
  });
});
