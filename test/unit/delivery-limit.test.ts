import { EventEmitter } from 'node:events';
import type { Connection } from 'rhea';
import { describe, expect, it } from 'vitest';
import { KIND_VIEWS } from '../../src/report/kinds.js';
import { deliveriesText, loopLines, renderDeliveryLimitDemo, timeoutLines } from '../../src/report/kinds/delivery-limit-demo/text.js';
import { Receiver10, seenOf10, settle10 } from '../../src/scenarios/demos/delivery-limit-amqp10.js';
import { namesOf } from '../../src/scenarios/demos/delivery-limit-demo.js';
import {
  ACTIONS,
  CONSUMER_TIMEOUT_MS,
  RULES,
  RULES_ERAS,
  assessRow,
  rulesEraOf,
  sideBySideResult,
  classifyFate,
  countFromOf,
  expectedOf,
  isFinal,
  loopRateOf,
  loopsForEver,
  protocolOf,
  protocolsOf,
  roundsOf,
  tableOrder,
  type Action,
  type Action10,
  type DeliveryLimitDemoResult,
  type DeliveryLimitRow,
  type Observed,
  type SeenDelivery,
} from '../../src/scenarios/demos/delivery-limit-plan.js';
import { blockLines, unwrapped } from './fixtures/text.js';
import { invocationOf, parse } from './program-harness.js';

const o = { deliveryLimit: 2, rounds: 6 };

/** Deliveries with these counts (null: header absent), each after the first flagged redelivered. */
const seen = (...counts: (number | null)[]): SeenDelivery[] => counts.map((deliveryCount, i) => ({ deliveryCount, redelivered: i > 0 }));

const observed = (over: Partial<Observed>): Observed => ({ deliveries: seen(null), acked: false, leftInQueue: 0, inDlq: false, deathReason: null, ...over });

/** AMQP 1.0 deliveries as the broker sends them: the header's delivery-count, the annotation only once it is above 0. */
/** consumer-timeout deliveries: each cancelled by the broker the timeout after it. */
const timedOut = (...counts: (number | null)[]): SeenDelivery[] => seen(...counts).map((d) => ({ ...d, cancelMs: 500 }));

const seen10 = (...counts: number[]): SeenDelivery[] =>
  counts.map((deliveryCount, i) => ({ deliveryCount, redelivered: i > 0, from: 'header', annotation: deliveryCount > 0 ? deliveryCount : null }));

describe('classifyFate', () => {
  it.each([
    ['acked wins', { acked: true, leftInQueue: 0, inDlq: false }, 'acked'],
    ['still in the queue', { acked: false, leftInQueue: 1, inDlq: false }, 'still-looping'],
    ['in the DLQ', { acked: false, leftInQueue: 0, inDlq: true }, 'dead-lettered'],
    ['nowhere', { acked: false, leftInQueue: 0, inDlq: false }, 'dropped'],
  ] as const)('%s', (_name, o, fate) => {
    expect(classifyFate(o)).toBe(fate);
  });
});

describe('expectedOf', () => {
  it.each([
    ['ack', false, 'acked', null, 1, [0]],
    ['ack', true, 'acked', null, 1, [0]],
    ['reject', false, 'dropped', null, 1, [0]],
    ['reject', true, 'dead-lettered', 'rejected', 1, [0]],
    ['nack', false, 'dropped', null, 1, [0]],
    ['nack', true, 'dead-lettered', 'rejected', 1, [0]],
    ['nack-requeue', false, 'still-looping', null, 6, [0, 0, 0, 0, 0, 0]],
    ['nack-requeue', true, 'still-looping', null, 6, [0, 0, 0, 0, 0, 0]],
    ['reject-requeue', false, 'dropped', null, 3, [0, 1, 2]],
    ['reject-requeue', true, 'dead-lettered', 'delivery_limit', 3, [0, 1, 2]],
    ['close', false, 'dropped', null, 3, [0, 1, 2]],
    ['close', true, 'dead-lettered', 'delivery_limit', 3, [0, 1, 2]],
    ['consumer-timeout', false, 'still-looping', null, 3, [0, 0, 0]],
    ['consumer-timeout', true, 'still-looping', null, 3, [0, 0, 0]],
    ['amqp10:accepted', false, 'acked', null, 1, [0]],
    ['amqp10:accepted', true, 'acked', null, 1, [0]],
    ['amqp10:rejected', false, 'dropped', null, 1, [0]],
    ['amqp10:rejected', true, 'dead-lettered', 'rejected', 1, [0]],
    ['amqp10:released', false, 'still-looping', null, 6, [0, 0, 0, 0, 0, 0]],
    ['amqp10:released', true, 'still-looping', null, 6, [0, 0, 0, 0, 0, 0]],
    ['amqp10:modified', false, 'still-looping', null, 6, [0, 0, 0, 0, 0, 0]],
    ['amqp10:modified', true, 'still-looping', null, 6, [0, 0, 0, 0, 0, 0]],
    ['amqp10:modified-failed', false, 'dropped', null, 3, [0, 1, 2]],
    ['amqp10:modified-failed', true, 'dead-lettered', 'delivery_limit', 3, [0, 1, 2]],
    ['amqp10:modified-undeliverable', false, 'dropped', null, 1, [0]],
    ['amqp10:modified-undeliverable', true, 'dead-lettered', 'rejected', 1, [0]],
  ] as const)('%s, DLX %s: %s', (action, dlx, fate, deathReason, deliveries, counts) => {
    expect(expectedOf(action, dlx, o)).toEqual({ fate, deathReason, deliveries, counts });
  });
  it('fewer rounds than the limit allows: a counting action is still looping', () => {
    expect(expectedOf('close', true, { deliveryLimit: 5, rounds: 3 })).toEqual({ fate: 'still-looping', deathReason: null, deliveries: 3, counts: [0, 1, 2] });
  });
  it('rounds exactly limit + 1: past the limit on the last', () => {
    expect(expectedOf('reject-requeue', false, { deliveryLimit: 2, rounds: 3 }).fate).toBe('dropped');
  });
  it('a consumer timeout runs limit + 1 rounds at most (each waits the timeout out), --rounds when fewer; the others --rounds', () => {
    expect(roundsOf('consumer-timeout', { deliveryLimit: 2, rounds: 6 })).toBe(3);
    expect(roundsOf('consumer-timeout', { deliveryLimit: 5, rounds: 4 })).toBe(4);
    expect(roundsOf('nack-requeue', { deliveryLimit: 2, rounds: 6 })).toBe(6);
    expect(expectedOf('consumer-timeout', true, { deliveryLimit: 5, rounds: 4 })).toEqual({
      fate: 'still-looping',
      deathReason: null,
      deliveries: 4,
      counts: [0, 0, 0, 0],
    });
  });
});

