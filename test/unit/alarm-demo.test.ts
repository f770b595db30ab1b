import { describe, expect, it } from 'vitest';
import { alarmDemoOptions } from '../../src/cli/commands/alarm-demo.js';
import { nodesFor as clusterNodes } from '../../src/config.js';
import { renderAlarmDemo } from '../../src/report/kinds/alarm-demo/text.js';
import { flushLine } from '../../src/report/kinds/producer/text.js';
import { alarmCharts } from '../../src/report/kinds/alarm-demo/charts.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { nodesFor } from '../../src/scenarios/demos/alarm-demo.js';
import {
  assessAlarmDemo,
  countPublisher,
  type AlarmDemoOptions,
  type AlarmDemoResult,
  type AlarmTimeline,
  type ConsumerRun,
  type PublisherInput,
  type PublisherRole,
} from '../../src/scenarios/demos/alarm-plan.js';
import { columns, TEXT_COLUMNS } from '../../src/report/text-wrap.js';
import { tableRow } from './fixtures/text.js';
import { invocationOf } from './program-harness.js';

const options: AlarmDemoOptions = {
  alarm: 'memory',
  node: 'rabbit1',
  beforeMs: 2000,
  holdMs: 8000,
  afterMs: 2000,
  ratePerSec: 100,
  sizeBytes: 100,
  deadlineMs: 3000,
  killAfterMs: 4000,
  flushTimeoutMs: 2000,
  backlog: 300,
  quietMs: 3000,
  toleranceMs: 2000,
};

/** As measured on 4.3.6: the limit set at 3.4 s, clients blocked 4 s later, the clear at 16.9 s, unblocked 1 s after. */
const alarm: AlarmTimeline = { raiseAtMs: 3_400, raisedAtMs: 8_900, clearAtMs: 16_900, clearedAtMs: 20_300 };

const seqs = (from: number, to: number, atMs: number): { seq: number; atMs: number }[] =>
  Array.from({ length: to - from }, (_, i) => ({ seq: from + i, atMs }));

function pub(role: PublisherRole, over: Partial<PublisherInput> = {}): PublisherInput {
  return {
    role,
    node: role === 'deadline' ? 'rabbit1' : role === 'waits' || role === 'sigterm' ? 'rabbit2' : 'rabbit3',
    url: 'amqp://demo:***@127.0.0.1:5672',
    runId: `r${role}`,
    sent: 100,
    sentWhileBlocked: 0,
    seqAtBlock: null,
    confirmedSeqs: null,
    indeterminate: null,
    blockedAtMs: 7_400,
    unblockedAtMs: 17_900,
    gaveUpAtMs: null,
    gaveUp: null,
    completed: true,
    longestStallMs: 10_200,
    flush: null,
    maxBufferedBytes: null,
    exit: null,
    arrivals: seqs(0, 100, 5_000),
    ...over,
  };
}

const confirmedAll = Array.from({ length: 100 }, (_, i) => i);

function healthy(): PublisherInput[] {
  return [
    pub('deadline', {
      sent: 102,
      confirmedSeqs: confirmedAll,
      indeterminate: 2,
      unblockedAtMs: null,
      gaveUpAtMs: 10_400,
      gaveUp: 'blocked',
      completed: false,
      arrivals: [...seqs(0, 100, 5_000), ...seqs(100, 102, 18_000)],
    }),
    pub('waits', { confirmedSeqs: confirmedAll, indeterminate: 0 }),
    pub('naive', { sent: 200, sentWhileBlocked: 100, seqAtBlock: 99, maxBufferedBytes: 0, arrivals: [...seqs(0, 100, 5_000), ...seqs(100, 200, 18_000)] }),
    pub('sigterm', {
      blockedAtMs: null,
      unblockedAtMs: null,
      exit: 'exit 143',
      completed: false,
      flush: { channel: 'timeout', blockedBy: 'low on memory', bufferedBytes: 0, bytesPerPublish: 312 },
    }),
    pub('sigkill', { sent: 90, blockedAtMs: null, unblockedAtMs: null, exit: 'SIGKILL', completed: false }),
  ];
}

const consumer: ConsumerRun = { node: 'rabbit1', backlogDuringAlarm: 300, backlogArrived: 300, backlogMissing: 0, deliveries: 900, leftInQueue: 0 };

