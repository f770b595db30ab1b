import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, type FaultKind } from '../../src/faults/kinds.js';
import {
  availability,
  CHAOS_TARGETS,
  type ChaosTarget,
  type ChaosTotals,
  chaosTotals,
  chaosVerdict,
  type ConfirmGap,
  drainLook,
  type LeftInQueue,
  nemesisSchedule,
  pickIndex,
} from '../../src/scenarios/under-faults/chaos-plan.js';
import { chaosProducer, faultRecord } from './fixtures/chaos.js';

describe('pickIndex', () => {
  const cases: { draw: number; n: number; expected: number }[] = [
    { draw: 0, n: 1, expected: 0 },
    { draw: 0.999_999, n: 1, expected: 0 },
    { draw: 0, n: 3, expected: 0 },
    { draw: 0.333, n: 3, expected: 0 },
    { draw: 1 / 3, n: 3, expected: 1 },
    { draw: 0.5, n: 3, expected: 1 },
    { draw: 0.7, n: 3, expected: 2 },
    { draw: 1 - Number.EPSILON, n: 3, expected: 2 },
    // Out of [0, 1): kept within 0..n-1.
    { draw: 1, n: 3, expected: 2 },
    { draw: 7.5, n: 3, expected: 2 },
    { draw: -0.2, n: 3, expected: 0 },
    { draw: 0.99, n: 100, expected: 99 },
  ];
  it.each(cases)('draw $draw among $n → $expected', ({ draw, n, expected }) => {
    expect(pickIndex(draw, n)).toBe(expected);
  });

  it.each([0, -1, Number.NaN])('n = %d: RangeError', (n) => {
    expect(() => pickIndex(0.5, n)).toThrow(RangeError);
  });
});

