import { describe, expect, it } from 'vitest';
import type { PublisherResult } from '../../src/client/publisher-result.js';
import type { LatencySummary } from '../../src/measure/histogram.js';
import { latencyLine, renderProducer } from '../../src/report/kinds/producer/text.js';
import { modeVerdict, renderCompare, renderTotals } from '../../src/report/kinds/compare/text.js';
import { renderReconciliation } from '../../src/report/kinds/verify/text.js';
import type { CompareOptions, CompareResult, FaultTimeline, ModeTotals } from '../../src/scenarios/under-faults/compare.js';
import { CONFIRM_LATENCY, NO_LATENCY } from './fixtures/latency.js';
import {
  COMPARE_OPTIONS,
  compareResult as compareOf,
  compareRun,
  KILL_TIMELINE,
  ledgerOf,
  modeTotals,
  publisherResult,
  reconciliationOf,
} from './fixtures/runs.js';
import { unwrapped } from './fixtures/text.js';
import { reconcile } from '../../src/ledger/reconcile.js';

describe('latencyLine', () => {
  const cases: { name: string; summary: LatencySummary; expected: string }[] = [
    { name: 'no confirms recorded', summary: NO_LATENCY, expected: 'none' },
    { name: 'count 0 wins over stray values', summary: { ...CONFIRM_LATENCY, count: 0 }, expected: 'none' },
    {
      name: 'two decimals below 10 ms, whole milliseconds from 10 ms',
      summary: CONFIRM_LATENCY,
      expected: 'p50 1.50 ms, p95 9.50 ms, p99 12 ms, max 250 ms (1998 confirms)',
    },
    {
      name: "a missing percentile is '-'",
      summary: { count: 1, p50Ms: 0.25, p95Ms: null, p99Ms: null, maxMs: 0.25, meanMs: 0.25 },
      expected: 'p50 0.25 ms, p95 -, p99 -, max 0.25 ms (1 confirms)',
    },
  ];

  it.each(cases)('$name', ({ summary, expected }) => {
    expect(latencyLine(summary)).toBe(expected);
  });
});

describe('modeVerdict', () => {
  const cases: { name: string; totals: ModeTotals; expected: string | RegExp }[] = [
    {
      name: 'confirms off with loss',
      totals: modeTotals('confirms-off', { read: 1_963, silentlyLost: 37, runsWithLoss: 1 }),
      expected: 'confirms off: 37 of 2000 messages silently lost, while the producer reported all 2000 as sent.',
    },
    {
      name: 'confirms off with loss, some never written',
      totals: modeTotals('confirms-off', { reportedSent: 1_990, read: 1_953, silentlyLost: 37, runsWithLoss: 1 }),
      expected: 'confirms off: 37 of 2000 messages silently lost, while the producer reported 1990 as sent.',
    },
    {
      name: 'confirms off with loss over several runs',
      totals: modeTotals('confirms-off', { runs: 3, attempted: 6_000, reportedSent: 6_000, read: 5_880, silentlyLost: 120, runsWithLoss: 2 }),
      expected: 'confirms off: 120 of 6000 messages silently lost over 3 runs, while the producer reported all 6000 as sent.',
    },
    {
      name: 'confirms off, no loss this time',
      totals: modeTotals('confirms-off'),
      expected: 'confirms off: no message lost this time (2000 of 2000 read). Loss depends on timing: try --runs 5 or a higher --count.',
    },
    {
      name: 'confirms off, no loss over several runs',
      totals: modeTotals('confirms-off', { runs: 5, attempted: 10_000, reportedSent: 10_000, read: 10_000 }),
      expected: 'confirms off: no message lost this time over 5 runs (10000 of 10000 read). Loss depends on timing: try --runs 5 or a higher --count.',
    },
    {
      name: 'confirms on, nothing lost',
      totals: modeTotals('confirms-on'),
      expected: 'confirms on: 0 of 2000 confirmed messages lost.',
    },
    {
      name: 'confirms on, nothing lost over several runs',
      totals: modeTotals('confirms-on', { runs: 3, attempted: 6_000, reportedSent: 6_000, confirmed: 6_000, read: 6_000 }),
      expected: 'confirms on: 0 of 6000 confirmed messages lost over 3 runs.',
    },
    {
      name: 'confirms on, nothing lost, some duplicates',
      totals: modeTotals('confirms-on', { duplicated: 3, recovered: 3 }),
      expected: 'confirms on: 0 of 2000 confirmed messages lost; 3 delivered twice (at-least-once: make consumers idempotent).',
    },
    {
      name: 'confirms on, confirmed messages lost',
      totals: modeTotals('confirms-on', { read: 1_998, lost: 2, runsWithLoss: 1 }),
      expected: 'confirms on: 2 confirmed messages LOST: the broker confirmed them and they were never read.',
    },
    {
      name: 'confirms on, lost over several runs, with duplicates',
      totals: modeTotals('confirms-on', {
        runs: 2,
        attempted: 4_000,
        reportedSent: 4_000,
        confirmed: 4_000,
        read: 3_999,
        lost: 1,
        duplicated: 4,
        runsWithLoss: 1,
      }),
      expected: /^confirms on: 1 confirmed messages LOST over 2 runs: .*; 4 delivered twice/,
    },
  ];

  it.each(cases)('$name', ({ totals: t, expected }) => {
    if (typeof expected === 'string') expect(modeVerdict(t)).toBe(expected);
    else expect(modeVerdict(t)).toMatch(expected);
  });
});

