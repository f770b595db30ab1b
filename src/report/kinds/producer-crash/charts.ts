import type { ProducerCrashResult } from '../../../scenarios/crashes/producer-crash-result.js';
import { PALETTE, barChart } from '../../svg.js';
import { lossPerRunSections, modesOf } from '../../chart-parts.js';
import { orderSection } from '../../order-text.js';

/** producer-crash: per mode, what each run lost and read twice (--runs K). Pure. */
export function producerCrashCharts(c: ProducerCrashResult): string[] {
  const modes = modesOf(c.runs);
  return [
    '<h2>Lost and duplicated, per mode (all runs)</h2>',
    barChart({
      title: 'producer killed with SIGKILL mid-run',
      categories: modes,
      series: [
        { name: 'lost', values: modes.map((m) => c.totals.find((t) => t.mode === m)?.lost ?? 0), color: PALETTE[3] },
        { name: 'duplicated', values: modes.map((m) => c.totals.find((t) => t.mode === m)?.duplicated ?? 0), color: PALETTE[2] },
      ],
      yLabel: 'messages',
    }),
    ...lossPerRunSections(c.runs, 'lost and duplicated', [
      { name: 'lost', of: (r) => r.lost, color: PALETTE[3] },
      { name: 'duplicated', of: (r) => r.duplicated, color: PALETTE[2] },
    ]),
    // A document read by `rmq-bench report` may lack a run's reconciliation (producer-crash's view: optional).
    ...orderSection(c.runs.map((r) => ({ label: `${r.mode} run ${r.run}`, order: r.reconciliation?.order }))),
  ];
}
