import { describe, expect, it } from 'vitest';
import {
  lookAtQueue,
  STATS_LAG_MS,
  UNCHANGED_STAMP_MS,
  type StuckDeliveries,
  type StuckLook,
  stepWatch,
  stuckProblem,
  stuckText,
  WATCH_START,
  type WatchState,
} from '../../src/measure/stuck-deliveries.js';
import { stuckLines } from '../../src/report/kinds/compare/text.js';
import { checkedOutCall, parseCheckedOut } from '../../src/cluster/broker/checked-out.js';
import { compareResult, compareRun, reconciliationOf } from './fixtures/runs.js';
import { renderCompare } from '../../src/report/kinds/compare/text.js';
import { failureReasons, keyFigures } from '../../src/report/doc-figures.js';

/** A consumer_details entry as /api/queues/<vhost>/<name> lists it. */
const consumer = (tag: string, channel: string, node = 'rabbit@rabbit1') => ({ consumer_tag: tag, channel_details: { name: channel, node } });
/** A channel as /api/channels?columns=name,node,messages_unacknowledged lists it. */
const channel = (name: string, unacked: number, node = 'rabbit@rabbit1') => ({ name, node, messages_unacknowledged: unacked });

describe('lookAtQueue: who a queue holds its unacknowledged messages for', () => {
  const cases: {
    name: string;
    queue: Record<string, unknown>;
    channels: unknown[];
    own?: string[];
    expected: StuckLook;
  }[] = [
    {
      name: 'nothing unacknowledged: nothing held, whatever the channels hold',
      queue: { messages_unacknowledged: 0, leader: 'rabbit@rabbit2', consumer_details: [consumer('c1', 'ch1')] },
      channels: [channel('ch1', 7)],
      expected: { held: 0, holders: [], leader: 'rabbit2', stamp: null },
    },
    {
      name: 'a consumer the queue counts and no channel lists (#15473): held for a consumer gone, tag unknown',
      queue: { messages_unacknowledged: 9, leader: 'rabbit@rabbit2', consumers: 1, consumer_details: [] },
      channels: [],
      expected: { held: 9, holders: [{ consumerTags: [], channel: null, channelListed: false, node: null, count: 9 }], leader: 'rabbit2', stamp: null },
    },
    {
      name: 'a consumer whose channel the broker no longer lists: its tag, channel and node named',
      queue: { messages_unacknowledged: 4, node: 'rabbit@rabbit3', consumer_details: [consumer('amq.ctag-x', 'ch9', 'rabbit@rabbit1')] },
      channels: [channel('other', 2)],
      expected: {
        held: 4,
        holders: [{ consumerTags: ['amq.ctag-x'], channel: 'ch9', channelListed: false, node: 'rabbit1', count: 4 }],
        leader: 'rabbit3',
        stamp: null,
      },
    },
    {
      name: 'a channel the broker still lists (a client gone without a close): held, channel listed',
      queue: { messages_unacknowledged: 5, leader: 'rabbit@rabbit1', consumer_details: [consumer('t', 'ch1')] },
      channels: [channel('ch1', 5)],
      expected: { held: 5, holders: [{ consumerTags: ['t'], channel: 'ch1', channelListed: true, node: 'rabbit1', count: 5 }], leader: 'rabbit1', stamp: null },
    },
    {
      name: "the run's own live channel holds all of them: nothing held",
      queue: { messages_unacknowledged: 10, leader: 'rabbit@rabbit1', consumer_details: [consumer('mine', 'own1')] },
      channels: [channel('own1', 10)],
      own: ['own1'],
      expected: { held: 0, holders: [], leader: 'rabbit1', stamp: null },
    },
    {
      name: 'more unacknowledged than the live channels hold: the rest is held for a consumer gone',
      queue: { messages_unacknowledged: 12, leader: 'rabbit@rabbit1', consumer_details: [consumer('mine', 'own1'), consumer('a', 'ch2', 'rabbit@rabbit2')] },
      channels: [channel('own1', 3), channel('ch2', 4, 'rabbit@rabbit2')],
      own: ['own1'],
      expected: {
        held: 9,
        holders: [
          { consumerTags: ['a'], channel: 'ch2', channelListed: true, node: 'rabbit2', count: 4 },
          { consumerTags: [], channel: null, channelListed: false, node: null, count: 5 },
        ],
        leader: 'rabbit1',
        stamp: null,
      },
    },
    {
      name: "a listed channel's count covers other queues too: never more than the queue's own",
      queue: { messages_unacknowledged: 2, leader: 'rabbit@rabbit1', consumer_details: [consumer('t', 'ch1'), consumer('u', 'ch1')] },
      channels: [channel('ch1', 50)],
      expected: {
        held: 2,
        holders: [{ consumerTags: ['t', 'u'], channel: 'ch1', channelListed: true, node: 'rabbit1', count: 2 }],
        leader: 'rabbit1',
        stamp: null,
      },
    },
    {
      name: "the record's reductions are its stamp",
      queue: { messages_unacknowledged: 0, leader: 'rabbit@rabbit1', reductions: 44_677 },
      channels: [],
      expected: { held: 0, holders: [], leader: 'rabbit1', stamp: 44_677 },
    },
    {
      name: 'fields missing or of the wrong type: counted as none',
      queue: { messages_unacknowledged: 'x', consumer_details: 'nope' },
      channels: [null, 3],
      expected: { held: 0, holders: [], leader: null, stamp: null },
    },
  ];

  it.each(cases)('$name', ({ queue, channels, own, expected }) => {
    expect(lookAtQueue(queue, channels, new Set(own ?? []))).toEqual(expected);
  });
});

