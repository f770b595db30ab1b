import type { ConsumerCrashResult } from '../../../scenarios/crashes/consumer-crash.js';
import { PALETTE, barChart } from '../../svg.js';
import { lossPerRunSections, modesOf } from '../../chart-parts.js';

/** consumer-crash: per mode, what the killed consumer lost and processed twice (all runs), then each mode's runs (--runs K). Pure. */
export function consumerCrashCharts(c: ConsumerCrashResult): string[] {
  const modes = modesOf(c.runs);
  const sum = (mode: string, f: (r: ConsumerCrashResult['runs'][number]) => number): number =>
    c.runs.filter((r) => r.mode === mode).reduce((a, r) => a + f(r), 0);
  return [
    '<h2>Lost and processed twice, per mode (all runs)</h2>',
    barChart({
      title: 'consumer killed mid-run',
      categories: modes,
      series: [
        { name: 'lost', values: modes.map((m) => sum(m, (r) => r.lost)), color: PALETTE[3] },
        { name: 'processed twice', values: modes.map((m) => sum(m, (r) => r.processedTwice)), color: PALETTE[2] },
        { name: 'duplicates skipped', values: modes.map((m) => sum(m, (r) => r.duplicatesSkipped)), color: PALETTE[1] },
      ],
      yLabel: 'messages',
    }),
    ...lossPerRunSections(c.runs, 'lost and processed twice', [
      { name: 'lost', of: (r) => r.lost, color: PALETTE[3] },
      { name: 'processed twice', of: (r) => r.processedTwice, color: PALETTE[2] },
    ]),
  ];
}
