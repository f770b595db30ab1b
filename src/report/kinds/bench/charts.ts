import type { LatencySummary } from '../../../measure/histogram.js';
import { barChart } from '../../svg.js';

/** bench: throughput, confirm latency and end-to-end latency, a bar group per mode; with several queues, each one's rates. Pure. */

type Percentiles = Pick<LatencySummary, 'p50Ms' | 'p95Ms' | 'p99Ms' | 'maxMs'>;

/** The fields of bench's result the charts read. */
interface BenchLike {
  runs: {
    label: string;
    publishRatePerSec: number | null;
    consumeRatePerSec: number | null;
    confirmLatency: Percentiles;
    e2eLatency: Percentiles;
    /** Absent in a document from before --queues. */
    perQueue?: { queue: string; leaderAtStart: string | null; publishRatePerSec: number | null; consumeRatePerSec: number | null }[];
  }[];
}

/** A bar group per queue of each run that had several: its publish and consume rates, its leader in the label. */
function perQueueCharts(b: BenchLike): string[] {
  const runs = b.runs.filter((r) => (r.perQueue?.length ?? 0) > 1);
  if (runs.length === 0) return [];
  return [
    '<h2>Throughput per queue</h2>',
    ...runs.map((r) => {
      const rows = r.perQueue ?? [];
      return barChart({
        title: `${r.label}: each queue's publish and consume rate`,
        categories: rows.map((q, i) => `${i + 1} (${q.leaderAtStart ?? '?'})`),
        series: [
          { name: 'publish /s', values: rows.map((q) => q.publishRatePerSec ?? 0) },
          { name: 'consume /s', values: rows.map((q) => q.consumeRatePerSec ?? 0) },
        ],
        yLabel: 'messages per second',
      });
    }),
  ];
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
    ...perQueueCharts(b),
    '<h2>Confirm latency per mode</h2>',
    barChart({ title: 'publish to broker ack (tx: the commit round trip)', categories: labels, series: percentiles((r) => r.confirmLatency), yLabel: 'ms' }),
    '<h2>End-to-end latency per mode</h2>',
    barChart({ title: 'publish to delivery', categories: labels, series: percentiles((r) => r.e2eLatency), yLabel: 'ms' }),
  ];
}