/** The cells of the row whose first cell is `label` (cells are separated by two spaces or more). */
function row(text: string, label: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith(`${label}  `));
  if (line === undefined) throw new Error(`no row '${label}' in:\n${text}`);
  return line.split(/\s{2,}/);
}

describe('renderTotals', () => {
  const on = modeTotals('confirms-on', {
    confirmed: 1_998,
    read: 1_999,
    lost: 1,
    duplicated: 2,
    recovered: 3,
    reconnects: 1,
    maxStallMs: 1_750,
    runsWithLoss: 1,
  });
  const off = modeTotals('confirms-off', { reportedSent: 1_990, read: 1_953, silentlyLost: 37, reconnects: 2, maxStallMs: 4_200, runsWithLoss: 1 });
  const text = renderTotals([on, off]);

  it('one column per mode, in the order given', () => {
    const [header, rule] = text.split('\n');
    expect(header).toMatch(/^\s+confirms on {2}confirms off$/);
    expect(rule).toMatch(/^-+ {2}-+ {2}-+$/);
    expect(renderTotals([off, on]).split('\n')[0]).toMatch(/^\s+confirms off {2}confirms on$/);
    expect(renderTotals([off]).split('\n')[0]).toMatch(/^\s+confirms off$/);
  });

  const rows: [label: string, onCell: string, offCell: string][] = [
    ['runs', '1', '1'],
    ['attempted', '2000', '2000'],
    ['reported sent', '2000', '1990'],
    ['confirmed', '1998', '-'],
    ['read', '1999', '1953'],
    ['lost', '1', '-'],
    ['silently lost', '0', '37'],
    ['duplicated', '2', '0'],
    ['recovered', '3', '0'],
    ['reconnects', '1', '2'],
    ['longest stall', '1.75 s', '4.20 s'],
  ];

  it.each(rows)('%s: %s | %s', (label, onCell, offCell) => {
    expect(row(text, label)).toEqual([label, onCell, offCell]);
  });

  it('exactly these rows, numbers right-aligned', () => {
    const lines = text.split('\n');
    expect(lines).toHaveLength(2 + rows.length);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  });
});

const options: CompareOptions = COMPARE_OPTIONS;

/** The kill of KILL_TIMELINE, restored at 5 s and back at 12 s. */
const killTimeline: FaultTimeline = { ...KILL_TIMELINE, restoredAtMs: 5_000, rejoinedAtMs: 12_000 };

/** Both modes' runs under that kill, nothing counted in them, with the fixture's totals. */
function compareResult(overrides: Partial<CompareResult> = {}): CompareResult {
  const empty = (runId: string) => reconciliationOf(runId, []);
  return compareOf(
    [
      compareRun('confirms-on', 1, empty('on-1'), { confirmLatency: CONFIRM_LATENCY }, killTimeline),
      compareRun('confirms-off', 1, empty('off-1'), {}, { ...killTimeline, node: 'rabbit2', newLeader: 'rabbit3', producerResumedAtMs: null }),
    ],
    overrides,
  );
}

