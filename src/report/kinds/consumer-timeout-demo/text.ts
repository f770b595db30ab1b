import type { ConsumerTimeoutDemoResult, ViaResult } from '../../../scenarios/consumer-timeout-plan.js';
import { renderTable } from '../../table.js';

const s = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);

function count(processed: Record<string, number>): { unique: number; total: number } {
  const values = Object.values(processed);
  return { unique: values.filter((n) => n > 0).length, total: values.reduce((a, b) => a + b, 0) };
}

/** What became of the naive consumer, in one line. Pure. */
export function naiveStory(r: ViaResult): string {
  const n = r.naive;
  const parts: string[] = [];
  parts.push(n.cancelAtMs === null ? 'never cancelled' : `cancelled at ${s(n.cancelAtMs)}`);
  if (n.lateAckAtMs !== null) parts.push(`acked ${r.slowId} late at ${s(n.lateAckAtMs)}`);
  if (n.channelClosedAtMs !== null) parts.push(`its channel closed at ${s(n.channelClosedAtMs)}${n.channelError ? ` (amqplib: ${n.channelError})` : ''}`);
  else if (n.channelError) parts.push(`channel error: ${n.channelError}`);
  else parts.push('its channel stayed open');
  return parts.join('; ');
}

function redelivery(r: ViaResult): string {
  const again = r.handling.deliveries.filter((d) => d.messageId === r.slowId)[1];
  return again ? `x-delivery-count ${again.deliveryCount}, x-acquired-count ${again.acquiredCount}` : 'not seen';
}

/** consumer-timeout-demo result → text. Pure. */
export function renderConsumerTimeoutDemo(r: ConsumerTimeoutDemoResult): string {
  const table = renderTable(
    ['set by', 'consumer', 'processed', 'twice', 'cancels', 'waiting at end', 'consumers at end', 'idle until the end, messages waiting'],
    r.runs.flatMap((x) => {
      const naive = count(x.naive.processed);
      const handling = count(x.handling.processed);
      return [
        [
          x.via,
          'naive',
          `${naive.unique}/${x.messageIds.length}`,
          naive.total - naive.unique,
          x.naive.cancelAtMs === null ? 0 : 1,
          x.naiveEnd.ready,
          x.naiveEnd.consumers,
          x.naiveIdleMs === null ? '-' : s(x.naiveIdleMs),
        ],
        [
          '',
          'rmq-bench',
          `${handling.unique}/${x.messageIds.length}`,
          handling.total - handling.unique,
          x.handling.cancels,
          x.handlingEnd.ready,
          x.handlingEnd.consumers,
          '-',
        ],
      ];
    }),
  );
  const claims = renderTable(
    ['set by', 'claim (rabbitmq-server consumer_timeouts.md, 4.3)', 'measured', 'held'],
    r.runs.flatMap((x) => x.checks.map((c, i) => [i === 0 ? x.via : '', c.claim, c.measured, c.held ? 'yes' : 'NO'])),
  );
  const stories = r.runs.flatMap((x) => [
    `${x.via}: naive: ${naiveStory(x)}.`,
    `  ${x.naiveEnd.ready} message(s) waited in ${x.naive.queue} at the end with ${x.naiveEnd.consumers} consumer(s) listed${x.naiveProcessedButWaiting > 0 ? `; ${x.naiveProcessedButWaiting} of them already processed (a second processing to come)` : ''}.`,
    `  rmq-bench: cancelled at ${s(x.handling.cancelAtMs)}, subscribed again at ${s(x.handling.resubscribedAtMs)}; ${x.slowId} came back to it (${redelivery(x)}); ${x.handling.duplicatesAbsorbed} duplicate(s) absorbed by its store.`,
  ]);
  const problems = r.runs.flatMap((x) => x.problems.map((p) => `${x.via}: ${p}`));
  return [
    `consumer-timeout-demo on RabbitMQ ${r.brokerVersion}: timeout ${r.timeoutMs} ms; ${r.count} messages per queue, message ${r.slowIndex} works ${r.slowWorkMs} ms, the others ${r.workMs} ms; watched ${s(r.observeMs)} after`,
    '',
    table,
    '',
    ...stories,
    '',
    claims,
    '',
    ...problems,
    r.ok ? "verdict: OK (the broker did what its docs say, and rmq-bench's consumer processed every message exactly once)" : 'verdict: FAILED',
  ].join('\n');
}
