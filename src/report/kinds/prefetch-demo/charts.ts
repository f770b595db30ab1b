import type { PrefetchDemoResult } from '../../../scenarios/demos/prefetch-demo.js';
import { barChart } from '../../svg.js';

/** prefetch-demo: how the work split between the fast and the slow consumer, per prefetch. Pure. */
export function prefetchCharts(p: PrefetchDemoResult): string[] {
  return [
    '<h2>Who did the work</h2>',
    barChart({
      title: 'messages processed by the fast and the slow consumer, per prefetch',
      categories: p.rows.map((r) => `prefetch ${r.prefetch}`),
      series: [
        { name: 'fast', values: p.rows.map((r) => r.fastProcessed) },
        { name: 'slow', values: p.rows.map((r) => r.slowProcessed) },
      ],
      yLabel: 'messages',
    }),
  ];
}
