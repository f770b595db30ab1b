import { describe, expect, it } from 'vitest';
import { earlierRunRead, totalsFor, unexplained, type CompareMode, type CompareRun, type ModeTotals } from '../../src/scenarios/under-faults/compare.js';
import { compareRun, ledgerOf, reconciliationOf, ZERO_TOTALS } from './fixtures/runs.js';

// Runs of both modes, interleaved as runCompare records them. Ledger steps: a attempt,
// w written, c confirm, i indeterminate; then how often each message was read, and how many.
const runs: CompareRun[] = [
  // on 1: 13 attempted, 1 confirmed and never read (lost), 2 read twice.
  compareRun(
    'confirms-on',
    1,
    reconciliationOf('on-1', [
      ['awc', 1, 10],
      ['awc', 0],
      ['awc', 2, 2],
    ]),
    { written: 13, reconnects: 1, longestStallMs: 800 },
  ),
  // off 1: 12 attempted, 4 written and never read (silently lost).
  compareRun(
    'confirms-off',
    1,
    reconciliationOf('off-1', [
      ['aw', 1, 8],
      ['aw', 0, 4],
    ]),
    { written: 12, reconnects: 0, longestStallMs: 5_000 },
  ),
  // on 2: 6 attempted, one indeterminate yet read (recovered), one read that is not ours; no loss.
  compareRun(
    'confirms-on',
    2,
    reconciliationOf(
      'on-2',
      [
        ['awc', 1, 5],
        ['awi', 1],
      ],
      1,
    ),
    { written: 6, reconnects: 2, longestStallMs: 2_500 },
  ),
  // off 2: 7 attempted, all read.
  compareRun('confirms-off', 2, reconciliationOf('off-2', [['aw', 1, 7]]), { written: 7, reconnects: 3, longestStallMs: 100 }),
  // on 3: 5 attempted, 2 written with no confirm and never read (silently lost, not lost).
  compareRun(
    'confirms-on',
    3,
    reconciliationOf('on-3', [
      ['awc', 1, 3],
      ['aw', 0, 2],
    ]),
    { written: 5, reconnects: 0, longestStallMs: 300 },
  ),
  // off 3: 4 attempted, one never written (not a loss the totals count), 3 read.
  compareRun(
    'confirms-off',
    3,
    reconciliationOf('off-3', [
      ['a', 0],
      ['aw', 1, 3],
    ]),
    { written: 3, reconnects: 1, longestStallMs: 200 },
  ),
];

describe('totalsFor', () => {
  const cases: { name: string; mode: CompareMode; runs: CompareRun[]; expected: ModeTotals }[] = [
    {
      name: 'confirms on: sums of its own runs only; the longest stall is a max',
      mode: 'confirms-on',
      runs,
      expected: {
        mode: 'confirms-on',
        runs: 3,
        attempted: 13 + 6 + 5,
        reportedSent: 13 + 6 + 5,
        confirmed: 13 + 5 + 3,
        read: 12 + 6 + 3,
        lost: 1,
        silentlyLost: 2,
        duplicated: 2,
        recovered: 1,
        reconnects: 1 + 2 + 0,
        unexpected: 1,
        lateCopies: 0,
        resurfaced: 0,
        maxStallMs: 2_500,
        runsWithLoss: 2,
      },
    },
    {
      name: 'confirms off: never written is not a loss',
      mode: 'confirms-off',
      runs,
      expected: {
        mode: 'confirms-off',
        runs: 3,
        attempted: 12 + 7 + 4,
        reportedSent: 12 + 7 + 3,
        confirmed: 0,
        read: 8 + 7 + 3,
        lost: 0,
        silentlyLost: 4,
        duplicated: 0,
        recovered: 0,
        reconnects: 0 + 3 + 1,
        unexpected: 0,
        lateCopies: 0,
        resurfaced: 0,
        maxStallMs: 5_000,
        runsWithLoss: 1,
      },
    },
    {
      name: 'a single run',
      mode: 'confirms-off',
      runs: [runs[1]!],
      expected: {
        ...ZERO_TOTALS,
        mode: 'confirms-off',
        runs: 1,
        attempted: 12,
        reportedSent: 12,
        read: 8,
        silentlyLost: 4,
        maxStallMs: 5_000,
        runsWithLoss: 1,
      },
    },
    {
      name: 'no run of the mode: all zero',
      mode: 'confirms-on',
      runs: runs.filter((r) => r.mode === 'confirms-off'),
      expected: { ...ZERO_TOTALS, mode: 'confirms-on' },
    },
    { name: 'no runs at all', mode: 'confirms-off', runs: [], expected: { ...ZERO_TOTALS, mode: 'confirms-off' } },
  ];

  it.each(cases)('$name', ({ mode, runs: rs, expected }) => {
    expect(totalsFor(mode, rs)).toEqual(expected);
  });

  it('does not depend on the order of the runs', () => {
    const reversed = [...runs].reverse();
    for (const mode of ['confirms-on', 'confirms-off'] as const) expect(totalsFor(mode, reversed)).toEqual(totalsFor(mode, runs));
  });
});

describe('late copies: an earlier run’s message read in a later drain', () => {
  // run r1 published 0..2 and read 0 and 1; r2 is the run now being drained.
  const r1 = ledgerOf('r1', [
    ['acw', 1, 2],
    ['aw', 0],
  ]);
  const earlier = new Map([['r1', r1]]);
  it.each([
    { name: 'a message r1 read in its own drain: a late copy', id: 'r1-0', kind: 'late-copy' },
    { name: 'one r1 never read: resurfaced (counted lost in r1)', id: 'r1-2', kind: 'resurfaced' },
    { name: 'a sequence r1 never published: not r1’s', id: 'r1-9', kind: undefined },
    { name: 'a run this compare does not know: unexpected', id: 'zz-0', kind: undefined },
    { name: 'not a message id of ours at all', id: 'hello', kind: undefined },
    { name: 'no id', id: undefined, kind: undefined },
  ])('$name', ({ id, kind }) => {
    expect(earlierRunRead(id, earlier)).toBe(kind);
  });

  it('late copies and resurfaced messages are taken off the unexpected count (and so off the verdict), and totalled apart', () => {
    const rec = reconciliationOf('r2', [['acw', 1, 3]], 3);
    const run = { ...compareRun('confirms-on', 2, rec), lateCopies: ['r1-0'], lateCopyCount: 1, resurfaced: ['r1-2'], resurfacedCount: 1 };
    expect(rec.counts.unexpected).toBe(3);
    expect(unexplained(run)).toBe(1);
    const t = totalsFor('confirms-on', [run]);
    expect(t.unexpected).toBe(1);
    expect(t.lateCopies).toBe(1);
    expect(t.resurfaced).toBe(1);
  });
});
