import { describe, expect, it } from 'vitest';
import { measuresOf } from '../../src/report/threshold-measures.js';
import { checkThresholds, renderThresholds, type ThresholdLimits, type ThresholdMeasures } from '../../src/report/thresholds.js';
import { chaosProducer, chaosResult } from './fixtures/chaos.js';
import { compareResult, compareWithFault, modeTotals } from './fixtures/runs.js';

describe('checkThresholds: each limit given against its figure', () => {
  const cases: { name: string; limits: ThresholdLimits; measures: ThresholdMeasures; ok: boolean; messages: string[] }[] = [
    { name: 'none given: ok, no checks', limits: {}, measures: { lost: 12 }, ok: true, messages: [] },
    { name: 'past --max-lost', limits: { lost: 0 }, measures: { lost: 12 }, ok: false, messages: ['lost 12 > --max-lost 0'] },
    { name: 'at the limit: passes', limits: { lost: 12 }, measures: { lost: 12 }, ok: true, messages: ['lost 12 <= --max-lost 12'] },
    { name: 'duplicates under', limits: { duplicates: 5 }, measures: { duplicates: 2 }, ok: true, messages: ['duplicates 2 <= --max-duplicates 5'] },
    { name: 'a stall past, as durations', limits: { stall: 5_000 }, measures: { stall: 12_300 }, ok: false, messages: ['stall 12.3s > --max-stall 5s'] },
    { name: 'an election under', limits: { election: 10_000 }, measures: { election: 1_750 }, ok: true, messages: ['election 1750ms <= --max-election 10s'] },
    {
      name: 'not measured: fails, never a silent pass',
      limits: { election: 5_000 },
      measures: { election: null },
      ok: false,
      messages: ['election not measured (--max-election 5s)'],
    },
    { name: 'a figure the kind lacks: not measured', limits: { stall: 1_000 }, measures: {}, ok: false, messages: ['stall not measured (--max-stall 1s)'] },
    {
      name: 'several, in the table order, one failing',
      limits: { election: 5_000, lost: 0, duplicates: 0 },
      measures: { lost: 0, duplicates: 3, election: 1_000 },
      ok: false,
      messages: ['lost 0 <= --max-lost 0', 'duplicates 3 > --max-duplicates 0', 'election 1s <= --max-election 5s'],
    },
  ];
  it.each(cases)('$name', ({ limits, measures, ok, messages }) => {
    const r = checkThresholds(limits, measures);
    expect(r.ok).toBe(ok);
    expect(r.checks.map((c) => c.message)).toEqual(messages);
    expect(r.checks.every((c) => c.ok === (c.value !== null && c.value <= c.limit))).toBe(true);
  });

  it('a check carries its flag, limit and value for the document', () => {
    expect(checkThresholds({ lost: 0 }, { lost: 12 }).checks).toEqual([
      { name: 'lost', flag: '--max-lost', limit: 0, value: 12, ok: false, message: 'lost 12 > --max-lost 0' },
    ]);
  });
});

describe('renderThresholds: the lines the report ends with', () => {
  const cases: { name: string; limits: ThresholdLimits; measures: ThresholdMeasures; text: string }[] = [
    { name: 'none given: nothing', limits: {}, measures: {}, text: '' },
    {
      name: 'one past',
      limits: { lost: 0, stall: 5_000 },
      measures: { lost: 12, stall: 800 },
      text: ['thresholds:', '  FAILED  lost 12 > --max-lost 0', '  OK      stall 800ms <= --max-stall 5s', 'thresholds: FAILED (lost 12 > --max-lost 0)'].join(
        '\n',
      ),
    },
    { name: 'all held', limits: { lost: 0 }, measures: { lost: 0 }, text: ['thresholds:', '  OK      lost 0 <= --max-lost 0', 'thresholds: OK'].join('\n') },
  ];
  it.each(cases)('$name', ({ limits, measures, text }) => expect(renderThresholds(checkThresholds(limits, measures))).toBe(text));
});

describe('measuresOf: the figures each verdict command holds to its thresholds', () => {
  it('compare: lost and silently lost over every side, duplicates, the longest stall, the longest election', () => {
    const r = compareResult([], {
      totals: [
        modeTotals('confirms-on', { lost: 1, duplicated: 2, maxStallMs: 900 }),
        modeTotals('confirms-off', { silentlyLost: 37, duplicated: 1, maxStallMs: 4_000 }),
      ],
    });
    expect(measuresOf('compare', r)).toEqual({ lost: 38, duplicates: 3, stall: 4_000, election: null });
    // KILL_TIMELINE's election: 1,750 ms, in each run.
    expect(measuresOf('compare', compareWithFault()).election).toBe(1_750);
  });
  it('chaos: the confirming producers only (the control producer is there to lose)', () => {
    const r = chaosResult({
      producers: [
        chaosProducer(1, [['awc', 1, 10]], { longestStallMs: 4_200 }),
        chaosProducer(2, [['awc', 1, 10]], { longestStallMs: 900 }),
        chaosProducer(3, [['aw', 0, 10]], { confirms: false, longestStallMs: 60_000 }),
      ],
    });
    expect(measuresOf('chaos', r)).toMatchObject({ lost: r.totals.lost + r.totals.silentlyLost, duplicates: r.totals.duplicated, stall: 4_200 });
  });
  it('producer-crash, consumer-crash and verify: lost and duplicates summed', () => {
    type Of<K extends 'producer-crash' | 'consumer-crash' | 'verify'> = Parameters<typeof measuresOf<K>>[1];
    const producerCrash = {
      totals: [
        { lost: 3, duplicated: 1 },
        { lost: 0, duplicated: 4 },
      ],
    } as unknown as Of<'producer-crash'>;
    expect(measuresOf('producer-crash', producerCrash)).toEqual({ lost: 3, duplicates: 5 });
    const consumerCrash = {
      runs: [
        { lost: 7, processedTwice: 2 },
        { lost: 0, processedTwice: 0 },
        { lost: 0, processedTwice: 1 },
      ],
    } as unknown as Of<'consumer-crash'>;
    expect(measuresOf('consumer-crash', consumerCrash)).toEqual({ lost: 7, duplicates: 3 });
    const verify = { total: { lost: 2, silentlyLost: 5, duplicated: 1 } } as unknown as Of<'verify'>;
    expect(measuresOf('verify', verify)).toEqual({ lost: 7, duplicates: 1 });
    // A document without its total (read back by `report`): not measured.
    expect(measuresOf('verify', {} as Of<'verify'>)).toEqual({ lost: null, duplicates: null });
  });
  it('failover: its election, or null when none was awaited', () => {
    expect(measuresOf('failover', { electionMs: 2_500 } as Parameters<typeof measuresOf<'failover'>>[1])).toEqual({ election: 2_500 });
    expect(measuresOf('failover', { electionMs: null } as Parameters<typeof measuresOf<'failover'>>[1])).toEqual({ election: null });
  });
});
