import type { ConsumerResult, DeliveryRecord } from '../../../client/consumer-result.js';
import { type FailureAction, type FailureAction10, failureDescription } from '../../../client/consumer-failures.js';
import { DEFAULT_PROTOCOL, type Protocol } from '../../../client/protocol.js';
import { formatMs } from '../../../util/duration.js';
import { renderFields } from '../../table.js';

/** Printers for the consumer: pure. */

/** "delivery #3 of r1-12 (x-delivery-count 2, x-acquired-count 3, redelivered) → nack-requeue" */
export function renderDelivery(d: DeliveryRecord): string {
  const n = (d.deliveryCount ?? 0) + 1;
  const facts = [
    d.deliveryCount === undefined ? 'first delivery' : `x-delivery-count ${d.deliveryCount}`,
    ...(d.acquiredCount === undefined ? [] : [`x-acquired-count ${d.acquiredCount}`]),
    ...(d.redelivered ? ['redelivered'] : []),
    ...(d.death ? [`x-death: ${d.death}`] : []),
  ];
  return `delivery #${n} of ${d.messageId ?? '(no message id)'} (${facts.join(', ')}) → ${d.outcome}`;
}

/** failure: the --on-failure action, described in `protocol`'s terms. */
export function renderConsumer(r: ConsumerResult, failure: FailureAction | FailureAction10 | undefined, protocol: Protocol = DEFAULT_PROTOCOL): string {
  const rows: [string, string][] = [
    ['queue', `${r.queue} (${r.autoAck ? 'autoack' : `manual ack, prefetch ${r.prefetch === 0 ? 'unlimited' : r.prefetch}`})`],
    ['received', String(r.received)],
    ['processed', String(r.processed)],
    ['duplicates skipped', String(r.duplicatesSkipped)],
    ['acked', r.autoAck ? '- (autoack)' : String(r.acked)],
    ['nacked', String(r.nacked)],
    ['rejected', String(r.rejected)],
    ['simulated crashes', String(r.crashes)],
    ['reconnects', String(r.reconnects)],
    ...(r.cancels > 0 ? ([['cancelled by the broker', `${r.cancels} (subscribed again each time)`]] as [string, string][]) : []),
    ...((r.channelsClosed ?? 0) > 0
      ? ([['channel closed by the broker', `${r.channelsClosed} (a consumer timeout before 4.3; subscribed again each time)`]] as [string, string][])
      : []),
    [
      'by outcome',
      Object.entries(r.byOutcome)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none',
    ],
    ['duration', formatMs(r.durationMs)],
    ['stopped', r.stoppedBecause === 'gave-up' ? `gave up: ${r.gaveUp ?? ''}` : r.stoppedBecause],
  ];
  if (failure) rows.splice(1, 0, ['on failure', `${failure}: ${failureDescription(protocol, failure)}`]);
  return renderFields(rows);
}