describe('the rules before 4.3 (4.0.5, measured): every return counts', () => {
  it.each([
    ['3.10.8', '4.0'],
    ['4.0.5', '4.0'],
    ['4.2.3', '4.0'],
    ['4.3.0', '4.3'],
    ['4.3.6', '4.3'],
    ['5.0.0', '4.3'],
  ])('a broker of %s is judged by the %s rules', (version, era) => {
    expect(rulesEraOf(version)).toBe(era);
  });
  // Only the returns differ from 4.3: they count; over AMQP 1.0 in the annotation, the header's count staying 0.
  it.each([
    ['nack-requeue', false, { fate: 'dropped', deathReason: null, deliveries: 3, counts: [0, 1, 2] }],
    ['nack-requeue', true, { fate: 'dead-lettered', deathReason: 'delivery_limit', deliveries: 3, counts: [0, 1, 2] }],
    ['consumer-timeout', true, { fate: 'dead-lettered', deathReason: 'delivery_limit', deliveries: 3, counts: [0, 1, 2] }],
    ['amqp10:released', false, { fate: 'dropped', deathReason: null, deliveries: 3, counts: [0, 0, 0], annotationCounts: [0, 1, 2] }],
    ['amqp10:modified', true, { fate: 'dead-lettered', deathReason: 'delivery_limit', deliveries: 3, counts: [0, 0, 0], annotationCounts: [0, 1, 2] }],
    ['reject-requeue', true, { fate: 'dead-lettered', deathReason: 'delivery_limit', deliveries: 3, counts: [0, 1, 2] }],
    ['ack', false, { fate: 'acked', deathReason: null, deliveries: 1, counts: [0] }],
  ] as const)('%s, DLX %s', (action, dlx, expected) => {
    expect(expectedOf(action, dlx, o, '4.0')).toEqual(expected);
  });
  it('4.0.5 as measured agrees with them: a released message counted in the annotation; a timed-out consumer closed, not cancelled', () => {
    const released = seen(0, 0, 0).map((d, i) => ({ ...d, from: 'header' as const, annotation: i === 0 ? null : i }));
    const row = assessRow('amqp10:released', false, 'q', observed({ deliveries: released }), o, '4.0');
    expect([row.agrees, row.disagreements, row.fate]).toEqual([true, [], 'dropped']);
    // The same deliveries judged by 4.3's rules: the message should have looped.
    expect(assessRow('amqp10:released', false, 'q', observed({ deliveries: released }), o).agrees).toBe(false);
    // A wrong annotation is called out.
    const wrong = released.map((d) => ({ ...d, annotation: null }));
    expect(assessRow('amqp10:released', false, 'q', observed({ deliveries: wrong }), o, '4.0').disagreements).toEqual([
      'x-delivery-count annotation 0, 0, 0, the rule says 0, 1, 2',
    ]);
    // No basic.cancel before 4.3: nothing is missing.
    const closed = seen(null, 1, 2).map((d) => ({ ...d, cancelMs: null }));
    expect(assessRow('consumer-timeout', true, 'q', observed({ deliveries: closed, inDlq: true, deathReason: 'delivery_limit' }), o, '4.0').agrees).toBe(true);
    expect(assessRow('nack-requeue', false, 'q', observed({ deliveries: seen(null, 1, 2) }), o, '4.0').rule).toMatch(/^before 4\.3: a return like any other/);
  });
});