describe('nemesisSchedule', () => {
  const all = [...FAULT_KINDS];
  const targets = [...CHAOS_TARGETS];

  it('is deterministic in the seed', () => {
    expect(nemesisSchedule(7, all, targets, 30)).toEqual(nemesisSchedule(7, all, targets, 30));
  });

  it('a longer schedule starts with the shorter one', () => {
    expect(nemesisSchedule(7, all, targets, 30).slice(0, 11)).toEqual(nemesisSchedule(7, all, targets, 11));
  });

  it.each([
    [1, 2],
    [42, 43],
    [0, 1],
    [123_456, 654_321],
  ])('seeds %d and %d give different schedules', (a, b) => {
    expect(nemesisSchedule(a, all, targets, 14)).not.toEqual(nemesisSchedule(b, all, targets, 14));
  });

  const rounds: { name: string; faults: FaultKind[]; count: number }[] = [
    { name: 'every kind, 4 rounds', faults: all, count: all.length * 4 },
    { name: 'two kinds, 10 rounds', faults: ['kill', 'pause'], count: 20 },
    { name: 'one kind', faults: ['stop'], count: 5 },
  ];
  it.each(rounds)('$name: each round holds every kind exactly once', ({ faults, count }) => {
    for (const seed of [1, 2, 3, 99, 2_024]) {
      const plan = nemesisSchedule(seed, faults, targets, count);
      expect(plan).toHaveLength(count);
      for (let start = 0; start < count; start += faults.length) {
        const kinds = plan.slice(start, start + faults.length).map((p) => p.kind);
        expect([...kinds].sort()).toEqual([...faults].sort());
      }
    }
  });

  it('a partial last round has no repeated kind', () => {
    const plan = nemesisSchedule(5, all, targets, all.length + 3);
    const tail = plan.slice(all.length).map((p) => p.kind);
    expect(new Set(tail).size).toBe(3);
  });

  it('rounds are shuffled: over a few seeds, the first round is not always in the given order', () => {
    const firsts = [1, 2, 3, 4, 5].map((seed) => nemesisSchedule(seed, all, targets, all.length).map((p) => p.kind));
    expect(firsts.some((k) => k.join() !== all.join())).toBe(true);
    expect(new Set(firsts.map((k) => k.join())).size).toBeGreaterThan(1);
  });

  it('indices are 1-based and consecutive; targets come from the list; draws are in [0, 1)', () => {
    const only: ChaosTarget[] = ['leader', 'producer'];
    const plan = nemesisSchedule(11, all, only, 50);
    expect(plan.map((p) => p.index)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    for (const p of plan) {
      expect(only).toContain(p.target);
      for (const d of [p.pick, p.pick2]) {
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(1);
      }
      expect(p.pick).not.toBe(p.pick2);
    }
    // Both targets are drawn over 50 faults.
    expect(new Set(plan.map((p) => p.target)).size).toBe(2);
  });

  it('one target: always that one', () => {
    expect(new Set(nemesisSchedule(3, all, ['random'], 20).map((p) => p.target))).toEqual(new Set(['random']));
  });

  it('count 0: an empty schedule', () => {
    expect(nemesisSchedule(1, all, targets, 0)).toEqual([]);
  });

  const bad: { name: string; faults: FaultKind[]; targets: ChaosTarget[]; count: number }[] = [
    { name: 'no faults', faults: [], targets, count: 3 },
    { name: 'no targets', faults: all, targets: [], count: 3 },
    { name: 'no faults, count 0', faults: [], targets, count: 0 },
    { name: 'a negative count', faults: all, targets, count: -1 },
    { name: 'a fractional count', faults: all, targets, count: 1.5 },
  ];
  it.each(bad)('$name: RangeError', ({ faults, targets: t, count }) => {
    expect(() => nemesisSchedule(1, faults, t, count)).toThrow(RangeError);
  });

  it('does not change the lists it is given', () => {
    const faults: FaultKind[] = ['kill', 'stop', 'pause'];
    nemesisSchedule(9, faults, targets, 9);
    expect(faults).toEqual(['kill', 'stop', 'pause']);
  });
});

describe('availability', () => {
  // Fault: issued at 10 s, healed at 15.05 s, whole at 18 s.
  const f = faultRecord();
  const gap = (fromMs: number, toMs: number, producer = 1): ConfirmGap => ({ producer, fromMs, toMs });

  const cases: { name: string; gaps: ConfirmGap[]; fault?: Partial<typeof f>; endMs?: number; stallMs: number; healToConfirmMs: number | null }[] = [
    { name: 'no gaps', gaps: [], stallMs: 0, healToConfirmMs: null },
    { name: 'a gap before the fault', gaps: [gap(5_000, 9_000)], stallMs: 0, healToConfirmMs: null },
    { name: 'a gap ending exactly at the issue does not overlap', gaps: [gap(9_000, 10_000)], stallMs: 0, healToConfirmMs: null },
    { name: 'a gap starting exactly when whole does not overlap', gaps: [gap(18_000, 19_000)], stallMs: 0, healToConfirmMs: null },
    { name: 'a gap after the cluster was whole', gaps: [gap(20_000, 25_000)], stallMs: 0, healToConfirmMs: null },
    { name: 'a gap inside the fault, before the heal', gaps: [gap(10_100, 14_000)], stallMs: 3_900, healToConfirmMs: null },
    { name: 'a gap that began before the issue counts whole', gaps: [gap(8_000, 11_000)], stallMs: 3_000, healToConfirmMs: null },
    { name: 'a gap spanning the heal', gaps: [gap(10_100, 16_050)], stallMs: 5_950, healToConfirmMs: 1_000 },
    { name: 'a gap starting at the heal spans it', gaps: [gap(15_050, 15_550)], stallMs: 500, healToConfirmMs: 500 },
    { name: 'a gap ending at the heal does not span it', gaps: [gap(12_000, 15_050)], stallMs: 3_050, healToConfirmMs: null },
    {
      name: 'overlapping gaps of several producers: the longest stall, the longest heal → confirm',
      gaps: [gap(10_100, 15_300, 1), gap(10_500, 17_000, 2), gap(14_000, 15_100, 3)],
      stallMs: 6_500,
      healToConfirmMs: 1_950,
    },
    {
      name: 'the longest heal → confirm need not be the longest stall',
      gaps: [gap(2_000, 11_000, 1), gap(15_000, 17_500, 2)],
      stallMs: 9_000,
      healToConfirmMs: 2_450,
    },
    {
      name: 'never healed: heal → confirm is null, the window runs to the end',
      fault: { restoredAtMs: null, wholeAtMs: null },
      gaps: [gap(10_100, 15_300), gap(40_000, 50_000)],
      endMs: 60_000,
      stallMs: 10_000,
      healToConfirmMs: null,
    },
    {
      name: 'healed but never whole: the window runs to the end',
      fault: { wholeAtMs: null },
      gaps: [gap(50_000, 52_000)],
      endMs: 60_000,
      stallMs: 2_000,
      healToConfirmMs: null,
    },
    { name: 'never whole, the gap after the end', fault: { wholeAtMs: null }, gaps: [gap(61_000, 62_000)], endMs: 60_000, stallMs: 0, healToConfirmMs: null },
  ];

  it.each(cases)('$name', ({ gaps, fault, endMs = 60_000, stallMs, healToConfirmMs }) => {
    expect(availability([{ ...f, ...fault }], gaps, endMs)).toEqual([{ index: 1, stallMs, healToConfirmMs }]);
  });

  it('one entry per fault, in the same order, each with its own window', () => {
    const faults = [
      faultRecord({ index: 3, issuedAtMs: 30_000, restoredAtMs: 35_000, wholeAtMs: 36_000 }),
      faultRecord({ index: 1, issuedAtMs: 10_000, restoredAtMs: 15_000, wholeAtMs: 16_000 }),
    ];
    const gaps = [gap(10_500, 15_400), gap(31_000, 33_000)];
    expect(availability(faults, gaps, 60_000)).toEqual([
      { index: 3, stallMs: 2_000, healToConfirmMs: null },
      { index: 1, stallMs: 4_900, healToConfirmMs: 400 },
    ]);
  });

  it('no faults: nothing', () => {
    expect(availability([], [gap(1, 2_000)], 60_000)).toEqual([]);
  });
});

describe('chaosTotals', () => {
  it('no producers: all zero', () => {
    const t = chaosTotals([]);
    expect(t.producers).toBe(0);
    for (const [k, v] of Object.entries(t)) if (k !== 'producers') expect(v, k).toBe(0);
  });

  it('sums every field over the producers', () => {
    const producers = [
      // 10 confirmed and read; 2 confirmed and lost; 1 read twice; 3 indeterminate and read (recovered).
      chaosProducer(1, [
        ['awc', 1, 10],
        ['awc', 0, 2],
        ['awc', 2, 1],
        ['awi', 1, 3],
      ]),
      // 4 never written; 2 nacked; 1 indeterminate, unread; 5 silently lost; 1 read three times.
      chaosProducer(2, [
        ['a', 0, 4],
        ['awn', 0, 2],
        ['awi', 0, 1],
        ['aw', 0, 5],
        ['awc', 3, 1],
      ]),
    ];
    const expected: ChaosTotals = {
      producers: 2,
      attempted: 16 + 13,
      written: 16 + 9,
      confirmed: 13 + 1,
      read: 14 + 1,
      lost: 2,
      silentlyLost: 5,
      knownFailed: 2,
      indeterminateUnread: 1,
      neverWritten: 4,
      recovered: 3,
      duplicated: 2,
      duplicateDeliveries: 1 + 2,
      republished: 0,
    };
    expect(chaosTotals(producers)).toEqual(expected);
  });

  it('is the reconciliation itself for one producer', () => {
    const p = chaosProducer(1, [
      ['awc', 1, 7],
      ['aw', 0, 2],
    ]);
    const r = p.reconciliation;
    expect(chaosTotals([p])).toMatchObject({
      producers: 1,
      attempted: r.counts.attempted,
      written: r.counts.written,
      confirmed: r.counts.confirmed,
      read: r.counts.readDistinct,
      silentlyLost: r.silentlyLost,
    });
  });
});

describe('chaosVerdict', () => {
  const base = chaosTotals([chaosProducer(1, [['awc', 1, 100]])]);
  const cases: { name: string; lost: number; unexpected: number; ok: boolean; reasons: string[] }[] = [
    { name: 'nothing lost, nothing unexpected', lost: 0, unexpected: 0, ok: true, reasons: [] },
    {
      name: 'confirmed messages lost',
      lost: 3,
      unexpected: 0,
      ok: false,
      reasons: ['3 confirmed messages lost: the broker confirmed them and no consumer ever received them'],
    },
    {
      name: 'one confirmed message lost',
      lost: 1,
      unexpected: 0,
      ok: false,
      reasons: ['1 confirmed message lost: the broker confirmed it and no consumer ever received it'],
    },
    { name: 'unexpected messages', lost: 0, unexpected: 2, ok: false, reasons: ['2 unexpected messages consumed: ids from no producer of this run'] },
    { name: 'one unexpected message', lost: 0, unexpected: 1, ok: false, reasons: ['1 unexpected message consumed: an id from no producer of this run'] },
    {
      name: 'both, lost first',
      lost: 5,
      unexpected: 4,
      ok: false,
      reasons: [
        '5 confirmed messages lost: the broker confirmed them and no consumer ever received them',
        '4 unexpected messages consumed: ids from no producer of this run',
      ],
    },
  ];
  it.each(cases)('$name', ({ lost, unexpected, ok, reasons }) => {
    expect(chaosVerdict({ ...base, lost }, unexpected)).toEqual({ ok, reasons });
  });

  it('silent loss, duplicates and indeterminate messages do not fail it', () => {
    const t: ChaosTotals = { ...base, silentlyLost: 9, duplicated: 4, duplicateDeliveries: 6, indeterminateUnread: 2, knownFailed: 1, neverWritten: 3 };
    expect(chaosVerdict(t, 0)).toEqual({ ok: true, reasons: [] });
  });
});

describe('drainLook', () => {
  const q = (ready: number, unacknowledged: number): LeftInQueue => ({ queue: 'q', ready, unacknowledged, consumersCounted: 1, consumersListed: 1 });
  const cases: { name: string; left: LeftInQueue[]; declare: number; idle: boolean; look: 'empty' | 'held' | 'waiting' }[] = [
    { name: 'a delivery within the idle time: waiting, whatever the queues say', left: [q(0, 0)], declare: 0, idle: false, look: 'waiting' },
    { name: 'every queue empty by both counts: empty', left: [q(0, 0), q(0, 0)], declare: 0, idle: true, look: 'empty' },
    {
      name: 'the API says empty, the passive declare finds ready messages (its statistics lag): waiting',
      left: [q(0, 0)],
      declare: 12,
      idle: true,
      look: 'waiting',
    },
    { name: 'the API says empty, no node answered the declare: waiting', left: [q(0, 0)], declare: -1, idle: true, look: 'waiting' },
    { name: 'ready messages: waiting (a consumer will take them)', left: [q(3, 0)], declare: 3, idle: true, look: 'waiting' },
    { name: 'only unacknowledged ones, nothing ready by both: held', left: [q(0, 0), q(0, 9)], declare: 0, idle: true, look: 'held' },
    { name: 'unacknowledged, and ready by the declare: waiting', left: [q(0, 9)], declare: 2, idle: true, look: 'waiting' },
    { name: 'unacknowledged and ready ones: waiting', left: [q(1, 9)], declare: 1, idle: true, look: 'waiting' },
  ];
  it.each(cases)('$name', ({ left, declare, idle, look }) => {
    expect(drainLook(left, declare, idle)).toBe(look);
  });
});
