import type { DelayedRetryDemoResult } from '../../../scenarios/demos/delayed-retry-plan.js';
import { PALETTE, barChart, dotTimeline } from '../../svg.js';
import { lanesByMessage } from '../../chart-parts.js';

/** delayed-retry-demo: each delivery at its measured time, and the slowest measured delay against the formula, per return. Pure. */
export function delayedRetryCharts(r: DelayedRetryDemoResult): string[] {
  return [
    '<h2>Delivery timeline</h2>',
    dotTimeline({
      title: `each delivery at its measured time (delayed-retry-type ${r.type}, min ${r.minMs} ms, max ${r.maxMs} ms)`,
      lanes: lanesByMessage(r.messages, r.deliveries, (d) => ({
        x: d.atMs / 1000,
        label: `delivery ${d.round + 1} at ${(d.atMs / 1000).toFixed(2)} s${d.round > 0 ? ` after return #${d.round} (${r.rounds[d.round - 1]?.kind ?? '?'})` : ''}`,
        color: PALETTE[d.round % PALETTE.length],
      })),
      xLabel: 'seconds since the publish',
    }),
    '<h2>Measured delay against the formula</h2>',
    barChart({
      title: 'expected min(min × x-delivery-count, max) and measured (slowest message), per return',
      categories: r.rounds.map((x) => `#${x.index} ${x.kind}`),
      series: [
        { name: 'expected ms', values: r.rounds.map((x) => x.expectedMs) },
        { name: 'measured ms', values: r.rounds.map((x) => Math.max(0, ...x.measured.map((m) => m.delayMs))) },
      ],
      yLabel: 'ms',
    }),
  ];
}