describe('renderCompare', () => {
  it('heading: count, queue, rate, fault and where it hits', () => {
    expect(unwrapped(renderCompare(compareResult())).split('\n')[0]).toBe(
      "compare: 2000 messages per run to demo.orders, as fast as possible, producer connected first to the leader; fault 'kill' on the leader after 30% of the messages",
    );
    const paced = unwrapped(renderCompare(compareResult({ options: { ...options, ratePerSec: 500, fault: 'pause', faultAt: 0.5 } }))).split('\n')[0];
    expect(paced).toContain(', 500/s, ');
    expect(paced).toContain("fault 'pause' on the leader after 50% of the messages");
  });

  it('the totals table is included', () => {
    const text = renderCompare(compareResult());
    expect(text).toContain(renderTotals(compareResult().totals));
  });

  it('timeline: fault node, new leader, election, producer resumed, restore', () => {
    const lines = unwrapped(renderCompare(compareResult())).split('\n');
    expect(lines).toContain(
      '  confirms on run 1: kill rabbit1 at 1.50 s; new leader rabbit2 at 3.25 s (election 1.75 s); producer resumed at 3.40 s; restored at 5.00 s, back at 12.00 s',
    );
    expect(lines).toContain(
      '  confirms off run 1: kill rabbit2 at 1.50 s; new leader rabbit3 at 3.25 s (election 1.75 s); producer resumed at -; restored at 5.00 s, back at 12.00 s',
    );
  });

  it('timeline: a fault that failed part-way', () => {
    const failed: FaultTimeline = {
      ...killTimeline,
      newLeader: null,
      electedAtMs: null,
      electionMs: null,
      restoredAtMs: null,
      rejoinedAtMs: null,
      producerResumedAtMs: null,
      error: 'no new leader for demo.orders within 60000 ms',
    };
    const c = compareResult({ runs: [compareRun('confirms-on', 1, reconciliationOf('on-1', []), {}, failed)], totals: [modeTotals('confirms-on')] });
    expect(unwrapped(renderCompare(c)).split('\n')).toContain(
      '  confirms on run 1: kill rabbit1 at 1.50 s; new leader ? at -; producer resumed at -; restored at -, back at -; fault error: no new leader for demo.orders within 60000 ms',
    );
  });

  it('timeline: a run without a fault', () => {
    const c = compareResult({ runs: [compareRun('confirms-off', 2, reconciliationOf('off-2', []))], totals: [modeTotals('confirms-off', { runs: 2 })] });
    expect(renderCompare(c).split('\n')).toContain('  confirms off run 2: no fault');
  });

  // With --fault none there is no fault point: the text must not claim one.
  it('with --fault none it speaks of no fault point and no fault on the leader', () => {
    const c = compareResult({
      options: { ...options, fault: 'none' },
      runs: [compareRun('confirms-on', 1, reconciliationOf('on-1', [])), compareRun('confirms-off', 1, reconciliationOf('off-1', []))],
    });
    const text = renderCompare(c);
    expect(text).not.toContain('fault point');
    expect(text).not.toContain("fault 'none' on the leader");
  });

  it('confirm latency of the first confirms-on run, and around the fault', () => {
    const lines = renderCompare(compareResult()).split('\n');
    expect(lines).toContain('confirm latency (confirms on, run 1): p50 1.50 ms, p95 9.50 ms, p99 12 ms, max 250 ms (1998 confirms)');
    expect(lines).toContain('  around the fault: none');
  });

  it('no latency lines without a confirms-on run', () => {
    const c = compareResult({ runs: [compareRun('confirms-off', 1, reconciliationOf('off-1', []))], totals: [modeTotals('confirms-off')] });
    expect(renderCompare(c)).not.toContain('confirm latency');
  });

  it('one verdict line per mode, then the overall verdict', () => {
    const c = compareResult();
    const lines = renderCompare(c).split('\n');
    expect(lines.slice(-3)).toEqual([modeVerdict(c.totals[0]!), modeVerdict(c.totals[1]!), 'verdict: OK (no confirmed message lost)']);
  });

  it.each([
    { ok: true, expected: 'verdict: OK (no confirmed message lost)' },
    { ok: false, expected: 'verdict: FAILED (a confirmed message was lost, an unexpected one read, or deliveries stuck)' },
  ])('ok $ok → $expected', ({ ok, expected }) => {
    const text = renderCompare(compareResult({ ok, totals: [modeTotals('confirms-on', ok ? {} : { lost: 1, read: 1_999 })] }));
    expect(text.split('\n').at(-1)).toBe(expected);
  });
});

