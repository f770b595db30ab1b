import type { ConsumerTimeoutDemoResult } from '../../../scenarios/demos/consumer-timeout-plan.js';
import { PALETTE, dotTimeline, lineChart } from '../../svg.js';

/** consumer-timeout-demo: each consumer's deliveries and what the broker did to it; the waiting messages per queue. Pure. */
export function consumerTimeoutCharts(r: ConsumerTimeoutDemoResult): string[] {
  const at = (ms: number | null): number | null => (ms === null ? null : ms / 1000);
  // The broker's (and the client's) moments on a lane, in red; a moment that did not happen is not drawn.
  const events = (list: [number | null, string][]) =>
    list.filter((e): e is [number, string] => e[0] !== null).map(([t, label]) => ({ x: t, label: `${label} at ${t.toFixed(2)} s`, color: PALETTE[3] }));
  const lanes = r.runs.flatMap((x) => {
    const naive = [
      ...x.naive.deliveries.map((d) => ({
        x: d.atMs / 1000,
        label: `${d.messageId} delivered${d.redelivered ? ' again' : ''} at ${(d.atMs / 1000).toFixed(2)} s`,
        color: d.messageId === x.slowId ? PALETTE[2] : PALETTE[0],
      })),
      ...events([
        [at(x.naive.cancelAtMs), 'basic.cancel from the broker'],
        [at(x.naive.lateAckAtMs), `late ack of ${x.slowId}`],
        [at(x.naive.channelClosedAtMs), `channel closed${x.naive.channelError ? `: ${x.naive.channelError}` : ''}`],
      ]),
    ];
    const handling = [
      ...x.handling.deliveries.map((d) => ({
        x: d.atMs / 1000,
        label: `${d.messageId} done at ${(d.atMs / 1000).toFixed(2)} s (x-delivery-count ${d.deliveryCount}, x-acquired-count ${d.acquiredCount})`,
        color: d.messageId === x.slowId ? PALETTE[2] : PALETTE[1],
      })),
      ...events([
        [at(x.handling.cancelAtMs), 'basic.cancel from the broker'],
        [at(x.handling.resubscribedAtMs), 'subscribed again'],
      ]),
    ];
    return [
      { name: `${x.via}: naive`, dots: naive },
      { name: `${x.via}: rmq-bench`, dots: handling },
    ];
  });
  const queues = r.runs.flatMap((x) => [
    { name: `${x.via} naive`, queue: x.naive.queue },
    { name: `${x.via} rmq-bench`, queue: x.handling.queue },
  ]);
  return [
    "<h2>Deliveries and the broker's cancels</h2>",
    dotTimeline({
      title: `each consumer's deliveries (the slow message in amber) and the cancel, late ack and channel close (red); timeout ${r.timeoutMs} ms`,
      lanes,
      xLabel: 'seconds since the consumers started',
      laneChars: Math.max(...lanes.map((l) => l.name.length)),
    }),
    '<h2>Messages waiting</h2>',
    lineChart({
      title: 'ready messages in each queue (a passive declare every 250 ms)',
      series: queues.map((q, i) => ({
        name: q.name,
        points: r.samples.map((p) => [p.tMs / 1000, p.ready[q.queue] ?? 0] as [number, number]),
        color: PALETTE[i % PALETTE.length],
      })),
      markers: r.runs.filter((x) => x.naive.cancelAtMs !== null).map((x) => ({ x: x.naive.cancelAtMs! / 1000, label: `${x.via} cancel` })),
      xLabel: 'seconds since the consumers started',
      yLabel: 'ready',
    }),
  ];
}