describe('stepWatch: go on looking, or the outcome', () => {
  const look = (held: number, stamp: number | null = 2): StuckLook => ({
    held,
    holders: held === 0 ? [] : [{ consumerTags: ['t'], channel: 'ch', channelListed: true, node: 'rabbit1', count: held }],
    leader: 'rabbit2',
    stamp,
  });
  /** After the first look (stamp 1), nothing judged yet. */
  const FIRST: WatchState = { ...WATCH_START, firstStamp: 1 };
  const FRESH: WatchState = { ...FIRST, fresh: true };
  const SAW_5: WatchState = { ...FRESH, sawHeld: true, seen: look(5), seenFresh: true, mostHeld: 5 };
  const cases: { name: string; state: WatchState; look: StuckLook | null; elapsedMs: number; next: string; after?: WatchState }[] = [
    // The first look's figures may predate the let-go: it is never judged, only its stamp kept.
    { name: 'the first look: its stamp kept, not judged', state: WATCH_START, look: look(0, 1), elapsedMs: 0, next: 'wait', after: FIRST },
    { name: 'the first look did not answer: nothing kept', state: WATCH_START, look: null, elapsedMs: 0, next: 'wait', after: WATCH_START },
    { name: 'the same stamp: the same figures, not judged', state: FIRST, look: look(10, 1), elapsedMs: 9_000, next: 'wait', after: FIRST },
    { name: 'a new stamp, nothing held: none', state: FIRST, look: look(0), elapsedMs: 2_800, next: 'none' },
    { name: 'a new stamp, held: judged and seen', state: FIRST, look: look(5), elapsedMs: 2_800, next: 'wait', after: SAW_5 },
    // A record without a stamp: judged by time alone.
    {
      name: 'no stamp, before the lag: not judged',
      state: { ...WATCH_START, firstStamp: null },
      look: look(0, null),
      elapsedMs: STATS_LAG_MS - 1,
      next: 'wait',
    },
    { name: 'no stamp, past the lag: judged', state: { ...WATCH_START, firstStamp: null }, look: look(0, null), elapsedMs: STATS_LAG_MS, next: 'none' },
    { name: 'clear after held: redelivered', state: SAW_5, look: look(0), elapsedMs: 9_500, next: 'redelivered' },
    {
      name: 'held again, more: the first holders kept, the most counted',
      state: SAW_5,
      look: look(7),
      elapsedMs: 20_000,
      next: 'wait',
      after: { ...SAW_5, mostHeld: 7 },
    },
    { name: 'held at the deadline: not yet', state: SAW_5, look: look(5), elapsedMs: 30_000, next: 'wait', after: SAW_5 },
    {
      name: 'held past the deadline: held, the last look kept',
      state: SAW_5,
      look: look(3),
      elapsedMs: 30_001,
      next: 'held',
      after: { ...SAW_5, seen: look(3) },
    },
    { name: 'no answer: not clear', state: SAW_5, look: null, elapsedMs: 10_000, next: 'wait', after: SAW_5 },
    { name: 'no answer past the deadline: held', state: SAW_5, look: null, elapsedMs: 31_000, next: 'held', after: SAW_5 },
    // An idle classic queue stops reporting: after UNCHANGED_STAMP_MS its figures are judged as they are.
    { name: 'the same stamp past UNCHANGED_STAMP_MS, nothing held: none', state: FIRST, look: look(0, 1), elapsedMs: UNCHANGED_STAMP_MS, next: 'none' },
    {
      name: 'the same stamp past UNCHANGED_STAMP_MS, held: judged and seen',
      state: FIRST,
      look: look(5, 1),
      elapsedMs: UNCHANGED_STAMP_MS,
      next: 'wait',
      after: { ...SAW_5, seen: look(5, 1) },
    },
    { name: 'the same stamp past the deadline, held: held', state: FIRST, look: look(10, 1), elapsedMs: 31_000, next: 'held' },
    // Nothing judged by the deadline, and nothing ever seen held: not measured, not stuck.
    { name: 'no answer ever, past the deadline: unknown', state: WATCH_START, look: null, elapsedMs: 31_000, next: 'unknown', after: WATCH_START },
    { name: 'no answer after the first look, past the deadline: unknown', state: FIRST, look: null, elapsedMs: 31_000, next: 'unknown', after: FIRST },
  ];

  // The queue's live count judges every look, the first too; the management API's names who holds them.
  const liveCases: { name: string; state: WatchState; stats: StuckLook | null; liveHeld: number; elapsedMs: number; next: string; after?: WatchState }[] = [
    { name: 'live 0 at the first look, whatever the API shows: none', state: WATCH_START, stats: look(10, 1), liveHeld: 0, elapsedMs: 0, next: 'none' },
    {
      name: 'live held at the first look: seen, counted live, named by the API',
      state: WATCH_START,
      stats: look(15, 1),
      liveHeld: 5,
      elapsedMs: 0,
      next: 'wait',
      after: { ...WATCH_START, firstStamp: 1, sawHeld: true, seen: look(15, 1), mostHeld: 5 },
    },
    {
      name: 'live held, the API silent: seen without names',
      state: WATCH_START,
      stats: null,
      liveHeld: 9,
      elapsedMs: 0,
      next: 'wait',
      after: { ...WATCH_START, sawHeld: true, seen: { held: 9, holders: [], leader: null, stamp: null }, mostHeld: 9 },
    },
    {
      name: 'live held, a fresh look of the API: it names them instead of a stale one',
      state: { ...WATCH_START, firstStamp: 1, sawHeld: true, seen: look(15, 1), mostHeld: 5 },
      stats: look(5),
      liveHeld: 5,
      elapsedMs: 3_000,
      next: 'wait',
      after: { ...SAW_5, firstStamp: 1, fresh: true },
    },
    {
      name: 'live held, a stale look that names someone where the first named no one',
      state: { ...WATCH_START, firstStamp: 1, sawHeld: true, seen: look(0, 1), mostHeld: 5 },
      stats: look(15, 1),
      liveHeld: 5,
      elapsedMs: 1_000,
      next: 'wait',
      after: { ...WATCH_START, firstStamp: 1, sawHeld: true, seen: look(15, 1), mostHeld: 5 },
    },
    {
      name: 'live held, a new stamp still counting the holder: the first look kept',
      state: { ...WATCH_START, firstStamp: 1, sawHeld: true, seen: look(15, 1), mostHeld: 5 },
      stats: look(15, 2),
      liveHeld: 5,
      elapsedMs: 3_000,
      next: 'wait',
      after: { ...WATCH_START, firstStamp: 1, fresh: true, sawHeld: true, seen: look(15, 1), mostHeld: 5 },
    },
    {
      name: 'live held past the deadline, the last look stale: the agreeing one kept',
      state: SAW_5,
      stats: look(15, 2),
      liveHeld: 5,
      elapsedMs: 30_001,
      next: 'held',
      after: SAW_5,
    },
    { name: 'live 0 after held: redelivered', state: SAW_5, stats: look(5, 1), liveHeld: 0, elapsedMs: 800, next: 'redelivered' },
    { name: 'live held past the deadline: held', state: SAW_5, stats: look(0), liveHeld: 5, elapsedMs: 30_001, next: 'held' },
  ];

  it.each(liveCases)('$name', ({ state, stats, liveHeld, elapsedMs, next, after }) => {
    const step = stepWatch(state, { stats, liveHeld }, elapsedMs, 30_000);
    expect(step.next).toBe(next);
    if (after) expect(step.state).toEqual(after);
  });

  it.each(cases)('$name', ({ state, look: l, elapsedMs, next, after }) => {
    const step = stepWatch(state, { stats: l, liveHeld: null }, elapsedMs, 30_000);
    expect(step.next).toBe(next);
    if (after) expect(step.state).toEqual(after);
  });
});