/** key → value of renderProducer's "key  value" lines; every value starts at the same column. */
function keyValues(text: string): Map<string, string> {
  const lines = text.split('\n').filter((l) => /\S {2,}\S/.test(l));
  const columns = new Set(lines.map((l) => /^.*?\S {2,}(?=\S)/.exec(l)![0].length));
  expect(columns.size).toBe(1);
  return new Map(lines.map((l) => l.split(/ {2,}/) as [string, string]));
}

const NOTE = 'without confirms the producer only knows what it wrote to the socket: run `rmq-bench verify` to see what arrived';

describe('renderProducer', () => {
  const asyncResult: PublisherResult = publisherResult({
    mode: 'async',
    count: 2_000,
    written: 2_000,
    publishes: 2_002,
    confirmed: 1_998,
    nacked: 1,
    indeterminate: 2,
    republished: 2,
    reconnects: 1,
    durationMs: 4_000,
    publishRatePerSec: 500.4,
    longestStallMs: 850,
    confirmLatency: CONFIRM_LATENCY,
  });

  it('confirm modes: every row', () => {
    expect([...keyValues(renderProducer(asyncResult))]).toEqual([
      ['mode', 'async confirms'],
      ['messages', '2000'],
      ['written (reported sent)', '2000'],
      ['confirmed', '1998'],
      ['nacked', '1'],
      ['indeterminate', '2 (published again: 2)'],
      ['returned (mandatory)', '0'],
      ['reconnects', '1'],
      ['duration', '4.00 s (500 publishes/s)'],
      ['longest stall', '850 ms'],
      ['confirm latency', 'p50 1.50 ms, p95 9.50 ms, p99 12 ms, max 250 ms (1998 confirms)'],
    ]);
    expect(renderProducer(asyncResult)).not.toContain(NOTE);
  });

  it.each([
    { mode: 'sync', label: 'sync confirms' },
    { mode: 'batch', label: 'batch confirms' },
    { mode: 'tx', label: 'transactions' },
    { mode: 'none', label: 'no confirms (fire and forget)' },
  ] as const)('mode $mode → $label', ({ mode, label }) => {
    expect(keyValues(renderProducer({ ...asyncResult, mode })).get('mode')).toBe(label);
  });

  it("mode none: no confirm rows, and the 'only knows what it wrote to the socket' note", () => {
    const text = renderProducer({ ...asyncResult, mode: 'none', confirmed: 0, nacked: 0, indeterminate: 0, republished: 0 });
    const kv = keyValues(text);
    expect([...kv.keys()]).toEqual(['mode', 'messages', 'written (reported sent)', 'returned (mandatory)', 'reconnects', 'duration', 'longest stall']);
    expect(text.split('\n').at(-1)).toBe(NOTE);
  });

  it('gave up: a last line saying why', () => {
    const text = renderProducer({ ...asyncResult, completed: false, gaveUp: 'no broker answered within 60000 ms' });
    expect(text.split('\n').at(-1)).toBe('gave up: no broker answered within 60000 ms');
    expect(renderProducer(asyncResult)).not.toContain('gave up');
  });

  it('gave up without confirms: the note, then the reason', () => {
    const text = renderProducer({ ...asyncResult, mode: 'none', gaveUp: 'interrupted' });
    expect(text.split('\n').slice(-2)).toEqual([NOTE, 'gave up: interrupted']);
  });
});

