import type { DurabilityDemoResult } from '../../../scenarios/demos/durability-demo.js';
import { PALETTE, barChart } from '../../svg.js';

/** durability-demo: per queue type and delivery mode, what was confirmed, what survived the restart, what the article says. Pure. */
export function durabilityCharts(d: DurabilityDemoResult): string[] {
  return [
    '<h2>What survived the restart</h2>',
    barChart({
      title: `confirmed before, found after every node was ${d.how === 'stop' ? 'stopped' : 'killed'} and started`,
      categories: d.rows.map((r) => `${r.queueType} ${r.deliveryMode}`),
      series: [
        { name: 'confirmed', values: d.rows.map((r) => r.confirmed) },
        { name: 'survived', values: d.rows.map((r) => r.survived), color: PALETTE[1] },
        { name: 'the article says', values: d.rows.map((r) => r.expected), color: PALETTE[7] },
      ],
      yLabel: 'messages',
    }),
  ];
}
