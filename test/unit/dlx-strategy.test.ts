import { describe, expect, it } from 'vitest';
import { dlqDemoOptions } from '../../src/cli/commands/dlq-demo.js';
import { renderDlxStrategy } from '../../src/report/kinds/dlq-demo/text.js';
import { dlxStrategyCharts } from '../../src/report/kinds/dlq-demo/charts.js';
import { blockLines, unwrapped } from './fixtures/text.js';
import {
  countLost,
  dlxNames,
  parseNodeSettings,
  registrationTimeoutMs,
  settleTimeoutMs,
  sourceArguments,
  strategyVariants,
  summarizeStrategies,
  waitedOutRegistration,
  type DlxStrategyResult,
  type StrategyRun,
} from '../../src/scenarios/demos/dlx-strategy-plan.js';

function run(over: Partial<StrategyRun>): StrategyRun {
  return {
    variant: 'at-most-once',
    run: 1,
    fault: 'pause',
    dlqLeader: 'rabbit3',
    dlqLeaderAfter: 'rabbit3',
    sourceLeader: 'rabbit1',
    published: 200,
    rejected: 200,
    rejectedDuringFault: 200,
    inDlq: 200,
    duplicatesInDlq: 0,
    leftInSource: 0,
    lost: 0,
    faultAtMs: 100,
    restoredAtMs: 15_100,
    rejoinedAtMs: 17_000,
    firstRejectedAtMs: 150,
    settledMs: 3_000,
    heldAtEnd: 0,
    waitedOutRegistration: false,
    problems: [],
    ...over,
  };
}

