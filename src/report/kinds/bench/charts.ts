import type { LatencySummary } from '../../../measure/histogram.js';
import { barChart } from '../../svg.js';

/** bench: throughput, confirm latency and end-to-end latency, a bar group per mode. Pure. */

type Percentiles = Pick<LatencySummary, 'p50Ms' | 'p95Ms' | 'p99Ms' | 'maxMs'>;

/** The fields of bench's result the charts read. */
export interface BenchLike {
  runs: {
    label: string;
    publishRatePerSec: number | null;
    consumeRatePerSec: number | null;
    confirmLatency: Percentiles;
    e2eLatency: Percentiles;
  }[];
}

export function benchCharts(b: BenchLike): string[] {
  const labels = b.runs.map((r) => r.label);
  const pct = (f: (r: BenchLike['runs'][number]) => number | null): number[] => b.runs.map((r) => f(r) ?? 0);
  // A missing figure (no confirms, nothing consumed) is a zero bar.
  const percentiles = (of: (r: BenchLike['runs'][number]) => Percentiles) => [
    { name: 'p50', values: pct((r) => of(r).p50Ms) },
    { name: 'p95', values: pct((r) => of(r).p95Ms) },
    { name: 'p99', values: pct((r) => of(r).p99Ms) },
    { name: 'max', values: pct((r) => of(r).maxMs) },
  ];
  return [
    '<h2>Throughput per mode</h2>',
    barChart({
      title: 'publish and consume rate',
      categories: labels,
      series: [
        { name: 'publish /s', values: pct((r) => r.publishRatePerSec) },
        { name: 'consume /s', values: pct((r) => r.consumeRatePerSec) },
      ],
      yLabel: 'messages per second',
    }),
    '<h2>Confirm latency per mode</h2>',
    barChart({ title: 'publish to broker ack (tx: the commit round trip)', categories: labels, series: percentiles((r) => r.confirmLatency), yLabel: 'ms' }),
    '<h2>End-to-end latency per mode</h2>',
    barChart({ title: 'publish to delivery', categories: labels, series: percentiles((r) => r.e2eLatency), yLabel: 'ms' }),
  ];
}
