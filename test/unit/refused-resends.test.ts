import { describe, expect, it } from 'vitest';
import {
  FIRST_BACKOFF_MS,
  GIVEN_UP_EVENTS_MAX,
  MAX_REFUSALS,
  RefusalNotes,
  RefusedResends,
  SUMMARY_INTERVAL_MS,
  backoffMs,
  type RefusalDecision,
} from '../../src/client/refused-resends.js';
import { renderProducer } from '../../src/report/kinds/producer/text.js';
import { publisherResult } from './fixtures/runs.js';

const FULL = 'rejected: amqp:resource-limit-exceeded: queue q exceeded maximum length';

describe('backoffMs: doubles per refusal of a message', () => {
  it.each([
    [1, 250],
    [2, 500],
    [3, 1_000],
    [4, 2_000],
  ])('refusal %i: %i ms', (refusals, ms) => expect(backoffMs(refusals)).toBe(ms));

  it('the policy as chosen: 250 ms first, 5 refusals, so a full queue gives up within seconds', () => {
    expect(FIRST_BACKOFF_MS).toBe(250);
    expect(MAX_REFUSALS).toBe(5);
    const waited = Array.from({ length: MAX_REFUSALS - 1 }, (_, i) => backoffMs(i + 1)).reduce((a, b) => a + b, 0);
    expect(waited).toBe(3_750);
  });
});

type Op = { op: 'refuse'; seq: number; at: number } | { op: 'take'; at: number };

/** Runs ops on a fresh policy; each op's outcome, as a string for the table. */
function play(ops: Op[]): { out: string[]; r: RefusedResends } {
  const r = new RefusedResends();
  const out: string[] = [];
  for (const o of ops) {
    if (o.op === 'refuse') {
      const d = r.refused(o.seq, o.at);
      out.push(d.resend ? `${o.seq}: refusal ${d.refusals}, due ${d.dueAtMs}` : `${o.seq}: refusal ${d.refusals}, given up`);
    } else {
      const got: number[] = [];
      r.takeDue(o.at, (seq) => got.push(seq));
      out.push(`due at ${o.at}: [${got.join(', ')}]`);
    }
  }
  return { out, r };
}

const refuse = (seq: number, at: number): Op => ({ op: 'refuse', seq, at });
const take = (at: number): Op => ({ op: 'take', at });

