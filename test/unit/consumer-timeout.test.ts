import { describe, expect, it } from 'vitest';
import { consumerTimeoutDemoOptions, timeoutVias } from '../../src/cli/commands/consumer-timeout-demo.js';
import { renderConsumerTimeoutDemo } from '../../src/report/kinds/consumer-timeout-demo/text.js';
import { consumerTimeoutCharts } from '../../src/report/kinds/consumer-timeout-demo/charts.js';
import { renderHtmlReport } from '../../src/report/html.js';
import {
  assessVia,
  sideBySideTimeouts,
  timeoutEndingOf,
  messageIdsFor,
  timeoutSetting,
  type ConsumerTimeoutDemoResult,
  type HandlingRun,
  type NaiveRun,
  type ViaResult,
} from '../../src/scenarios/demos/consumer-timeout-plan.js';
import { unexplainedByBrokerMisses } from '../integration/consumer-timeout-checks.js';
import { tableRow, unwrapped } from './fixtures/text.js';
import { columns, TEXT_COLUMNS } from '../../src/report/text-wrap.js';
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

/** What 4.0.5 did: no cancel; the channel closed by the broker at its once-a-minute check, about 60 s after the slow delivery. */
const PRECONDITION =
  'Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out. Timeout value used: 3000 ms."';
const closedAt = 120 + 59_880;
function input40(over: Partial<Parameters<typeof assessVia>[1]> = {}): Parameters<typeof assessVia>[1] {
  return input({
    naive: naive({ cancelAtMs: null, channelOpenAfterCancel: null, lateAckAtMs: null, channelClosedAtMs: closedAt, channelError: PRECONDITION }),
    handling: handling({ cancels: 0, channelsClosed: 1, cancelAtMs: closedAt + 50 }),
    ...over,
  });
}

