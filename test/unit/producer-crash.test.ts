import { describe, expect, it } from 'vitest';
import { harnessPrinter } from '../../src/scenarios/traffic/producer-harness.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { renderProducerCrash } from '../../src/report/kinds/producer-crash/text.js';
import { killPlan, maxKills, parseChildLine } from '../../src/scenarios/crashes/producer-crash-plan.js';
import { seededRandom } from '../../src/util/random.js';
import { unwrapped } from './fixtures/text.js';
import {
  totalsFor,
  verdictOf,
  type ProducerCrashOptions,
  type ProducerCrashResult,
  type ProducerCrashRun,
} from '../../src/scenarios/crashes/producer-crash-result.js';

describe('killPlan: seeded kill points', () => {
  it('the same seed and run give the same plan; another run or seed another one', () => {
    expect(killPlan(42, 1, 2_000, 3)).toEqual(killPlan(42, 1, 2_000, 3));
    expect(killPlan(42, 2, 2_000, 3)).not.toEqual(killPlan(42, 1, 2_000, 3));
    expect(killPlan(43, 1, 2_000, 3)).not.toEqual(killPlan(42, 1, 2_000, 3));
  });

  it.each([
    { count: 2_000, kills: 3 },
    { count: 100, kills: 10 },
    { count: 20, kills: 19 },
    { count: 1, kills: 1 },
  ])('count $count, $kills kills: distinct, ascending, within 5–95 %; the fault within 20–70 %', ({ count, kills }) => {
    for (let seed = 0; seed < 50; seed++) {
      const p = killPlan(seed, 1, count, kills);
      expect(p.killAt).toHaveLength(kills);
      for (let i = 1; i < p.killAt.length; i++) expect(p.killAt[i]!).toBeGreaterThan(p.killAt[i - 1]!);
      expect(p.killAt[0]!).toBeGreaterThanOrEqual(Math.max(1, Math.ceil(count * 0.05)));
      expect(p.killAt.at(-1)!).toBeLessThanOrEqual(Math.max(1, Math.floor(count * 0.95)));
      expect(p.faultAt).toBeGreaterThanOrEqual(Math.max(1, Math.floor(count * 0.2)));
      expect(p.faultAt).toBeLessThanOrEqual(Math.max(1, Math.floor(count * 0.7)));
    }
  });

  it('more kills than positions is refused; maxKills says how many fit', () => {
    expect(maxKills(20)).toBe(19);
    expect(maxKills(1)).toBe(1);
    expect(() => killPlan(1, 1, 20, 20)).toThrow(RangeError);
  });

  it('seededRandom is deterministic and within [0, 1)', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const xs = Array.from({ length: 1_000 }, () => a());
    expect(xs).toEqual(Array.from({ length: 1_000 }, () => b()));
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

describe('parseChildLine', () => {
  it.each([
    { line: 'at 0', expected: { kind: 'at', n: 0 } },
    { line: 'at 1234\r', expected: { kind: 'at', n: 1234 } },
    { line: 'sent 99', expected: { kind: 'sent', n: 99 } },
    { line: 'sent -1', expected: undefined },
    { line: 'at', expected: undefined },
    { line: '{', expected: undefined },
    { line: 'at 1e3', expected: undefined },
    { line: 'resent 4', expected: undefined },
  ])('$line', ({ line, expected }) => {
    expect(parseChildLine(line)).toEqual(expected);
  });
});

describe('harnessPrinter: the lines the parent reads', () => {
  it('nothing without harness options', () => {
    expect(harnessPrinter(undefined)).toBeUndefined();
    expect(harnessPrinter({ runId: 'r', startAt: 0, printSentEvery: undefined, progressLines: false })).toBeUndefined();
  });

  it('`at` after every message, `sent` (the last sequence) every N, counting from --start-at', () => {
    const out: string[] = [];
    const p = harnessPrinter({ runId: undefined, startAt: 200, printSentEvery: 100, progressLines: true }, (s) => out.push(s))!;
    for (let n = 1; n <= 101; n++) p(200 + n);
    const lines = out.join('').trim().split('\n');
    expect(lines[0]).toBe('at 201');
    expect(lines).toContain('sent 299');
    expect(lines.filter((l) => l.startsWith('sent'))).toEqual(['sent 299']);
    expect(lines.at(-1)).toBe('at 301');
  });
});

const options: ProducerCrashOptions = {
  count: 100,
  kills: 2,
  runs: 1,
  modes: ['naive', 'outbox'],
  ratePerSec: 0,
  printEvery: 10,
  seed: 5,
  fault: 'none',
  childTimeoutMs: 300_000,
  electionTimeoutMs: 60_000,
  rejoinTimeoutMs: 180_000,
  drainIdleMs: 3_000,
};

/** A run whose reads are given per sequence (0 = never read). */
function runOf(mode: 'naive' | 'outbox', run: number, reads: number[], extra: Partial<ProducerCrashRun> = {}): ProducerCrashRun {
  const ledger = new Ledger({ runId: `r${run}${mode}`, capacity: reads.length });
  reads.forEach((n, seq) => {
    ledger.attempt(seq);
    ledger.written(seq);
    for (let i = 0; i < n; i++) ledger.recordReadSeq(seq);
  });
  const rec = reconcile(ledger);
  return {
    mode,
    run,
    queue: `producer-crash-${mode}-x`,
    runId: ledger.runId,
    killPlan: [30, 60],
    kills: [
      { life: 1, plannedAt: 30, triggeredAt: 31, atPosition: 35, restartFrom: mode === 'naive' ? 30 : null },
      { life: 2, plannedAt: 60, triggeredAt: 60, atPosition: 62, restartFrom: mode === 'naive' ? 60 : null },
    ],
    starts: 3,
    intended: reads.length,
    read: rec.counts.readDistinct,
    lost: reads.length - rec.counts.readDistinct,
    duplicated: rec.duplicated,
    extraDeliveries: rec.duplicateDeliveries,
    idempotent: { received: rec.counts.readTotal, processed: rec.counts.readDistinct, duplicatesRemoved: rec.duplicateDeliveries, processedTwice: 0 },
    outbox: mode === 'outbox' ? { written: reads.length, pending: 0, published: reads.length, integrity: 'ok' } : null,
    fault: null,
    reconciliation: rec,
    leftInQueue: 0,
    ...extra,
  };
}

describe('totals and verdict', () => {
  // naive: 3 lost (sequences 0..2), 2 read twice; outbox: none lost, 1 read three times.
  const naive = runOf('naive', 1, [0, 0, 0, 2, 2, ...Array<number>(95).fill(1)]);
  const outbox = runOf('outbox', 1, [3, ...Array<number>(99).fill(1)]);

  it('sums per mode', () => {
    expect(totalsFor('naive', [naive, outbox])).toEqual({
      mode: 'naive',
      runs: 1,
      intended: 100,
      kills: 2,
      read: 97,
      lost: 3,
      duplicated: 2,
      extraDeliveries: 2,
      duplicatesRemoved: 2,
      processed: 97,
      processedTwice: 0,
      runsWithLoss: 1,
      runsWithDuplicates: 1,
    });
    expect(totalsFor('outbox', [naive, outbox])).toMatchObject({ lost: 0, duplicated: 1, extraDeliveries: 2, runsWithLoss: 0 });
  });

  it('naive loss is the demonstration, not a failure', () => {
    expect(verdictOf([naive, outbox])).toEqual({ ok: true, reasons: [] });
  });

  it.each([
    { name: 'outbox loss', run: runOf('outbox', 2, [0, 1, 1]), reason: 'outbox run 2: 1 of 3 events never read' },
    {
      name: 'rows left pending',
      run: runOf('outbox', 1, [1, 1], { outbox: { written: 2, pending: 1, published: 1, integrity: 'ok' } }),
      reason: 'outbox run 1: 1 outbox rows still pending',
    },
    {
      name: 'a corrupt outbox',
      run: runOf('outbox', 1, [1], { outbox: { written: 1, pending: 0, published: 1, integrity: 'page 3 is never used' } }),
      reason: 'outbox integrity check: page 3 is never used',
    },
    {
      name: 'processed twice by the idempotent consumer',
      run: runOf('naive', 1, [1], { idempotent: { received: 2, processed: 2, duplicatesRemoved: 0, processedTwice: 1 } }),
      reason: 'the idempotent consumer processed 1 events twice',
    },
  ])('fails on $name', ({ run, reason }) => {
    const v = verdictOf([run]);
    expect(v.ok).toBe(false);
    expect(v.reasons.join('\n')).toContain(reason);
  });
});

describe('renderProducerCrash', () => {
  const runs = [runOf('naive', 1, [0, 0, 0, 2, 2, ...Array<number>(95).fill(1)]), runOf('outbox', 1, [3, ...Array<number>(99).fill(1)])];
  const result: ProducerCrashResult = { options, runs, totals: options.modes.map((m) => totalsFor(m, runs)), ...verdictOf(runs) };
  const text = renderProducerCrash(result);
  const lines = text.split('\n');

  it('a header with the seed, so the run can be repeated', () => {
    expect(lines[0]).toBe('producer-crash: 100 events per run, 2 SIGKILLs of the producer at random points (seed 5), 1 run; as fast as possible');
  });

  it('one row per figure, one column per mode', () => {
    const row = (label: string): string[] =>
      lines
        .find((l) => l.startsWith(label))!
        .slice(label.length)
        .trim()
        .split(/\s+/);
    expect(lines.find((l) => l.startsWith('  ') || l.startsWith(' '.repeat(10)))).toContain('naive (in memory)');
    expect(row('events intended')).toEqual(['100', '100']);
    expect(row('SIGKILLs')).toEqual(['2', '2']);
    expect(row('read (distinct)')).toEqual(['97', '100']);
    expect(row('lost')).toEqual(['3', '0']);
    expect(row('duplicated')).toEqual(['2', '1']);
    expect(row('removed by an idempotent consumer')).toEqual(['2', '2']);
    expect(row('runs with loss')).toEqual(['1', '0']);
  });

  it('no per-run table for a single run without a fault; one with --runs or --fault', () => {
    expect(text).not.toContain('kills at');
    const faulted = unwrapped(
      renderProducerCrash({
        ...result,
        options: { ...options, fault: 'kill' },
        runs: runs.map((r) => ({ ...r, fault: { kind: 'kill', atPosition: 40, node: 'rabbit1', newLeader: 'rabbit2', electionMs: 900, error: null } })),
      }),
    );
    expect(faulted).toContain("and a 'kill' of the queue leader during each");
    expect(faulted).toMatch(/naive\s+35→30 62→60\s+rabbit1→rabbit2 at 40\s+97\s+3\s+2/);
    expect(faulted).toMatch(/outbox\s+35 62\s+rabbit1→rabbit2 at 40\s+100\s+0\s+1/);
  });

  it('a verdict line', () => {
    expect(lines.at(-1)).toBe('verdict: OK (the outbox lost nothing)');
    const failed = renderProducerCrash({ ...result, ok: false, reasons: ['outbox run 1: 1 of 100 events never read'] });
    expect(failed.split('\n').at(-1)).toBe('verdict: FAILED: outbox run 1: 1 of 100 events never read');
  });
});
