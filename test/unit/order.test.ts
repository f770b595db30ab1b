import { describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger/ledger.js';
import { ORDER_SAMPLE_LIMIT, OrderTracker, type OrderReport, type ReadSource } from '../../src/ledger/order.js';
import { reconcile } from '../../src/ledger/reconcile.js';

/** One read: the sequence, where it came from, and what the ledger knew of it (r: read before, s: sent again). */
type Read = [seq: number, from?: ReadSource, history?: 'r' | 's' | 'rs'];

function track(reads: readonly Read[]): OrderReport | null {
  const t = new OrderTracker();
  for (const [seq, from, h = ''] of reads) t.record(seq, from, { readBefore: h.includes('r'), sentAgain: h.includes('s') });
  return t.report();
}

const seqs = (from: number, to: number, source?: ReadSource): Read[] => Array.from({ length: to - from + 1 }, (_, i) => [from + i, source]);
const q = (queue: string, more: Omit<ReadSource, 'queue'> = {}): ReadSource => ({ queue, ...more });

interface Case {
  name: string;
  reads: Read[];
  expected: { reads: number; outOfOrder: number; expected: number; unexplained: number; largestGap: number; samples: number[]; streams?: number };
}

const cases: Case[] = [
  { name: 'nothing read', reads: [], expected: { reads: 0, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 0, samples: [], streams: 0 } },
  { name: 'in order from 0: no gap', reads: seqs(0, 9), expected: { reads: 10, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 0, samples: [] } },
  {
    name: 'a hole: the gap is the sequences skipped',
    reads: [...seqs(0, 4), ...seqs(9, 12)],
    expected: { reads: 9, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 4, samples: [] },
  },
  { name: 'the first read counts from -1', reads: seqs(3, 5), expected: { reads: 3, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 3, samples: [] } },
  {
    name: 'the largest of several gaps',
    reads: [[0], [2], [3], [10], [11], [13]],
    expected: { reads: 6, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 6, samples: [] },
  },
  {
    name: 'a late sequence with no explanation: unexplained, sampled',
    reads: [[0], [2], [1], [3]],
    expected: { reads: 4, outOfOrder: 1, expected: 0, unexplained: 1, largestGap: 1, samples: [1] },
  },
  {
    name: 'a late read lowers nothing: the next read is judged against the highest',
    reads: [[0], [5], [1], [2], [6]],
    expected: { reads: 5, outOfOrder: 2, expected: 0, unexplained: 2, largestGap: 4, samples: [1, 2] },
  },
  {
    name: 'redelivered by the broker: expected',
    reads: [[0], [1], [2], [1, { redelivered: true }]],
    expected: { reads: 4, outOfOrder: 1, expected: 1, unexplained: 0, largestGap: 0, samples: [] },
  },
  {
    name: 'a second copy (read before): expected',
    reads: [[0], [1], [2], [1, undefined, 'r']],
    expected: { reads: 4, outOfOrder: 1, expected: 1, unexplained: 0, largestGap: 0, samples: [] },
  },
  {
    name: 'sent again by the producer (republished or in doubt), first read late: expected',
    reads: [[0], [2], [3], [1, undefined, 's']],
    expected: { reads: 4, outOfOrder: 1, expected: 1, unexplained: 0, largestGap: 1, samples: [] },
  },
  {
    name: 'the same sequence again at the top is not out of order',
    reads: [[0], [1], [1, undefined, 'r'], [2]],
    expected: { reads: 4, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 0, samples: [] },
  },
  {
    name: 'redelivered in order: counted as a read only',
    reads: [[0], [1, { redelivered: true }], [2]],
    expected: { reads: 3, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 0, samples: [] },
  },
  {
    name: 'two queues are two streams: interleaved, neither is out of order',
    reads: [
      [0, q('a')],
      [10, q('b')],
      [1, q('a')],
      [11, q('b')],
    ],
    expected: { reads: 4, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 10, samples: [], streams: 2 },
  },
  {
    name: 'competing consumers of one queue are two streams',
    reads: [
      [0, q('a', { consumer: 1 })],
      [5, q('a', { consumer: 2 })],
      [1, q('a', { consumer: 1 })],
      [6, q('a', { consumer: 2 })],
    ],
    expected: { reads: 4, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 5, samples: [], streams: 2 },
  },
  {
    name: 'out of order in one stream of two: the totals sum the streams',
    reads: [
      [0, q('a')],
      [2, q('a')],
      [1, q('a')],
      [0, q('b')],
      [3, q('b')],
      [1, q('b', { redelivered: true })],
    ],
    expected: { reads: 6, outOfOrder: 2, expected: 1, unexplained: 1, largestGap: 2, samples: [1], streams: 2 },
  },
];

describe('OrderTracker', () => {
  it.each(cases)('$name', ({ reads, expected }) => {
    const r = track(reads)!;
    const { streams, ...totals } = expected;
    expect({
      reads: r.reads,
      outOfOrder: r.outOfOrder,
      expected: r.expected,
      unexplained: r.unexplained,
      largestGap: r.largestGap,
      samples: r.samples,
    }).toEqual(totals);
    expect(r.streams).toHaveLength(streams ?? 1);
    // The totals are the streams' sums (the gap: their largest); unexplained = outOfOrder − expected in each.
    for (const s of r.streams) expect(s.unexplained).toBe(s.outOfOrder - s.expected);
    expect(r.streams.reduce((a, s) => a + s.reads, 0)).toBe(r.reads);
    expect(r.streams.reduce((a, s) => a + s.unexplained, 0)).toBe(r.unexplained);
    expect(Math.max(0, ...r.streams.map((s) => s.largestGap))).toBe(r.largestGap);
  });

  it('names each stream by queue and consumer, sorted; a read without a queue goes to the default stream (queue null)', () => {
    const r = track([[0, q('b', { consumer: 2 })], [0, q('b', { consumer: 1 })], [0, q('a')], [0], [0, q('')]])!;
    expect(r.streams.map((s) => [s.queue, s.consumer])).toEqual([
      [null, null],
      ['', null],
      ['a', null],
      ['b', 1],
      ['b', 2],
    ]);
  });

  it(`keeps at most ${ORDER_SAMPLE_LIMIT} unexplained samples, per stream and over all; the counts stay exact`, () => {
    const reads: Read[] = [
      [1000, q('a')],
      [1000, q('b')],
    ];
    for (let seq = 0; seq < 30; seq++) reads.push([seq, q('a')], [seq, q('b')]);
    const r = track(reads)!;
    expect(r.unexplained).toBe(60);
    expect(r.samples).toHaveLength(ORDER_SAMPLE_LIMIT);
    for (const s of r.streams) expect(s.samples).toEqual(Array.from({ length: ORDER_SAMPLE_LIMIT }, (_, i) => i));
    expect(new OrderTracker().report(3)?.samples).toEqual([]);
  });

  it('a replayed read makes the order unknown: the report is null', () => {
    const t = new OrderTracker();
    t.record(0, { queue: 'a' }, { readBefore: false, sentAgain: false });
    t.record(1, { replayed: true }, { readBefore: false, sentAgain: false });
    expect(t.replayed).toBe(1);
    expect(t.report()).toBeNull();
  });
});

describe('the ledger feeds the tracker, and reconcile reports it', () => {
  function ledger(n: number, setup: (l: Ledger) => void = () => undefined): Ledger {
    const l = new Ledger({ runId: 'run', capacity: n });
    for (let seq = 0; seq < n; seq++) {
      l.attempt(seq);
      l.written(seq);
      l.confirm(seq);
    }
    setup(l);
    return l;
  }

  it.each([
    ['republished', (l: Ledger) => l.republish(1)],
    ['indeterminate', (l: Ledger) => l.indeterminate(1)],
  ])('a %s sequence read late is expected', (_name, mark) => {
    const l = ledger(4, mark);
    for (const seq of [0, 2, 3, 1]) l.recordRead(`run-${seq}`, { queue: 'q' });
    expect(reconcile(l).order).toMatchObject({ reads: 4, outOfOrder: 1, expected: 1, unexplained: 0, largestGap: 1 });
  });

  it('a second copy read late is expected (its first read counts); an unflagged late sequence is not', () => {
    const l = ledger(4);
    for (const seq of [0, 1, 2, 1, 3, 0]) l.recordReadSeq(seq, { queue: 'q' });
    l.recordReadSeq(2, { queue: 'q', redelivered: true });
    expect(reconcile(l).order).toMatchObject({ reads: 7, outOfOrder: 3, expected: 3, unexplained: 0 });
    const m = ledger(3);
    for (const seq of [0, 2, 1]) m.recordReadSeq(seq, { queue: 'q' });
    const r = reconcile(m);
    expect(r.order).toMatchObject({ outOfOrder: 1, unexplained: 1, samples: [1] });
    // Order is not part of the verdict.
    expect(r.verdict).toEqual({ ok: true, reasons: [] });
  });

  it('unexpected reads are not in the order counts; a ledger back from its JSON has none', () => {
    const l = ledger(2);
    l.recordRead('run-1', { queue: 'q' });
    l.recordRead('other-0', { queue: 'q' });
    l.recordRead('run-0', { queue: 'q' });
    expect(reconcile(l).order).toMatchObject({ reads: 2, outOfOrder: 1, unexplained: 1 });
    expect(reconcile(Ledger.fromJSON(l.toJSON())).order).toEqual({
      reads: 0,
      outOfOrder: 0,
      expected: 0,
      unexplained: 0,
      largestGap: 0,
      samples: [],
      streams: [],
    });
  });

  it('reads replayed from counts: order null, the counts as before', () => {
    const l = ledger(2);
    l.recordRead('run-1', { replayed: true });
    l.recordRead('run-0', { replayed: true });
    const r = reconcile(l);
    expect(r.order).toBeNull();
    expect(r.counts.readDistinct).toBe(2);
  });

  it('reconcile cuts the order samples at sampleLimit', () => {
    const l = ledger(10);
    for (const seq of [9, 0, 1, 2, 3]) l.recordReadSeq(seq);
    expect(reconcile(l, { sampleLimit: 2 }).order?.samples).toEqual([0, 1]);
    expect(reconcile(l, { sampleLimit: Infinity }).order?.samples).toEqual([0, 1, 2, 3]);
  });
});
