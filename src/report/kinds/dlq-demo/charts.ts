import type { DlqDemoResult } from '../../../scenarios/demos/dlq-demo.js';
import type { DlxStrategyResult } from '../../../scenarios/demos/dlx-strategy-plan.js';
import { PALETTE, barChart } from '../../svg.js';

/** dlq-demo: what each dead-letter reason published and demo.dlq received. Pure. */
export function dlqDemoCharts(d: DlqDemoResult): string[] {
  return [
    '<h2>Dead letters per reason</h2>',
    barChart({
      title: 'published and found in demo.dlq, per reason',
      categories: d.results.map((r) => r.reason),
      series: [
        { name: 'published', values: d.results.map((r) => r.published) },
        { name: 'expected in demo.dlq', values: d.results.map((r) => r.expectedInDlq) },
        { name: 'found in demo.dlq', values: d.results.map((r) => r.dead.length) },
      ],
      yLabel: 'messages',
    }),
  ];
}

/** dlq-demo --strategy: where each run's dead letters ended, per strategy. Pure. */
export function dlxStrategyCharts(r: DlxStrategyResult): string[] {
  return [
    '<h2>Dead letters per run</h2>',
    barChart({
      title: `${r.count} messages rejected a run while the DLQ's leader was under '${r.fault}': in the DLQ, still in the source, lost`,
      categories: r.runs.map((x) => `${x.variant} #${x.run}`),
      series: [
        { name: 'in the DLQ', values: r.runs.map((x) => x.inDlq), color: PALETTE[1] },
        { name: 'left in the source', values: r.runs.map((x) => x.leftInSource), color: PALETTE[2] },
        { name: 'lost', values: r.runs.map((x) => x.lost), color: PALETTE[3] },
      ],
      yLabel: 'messages',
    }),
  ];
}