describe('consumer-timeout-demo before 4.3: the channel closed at a check once a minute', () => {
  it.each([
    ['3.11.15', 'channel-close'],
    ['4.0.5', 'channel-close'],
    ['4.2.9', 'channel-close'],
    ['4.3.0', 'cancel'],
    ['4.3.6', 'cancel'],
  ])('%s: %s', (version, ending) => {
    expect(timeoutEndingOf(version)).toBe(ending);
  });
  it('what 4.0.5 did holds by its own claims, and not by 4.3’s', () => {
    const r = assessVia(o, input40(), 'channel-close');
    expect(r.problems).toEqual([]);
    expect(r.measuredTimeoutMs).toBe(59_880);
    expect(r.checks.map((c) => c.claim)).toEqual([
      'a delivery held past the timeout is returned to the queue, for any consumer',
      'the broker closes the channel (PRECONDITION_FAILED: delivery acknowledgement timed out); the connection stays open',
      'the timeout (3000 ms) is checked once a minute: the channel closes within a minute after it',
    ]);
    expect(assessVia(o, input40()).ok).toBe(false);
  });
  it.each<[string, Partial<Parameters<typeof assessVia>[1]>, string]>([
    [
      'a channel closed later than a minute after the timeout',
      { naive: naive({ cancelAtMs: null, channelClosedAtMs: 120 + 66_000, channelError: PRECONDITION }) },
      '(accepted 2500 to 65000)',
    ],
    [
      'a channel closed by us, not the broker',
      { naive: naive({ cancelAtMs: null, channelClosedAtMs: 9_000, channelError: null }) },
      'claim not seen: the broker closes the channel',
    ],
    [
      'the handling consumer never resubscribed after its channel closed',
      { handling: handling({ cancels: 0, channelsClosed: 0 }) },
      'never cancelled nor had its channel closed',
    ],
  ])('fails on %s', (_, over, problem) => {
    const r = assessVia(o, input40(over), 'channel-close');
    expect(r.ok).toBe(false);
    expect(r.problems.join('\n')).toContain(problem);
  });
});

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

  it('a delivery that reached the callback late (a loaded machine): the early bound is taken from the ack before it', () => {
    // The broker handed the slow message out after the ack of the first (at 110 ms) and its timer
    // started then; the callback ran 800 ms later, so delivery → cancel reads 2200 ms.
    const late = naive({ slowDeliveredAtMs: 920, slowEarliestAtMs: 110, cancelAtMs: 3_120 });
    const r = assessVia(o, input({ naive: late }));
    expect(r.checks[2]).toEqual({
      claim: 'the timeout fires at the value set (3000 ms)',
      held: true,
      measured:
        'delivery → cancel 2200 ms (accepted up to 5000); 3010 ms from the ack before it, the earliest the broker can have handed it out (accepted from 2500)',
    });
    expect(r.ok).toBe(true);
  });

  it('a cancel too early even from the ack before the slow delivery fails', () => {
    const early = naive({ slowDeliveredAtMs: 920, slowEarliestAtMs: 110, cancelAtMs: 2_400 });
    const r = assessVia(o, input({ naive: early }));
    expect(r.ok).toBe(false);
    expect(r.problems.join('\n')).toContain('2290 ms from the ack before it, the earliest the broker can have handed it out (accepted from 2500)');
  });

  describe("the broker's misses: a held delivery RabbitMQ never timed out, by its own word", () => {
    // Seen on 4.3.6 in a loaded run: the naive consumer never cancelled, its ack of the slow
    // message taken, every message processed, the consumer still listed at the end.
    const naiveMiss = naive({
      cancelAtMs: null,
      channelOpenAfterCancel: null,
      lateAckAtMs: null,
      channelClosedAtMs: 9_790,
      channelError: null,
      processed: Object.fromEntries(ids.map((id) => [id, 1])),
    });
    // And another run: rmq-bench's consumer never cancelled, the slow message never handed out again.
    const handlingMiss = handling({
      cancels: 0,
      cancelAtMs: null,
      resubscribedAtMs: null,
      duplicatesAbsorbed: 0,
      deliveries: handling().deliveries.filter((d) => !d.redelivered),
    });
    it.each<[string, Partial<Parameters<typeof assessVia>[1]>, ('naive' | 'handling')[]]>([
      ['every claim held: no miss', {}, []],
      ['the naive consumer never ended, still listed at the end', { naive: naiveMiss, naiveEnd: { ready: 0, consumers: 1 } }, ['naive']],
      ['the naive consumer never ended, but no longer listed: not the broker’s word', { naive: naiveMiss, naiveEnd: { ready: 0, consumers: 0 } }, []],
      [
        'the naive consumer never ended, its channel failed',
        { naive: { ...naiveMiss, channelError: 'Unknown delivery tag' }, naiveEnd: { ready: 0, consumers: 1 } },
        [],
      ],
      ['rmq-bench’s consumer never ended, the slow message not handed out again', { handling: handlingMiss }, ['handling']],
      ['rmq-bench’s consumer never ended, but the slow message came again', { handling: handling({ cancels: 0 }) }, []],
    ])('%s', (_, over, missed) => {
      const r = assessVia(o, input(over));
      expect(r.brokerMissed).toEqual(missed);
      expect(r.ok).toBe(missed.length === 0 && Object.keys(over).length === 0);
      for (const who of missed)
        expect(
          r.problems.filter((p) =>
            p.startsWith(`RabbitMQ never timed out ${slowId} held by ${who === 'naive' ? 'the naive consumer' : "rmq-bench's consumer"}`),
          ),
        ).toHaveLength(1);
      // What the integration tests let through (consumer-timeout-checks.ts): a miss's own problems only.
      expect(unexplainedByBrokerMisses(r)).toEqual(missed.length > 0 ? [] : r.problems);
    });

    it('a miss beside another failure: the other failure is not explained', () => {
      const r = assessVia(o, input({ naive: naiveMiss, naiveEnd: { ready: 0, consumers: 1 }, handlingEnd: { ready: 2, consumers: 0 } }));
      expect(r.brokerMissed).toEqual(['naive']);
      expect(unexplainedByBrokerMisses(r)).toEqual(['2 messages left in q.handling']);
    });
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

describe('side by side (--clusters): a column per version', () => {
  it('4.0.5 and 4.3.6: how each ended the consumer and after how long; ok when each held by its own claims', () => {
    const v40 = { ...result([assessVia(o, input40(), 'channel-close')]), brokerVersion: '4.0.5', ending: 'channel-close' as const, slowWorkMs: 65_000 };
    const v43 = { ...result([assessVia(o, input())]), ending: 'cancel' as const };
    const r = sideBySideTimeouts([
      { cluster: 'v40', result: v40 },
      { cluster: 'rmq-bench', result: v43 },
    ]);
    expect(r.versions?.map((v) => [v.cluster, v.brokerVersion, v.ending, v.slowWorkMs, v.ok])).toEqual([
      ['v40', '4.0.5', 'channel-close', 65_000, true],
      ['rmq-bench', '4.3.6', 'cancel', 5_000, true],
    ]);
    const text = renderConsumerTimeoutDemo(r);
    expect(tableRow(text, 'policy')).toEqual([
      'policy',
      'back (x-delivery-count 0); channel closed (PRECONDITION_FAILED); after 59.88 s',
      'back (x-delivery-count 0); basic.cancel, channel open; after 3.03 s',
    ]);
    expect(unwrapped(text)).toContain('RabbitMQ 4.0.5: the channel is closed (PRECONDITION_FAILED) at a check once a minute');
    expect(text.split('\n').at(-1)).toMatch(/^verdict: OK/);
  });
});

describe('renderConsumerTimeoutDemo', () => {
  it('tells what became of each consumer, and the claims', () => {
    const text = unwrapped(renderConsumerTimeoutDemo(result([assessVia(o, input())])));
    expect(text).toContain('consumer-timeout-demo on RabbitMQ 4.3.6: timeout 3000 ms');
    expect(text).toMatch(/policy\s+naive\s+2\/4\s+0\s+1\s+3\s+0\s+4\.88 s/);
    expect(text).toMatch(/rmq-bench\s+4\/4\s+0\s+1\s+0\s+0\s+-/);
    expect(text).toContain(`naive: cancelled at 3.15 s; acked ${slowId} late at 5.12 s; its channel closed at 5.30 s (amqplib: Unknown consumer: amq.ctag-x)`);
    expect(text).toContain('1 of them already processed (a second processing to come)');
    expect(text).toContain('x-delivery-count 0, x-acquired-count 1');
    expect(text).toContain('verdict: OK');
    // The claims table, wider than a terminal, printed a block per claim, every line within the width.
    const printed = renderConsumerTimeoutDemo(result([assessVia(o, input())])).split('\n');
    expect(printed).toContain('  claim: the timeout fires at the value set (3000 ms)');
    for (const l of printed) expect(columns(l), l).toBeLessThanOrEqual(TEXT_COLUMNS);
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
  const raw = { json: false, auto: false, via: timeoutVias('all'), consumerTimeout: 3000, count: 5, slow: 2, work: 100, observe: 4000, tolerance: 2000 };
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
        slowWorkGiven: false,
        clusters: undefined,
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
    [{ slowWork: 3000 }, '--slow-work 3s is not longer than --consumer-timeout 3s'],
    [{ work: 3000 }, '--work 3s is not shorter than --consumer-timeout 3s'],
    [{ consumerTimeout: 50 }, '--consumer-timeout 50ms is too short'],
  ])('refuses %o', (over, message) => {
    expect(() => consumerTimeoutDemoOptions({ ...raw, ...over })).toThrow(message);
  });
  it('--slow-work given is kept', () => expect(consumerTimeoutDemoOptions({ ...raw, slowWork: 8000 }).slowWorkMs).toBe(8000));
});