describe('RefusedResends: when a refused message is sent again, and when it is given up', () => {
  const cases: { name: string; ops: Op[]; out: string[]; waiting: number; givenUp: number; next: number | undefined }[] = [
    {
      name: 'one refusal: due after the first backoff, not before',
      ops: [refuse(3, 1_000), take(1_249), take(1_250)],
      out: ['3: refusal 1, due 1250', 'due at 1249: []', 'due at 1250: [3]'],
      waiting: 0,
      givenUp: 0,
      next: undefined,
    },
    {
      name: 'refused again after its resend: the wait doubles',
      ops: [refuse(3, 0), take(250), refuse(3, 300), take(799), take(800)],
      out: ['3: refusal 1, due 250', 'due at 250: [3]', '3: refusal 2, due 800', 'due at 799: []', 'due at 800: [3]'],
      waiting: 0,
      givenUp: 0,
      next: undefined,
    },
    {
      name: `refused ${MAX_REFUSALS} times: given up, not waiting`,
      ops: [refuse(7, 0), take(250), refuse(7, 250), take(750), refuse(7, 750), take(1_750), refuse(7, 1_750), take(3_750), refuse(7, 3_750)],
      out: [
        '7: refusal 1, due 250',
        'due at 250: [7]',
        '7: refusal 2, due 750',
        'due at 750: [7]',
        '7: refusal 3, due 1750',
        'due at 1750: [7]',
        '7: refusal 4, due 3750',
        'due at 3750: [7]',
        '7: refusal 5, given up',
      ],
      waiting: 0,
      givenUp: 1,
      next: undefined,
    },
    {
      name: 'messages at different refusal counts come back in due order',
      // 1 waits 500 ms (its second refusal) from 0; 2 waits 250 ms from 100: 2 is due first.
      ops: [refuse(1, -1_000), take(-750), refuse(1, 0), refuse(2, 100), take(350), take(500)],
      out: ['1: refusal 1, due -750', 'due at -750: [1]', '1: refusal 2, due 500', '2: refusal 1, due 350', 'due at 350: [2]', 'due at 500: [1]'],
      waiting: 0,
      givenUp: 0,
      next: undefined,
    },
    {
      name: 'what is not due yet keeps waiting, and says when it is due',
      ops: [refuse(1, 0), refuse(2, 10), refuse(3, 20), take(260)],
      out: ['1: refusal 1, due 250', '2: refusal 1, due 260', '3: refusal 1, due 270', 'due at 260: [1, 2]'],
      waiting: 1,
      givenUp: 0,
      next: 270,
    },
    {
      name: 'each message has its own count',
      ops: [refuse(1, 0), refuse(2, 0), take(250), refuse(1, 250)],
      out: ['1: refusal 1, due 250', '2: refusal 1, due 250', 'due at 250: [1, 2]', '1: refusal 2, due 750'],
      waiting: 1,
      givenUp: 0,
      next: 750,
    },
  ];

  it.each(cases)('$name', ({ ops, out, waiting, givenUp, next }) => {
    const { out: got, r } = play(ops);
    expect(got).toEqual(out);
    expect(r.waiting).toBe(waiting);
    expect(r.givenUp).toBe(givenUp);
    expect(r.nextDueAtMs()).toBe(next);
  });

  it.each([
    { name: 'none waiting: the loop waits its longest', refusals: [] as number[], now: 0, max: 100, wait: 100 },
    { name: 'one due in 40 ms: 40', refusals: [0], now: 210, max: 100, wait: 40 },
    { name: 'one due in 250 ms: still the longest, 100', refusals: [0], now: 0, max: 100, wait: 100 },
    { name: 'one overdue: 1 ms, never 0 or less', refusals: [0], now: 400, max: 100, wait: 1 },
    { name: 'a fraction of a ms rounds up', refusals: [0.5], now: 250, max: 100, wait: 1 },
  ])('waitMs: $name', ({ refusals, now, max, wait }) => {
    const r = new RefusedResends();
    for (const [seq, at] of refusals.entries()) r.refused(seq, at);
    expect(r.waitMs(now, max)).toBe(wait);
  });

  it('a queue that stays full: every message given up after MAX_REFUSALS refusals, in a bounded time', () => {
    // The publisher's loop, with a broker that refuses everything 5 ms after it is sent.
    const r = new RefusedResends();
    const count = 1_000;
    let now = 0;
    let sends = 0;
    let inFlight: { seq: number; at: number }[] = Array.from({ length: count }, (_, seq) => ({ seq, at: 5 }));
    sends += count;
    while (inFlight.length > 0 || r.waiting > 0) {
      for (const p of inFlight) r.refused(p.seq, p.at);
      inFlight = [];
      now = r.nextDueAtMs() ?? now;
      r.takeDue(now, (seq) => inFlight.push({ seq, at: now + 5 }));
      sends += inFlight.length;
    }
    expect(r.givenUp).toBe(count);
    expect(sends).toBe(count * MAX_REFUSALS);
    expect(now).toBeLessThan(4_000);
    for (const seq of [0, 999]) expect(r.refusalsOf(seq)).toBe(MAX_REFUSALS);
  });
});

const resend = (refusals: number, at = 0): RefusalDecision => ({ resend: true, refusals, backoffMs: backoffMs(refusals), dueAtMs: at + backoffMs(refusals) });
const givenUp: RefusalDecision = { resend: false, refusals: MAX_REFUSALS };

