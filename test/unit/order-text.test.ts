import { describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger/ledger.js';
import type { OrderReport, StreamOrder } from '../../src/ledger/order.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { renderChaos } from '../../src/report/kinds/chaos/text.js';
import { renderCompare } from '../../src/report/kinds/compare/text.js';
import { renderProducerCrash } from '../../src/report/kinds/producer-crash/text.js';
import { renderReconciliation } from '../../src/report/kinds/verify/text.js';
import { orderFinding, orderLines, orderSection, orderSummary } from '../../src/report/order-text.js';
import { type CompareResult, totalsFor } from '../../src/scenarios/under-faults/compare.js';
import { chaosResult } from './fixtures/chaos.js';
import { PRODUCER_CRASH_RESULT } from './fixtures/producer-crash.js';
import { unwrapped } from './fixtures/text.js';
import { COMPARE_OPTIONS, compareRun, reconciliationOf } from './fixtures/runs.js';

/** report/order-text.ts: a reconciliation's order in words, and in every printer that shows a reconciliation. */

const stream = (queue: string | null, consumer: number | null, over: Partial<StreamOrder> = {}): StreamOrder => ({
  queue,
  consumer,
  reads: 0,
  outOfOrder: 0,
  expected: 0,
  unexplained: 0,
  largestGap: 0,
  samples: [],
  ...over,
});

function order(over: Partial<OrderReport>): OrderReport {
  const base = { reads: 0, outOfOrder: 0, expected: 0, unexplained: 0, largestGap: 0, samples: [], streams: [stream('demo.orders', null)] };
  return { ...base, ...over };
}

describe('orderSummary and orderFinding', () => {
  it.each<[string, OrderReport | null | undefined, string, string | null]>([
    ['a document without it', undefined, 'not in this document', null],
    ['not observed', null, 'not observed (the reads were replayed from counts, not seen as they arrived)', null],
    ['nothing read', order({}), 'nothing read', null],
    ['all in order', order({ reads: 20_000, largestGap: 0 }), 'all 20,000 reads in order; largest gap 0', null],
    ['one read', order({ reads: 1 }), 'all 1 read in order; largest gap 0', null],
    [
      'out of order, all explained',
      order({ reads: 20_000, outOfOrder: 12, expected: 12, largestGap: 340 }),
      '12 of 20,000 reads out of order (12 redeliveries or resends, 0 unexplained); largest gap 340',
      null,
    ],
    [
      'one redelivery',
      order({ reads: 20_002, outOfOrder: 1, expected: 1, largestGap: 0 }),
      '1 of 20,002 reads out of order (1 redelivery or resend, 0 unexplained); largest gap 0',
      null,
    ],
    [
      'unexplained: a finding naming the streams and the first sequences',
      order({
        reads: 100,
        outOfOrder: 5,
        expected: 2,
        unexplained: 3,
        largestGap: 4,
        samples: [7, 8, 40],
        streams: [stream('q.1', 1, { unexplained: 2 }), stream('q.1', 2), stream('q.2', null, { unexplained: 1 })],
      }),
      '5 of 100 reads out of order (2 redeliveries or resends, 3 unexplained); largest gap 4',
      '3 reads out of order with no redelivery, second copy or resend to explain them (q.1 consumer 1: 2; q.2: 1; first sequences 7, 8, 40): delivered in another order than published',
    ],
    [
      'the default stream',
      order({ reads: 3, outOfOrder: 1, unexplained: 1, samples: [1], streams: [stream(null, null, { unexplained: 1 })] }),
      '1 of 3 reads out of order (0 redeliveries or resends, 1 unexplained); largest gap 0',
      '1 read out of order with no redelivery, second copy or resend to explain them ((no queue): 1; first sequences 1): delivered in another order than published',
    ],
  ])('%s', (_name, o, summary, finding) => {
    expect(orderSummary(o)).toBe(summary);
    expect(orderFinding(o)).toBe(finding);
  });

  it('orderLines: the finding indented under its line', () => {
    const o = order({ reads: 3, outOfOrder: 1, unexplained: 1, samples: [1], streams: [stream('q', null, { unexplained: 1 })] });
    const lines = orderLines('  confirms-on run 1', o);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('  confirms-on run 1: 1 of 3 reads out of order (0 redeliveries or resends, 1 unexplained); largest gap 0');
    expect(lines[1]).toMatch(/^ {4}finding: 1 read out of order/);
    expect(orderLines('order', order({ reads: 2 }))).toEqual(['order: all 2 reads in order; largest gap 0']);
  });

  it('orderSection: a row per reconciliation, "-" where unknown, each finding below; nothing without rows', () => {
    expect(orderSection([])).toEqual([]);
    const html = orderSection([
      {
        label: 'a <run>',
        order: order({ reads: 5, outOfOrder: 1, unexplained: 1, largestGap: 2, samples: [3], streams: [stream('q', null, { unexplained: 1 })] }),
      },
      { label: 'b', order: null },
      { label: 'c', order: undefined },
    ]).join('\n');
    expect(html).toContain('<h2>Order</h2>');
    expect(html).toContain('<tr><td>a &lt;run&gt;</td><td>5</td><td>1</td><td>0</td><td>1</td><td>2</td></tr>');
    expect(html).toContain('<tr><td>b</td><td>not observed</td>');
    expect(html).toContain('<tr><td>c</td><td>-</td>');
    expect(html).toContain('<p><strong>Finding</strong> (a &lt;run&gt;): 1 read out of order');
  });
});

describe('every printer of a reconciliation shows its order', () => {
  /** A confirmed ledger of n read in `reads` order from queue q. */
  function reconciled(runId: string, n: number, reads: number[]) {
    const l = new Ledger({ runId });
    for (let seq = 0; seq < n; seq++) {
      l.attempt(seq);
      l.written(seq);
      l.confirm(seq);
    }
    for (const seq of reads) l.recordReadSeq(seq, { queue: 'demo.orders' });
    return reconcile(l);
  }

  it('verify: one line, and a finding that leaves the verdict OK', () => {
    const text = unwrapped(renderReconciliation(reconciled('run', 4, [0, 2, 1, 3])));
    expect(text).toContain('order: 1 of 4 reads out of order (0 redeliveries or resends, 1 unexplained); largest gap 1');
    expect(text).toContain('  finding: 1 read out of order with no redelivery, second copy or resend to explain them (demo.orders: 1; first sequences 1)');
    expect(text.split('\n').at(-1)).toBe('verdict: OK');
  });

  it('compare: a line per run, in the text and in the page', () => {
    const runs = [compareRun('confirms-on', 1, reconciled('on-1', 3, [0, 1, 2])), compareRun('confirms-off', 1, reconciliationOf('off-1', [['aw', 1, 4]]))];
    const c: CompareResult = {
      options: COMPARE_OPTIONS,
      runs,
      partitionHandling: null,
      interrupted: false,
      partial: null,
      totals: [totalsFor('confirms-on', runs), totalsFor('confirms-off', runs)],
      ok: true,
    };
    const text = renderCompare(c);
    expect(text).toContain('order of the reads (the drain; not part of the verdict):');
    expect(text).toMatch(/^ {2}confirms on run 1: all 3 reads in order; largest gap 0$/m);
    expect(text).toMatch(/^ {2}confirms off run 1: all 4 reads in order; largest gap 0$/m);
    const page = renderHtmlReport('compare', c, text, { generatedAtIso: '2025-01-01T00:00:00.000Z' });
    expect(page).toContain('<h2>Order</h2>');
    expect(page).toContain('<td>confirms on run 1</td><td>3</td>');
  });

  it('chaos: a line per producer', () => {
    const text = renderChaos(chaosResult());
    expect(text).toContain('order of the reads (each consumer in the order it was delivered to; not part of the verdict):');
    expect(text).toMatch(/^ {2}producer 1 \(q\.1\): /m);
    expect(renderHtmlReport('chaos', chaosResult(), text, { generatedAtIso: '2025-01-01T00:00:00.000Z' })).toContain('<h2>Order</h2>');
  });

  it('producer-crash: a line per run', () => {
    const text = renderProducerCrash(PRODUCER_CRASH_RESULT);
    expect(text).toContain('order of the reads (the draining consumer; not part of the verdict):');
    for (const r of PRODUCER_CRASH_RESULT.runs) expect(text).toContain(`  ${r.mode} run ${r.run}: `);
  });
});
