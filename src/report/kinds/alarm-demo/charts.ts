import type { AlarmDemoResult } from '../../../scenarios/demos/alarm-plan.js';
import { type Band, type Marker, PALETTE, lineChart } from '../../svg.js';
import { countsTable } from '../../chart-parts.js';

/** alarm-demo: what each publisher had sent, and the consumer's deliveries, over time; the alarm as a band, the blocks as markers. Pure. */
export function alarmCharts(r: AlarmDemoResult): string[] {
  const a = r.timeline;
  const bands: Band[] = a.clearAtMs === null ? [] : [{ from: a.raiseAtMs / 1000, to: a.clearAtMs / 1000, label: `${r.alarm} alarm on ${r.node}` }];
  // One marker per moment, not per publisher: the blocks (and the unblocks) come within a fraction of a second of each other.
  const first = (xs: (number | null)[]): number | null => xs.reduce<number | null>((m, x) => (x === null ? m : m === null ? x : Math.min(m, x)), null);
  const blockedAt = first(r.publishers.map((p) => p.blockedAtMs));
  const unblockedAt = first(r.publishers.map((p) => p.unblockedAtMs));
  const markers: Marker[] = [
    ...(blockedAt === null ? [] : [{ x: blockedAt / 1000, label: 'publishers blocked' }]),
    ...r.publishers.filter((p) => p.gaveUpAtMs !== null).map((p) => ({ x: p.gaveUpAtMs! / 1000, label: `${p.role} gave up`, color: PALETTE[3] })),
    ...(unblockedAt === null ? [] : [{ x: unblockedAt / 1000, label: 'unblocked', color: PALETTE[1] }]),
  ];
  const series = r.publishers.map((p, i) => ({
    name: `${p.role} sent`,
    points: r.samples.filter((x) => x.sent[p.role] !== undefined).map((x) => [x.tMs / 1000, x.sent[p.role] ?? 0] as [number, number]),
    color: PALETTE[i % PALETTE.length],
  }));
  series.push({ name: 'delivered', points: r.samples.map((x) => [x.tMs / 1000, x.delivered] as [number, number]), color: '#444' });
  return [
    '<h2>Sent and delivered</h2>',
    lineChart({
      title: `messages each publisher reports sent, and the consumer's deliveries (all publishers and the backlog); the alarm shaded, from the limit being set to the clear`,
      series,
      markers,
      bands,
      xLabel: 'seconds since the publishers started',
      yLabel: 'messages',
    }),
    '<h2>What each publisher reported, and what arrived</h2>',
    countsTable(
      ['publisher', 'node', 'sent', 'confirmed', 'indeterminate', 'arrived', 'lost'],
      r.publishers.map((p) => [p.role, p.node, p.sent, p.confirmed ?? '-', p.indeterminate ?? '-', p.arrived, p.missing]),
    ),
  ];
}