const GONE = { consumerTags: ['amq.ctag-1'], channel: '172.20.0.1:40000 -> 172.20.0.2:5672 (1)', channelListed: false, node: 'rabbit1', count: 5 };
const figure = (over: Partial<StuckDeliveries>): StuckDeliveries => ({
  queue: 'q1',
  outcome: 'none',
  afterMs: 0,
  deadlineMs: 30_000,
  holderTook: 10,
  mostHeld: 0,
  holders: [],
  leader: 'rabbit2',
  liveCount: true,
  ...over,
});

describe('stuckText and stuckProblem', () => {
  const cases: { name: string; s: StuckDeliveries; text: string; problem: string | null }[] = [
    { name: 'none held', s: figure({ afterMs: 5_600 }), text: "q1: none held 5.6 s after the run's holder let go of the 10 it took", problem: null },
    {
      name: 'redelivered',
      s: figure({ outcome: 'redelivered', afterMs: 11_240, mostHeld: 5, holders: [{ ...GONE, channelListed: true }] }),
      text: 'q1: 5 held, redelivered within 11.2 s (5 for consumer amq.ctag-1 on channel 172.20.0.1:40000 -> 172.20.0.2:5672 (1) (the broker still lists the channel) on rabbit1, queue leader rabbit2)',
      problem: null,
    },
    {
      name: 'still held: the problem names the queue, the consumer, the count and the nodes',
      s: figure({ outcome: 'held', afterMs: 30_400, mostHeld: 5, holders: [GONE] }),
      text: 'q1: 5 STILL HELD after 30.4 s, past --max-stuck 30s (5 for consumer amq.ctag-1 on channel 172.20.0.1:40000 -> 172.20.0.2:5672 (1) (its channel gone) on rabbit1, queue leader rabbit2)',
      problem:
        'deliveries stuck: q1: 5 STILL HELD after 30.4 s, past --max-stuck 30s (5 for consumer amq.ctag-1 on channel 172.20.0.1:40000 -> 172.20.0.2:5672 (1) (its channel gone) on rabbit1, queue leader rabbit2)',
    },
    {
      name: 'held for a consumer no channel lists',
      s: figure({
        outcome: 'held',
        afterMs: 31_000,
        mostHeld: 9,
        holders: [{ consumerTags: [], channel: null, channelListed: false, node: null, count: 9 }],
        leader: null,
      }),
      text: 'q1: 9 STILL HELD after 31.0 s, past --max-stuck 30s (9 for a consumer no channel lists (its channel gone))',
      problem: 'deliveries stuck: q1: 9 STILL HELD after 31.0 s, past --max-stuck 30s (9 for a consumer no channel lists (its channel gone))',
    },
    {
      name: 'not measured: no problem',
      s: figure({ outcome: 'unknown', afterMs: 30_500, holders: [], leader: null }),
      text: "q1: not measured: no figures of the queue taken since the run's holder let go came within 30.5 s",
      problem: null,
    },
    {
      name: 'held with no one named: the most held, no empty parenthesis',
      s: figure({ outcome: 'held', afterMs: 30_500, mostHeld: 3, holders: [], leader: 'rabbit2' }),
      text: 'q1: 3 STILL HELD after 30.5 s, past --max-stuck 30s (queue leader rabbit2)',
      problem: 'deliveries stuck: q1: 3 STILL HELD after 30.5 s, past --max-stuck 30s (queue leader rabbit2)',
    },
  ];

  it.each(cases)('$name', ({ s, text, problem }) => {
    expect(stuckText(s)).toBe(text);
    expect(stuckProblem(s)).toBe(problem);
  });

  it('no figure (a stream): no problem', () => {
    expect(stuckProblem(null)).toBeNull();
    expect(stuckProblem(undefined)).toBeNull();
  });
});