describe('countPublisher', () => {
  it('counts arrivals against what the publisher reported', () => {
    const r = countPublisher(
      pub('deadline', { sent: 5, confirmedSeqs: [0, 1, 2], indeterminate: 2, arrivals: [...seqs(0, 4, 5_000), { seq: 1, atMs: 6_000 }] }),
      alarm,
    );
    expect(r).toMatchObject({ confirmed: 3, arrived: 4, duplicates: 1, missing: 1, confirmedMissing: 0, indeterminateArrived: 1, beyondReported: 0 });
    expect(r).not.toHaveProperty('arrivals');
  });
  it('a confirmed message that never arrived is confirmedMissing', () => {
    const r = countPublisher(pub('waits', { sent: 3, confirmedSeqs: [0, 1, 2], arrivals: seqs(0, 2, 5_000) }), alarm);
    expect(r.confirmedMissing).toBe(1);
    expect(r.missing).toBe(1);
  });
  it('what arrived beyond the last reported number (a killed child reports late) is counted apart', () => {
    const r = countPublisher(pub('sigkill', { sent: 3, arrivals: seqs(0, 5, 18_000) }), alarm);
    expect(r).toMatchObject({ arrived: 5, missing: 0, beyondReported: 2 });
  });
  it.each([
    [10_000, 1, 1],
    [17_000, 0, 0],
    [8_000, 0, 1],
  ])('arrival at %d ms: during the alarm %d, written after the block and early %d', (atMs, during, early) => {
    const r = countPublisher(pub('naive', { sent: 60, sentWhileBlocked: 10, seqAtBlock: 49, arrivals: [{ seq: 55, atMs }] }), alarm);
    expect(r.arrivedDuringAlarm).toBe(during);
    expect(r.blockedArrivedEarly).toBe(early);
  });
  it('without confirms there is no confirmed count', () => {
    const r = countPublisher(pub('naive'), alarm);
    expect(r.confirmed).toBeNull();
    expect(r.indeterminateArrived).toBeNull();
    expect(r.confirmedMissing).toBe(0);
  });
});

describe('assessAlarmDemo', () => {
  const assess = (inputs: PublisherInput[], c: ConsumerRun = consumer, a: AlarmTimeline = alarm) =>
    assessAlarmDemo(
      options,
      a,
      inputs.map((p) => countPublisher(p, a)),
      c,
    );
  it('the measured run: every claim held, OK', () => {
    const v = assess(healthy());
    expect(v.problems).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.checks.map((c) => c.held)).toEqual([true, true, true, true, true]);
    expect(v.checks[0]!.measured).toBe(
      'connection.blocked after the limit was set: deadline on rabbit1: 4.00 s; waits on rabbit2: 4.00 s; naive on rabbit3: 4.00 s',
    );
    expect(v.findings[0]).toMatch(
      /^SIGTERM 4\.00 s into the alarm \(exit 143\): it reported 100 sent and no flush \(timeout, blocked: low on memory; 0 bytes left in the process\); 100 arrived, 0 lost$/,
    );
    expect(v.findings[1]).toBe(
      'SIGKILL 4.00 s into the alarm: its last progress line said 90 sent; 100 arrived (10 beyond the last line), 0 of the reported lost',
    );
  });
  const mutate = (role: PublisherRole, over: Partial<PublisherInput>): PublisherInput[] => healthy().map((p) => (p.role === role ? { ...p, ...over } : p));
  it.each<[string, PublisherInput[], RegExp]>([
    ['a confirmed message lost', mutate('waits', { arrivals: seqs(0, 99, 5_000) }), /^waits: 1 confirmed messages never arrived$/],
    [
      'the deadline publisher never gave up',
      mutate('deadline', { gaveUpAtMs: null }),
      /gives up instead of hanging.*it did not give up \(blocked, no give-up\)/,
    ],
    ['it gave up too late', mutate('deadline', { gaveUpAtMs: 7_400 + 3_000 + 2_001 }), /gives up instead of hanging.*gave up 5\.00 s after the block/],
    ['it gave up before its deadline', mutate('deadline', { gaveUpAtMs: 7_400 + 2_000 }), /gives up instead of hanging/],
    ['the waiting one did not complete', mutate('waits', { completed: false }), /waits out the alarm.*did not complete/],
    [
      'it was unblocked long after the node reported the alarm gone',
      mutate('waits', { unblockedAtMs: 20_300 + 2_001 }),
      /waits out the alarm.*unblocked 5\.40 s after the clear command \(the node reported the alarm gone 3\.40 s after it\)/,
    ],
    ['an unblock before the clear', mutate('waits', { unblockedAtMs: 16_000 }), /waits out the alarm.*unblocked -0\.90 s after the clear command/],
    [
      'a connection on another node never blocked',
      mutate('naive', { blockedAtMs: null }),
      /blocks publishing connections on every node.*naive on rabbit3: never blocked/,
    ],
    [
      'a blocked publish reached the queue',
      mutate('naive', { arrivals: [...seqs(0, 101, 5_000), ...seqs(101, 200, 18_000)] }),
      /nothing it publishes reaches a queue.*1 of them reached the queue before the clear/,
    ],
    [
      'SIGTERM claimed a clean flush and lost some',
      mutate('sigterm', { flush: { channel: 'closed', blockedBy: null, bufferedBytes: 0, bytesPerPublish: 300 }, arrivals: seqs(0, 95, 18_000) }),
      /^sigterm: rmq-bench's producer reported a clean flush, yet 5 of what it reported sent never arrived$/,
    ],
    ['SIGTERM said nothing', mutate('sigterm', { flush: null }), /^sigterm: rmq-bench's producer said nothing of its flush after SIGTERM \(exit 143\)$/],
  ])('%s: FAILED', (_name, inputs, problem) => {
    const v = assess(inputs);
    expect(v.ok).toBe(false);
    expect(
      v.problems.some((p) => problem.test(p)),
      v.problems.join('\n'),
    ).toBe(true);
  });
  it('SIGTERM that could not flush and lost some is a finding, not a failure (it said so)', () => {
    const v = assess(mutate('sigterm', { arrivals: seqs(0, 95, 18_000) }));
    expect(v.ok).toBe(true);
    expect(v.findings[0]).toMatch(/95 arrived, 5 lost$/);
  });
  it('the consumer read nothing during the alarm: the claim that consumers go on fails', () => {
    const v = assess(healthy(), { ...consumer, backlogDuringAlarm: 0 });
    expect(v.ok).toBe(false);
    expect(v.checks[1]!.held).toBe(false);
  });
  it.each<[string, Partial<ConsumerRun>, string]>([
    ['backlog lost', { backlogMissing: 2 }, '2 backlog messages (confirmed) never arrived'],
    ['messages left', { leftInQueue: 3 }, "3 messages left in the queue after the consumer's end"],
  ])('%s: FAILED', (_name, over, problem) => {
    const v = assess(healthy(), { ...consumer, ...over });
    expect(v.problems).toContain(problem);
  });
  it('an alarm not seen clearing fails', () => {
    const v = assess(healthy(), consumer, { ...alarm, clearedAtMs: null });
    expect(v.problems).toContain('the memory alarm on rabbit1 was not seen clearing');
  });
});