describe('RefusalNotes: a few events, not one per refusal', () => {
  it('the first refusal of a reason is an event; the next ones wait for the summary', () => {
    const n = new RefusalNotes();
    expect(n.refused(0, FULL, resend(1), 0)).toEqual([
      `message 0 refused by the broker (${FULL}); sent again in 250 ms, the wait doubling with each refusal, given up after ${MAX_REFUSALS}`,
    ]);
    expect(Array.from({ length: 1_681 }, (_, i) => n.refused(i + 1, FULL, resend(1), 10)).flat()).toEqual([]);
    expect(n.summary(SUMMARY_INTERVAL_MS - 1)).toEqual([]);
    expect(n.summary(SUMMARY_INTERVAL_MS)).toEqual([`the broker refused 1,681 more (${FULL}); resending with backoff, at most ${MAX_REFUSALS} refusals each`]);
    expect(n.summary(5 * SUMMARY_INTERVAL_MS)).toEqual([]);
  });

  it('a summary at most once per interval, counting only what came since the last', () => {
    const n = new RefusalNotes();
    n.refused(0, 'basic.nack', resend(1), 0);
    n.refused(1, 'basic.nack', resend(1), 100);
    expect(n.summary(1_000)).toEqual([`the broker refused 1 more (basic.nack); resending with backoff, at most ${MAX_REFUSALS} refusals each`]);
    n.refused(2, 'basic.nack', resend(1), 1_100);
    n.refused(3, 'basic.nack', resend(2), 1_200);
    expect(n.summary(1_999)).toEqual([]);
    expect(n.summary(2_000)).toEqual([`the broker refused 2 more (basic.nack); resending with backoff, at most ${MAX_REFUSALS} refusals each`]);
  });

  it('a second reason gets its own first event; a summary of several names each', () => {
    const n = new RefusalNotes();
    n.refused(0, FULL, resend(1), 0);
    expect(n.refused(1, 'modified', resend(1), 1)).toHaveLength(1);
    n.refused(2, FULL, resend(1), 2);
    n.refused(3, FULL, resend(1), 3);
    n.refused(4, 'modified', resend(1), 4);
    expect(n.summary(1_000)).toEqual([`the broker refused 3 more (2× ${FULL}; 1× modified); resending with backoff, at most ${MAX_REFUSALS} refusals each`]);
  });

  it(`the first ${GIVEN_UP_EVENTS_MAX} messages given up are an event each; the rest are summed up`, () => {
    const n = new RefusalNotes();
    n.refused(0, FULL, resend(1), 0);
    const events = Array.from({ length: GIVEN_UP_EVENTS_MAX + 3 }, (_, seq) => n.refused(seq, FULL, givenUp, 10));
    expect(events.slice(0, GIVEN_UP_EVENTS_MAX)).toEqual(
      Array.from({ length: GIVEN_UP_EVENTS_MAX }, (_, seq) => [`message ${seq} refused ${MAX_REFUSALS} times by the broker (${FULL}): not sent again`]),
    );
    expect(events.slice(GIVEN_UP_EVENTS_MAX)).toEqual([[], [], []]);
    expect(n.summary(1_000)).toEqual([`3 more messages refused ${MAX_REFUSALS} times by the broker: not sent again`]);
  });

  it('final: whatever is left, whenever; nothing left, nothing', () => {
    const n = new RefusalNotes();
    expect(n.summary(0, true)).toEqual([]);
    n.refused(0, FULL, resend(1), 0);
    n.refused(1, FULL, resend(1), 1);
    for (let seq = 0; seq <= GIVEN_UP_EVENTS_MAX; seq++) n.refused(seq, FULL, givenUp, 2);
    expect(n.summary(3, true)).toEqual([
      `the broker refused 1 more (${FULL}); resending with backoff, at most ${MAX_REFUSALS} refusals each`,
      `1 more message refused ${MAX_REFUSALS} times by the broker: not sent again`,
    ]);
    expect(n.summary(4, true)).toEqual([]);
  });
});

describe('the producer text: messages given up', () => {
  it.each([
    { givenUp: 0, line: undefined },
    { givenUp: 1, line: `the broker kept refusing 1 message (${MAX_REFUSALS} refusals each): not sent again; known failed` },
    { givenUp: 5, line: `the broker kept refusing 5 messages (${MAX_REFUSALS} refusals each): not sent again; known failed` },
  ])('$givenUp given up', ({ givenUp, line }) => {
    const text = renderProducer(publisherResult({ count: 5, nacked: 5, refusedGivenUp: givenUp })).split('\n');
    const found = text.filter((l) => l.startsWith('the broker kept refusing'));
    expect(found).toEqual(line === undefined ? [] : [line]);
  });
});