describe("compare's report of the figure", () => {
  const rec = reconciliationOf('r1', []);
  const held = { ...compareRun('confirms-on', 1, rec), stuck: figure({ outcome: 'held', afterMs: 30_400, mostHeld: 5, holders: [GONE] }) };
  const clear = { ...compareRun('confirms-on', 1, rec), stuck: figure({}) };

  it('a line per run that measured it, none without a figure', () => {
    expect(stuckLines([held])).toEqual([
      "stuck deliveries (after the fault, once the run's holder consumer let go: how long until no message stays unacknowledged for a consumer gone):",
      `  confirms on run 1: ${stuckText(held.stuck)}`,
      '',
    ]);
    expect(stuckLines([compareRun('confirms-on', 1, rec)])).toEqual([]);
  });

  it('still held: the report says so and the reasons name the queue', () => {
    const r = { ...compareResult([held]), ok: false };
    expect(renderCompare(r)).toContain('q1: 5 STILL HELD after 30.4 s');
    expect(failureReasons('compare', JSON.parse(JSON.stringify(r)))).toContain(`confirms-on run 1: ${stuckProblem(held.stuck)}`);
    expect(failureReasons('compare', JSON.parse(JSON.stringify({ ...compareResult([clear]), ok: true })))).toEqual([]);
    expect(keyFigures('compare', JSON.parse(JSON.stringify(r)))).toMatch(/; deliveries stuck in 1 run$/);
    expect(keyFigures('compare', JSON.parse(JSON.stringify(compareResult([clear]))))).not.toContain('stuck');
  });
});

describe('parseCheckedOut: what a quorum queue member says it has checked out', () => {
  const cases: { output: string; expected: ReturnType<typeof parseCheckedOut> }[] = [
    { output: 'checked_out 10 consumers 1\n', expected: { checkedOut: 10, consumers: 1 } },
    { output: 'checked_out 0 consumers 0\nok\n', expected: { checkedOut: 0, consumers: 0 } },
    { output: 'no_answer {timeout,{x,rabbit@rabbit1}}\n', expected: null },
    { output: 'not_quorum\n', expected: null },
    { output: 'no_queue\n', expected: null },
    { output: '', expected: null },
  ];

  it.each(cases)('$output', ({ output, expected }) => {
    expect(parseCheckedOut(output)).toEqual(expected);
  });

  it("asks the queue's member by the queue's name as bytes, and rabbitmqctl eval the same", () => {
    const call = checkedOutCall({ vhost: '/', queue: 'q1' });
    expect(call.expr).toContain('rabbit_misc:r(<<47>>, queue, <<113,49>>)');
    expect(call.expr).toContain('fun rabbit_fifo:overview/1');
    expect(call.cli).toEqual(['rabbitmqctl', 'eval', call.expr]);
  });
});