function result(): AlarmDemoResult {
  const publishers = healthy().map((p) => countPublisher(p, alarm));
  return {
    ...options,
    brokerVersion: '4.3.6',
    queue: 'rmq-bench.alarm-demo',
    timeline: alarm,
    publishers,
    consumer,
    samples: [
      { tMs: 0, sent: { deadline: 0, waits: 0, naive: 0, sigterm: 0, sigkill: 0 }, delivered: 0 },
      { tMs: 20_000, sent: { deadline: 102, waits: 100, naive: 200, sigterm: 100, sigkill: 90 }, delivered: 900 },
    ],
    ...assessAlarmDemo(options, alarm, publishers, consumer),
    interrupted: false,
  };
}

describe('renderAlarmDemo', () => {
  it('a row per publisher with its own account beside what arrived, the claims and the verdict', () => {
    const text = renderAlarmDemo(result());
    expect(text).toMatch(/^alarm-demo on RabbitMQ 4\.3\.6: a memory alarm on rabbit1, held 8\.00 s; 100 msg\/s per publisher into rmq-bench\.alarm-demo$/m);
    expect(tableRow(text, 'deadline')).toEqual(['deadline', 'rabbit1', '100 confirmed, 2 indeterminate', '7.40 s', '-', 'gave up at 10.40 s', '102', '0', '0']);
    expect(tableRow(text, 'sigterm')).toEqual(['sigterm', 'rabbit2', 'sent 100', '-', '-', 'exit 143, not flushed (timeout, low on memory)', '100', '0', '-']);
    expect(tableRow(text, 'sigkill')).toEqual(['sigkill', 'rabbit3', 'sent 90', '-', '-', 'killed: no report', '100 (10 beyond its last line)', '0', '-']);
    for (const line of text.split('\n')) expect(columns(line), line).toBeLessThanOrEqual(TEXT_COLUMNS);
    expect(text).toMatch(/^verdict: OK /m);
  });
  it('a failed run lists its problems before the verdict', () => {
    const r = result();
    const text = renderAlarmDemo({ ...r, ok: false, problems: ['waits: 1 confirmed messages never arrived'] });
    expect(text).toMatch(/waits: 1 confirmed messages never arrived\nverdict: FAILED$/);
  });
});