/** label → number of renderReconciliation's table lines. */
function counts(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    const hit = /^(\S.*?) {2,}(\d+)$/.exec(line);
    if (hit) m.set(hit[1]!, Number(hit[2]));
  }
  return m;
}

describe('renderReconciliation', () => {
  // Sequences: 0-4 confirmed and read; 5 confirmed, unread (lost); 6 written, unread (silently lost);
  // 7 nacked, unread (known failed); 8 indeterminate, unread; 9 never written; 10 indeterminate
  // and read (recovered); 11 confirmed and read twice (duplicated); plus one read that is not ours.
  const mixed = reconcile(
    ledgerOf(
      'r1',
      [
        ['awc', 1, 5],
        ['awc', 0],
        ['aw', 0],
        ['awn', 0],
        ['awi', 0],
        ['a', 0],
        ['awi', 1],
        ['awc', 2],
      ],
      1,
    ),
  );
  const text = renderReconciliation(mixed);

  const expected: [label: string, value: number][] = [
    ['attempted', 12],
    ['written', 11],
    ['confirmed', 7],
    ['read (distinct)', 7],
    ['lost (confirmed, never read)', 1],
    ['silently lost (written, no confirm, never read)', 1],
    ['known failed (nacked/returned, never read)', 1],
    ['indeterminate, never read', 1],
    ['never written', 1],
    ['recovered (indeterminate, yet read)', 1],
    ['duplicated', 1],
    ['unexpected', 1],
  ];

  it('every category, in order', () => {
    expect([...counts(text)]).toEqual(expected);
  });

  it('values right-aligned in one column', () => {
    const table = text.split('\n').slice(0, expected.length);
    expect(new Set(table.map((l) => l.length)).size).toBe(1);
  });

  it('samples of lost and silently lost sequences', () => {
    const lines = text.split('\n');
    expect(lines).toContain('lost sequences (first 1): 5');
    expect(lines).toContain('silently lost sequences (first 1): 6');
  });

  it('advice lines, then the verdict FAILED with its reasons', () => {
    const lines = text.split('\n');
    for (const a of mixed.advice) expect(lines).toContain(a);
    expect(mixed.advice.length).toBeGreaterThan(0);
    expect(lines.at(-1)).toBe('verdict: FAILED: 1 confirmed message was never read (lost); 1 message read that was never published (unexpected)');
  });

  it('samples are cut at the sample limit and say so', () => {
    const r = reconciliationOf('r2', [['aw', 0, 30]]);
    const line = renderReconciliation(r)
      .split('\n')
      .find((l) => l.startsWith('silently lost sequences'));
    expect(line).toBe(`silently lost sequences (first 20): ${Array.from({ length: 20 }, (_, i) => i).join(', ')}`);
  });

  it('all read: verdict OK, no sample lines', () => {
    const r = reconciliationOf('r3', [['awc', 1, 10]]);
    const out = renderReconciliation(r);
    expect(counts(out).get('read (distinct)')).toBe(10);
    expect(counts(out).get('lost (confirmed, never read)')).toBe(0);
    expect(out).not.toContain('sequences');
    expect(out.split('\n').at(-1)).toBe('verdict: OK');
  });
});