describe('dlq-demo --strategy: the variants', () => {
  it.each([
    ['at-most-once', { 'x-dead-letter-strategy': 'at-most-once' }],
    ['at-least-once', { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' }],
    ['at-least-once-drop-head', { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'drop-head' }],
  ] as const)('%s: the source queue arguments', (variant, extra) => {
    expect(sourceArguments(variant, 'x.dlx')).toEqual({ 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'x.dlx', ...extra });
  });
  it.each([
    ['both', ['at-most-once', 'at-least-once']],
    ['all', ['at-most-once', 'at-least-once', 'at-least-once-drop-head']],
    ['at-least-once', ['at-least-once']],
    ['sometimes', undefined],
  ])('--strategy %s', (value, expected) => expect(strategyVariants(value)).toEqual(expected));
  it('names per variant, apart from the stock topology', () => {
    expect(dlxNames('at-least-once')).toEqual({
      source: 'rmq-bench.dlx-strategy.at-least-once.source',
      dlq: 'rmq-bench.dlx-strategy.at-least-once.dlq',
      dlx: 'rmq-bench.dlx-strategy.at-least-once.dlx',
    });
  });
  it.each([
    [200, 195, 0, 5],
    [200, 0, 200, 0],
    [200, 120, 80, 0],
    [200, 210, 0, 0],
  ])('lost of %i published, %i in the DLQ, %i in the source: %i', (published, inDlq, left, lost) => expect(countLost(published, inDlq, left)).toBe(lost));
  it('the settle wait is one worker retry and a minute', () => expect(settleTimeoutMs(180_000)).toBe(240_000));
  it.each([
    ['{ok,180000} {ok,60}', 180_000, 60],
    ['[{ok,3000},{ok,15}]', 3_000, 15],
    ['[undefined,{ok, 60}]', 180_000, 60],
    ['{undefined,undefined}', 180_000, 60],
    ['', 180_000, 60],
  ])('node settings from %j: worker retry %i ms, net_ticktime %i s', (output, workerRetryMs, netTicktimeS) =>
    expect(parseNodeSettings(output)).toEqual({ workerRetryMs, netTicktimeS }),
  );
  it('a synchronous quorum queue call times out after net_ticktime + 5 s', () => expect(registrationTimeoutMs(60)).toBe(65_000));
});

describe('waitedOutRegistration: the held dead letters left when the registration call to the paused leader timed out', () => {
  // Paused at 100 ms, restored at 15.1 s, the first rejection at 150 ms: 65 s later is 50.05 s after the restore.
  const stalled = { variant: 'at-least-once', dlqLeaderAfter: 'rabbit1', settledMs: 50_200 } as const;
  it.each([
    ['65.15 s after the first rejection, the leader replaced', {}, true],
    ['64.2 s (within the poll before the timeout)', { settledMs: 49_200 }, true],
    ['75 s (the delivery after the timeout)', { settledMs: 60_000 }, true],
    ['63 s: too early for the timeout', { settledMs: 48_000 }, false],
    ['80 s: something else held them', { settledMs: 65_000 }, false],
    ['the leader kept its place (the call was answered when it woke)', { dlqLeaderAfter: 'rabbit3' }, false],
    ['the leader not known after the run', { dlqLeaderAfter: null }, false],
    ['a kill (the call fails at once, the node is gone)', { fault: 'kill' }, false],
    ['at-most-once sends without registering', { variant: 'at-most-once' }, false],
    ['drop-head is at-least-once too', { variant: 'at-least-once-drop-head' }, true],
    ['not settled', { settledMs: null }, false],
    ['nothing rejected', { firstRejectedAtMs: null }, false],
  ] as const)('%s: %s', (_name, over, expected) => expect(waitedOutRegistration(run({ ...stalled, ...over }), 60)).toBe(expected));
  it('a shorter net_ticktime moves the window', () => {
    expect(waitedOutRegistration(run({ ...stalled, settledMs: 5_200 }), 15)).toBe(true);
    expect(waitedOutRegistration(run(stalled), 15)).toBe(false);
  });
});

describe('summarizeStrategies', () => {
  it('at-least-once losing nothing passes, whatever at-most-once lost; medians per variant', () => {
    const runs = [
      run({ lost: 5, inDlq: 195 }),
      run({ run: 2, lost: 200, inDlq: 0 }),
      run({ run: 3, lost: 173, inDlq: 27 }),
      run({ variant: 'at-least-once' }),
      run({ variant: 'at-least-once', run: 2 }),
    ];
    const r = summarizeStrategies(['at-most-once', 'at-least-once'], runs);
    expect(r.ok).toBe(true);
    expect(r.summaries.map((s) => [s.variant, s.lost, s.lostPerRun, s.medianLost, s.keptAll])).toEqual([
      ['at-most-once', 378, [5, 200, 173], 173, false],
      ['at-least-once', 0, [0, 0], 0, true],
    ]);
  });
  it('at-least-once losing one fails the verdict', () => {
    const r = summarizeStrategies(['at-least-once'], [run({ variant: 'at-least-once', lost: 1, inDlq: 199 })]);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual(['at-least-once lost 1 of 200 dead letters']);
  });
  it('held but not lost is not kept-all, and not a failure', () => {
    const r = summarizeStrategies(['at-least-once'], [run({ variant: 'at-least-once', inDlq: 0, leftInSource: 200, heldAtEnd: 200, settledMs: null })]);
    expect(r.ok).toBe(true);
    expect(r.summaries[0]!.keptAll).toBe(false);
  });
  it("a run's own problem is named with its variant and run", () => {
    const r = summarizeStrategies(['at-most-once'], [run({ problems: ['only 150 of 200 rejected by the time the node was back'] })]);
    expect(r.problems).toEqual(['at-most-once run 1: only 150 of 200 rejected by the time the node was back']);
    expect(r.ok).toBe(false);
  });
});

function result(runs: StrategyRun[]): DlxStrategyResult {
  const variants = [...new Set(runs.map((r) => r.variant))];
  return {
    mode: 'strategy',
    brokerVersion: '4.3.6',
    workerRetryMs: 180_000,
    netTicktimeS: 60,
    fault: 'pause',
    count: 200,
    holdMs: 15_000,
    runs,
    ...summarizeStrategies(variants, runs),
  };
}

describe('renderDlxStrategy', () => {
  it('a row a run, a row a strategy with the docs beside what was measured', () => {
    const text = blockLines(renderDlxStrategy(result([run({ lost: 5, inDlq: 195 }), run({ variant: 'at-least-once', settledMs: 8_910 })])));
    expect(text).toContain("200 messages a run rejected (requeue=false) while the DLQ's leader is under 'pause' for 15.00 s");
    expect(text).toContain('its worker resends what is unconfirmed every 180.00 s, dead_letter_worker_publisher_confirm_timeout');
    expect(text).toMatch(/at-most-once\s+1\s+rabbit3\s+200 \(200\)\s+195\s+0\s+5\s+15\.00 s\s+3\.00 s/);
    expect(text).toMatch(/at-least-once\s+1\s+rabbit3\s+200 \(200\)\s+200\s+0\s+0\s+15\.00 s\s+8\.91 s/);
    expect(text).toContain('may lose dead letters while the target is unavailable');
    expect(text).toContain('at-most-once: lost 5 of 200 dead letters (median 5 a run)');
    expect(text).toContain('at-least-once: kept every dead letter in 1 run(s)');
    expect(text).toContain('verdict: OK');
  });
  it('a strategy that lost nothing where the docs allow a loss says so plainly', () => {
    expect(renderDlxStrategy(result([run({})]))).toContain(
      "at-most-once: kept every dead letter in 1 run(s) under 'pause' here (the docs allow a loss; none was seen)",
    );
  });
  it('a leader the fault replaced is shown beside the one faulted', () => {
    expect(blockLines(renderDlxStrategy(result([run({ dlqLeaderAfter: 'rabbit1' })])))).toMatch(/at-most-once\s+1\s+rabbit3 → rabbit1\s+200 \(200\)/);
  });
  it('a run that waited out the registration call says why its dead letters came when they did', () => {
    const x = run({ variant: 'at-least-once', dlqLeaderAfter: 'rabbit1', settledMs: 50_200, waitedOutRegistration: true });
    const text = unwrapped(renderDlxStrategy(result([x, run({ variant: 'at-least-once', run: 2 })])));
    expect(text).toContain(
      "at-least-once run 1: the held dead letters reached the DLQ 65.15 s after the first rejection. The source's dead-letter worker registers with the DLQ in a blocking call to the leader it knew (timeout net_ticktime + 5 s = 65.00 s); rabbit3, paused and replaced by rabbit1 meanwhile, never answered it, so nothing moved until it timed out",
    );
    expect(text).not.toContain('at-least-once run 2: the held');
  });
  it('copies in the DLQ are shown beside the distinct count', () => {
    expect(renderDlxStrategy(result([run({ variant: 'at-least-once', duplicatesInDlq: 2 })]))).toContain('200 (+2 copies)');
  });
  it('held dead letters are named as kept, not delivered yet', () => {
    const text = renderDlxStrategy(result([run({ variant: 'at-least-once', inDlq: 0, leftInSource: 200, heldAtEnd: 200, settledMs: null })]));
    expect(text).toContain('still holding 200');
    expect(text).toContain('at-least-once run 1: the source still held 200 dead letters for the DLQ when the wait ended: kept, not delivered yet');
  });
  it('a chart with a group per run', () => {
    const html = dlxStrategyCharts(result([run({ lost: 5, inDlq: 195 }), run({ variant: 'at-least-once' })])).join('');
    expect(html).toContain('at-most-once #1');
    expect(html).toContain('at-least-once #1');
    expect(html).toContain('lost');
  });
});

describe('dlq-demo options', () => {
  const raw = { json: false, auto: false, ttl: 1000, maxLength: 2 };
  it('without --strategy: the reasons, 3 messages each', () => {
    expect(dlqDemoOptions(raw)).toEqual({
      ...{ json: false, html: undefined, auto: false, ttlMs: 1000, maxLength: 2, checkpointCmd: undefined },
      reasons: ['delivery_limit'],
      count: 3,
    });
  });
  it("with --strategy: 200 messages a run, pause for 15 s, one run, the broker's worker retry", () => {
    expect(dlqDemoOptions({ ...raw, strategy: ['at-most-once', 'at-least-once'] }).strategy).toEqual({
      variants: ['at-most-once', 'at-least-once'],
      fault: 'pause',
      count: 200,
      holdMs: 15_000,
      runs: 1,
    });
  });
  it.each([
    [{ fault: 'kill' as const }, '--fault go(es) with --strategy'],
    [{ hold: 5000, runs: 2 }, '--hold, --runs go(es) with --strategy'],
    [{ strategy: ['at-least-once' as const], reason: ['rejected' as const] }, '--reason and --strategy are two demos: give one'],
  ])('refuses %o', (over, message) => expect(() => dlqDemoOptions({ ...raw, ...over })).toThrow(message));
});
