import { describe, expect, it } from 'vitest';
import { consumerTimeoutDemoOptions, timeoutVias } from '../../src/cli/commands/consumer-timeout-demo.js';
import { renderConsumerTimeoutDemo } from '../../src/report/kinds/consumer-timeout-demo/text.js';
import { consumerTimeoutCharts } from '../../src/report/kinds/consumer-timeout-demo/charts.js';
import { renderHtmlReport } from '../../src/report/html.js';
import {
  assessVia,
  messageIdsFor,
  timeoutSetting,
  type ConsumerTimeoutDemoResult,
  type HandlingRun,
  type NaiveRun,
  type ViaResult,
} from '../../src/scenarios/consumer-timeout-plan.js';
import { invocationOf } from './program-harness.js';

const ids = messageIdsFor('policy', 4);
const slowId = ids[1]!;

/** What 4.3.6 did in the demo's runs: cancel 3 s after the slow delivery, the channel still open, the late ack closing it. */
function naive(over: Partial<NaiveRun> = {}): NaiveRun {
  return {
    queue: 'q.naive',
    deliveries: [
      { atMs: 10, messageId: ids[0]!, redelivered: false, deliveryCount: 0, acquiredCount: 0 },
      { atMs: 120, messageId: slowId, redelivered: false, deliveryCount: 0, acquiredCount: 0 },
    ],
    processed: { [ids[0]!]: 1, [slowId]: 1 },
    slowDeliveredAtMs: 120,
    cancelAtMs: 3_150,
    channelOpenAfterCancel: true,
    lateAckAtMs: 5_120,
    channelClosedAtMs: 5_300,
    channelError: 'Unknown consumer: amq.ctag-x',
    lastProcessedAtMs: 5_120,
    ...over,
  };
}

function handling(over: Partial<HandlingRun> = {}): HandlingRun {
  return {
    queue: 'q.handling',
    deliveries: [
      { atMs: 110, messageId: ids[0]!, redelivered: false, deliveryCount: 0, acquiredCount: 0 },
      { atMs: 5_130, messageId: slowId, redelivered: false, deliveryCount: 0, acquiredCount: 0 },
      { atMs: 5_300, messageId: slowId, redelivered: true, deliveryCount: 0, acquiredCount: 1 },
      { atMs: 5_400, messageId: ids[2]!, redelivered: false, deliveryCount: 0, acquiredCount: 0 },
      { atMs: 5_500, messageId: ids[3]!, redelivered: false, deliveryCount: 0, acquiredCount: 0 },
    ],
    processed: Object.fromEntries(ids.map((id) => [id, 1])),
    duplicatesAbsorbed: 1,
    cancels: 1,
    cancelAtMs: 3_140,
    resubscribedAtMs: 5_200,
    finishedAtMs: 9_500,
    ...over,
  };
}

function input(over: Partial<Parameters<typeof assessVia>[1]> = {}): Parameters<typeof assessVia>[1] {
  return {
    via: 'policy',
    setBy: 'policy',
    timeoutMs: 3_000,
    messageIds: ids,
    slowId,
    naive: naive(),
    handling: handling(),
    naiveEnd: { ready: 3, consumers: 0 },
    handlingEnd: { ready: 0, consumers: 0 },
    endAtMs: 10_000,
    ...over,
  };
}

const o = { timeoutMs: 3_000, toleranceMs: 2_000 };

describe('consumer-timeout-demo: timeoutSetting', () => {
  it.each([
    ['queue-argument', { 'x-consumer-timeout': 3000 }, null, {}],
    ['policy', {}, { 'consumer-timeout': 3000 }, {}],
    ['consumer-argument', {}, null, { 'x-consumer-timeout': 3000 }],
  ] as const)('%s sets the timeout in exactly one place', (via, queueArguments, policy, consumerArguments) => {
    expect(timeoutSetting(via, 3000)).toEqual({ queueArguments, policy, consumerArguments });
  });
});

describe('consumer-timeout-demo: assessVia', () => {
  it('what 4.3.6 did: every claim held, the naive consumer idle with a processed message waiting', () => {
    const r = assessVia(o, input());
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.measuredTimeoutMs).toBe(3_030);
    expect(r.naiveIdleMs).toBe(10_000 - 5_120);
    // 3 waiting, 2 never processed by it: one of them (the slow one) is a second processing to come.
    expect(r.naiveProcessedButWaiting).toBe(1);
    expect(r.checks.map((c) => c.held)).toEqual([true, true, true]);
    expect(r.checks[0]!.measured).toContain('x-acquired-count 1');
  });

  const failing: [string, Partial<Parameters<typeof assessVia>[1]>, string][] = [
    [
      'no redelivery of the slow message',
      { handling: handling({ deliveries: handling().deliveries.filter((d) => !d.redelivered) }) },
      'claim not seen: a delivery held past the timeout is returned',
    ],
    ['the channel closed by the cancel', { naive: naive({ channelOpenAfterCancel: false }) }, 'claim not seen: AMQP 0.9.1 with consumer_cancel_notify'],
    ['no cancel at all', { naive: naive({ cancelAtMs: null }) }, 'claim not seen: the timeout fires'],
    ['a cancel too late', { naive: naive({ cancelAtMs: 120 + 5_200 }) }, 'delivery → cancel 5200 ms'],
    ['a cancel too early', { naive: naive({ cancelAtMs: 120 + 2_400 }) }, 'delivery → cancel 2400 ms (accepted 2500 to 5000)'],
    [
      'a message the handling consumer never processed',
      { handling: handling({ processed: { [ids[0]!]: 1, [slowId]: 1, [ids[2]!]: 1 } }) },
      'never processed 1',
    ],
    [
      'a message it processed twice',
      { handling: handling({ processed: { ...Object.fromEntries(ids.map((id) => [id, 1])), [slowId]: 2 } }) },
      'processed 1 more than once',
    ],
    ['messages left in its queue', { handlingEnd: { ready: 2, consumers: 0 } }, '2 messages left in q.handling'],
    ['a consumer left behind at the broker', { handlingEnd: { ready: 0, consumers: 1 } }, '1 consumer(s) still registered on q.handling'],
    ['a handling consumer never cancelled', { handling: handling({ cancels: 0 }) }, 'never cancelled'],
  ];
  it.each(failing)('fails on %s', (_, over, problem) => {
    const r = assessVia(o, input(over));
    expect(r.ok).toBe(false);
    expect(r.problems.join('\n')).toContain(problem);
  });

  it('an empty naive queue has no idle time to report', () => {
    expect(assessVia(o, input({ naiveEnd: { ready: 0, consumers: 1 } })).naiveIdleMs).toBeNull();
  });
});