describe('renderCompare: late copies of an earlier run', () => {
  it('names them per run and says why they are not unexpected', () => {
    const rec = reconciliationOf('r2', [['acw', 1, 3]], 1);
    const run = { ...compareRun('confirms-on', 2, rec), lateCopies: ['r1-6905'], lateCopyCount: 1 };
    const text = unwrapped(
      renderCompare({
        options: COMPARE_OPTIONS,
        runs: [run],
        partitionHandling: null,
        interrupted: false,
        partial: null,
        totals: [modeTotals('confirms-on', { lateCopies: 1 })],
        ok: true,
      }),
    );
    expect(text).toContain("late copies: 1 message of an earlier run read in a later run's drain (run 2: r1-6905).");
    expect(text).toContain('not as unexpected');
  });
  it('counts every one past the samples kept, and the resurfaced apart', () => {
    const rec = reconciliationOf('r2', [['acw', 1, 3]], 1);
    const run = { ...compareRun('confirms-on', 2, rec), lateCopies: ['r1-1', 'r1-2'], lateCopyCount: 497, resurfaced: ['r1-9'], resurfacedCount: 3 };
    const text = unwrapped(
      renderCompare({
        options: COMPARE_OPTIONS,
        runs: [run],
        partitionHandling: 'ignore',
        interrupted: false,
        partial: null,
        totals: [modeTotals('confirms-on', { lateCopies: 497, resurfaced: 3 })],
        ok: false,
      }),
    );
    expect(text).toContain("late copies: 497 messages of an earlier run read in a later run's drain (run 2: r1-1, r1-2 and 495 more).");
    expect(text).toContain(
      "resurfaced: 3 messages of an earlier run that its own drain never read (counted lost there) read in a later run's drain (run 2: r1-9 and 2 more).",
    );
    expect(text.split('\n')[0]).toMatch(/; partition handling ignore$/);
  });
  it('says nothing when there are none', () => {
    const run = compareRun('confirms-on', 1, reconciliationOf('r1', [['acw', 1, 3]]));
    const text = unwrapped(
      renderCompare({
        options: COMPARE_OPTIONS,
        runs: [run],
        interrupted: false,
        partial: null,
        totals: [modeTotals('confirms-on')],
        partitionHandling: null,
        ok: true,
      }),
    );
    expect(text).not.toContain('late copies');
  });
});

describe('compare over AMQP 1.0: the outcome rows and verdicts', () => {
  const outcomes = { accepted: 2_000, released: 0, rejected: 3, modified: 0, inDoubt: 255, timedOut: 1 };
  const on10 = modeTotals('amqp10-outcomes', { confirmed: 2_000, duplicated: 2, recovered: 256, outcomes });
  const off10 = modeTotals('amqp10-presettled', {
    read: 1_750,
    silentlyLost: 250,
    runsWithLoss: 1,
    outcomes: { ...outcomes, accepted: 0, rejected: 0, inDoubt: 0, timedOut: 0 },
  });
  const on = modeTotals('confirms-on');
  const text = renderTotals([on, modeTotals('confirms-off'), on10, off10]);

  it('a column per side, labelled as people read them', () => {
    expect(text.split('\n')[0]).toMatch(/^\s+confirms on {2}confirms off {2}1\.0 outcomes {2}1\.0 pre-settled$/);
  });

  it.each([
    ['1.0 accepted', ['-', '-', '2000', '-']],
    ['1.0 rejected', ['-', '-', '3', '-']],
    ['1.0 in doubt', ['-', '-', '256', '-']],
    ['lost', ['0', '-', '0', '-']],
    ['silently lost', ['0', '0', '0', '250']],
  ])('%s', (label, cells) => {
    expect(row(text, label).slice(1)).toEqual(cells);
  });

  it('no outcome rows without a 1.0 side that awaits outcomes', () => {
    expect(renderTotals([on, modeTotals('confirms-off')])).not.toContain('1.0 accepted');
    expect(renderTotals([off10])).not.toContain('1.0 accepted');
  });

  it.each([
    [
      on10,
      '1.0 outcomes: 0 of 2000 accepted messages lost (the producer was told: 3 rejected, 256 in doubt; sent again where it could be); 2 delivered twice (at-least-once: make consumers idempotent).',
    ],
    [
      modeTotals('amqp10-outcomes', { confirmed: 2_000, outcomes: { ...outcomes, rejected: 0, inDoubt: 0, timedOut: 0 } }),
      '1.0 outcomes: 0 of 2000 accepted messages lost.',
    ],
    [
      modeTotals('amqp10-outcomes', { read: 1_999, lost: 1, runsWithLoss: 1, outcomes }),
      /^1\.0 outcomes: 1 accepted messages LOST: the broker accepted them and they were never read/,
    ],
    [off10, '1.0 pre-settled: 250 of 2000 messages silently lost, while the producer reported all 2000 as sent.'],
  ] as const)('verdict %#', (t, expected) => {
    if (typeof expected === 'string') expect(modeVerdict(t)).toBe(expected);
    else expect(modeVerdict(t)).toMatch(expected);
  });
});