describe('alarm-demo HTML', () => {
  it('one chart with the alarm as a band, the first block, the give-up and the first unblock as markers', () => {
    const charts = alarmCharts(result()).join('\n');
    expect(charts).toContain('memory alarm on rabbit1');
    const markers = [...charts.matchAll(/data-marker="([^"]*)" data-x="([^"]*)"/g)].map((m) => [m[1], m[2]]);
    expect(markers).toEqual([
      ['publishers blocked', '7.4'],
      ['deadline gave up', '10.4'],
      ['unblocked', '17.9'],
    ]);
    const html = renderHtmlReport('alarm-demo', result(), renderAlarmDemo(result()));
    expect(html).toContain('<svg');
    // The alarm's kind survives the JSON document (whose own `kind` is the command's).
    expect(html).toContain('&quot;alarm&quot;: &quot;memory&quot;'.replace(/&quot;/g, '"'));
  });
});

describe('alarm-demo options', () => {
  const raw = {
    json: false,
    auto: false,
    alarm: 'memory' as const,
    node: 'rabbit1',
    before: 2000,
    hold: 8000,
    after: 2000,
    rate: 100,
    size: 100,
    blockedTimeout: 3000,
    flushTimeout: 2000,
    backlog: 300,
    idleTimeout: 3000,
    tolerance: 2000,
  };
  it('defaults: a memory alarm on rabbit1 for 8 s, the children stopped half-way', async () => {
    expect(await invocationOf(['alarm-demo'])).toEqual({ command: 'alarm-demo', options: { json: false, html: undefined, auto: false, ...options } });
  });
  it('--alarm disk --node rabbit2', async () => {
    expect((await invocationOf(['alarm-demo', '--alarm', 'disk', '--node', 'rabbit2'])).options).toMatchObject({ alarm: 'disk', node: 'rabbit2' });
  });
  it.each([
    [{ rate: 0 }, '--rate must be above 0'],
    [{ blockedTimeout: 8000 }, '--blocked-timeout 8s is not shorter than --hold 8s'],
    [{ killAfter: 9000 }, '--kill-after 9s is not within the alarm (--hold 8s)'],
    [{ killAfter: 6500 }, '--kill-after 6.5s + --flush-timeout 2s reach past --hold 8s'],
  ])('refuses %o', (over, message) => {
    expect(() => alarmDemoOptions({ ...raw, ...over })).toThrow(message);
  });
});

describe('nodesFor', () => {
  const nodes = clusterNodes('rmq-bench', 5672, 15672);
  it.each([
    ['rabbit1', { deadline: 'rabbit1', consumer: 'rabbit1', waits: 'rabbit2', naive: 'rabbit3', sigterm: 'rabbit2', sigkill: 'rabbit3' }],
    ['rabbit3', { deadline: 'rabbit3', consumer: 'rabbit3', waits: 'rabbit1', naive: 'rabbit2', sigterm: 'rabbit1', sigkill: 'rabbit2' }],
  ])('alarm on %s', (node, expected) => {
    const w = nodesFor(nodes, node);
    expect(Object.fromEntries(Object.entries(w).map(([k, v]) => [k, v.name]))).toEqual(expected);
  });
  it('a node not in the cluster is refused', () => expect(() => nodesFor(nodes, 'rabbit9')).toThrow('--node rabbit9 is not a node of this cluster'));
});

describe('flushLine', () => {
  it.each([
    [undefined, 'none', undefined],
    [{ channel: 'closed' as const, blockedBy: null, bufferedBytes: 0, bytesPerPublish: 300 }, 'none', undefined],
    [
      { channel: 'timeout' as const, blockedBy: 'low on memory', bufferedBytes: 0, bytesPerPublish: 300 },
      'none',
      'not flushed: the broker did not confirm reading everything (the connection was blocked by the broker (low on memory)); nothing was left in this process (what the kernel still held may yet arrive); messages reported written may not have reached it',
    ],
    [
      { channel: 'timeout' as const, blockedBy: null, bufferedBytes: 3000, bytesPerPublish: 300 },
      'async',
      'not flushed: the broker did not confirm reading everything (no close-ok came); 3000 bytes (about 10 messages) never left this process; unconfirmed messages are indeterminate',
    ],
    [
      { channel: 'lost' as const, blockedBy: null, bufferedBytes: 0, bytesPerPublish: 0 },
      'none',
      'not flushed: the broker did not confirm reading everything (the connection was lost); nothing was left in this process (what the kernel still held may yet arrive); messages reported written may not have reached it',
    ],
  ] as const)('%o (%s)', (flush, mode, line) => {
    expect(flushLine({ flush, mode })).toBe(line);
  });
});