describe('side by side (--clusters): a version a column, what changed between them', () => {
  const row = (action: Action, dlx: boolean, deliveries: SeenDelivery[], over: Partial<Observed>, era: '4.0' | '4.3'): DeliveryLimitRow =>
    assessRow(action, dlx, 'q', observed({ deliveries, ...over }), o, era);
  const result = (brokerVersion: string, rulesEra: '4.0' | '4.3', rows: DeliveryLimitRow[]): DeliveryLimitDemoResult => ({
    deliveryLimit: 2,
    rounds: 6,
    brokerVersion,
    rulesEra,
    rows,
    ok: rows.every((r) => r.agrees),
    protocol: 'amqp091',
    loopWindowMs: 0,
  });
  const v40 = result('4.0.5', '4.0', [row('ack', false, seen(null), { acked: true }, '4.0'), row('nack-requeue', false, seen(null, 1, 2), {}, '4.0')]);
  const v43 = result('4.3.6', '4.3', [
    row('ack', false, seen(null), { acked: true }, '4.3'),
    row('nack-requeue', false, seen(null, null, null, null, null, null), { leftInQueue: 1 }, '4.3'),
  ]);

  it('one document: the first run its fields, every run in versions, ok when each agrees with its own rules', () => {
    const r = sideBySideResult([
      { cluster: 'v40', result: v40 },
      { cluster: 'rmq-bench', result: v43 },
    ]);
    expect(r.versions?.map((v) => [v.cluster, v.brokerVersion, v.rulesEra, v.ok])).toEqual([
      ['v40', '4.0.5', '4.0', true],
      ['rmq-bench', '4.3.6', '4.3', true],
    ]);
    expect([r.brokerVersion, r.rows, r.ok]).toEqual(['4.0.5', v40.rows, true]);
    const text = renderDeliveryLimitDemo(r);
    expect(text.split('\n')[0]).toBe(
      'delivery-limit-demo on RabbitMQ 4.0.5 and RabbitMQ 4.3.6: quorum queues with x-delivery-limit 2; one message each, at most 6 deliveries',
    );
    expect(text).toMatch(/^nack-requeue +no +- 1r 2r, dropped +- -r -r -r -r -r, still-looping$/m);
    expect(text).toContain('nack-requeue without a DLX: 4.0.5 dropped after 3 deliveries (- 1r 2r); 4.3.6 still-looping after 6 deliveries (- -r -r -r -r -r)');
    expect(text).not.toMatch(/^ {2}ack without/m);
    expect(text.split('\n').at(-1)).toBe("verdict: OK (every action did what each version's rules document)");
  });
  it('a run that disagrees with its own rules fails the whole, and says which version', () => {
    const bad = result('4.3.6', '4.3', [row('nack-requeue', false, seen(null, 1, 2), {}, '4.3')]);
    const r = sideBySideResult([
      { cluster: 'v40', result: v40 },
      { cluster: 'rmq-bench', result: bad },
    ]);
    expect(r.ok).toBe(false);
    const text = renderDeliveryLimitDemo(r);
    expect(text).toContain('RabbitMQ 4.3.6: nack-requeue without a DLX: not as its rules (4.3) say: dropped, the rule says still-looping');
    expect(text).toContain('(NOT as documented)');
    expect(text.split('\n').at(-1)).toBe('verdict: FAILED (a broker disagrees with a documented rule)');
  });
});