function result(runs: ViaResult[]): ConsumerTimeoutDemoResult {
  return {
    brokerVersion: '4.3.6',
    timeoutMs: 3000,
    count: 4,
    slowIndex: 2,
    workMs: 100,
    slowWorkMs: 5000,
    observeMs: 4000,
    toleranceMs: 2000,
    runs,
    samples: [
      { tMs: 0, ready: { 'q.naive': 4, 'q.handling': 4 } },
      { tMs: 6000, ready: { 'q.naive': 3, 'q.handling': 0 } },
    ],
    ok: runs.every((r) => r.ok),
  };
}

describe('renderConsumerTimeoutDemo', () => {
  it('tells what became of each consumer, and the claims', () => {
    const text = renderConsumerTimeoutDemo(result([assessVia(o, input())]));
    expect(text).toContain('consumer-timeout-demo on RabbitMQ 4.3.6: timeout 3000 ms');
    expect(text).toMatch(/policy\s+naive\s+2\/4\s+0\s+1\s+3\s+0\s+4\.88 s/);
    expect(text).toMatch(/rmq-bench\s+4\/4\s+0\s+1\s+0\s+0\s+-/);
    expect(text).toContain(`naive: cancelled at 3.15 s; acked ${slowId} late at 5.12 s; its channel closed at 5.30 s (amqplib: Unknown consumer: amq.ctag-x)`);
    expect(text).toContain('1 of them already processed (a second processing to come)');
    expect(text).toContain('x-delivery-count 0, x-acquired-count 1');
    expect(text).toContain('verdict: OK');
  });
  it('a failed check names the via and fails the verdict', () => {
    const text = renderConsumerTimeoutDemo(result([assessVia(o, input({ handlingEnd: { ready: 0, consumers: 1 } }))]));
    expect(text).toContain('policy: 1 consumer(s) still registered');
    expect(text.trim().endsWith('verdict: FAILED')).toBe(true);
  });
});

describe('consumer-timeout-demo HTML', () => {
  it('a lane per consumer with the cancel, the late ack and the close; a ready line per queue', () => {
    const html = consumerTimeoutCharts(result([assessVia(o, input())])).join('\n');
    expect(html).toContain('policy: naive');
    expect(html).toContain('policy: rmq-bench');
    expect(html).toContain('basic.cancel from the broker at 3.15 s');
    expect(html).toContain(`late ack of ${slowId} at 5.12 s`);
    expect(html).toContain('subscribed again at 5.20 s');
    expect(html).toContain('policy naive');
    expect(renderHtmlReport('consumer-timeout-demo', result([assessVia(o, input())]), 'text').match(/<svg class="chart"/g)).toHaveLength(2);
  });
});

describe('consumer-timeout-demo options', () => {
  const raw = { json: false, auto: false, via: timeoutVias('all'), timeout: 3000, count: 5, slow: 2, work: 100, observe: 4000, tolerance: 2000 };
  it('defaults: all three ways, the slow work 2 s past the timeout', async () => {
    expect(await invocationOf(['consumer-timeout-demo'])).toEqual({
      command: 'consumer-timeout-demo',
      options: {
        json: false,
        html: undefined,
        auto: false,
        vias: ['queue-argument', 'policy', 'consumer-argument'],
        timeoutMs: 3000,
        count: 5,
        slowIndex: 2,
        workMs: 100,
        slowWorkMs: 5000,
        observeMs: 4000,
        toleranceMs: 2000,
      },
    });
  });
  it.each([
    ['policy', ['policy']],
    ['consumer-argument,queue-argument', ['queue-argument', 'consumer-argument']],
    ['policy,all', ['queue-argument', 'policy', 'consumer-argument']],
  ])('--via %s', (value, expected) => expect(timeoutVias(value)).toEqual(expected));
  it('--via names only known ways', () => expect(() => timeoutVias('rabbitmq.conf')).toThrow("'rabbitmq.conf' is not one of"));
  it.each([
    [{ slow: 6 }, '--slow 6 is past the last message (-n 5)'],
    [{ slowWork: 3000 }, '--slow-work 3s is not longer than --timeout 3s'],
    [{ work: 3000 }, '--work 3s is not shorter than --timeout 3s'],
    [{ timeout: 50 }, '--timeout 50ms is too short'],
  ])('refuses %o', (over, message) => {
    expect(() => consumerTimeoutDemoOptions({ ...raw, ...over })).toThrow(message);
  });
  it('--slow-work given is kept', () => expect(consumerTimeoutDemoOptions({ ...raw, slowWork: 8000 }).slowWorkMs).toBe(8000));
});