describe('isFinal and RULES', () => {
  it('ack, reject and nack settle at once; the requeues, a close and a consumer timeout do not', () => {
    expect(ACTIONS.amqp091.filter(isFinal)).toEqual(['ack', 'reject', 'nack']);
  });
  it('accepted, rejected and undeliverable-here settle at once; released and modified return the message', () => {
    expect(ACTIONS.amqp10.filter(isFinal)).toEqual(['amqp10:accepted', 'amqp10:rejected', 'amqp10:modified-undeliverable']);
  });
  it('every action has its rule', () => {
    for (const era of RULES_ERAS) for (const a of [...ACTIONS.amqp091, ...ACTIONS.amqp10]) expect(RULES[era][a]).not.toBe('');
  });
  it('a consumer timeout: the last 0-9-1 action; its rule cites rabbit_fifo and says it never counts', () => {
    expect(ACTIONS.amqp091.at(-1)).toBe('consumer-timeout');
    expect(protocolOf('consumer-timeout')).toBe('amqp091');
    expect(RULES['4.3']['consumer-timeout']).toMatch(/^4\.3: basic\.cancel, the message returned; never counts \(rabbit_fifo evaluate_consumer_timeout/);
    expect(RULES['4.0']['consumer-timeout']).toMatch(
      /^before 4\.3: the channel closed \(PRECONDITION_FAILED\), the delivery returned; counts toward the limit/,
    );
    expect(CONSUMER_TIMEOUT_MS).toBe(500);
  });
});

describe('protocols', () => {
  it('each action belongs to its protocol', () => {
    expect(ACTIONS.amqp091.map(protocolOf)).toEqual(ACTIONS.amqp091.map(() => 'amqp091'));
    expect(ACTIONS.amqp10.map(protocolOf)).toEqual(ACTIONS.amqp10.map(() => 'amqp10'));
  });
  it('--protocol: one, or both in the table order', () => {
    expect(protocolsOf('both')).toEqual(['amqp091', 'amqp10']);
    expect(protocolsOf('amqp10')).toEqual(['amqp10']);
  });
  it("a trial's queue name has no colon", () => {
    expect(namesOf('amqp10:modified-failed', true)).toEqual({
      queue: 'rmq-bench.delivery-limit.amqp10.modified-failed.dlx',
      dlx: 'rmq-bench.delivery-limit.amqp10.modified-failed.dlx.dlx',
      dlq: 'rmq-bench.delivery-limit.amqp10.modified-failed.dlx.dlq',
    });
    expect(namesOf('nack-requeue', false).queue).toBe('rmq-bench.delivery-limit.nack-requeue.no-dlx');
  });
});

describe('AMQP 1.0 deliveries', () => {
  it('the header is read first; the annotation is kept beside it', () => {
    expect(seenOf10({ delivery_count: 2, first_acquirer: false, message_annotations: { 'x-delivery-count': 2, 'x-acquired-count': 2 } })).toEqual({
      deliveryCount: 2,
      redelivered: true,
      from: 'header',
      annotation: 2,
    });
    expect(seenOf10({ delivery_count: 0, first_acquirer: true, message_annotations: { 'x-exchange': '' } })).toEqual({
      deliveryCount: 0,
      redelivered: false,
      from: 'header',
      annotation: null,
    });
  });
  it('without the header, the x-delivery-count annotation; without both, null', () => {
    expect(seenOf10({ message_annotations: { 'x-delivery-count': 1 } })).toEqual({ deliveryCount: 1, redelivered: false, from: 'annotation', annotation: 1 });
    expect(seenOf10({})).toEqual({ deliveryCount: null, redelivered: false, from: null, annotation: null });
  });
  it.each([
    ['amqp10:accepted', 'accept', undefined],
    ['amqp10:released', 'release', undefined],
    ['amqp10:rejected', 'reject', undefined],
    ['amqp10:modified', 'modified', { delivery_failed: false, undeliverable_here: false }],
    ['amqp10:modified-failed', 'modified', { delivery_failed: true, undeliverable_here: false }],
    ['amqp10:modified-undeliverable', 'modified', { delivery_failed: false, undeliverable_here: true }],
  ] as [Action10, string, unknown][])('%s settles with %s %o', (action, call, params) => {
    const calls: [string, unknown][] = [];
    const record = (name: string) => (p?: unknown) => {
      calls.push([name, p]);
    };
    settle10({ accept: record('accept'), release: record('release'), reject: record('reject'), modified: record('modified') }, action);
    expect(calls).toEqual([[call, params]]);
  });
  it('countFrom says which field was read', () => {
    expect(countFromOf('amqp091', seen(null, 1))).toBe('x-delivery-count header');
    expect(countFromOf('amqp10', seen10(0, 1))).toBe('header delivery-count');
    expect(countFromOf('amqp10', [{ deliveryCount: 1, redelivered: true, from: 'annotation', annotation: 1 }])).toBe('x-delivery-count annotation');
    expect(countFromOf('amqp10', [{ deliveryCount: null, redelivered: false, from: null, annotation: null }])).toBe('(none)');
  });
});

describe('assessRow', () => {
  it.each([
    ['ack', false, observed({ acked: true })],
    ['reject', true, observed({ inDlq: true, deathReason: 'rejected' })],
    ['nack-requeue', false, observed({ deliveries: seen(null, null, null, null, null, null), leftInQueue: 1 })],
    ['close', false, observed({ deliveries: seen(null, 1, 2) })],
    ['reject-requeue', true, observed({ deliveries: seen(null, 1, 2), inDlq: true, deathReason: 'delivery_limit' })],
    ['amqp10:accepted', false, observed({ deliveries: seen10(0), acked: true })],
    ['amqp10:released', true, observed({ deliveries: seen10(0, 0, 0, 0, 0, 0), leftInQueue: 1 })],
    ['amqp10:modified-failed', true, observed({ deliveries: seen10(0, 1, 2), inDlq: true, deathReason: 'delivery_limit' })],
    ['amqp10:modified-undeliverable', true, observed({ deliveries: seen10(0), inDlq: true, deathReason: 'rejected' })],
    ['consumer-timeout', true, observed({ deliveries: timedOut(null, null, null), leftInQueue: 1 })],
  ] as [Action, boolean, Observed][])('%s (DLX %s) as the broker does it: agrees', (action, dlx, seenRow) => {
    const r = assessRow(action, dlx, 'q', seenRow, o);
    expect(r.disagreements).toEqual([]);
    expect(r.agrees).toBe(true);
  });
  it('each row says its protocol, where its counts were read and its loop (null until measured), after the existing keys', () => {
    const r = assessRow('amqp10:released', false, 'q', observed({ deliveries: seen10(0, 0, 0, 0, 0, 0), leftInQueue: 1 }), o);
    expect([r.protocol, r.countFrom, r.loop]).toEqual(['amqp10', 'header delivery-count', null]);
    expect(Object.keys(r).slice(-3)).toEqual(['protocol', 'countFrom', 'loop']);
    expect(assessRow('ack', false, 'q', observed({ acked: true }), o).protocol).toBe('amqp091');
  });
  it.each([
    [
      'nack-requeue counted and dropped',
      'nack-requeue',
      false,
      observed({ deliveries: seen(null, 1, 2) }),
      ['dropped, the rule says still-looping', '3 deliveries, the rule says 6'],
    ],
    [
      'reject-requeue never counted',
      'reject-requeue',
      false,
      observed({ deliveries: seen(null, null, null, null, null, null), leftInQueue: 1 }),
      ['still-looping, the rule says dropped', '6 deliveries, the rule says 3'],
    ],
    [
      'a close dead-lettered for the wrong reason',
      'close',
      true,
      observed({ deliveries: seen(null, 1, 2), inDlq: true, deathReason: 'rejected' }),
      ['x-first-death-reason rejected, the rule says delivery_limit'],
    ],
    ['counts that do not rise', 'close', false, observed({ deliveries: seen(null, 1, 1) }), ['x-delivery-count 0, 1, 1, the rule says 0, 1, 2']],
    ['a reject dropped with a DLX', 'reject', true, observed({}), ['dropped, the rule says dead-lettered']],
    [
      'released counted and dropped',
      'amqp10:released',
      false,
      observed({ deliveries: seen10(0, 1, 2) }),
      ['dropped, the rule says still-looping', '3 deliveries, the rule says 6'],
    ],
    [
      'undeliverable-here requeued',
      'amqp10:modified-undeliverable',
      true,
      observed({ deliveries: seen10(0, 0, 0, 0, 0, 0), leftInQueue: 1 }),
      ['still-looping, the rule says dead-lettered', '6 deliveries, the rule says 1'],
    ],
    [
      'an annotation that differs from the header',
      'amqp10:modified-failed',
      false,
      observed({ deliveries: [...seen10(0, 1), { deliveryCount: 2, redelivered: true, from: 'header', annotation: 3 }] }),
      ["delivery 3: x-delivery-count annotation 3, the header's delivery-count 2"],
    ],
    [
      'a consumer timeout counted toward the limit',
      'consumer-timeout',
      true,
      observed({ deliveries: timedOut(null, 1, 2), inDlq: true, deathReason: 'delivery_limit' }),
      [
        'dead-lettered, the rule says still-looping',
        'x-first-death-reason delivery_limit, the rule says (none)',
        'x-delivery-count 0, 1, 2, the rule says 0, 0, 0',
      ],
    ],
    [
      'a consumer never cancelled by the broker',
      'consumer-timeout',
      false,
      observed({ deliveries: [...timedOut(null), { deliveryCount: 1, redelivered: true, cancelMs: null }], leftInQueue: 1 }),
      ['2 deliveries, the rule says 3', 'delivery 2: no basic.cancel from the broker'],
    ],
    [
      'AMQP 1.0 counts that do not rise',
      'amqp10:modified-failed',
      false,
      observed({ deliveries: seen10(0, 0, 0) }),
      ['delivery-count 0, 0, 0, the rule says 0, 1, 2'],
    ],
  ] as [string, Action, boolean, Observed, string[]][])('%s: disagrees, and says how', (_name, action, dlx, seenRow, disagreements) => {
    const r = assessRow(action, dlx, 'q', seenRow, o);
    expect(r.agrees).toBe(false);
    expect(r.disagreements).toEqual(disagreements);
  });
});

describe('loopsForEver and loopRateOf', () => {
  it.each([
    ['nack-requeue still looping, no count', 'nack-requeue', observed({ deliveries: seen(null, null, null), leftInQueue: 1 }), true],
    ['released still looping, every count 0', 'amqp10:released', observed({ deliveries: seen10(0, 0, 0), leftInQueue: 1 }), true],
    ['a counted action short of the limit: the count rose', 'reject-requeue', observed({ deliveries: seen(null, 1), leftInQueue: 1 }), false],
    ['a close, even with no count: its rate is the consumer coming back', 'close', observed({ deliveries: seen(null, null), leftInQueue: 1 }), false],
    [
      'a consumer timeout, never counted: its rate is the timeout',
      'consumer-timeout',
      observed({ deliveries: timedOut(null, null, null), leftInQueue: 1 }),
      false,
    ],
    ['dropped', 'nack-requeue', observed({ deliveries: seen(null, 1, 2) }), false],
    ['acked', 'ack', observed({ acked: true }), false],
  ] as [string, Action, Observed, boolean][])('%s: %s', (_name, action, seenRow, loops) => {
    expect(loopsForEver(assessRow(action, false, 'q', seenRow, o))).toBe(loops);
  });
  it('table order: 0-9-1 without then with a DLX, then AMQP 1.0; actions in ACTIONS order (the side-by-side timeout rows go last in their group)', () => {
    const rows = [
      { action: 'amqp10:accepted', dlx: false },
      { action: 'consumer-timeout', dlx: true },
      { action: 'consumer-timeout', dlx: false },
      { action: 'ack', dlx: true },
      { action: 'close', dlx: false },
      { action: 'ack', dlx: false },
    ] as Pick<DeliveryLimitRow, 'action' | 'dlx'>[];
    expect(rows.sort(tableOrder).map((x) => `${x.action}${x.dlx ? '+' : ''}`)).toEqual([
      'ack',
      'close',
      'consumer-timeout',
      'ack+',
      'consumer-timeout+',
      'amqp10:accepted',
    ]);
  });
  it('deliveries a second over the time measured, rounded', () => {
    expect(loopRateOf(182, 1004.6)).toEqual({ windowMs: 1005, deliveries: 182, perSec: 181 });
    expect(loopRateOf(0, 1000)).toEqual({ windowMs: 1000, deliveries: 0, perSec: 0 });
    expect(loopRateOf(3, 0)).toEqual({ windowMs: 0, deliveries: 3, perSec: 0 });
  });
});

describe('Receiver10.loop: settle at once, one credit at a time, for the window', () => {
  /** A fake rhea receiver: each credit granted brings one delivery on the next turn of the event loop. */
  function fakeConnection() {
    const settled: string[] = [];
    let sent = 0;
    let credit = 0;
    let maxCredit = 0;
    const receiver = Object.assign(new EventEmitter(), {
      is_open: () => true,
      is_closed: () => !open,
      close: () => {
        open = false;
      },
      add_credit: (n: number) => {
        credit += n;
        maxCredit = Math.max(maxCredit, credit);
        setImmediate(() => {
          if (!open || credit === 0) return;
          credit--;
          sent++;
          const record = (name: string) => (p?: { delivery_failed?: boolean }) => settled.push(p?.delivery_failed ? `${name}-failed` : name);
          receiver.emit('message', {
            message: { delivery_count: 0 },
            delivery: { accept: record('accept'), release: record('release'), reject: record('reject'), modified: record('modified') },
          });
        });
      },
    });
    let open = true;
    const connection = Object.assign(new EventEmitter(), { open_receiver: () => receiver, is_open: () => true });
    return { connection: connection as unknown as Connection, settled, sent: () => sent, maxCredit: () => maxCredit };
  }

  it.each([
    ['amqp10:released', 'release'],
    ['amqp10:modified', 'modified'],
  ] as [Action10, string][])('%s: every delivery settled with %s, counted, never more than one credit out', async (action, call) => {
    const f = fakeConnection();
    const r = await Receiver10.open(f.connection, 'q', new AbortController().signal);
    const { deliveries, elapsedMs } = await r.loop(action, 100, new AbortController().signal);
    await r.close();
    // The loop went on after the first delivery: each settle granted the next credit.
    expect(deliveries).toBeGreaterThan(1);
    expect(elapsedMs).toBeGreaterThanOrEqual(99);
    // Every delivery sent was settled with the outcome; any after the window was not counted.
    expect(f.settled).toEqual(Array.from({ length: f.sent() }, () => call));
    expect(deliveries).toBeLessThanOrEqual(f.sent());
    expect(f.maxCredit()).toBe(1);
  });
});

describe('renderDeliveryLimitDemo', () => {
  const rows = [
    assessRow('nack-requeue', false, 'q1', observed({ deliveries: seen(null, null, null, null, null, null), leftInQueue: 1 }), o),
    assessRow('close', true, 'q2', observed({ deliveries: seen(null, 1, 2), inDlq: true, deathReason: 'delivery_limit' }), o),
  ];
  const result: DeliveryLimitDemoResult = { ...o, brokerVersion: '4.3.6', rows, ok: true, protocol: 'amqp091', loopWindowMs: 0 };
  /** The rows with the looping one's loop measured. */
  const measured = (loop: DeliveryLimitRow['loop']): DeliveryLimitDemoResult => ({
    ...result,
    loopWindowMs: 1_000,
    rows: rows.map((x) => (loopsForEver(x) ? { ...x, loop } : x)),
  });

  it('one table, the documented rule beside each measured row', () => {
    const text = unwrapped(renderDeliveryLimitDemo(result));
    expect(text).toContain('delivery-limit-demo on RabbitMQ 4.3.6: quorum queues with x-delivery-limit 2; one message each, at most 6 deliveries');
    const lines = blockLines(text).split('\n');
    const nack = lines.find((l) => l.startsWith('nack-requeue'))!;
    expect(nack).toMatch(/nack-requeue\s+no\s+- -r -r -r -r -r\s+x-delivery-count header\s+still-looping\s+yes\s+4\.3: an explicit return; never counts/);
    const close = lines.find((l) => l.startsWith('close'))!;
    expect(close).toMatch(/close\s+yes\s+- 1r 2r\s+x-delivery-count header\s+dead-lettered \(delivery_limit\)\s+yes\s+counts toward the limit/);
    expect(text).toContain('verdict: OK');
    expect(text).not.toContain('amqp10 rows');
  });

  it('AMQP 1.0 rows beside the 0-9-1 ones: the header count, where it was read, the rule from the source', () => {
    const amqp10 = [
      assessRow('amqp10:released', false, 'q3', observed({ deliveries: seen10(0, 0, 0, 0, 0, 0), leftInQueue: 1 }), o),
      assessRow('amqp10:modified-failed', true, 'q4', observed({ deliveries: seen10(0, 1, 2), inDlq: true, deathReason: 'delivery_limit' }), o),
    ];
    const text = unwrapped(renderDeliveryLimitDemo({ ...result, rows: [...rows, ...amqp10], protocol: 'both' }));
    const lines = blockLines(text).split('\n');
    expect(lines.find((l) => l.startsWith('amqp10:released'))).toMatch(
      /amqp10:released\s+no\s+0 0r 0r 0r 0r 0r\s+header delivery-count\s+still-looping\s+yes\s+4\.3: requeued; never counts \(settle_op_from_outcome/,
    );
    expect(lines.find((l) => l.startsWith('amqp10:modified-failed'))).toMatch(
      /amqp10:modified-failed\s+yes\s+0 1r 2r\s+header delivery-count\s+dead-lettered \(delivery_limit\)\s+yes\s+4\.3: counts toward the limit/,
    );
    expect(text).toContain("amqp10 rows: a receiver link on /queues/<queue> (credit 1, settle mode first); 'r' is the header's first-acquirer false");
  });

  it('a document without protocol and countFrom (written before them) still prints', () => {
    const old = rows.map(({ protocol: _p, countFrom: _c, ...rest }) => rest) as unknown as DeliveryLimitDemoResult['rows'];
    expect(blockLines(renderDeliveryLimitDemo({ ...result, rows: old }))).toMatch(
      /nack-requeue\s+no\s+- -r -r -r -r -r\s+x-delivery-count header\s+still-looping/,
    );
  });

  it('a disagreement is called out, and the verdict fails', () => {
    const bad = assessRow('nack-requeue', false, 'q1', observed({ deliveries: seen(null, 1, 2) }), o);
    const text = unwrapped(renderDeliveryLimitDemo({ ...result, rows: [bad], ok: false }));
    expect(blockLines(text)).toMatch(/nack-requeue\s+no\s+- 1r 2r\s+x-delivery-count header\s+dropped\s+NO/);
    expect(text).toContain('nack-requeue without a DLX: not as documented: dropped, the rule says still-looping; 3 deliveries, the rule says 6');
    expect(text).toContain('verdict: FAILED');
    expect(KIND_VIEWS['delivery-limit-demo'].reasons({ ...result, rows: [bad], ok: false })).toEqual([
      'nack-requeue without a DLX: dropped, the rule says still-looping; 3 deliveries, the rule says 6',
    ]);
  });

  it('a looping row: its rate under the table, and that the limit never ends it', () => {
    const text = unwrapped(renderDeliveryLimitDemo(measured({ windowMs: 1_004, deliveries: 2_345, perSec: 2_336 })));
    expect(text).toContain(
      'Looping for ever: with x-delivery-limit 2 set, these actions never raise the delivery count, so the\nmessage never reaches the limit: it goes round for ever, at this rate.',
    );
    expect(text).toContain('(0-9-1: basic.consume, prefetch 1; AMQP 1.0: a\nreceiver link, credit 1) counted its deliveries:');
    const lines = blockLines(text).split('\n');
    expect(lines.filter((l) => l.startsWith('nack-requeue'))[1]).toMatch(/^nack-requeue\s+no\s+2,345\s+1\.00 s\s+2,336$/);
    expect(lines.find((l) => l.startsWith('action ') && l.includes('deliveries/s'))).toMatch(/^action\s+DLX\s+deliveries\s+in\s+deliveries\/s$/);
    expect(lines.some((l) => l.startsWith('close') && /\d\/s|2,345/.test(l))).toBe(false);
    // The main table's layout is unchanged: no column for the loop.
    expect(text).toContain('  rule (RabbitMQ 4.3): ');
    expect(text).not.toMatch(/^ {2}loop/m);
    expect(lines.slice(-2)).toEqual(['', 'verdict: OK (every action did what RabbitMQ 4.3 documents)']);
    for (const l of loopLines(measured({ windowMs: 1_004, deliveries: 2_345, perSec: 2_336 })).flatMap((x) => x.split('\n')))
      expect(l.length, l).toBeLessThanOrEqual(100);
  });

  it('nothing loops (or nothing was measured in an older document): no loop lines', () => {
    const none = { ...result, loopWindowMs: 1_000, rows: [rows[1]!] };
    expect(loopLines(none)).toEqual([]);
    expect(renderDeliveryLimitDemo(none)).not.toContain('Looping for ever');
    const { loopWindowMs: _w, ...old } = result;
    const oldRows = rows.map(({ loop: _l, ...rest }) => rest);
    expect(loopLines({ ...old, rows: oldRows } as unknown as DeliveryLimitDemoResult)).toEqual([]);
  });

  it('--loop-window 0 with a looping row: one line says the rate was not measured', () => {
    expect(loopLines(result)).toEqual(['', 'how fast a looping message goes round: not measured (--loop-window 0).']);
  });

  it('figures: the loop rate beside a looping row', () => {
    expect(KIND_VIEWS['delivery-limit-demo'].figures(measured({ windowMs: 1_000, deliveries: 1_234, perSec: 1_234 }))).toBe(
      'nack-requeue: 6 deliveries, still-looping, looping at 1,234/s; close (DLX): 3 deliveries, dead-lettered',
    );
  });

  it('consumer-timeout rows: the rule beside them, how their consumer ran, the cancel delays, and one line on why no loop rate', () => {
    const timeouts = [
      assessRow('consumer-timeout', false, 'q5', observed({ deliveries: timedOut(null, null, null), leftInQueue: 1 }), o),
      assessRow('consumer-timeout', true, 'q6', observed({ deliveries: timedOut(null, null, null), leftInQueue: 1 }), o),
    ];
    timeouts[1]!.deliveries[2]!.cancelMs = 503;
    const r = { ...measured({ windowMs: 1_000, deliveries: 900, perSec: 900 }), consumerTimeoutMs: 500 };
    const text = unwrapped(renderDeliveryLimitDemo({ ...r, rows: [...r.rows, ...timeouts] }));
    const lines = blockLines(text).split('\n');
    expect(lines.find((l) => l.startsWith('consumer-timeout'))).toMatch(
      /^consumer-timeout\s+no\s+- -r -r\s+x-delivery-count header\s+still-looping\s+yes\s+4\.3: basic\.cancel, the message returned; never counts/,
    );
    expect(timeoutLines({ ...r, rows: timeouts })).toEqual([
      'consumer-timeout rows: basic.consume (prefetch 1, x-consumer-timeout 500 ms), never acked; a new consumer after each basic.cancel (it came 500 to 503 ms after the delivery); at most 3 rounds.',
      "consumer-timeout rows have no loop rate: a timeout loop goes round at the timeout's pace, one delivery per timeout.",
    ]);
    // Not in the loop table: its loop is null.
    expect(lines.filter((l) => /^consumer-timeout\s+(no|yes)\s/.test(l))).toHaveLength(2);
    expect(timeouts.map((x) => x.loop)).toEqual([null, null]);
    expect(text).toContain('verdict: OK');
  });

  it('no consumer-timeout row: no timeout lines; one cancel delay alone is said once', () => {
    expect(timeoutLines(result)).toEqual([]);
    const one = assessRow('consumer-timeout', false, 'q5', observed({ deliveries: timedOut(null), leftInQueue: 1 }), { deliveryLimit: 2, rounds: 1 });
    expect(timeoutLines({ ...result, rounds: 1, rows: [one] })[0]).toBe(
      'consumer-timeout rows: basic.consume (prefetch 1, x-consumer-timeout), never acked; a new consumer after each basic.cancel (it came 500 ms after the delivery); at most 1 round.',
    );
  });

  it('no delivery at all', () => {
    expect(deliveriesText({ deliveries: [] })).toBe('(none)');
  });

  it('figures: one line over the rows', () => {
    expect(KIND_VIEWS['delivery-limit-demo'].figures(result)).toBe('nack-requeue: 6 deliveries, still-looping; close (DLX): 3 deliveries, dead-lettered');
  });
});

describe('delivery-limit-demo options', () => {
  it('--loop-window: 1 s by default, a duration, 0 turns it off', async () => {
    expect((await invocationOf(['delivery-limit-demo'])).options).toMatchObject({ deliveryLimit: 2, rounds: 6, protocol: 'both', loopWindowMs: 1_000 });
    expect((await invocationOf(['delivery-limit-demo', '--loop-window', '250ms'])).options).toMatchObject({ loopWindowMs: 250 });
    expect((await invocationOf(['delivery-limit-demo', '--loop-window', '0'])).options).toMatchObject({ loopWindowMs: 0 });
    const { err, calls } = await parse(['delivery-limit-demo', '--loop-window', '5']);
    expect([calls, err === undefined]).toEqual([[], false]);
  });
});
