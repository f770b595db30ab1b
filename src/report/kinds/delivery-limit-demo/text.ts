import type { DeliveryLimitDemoResult, DeliveryLimitRow } from '../../../scenarios/delivery-limit-plan.js';
import { renderTable } from '../../table.js';

/** Each delivery's delivery count ('-' when absent), with 'r' when flagged redelivered: "- 1r 2r". Pure. */
export function deliveriesText(r: Pick<DeliveryLimitRow, 'deliveries'>): string {
  if (r.deliveries.length === 0) return '(none)';
  return r.deliveries.map((d) => `${d.deliveryCount ?? '-'}${d.redelivered ? 'r' : ''}`).join(' ');
}

/** The fate in words: dead-lettered with its reason. Pure. */
export function fateText(r: Pick<DeliveryLimitRow, 'fate' | 'deathReason'>): string {
  return r.fate === 'dead-lettered' ? `dead-lettered (${r.deathReason ?? 'no reason'})` : r.fate;
}

/** A row's action and DLX in words, for the disagreements. Pure. */
const rowName = (x: Pick<DeliveryLimitRow, 'action' | 'dlx'>): string => `${x.action} ${x.dlx ? 'with' : 'without'} a DLX`;

/** delivery-limit-demo result → text: one table, the documented rule beside each measured row, disagreements called out. Pure. */
export function renderDeliveryLimitDemo(r: DeliveryLimitDemoResult): string {
  const table = renderTable(
    ['action', 'DLX', 'delivery count per delivery', 'count read from', 'fate', 'as documented', 'rule (RabbitMQ 4.3)'],
    r.rows.map((x) => [
      x.action,
      x.dlx ? 'yes' : 'no',
      deliveriesText(x),
      x.countFrom ?? 'x-delivery-count header',
      fateText(x),
      x.agrees ? 'yes' : 'NO',
      x.rule,
    ]),
  );
  const disagreements = r.rows.filter((x) => !x.agrees).map((x) => `${rowName(x)}: not as documented: ${x.disagreements.join('; ')}`);
  const has10 = r.rows.some((x) => x.protocol === 'amqp10');
  return [
    `delivery-limit-demo on RabbitMQ ${r.brokerVersion}: quorum queues with x-delivery-limit ${r.deliveryLimit}; one message each, at most ${r.rounds} deliveries`,
    '',
    table,
    '',
    "delivery count per delivery: '-' absent, 'r' flagged redelivered.",
    ...(has10
      ? [
          "amqp10 rows: a receiver link on /queues/<queue> (credit 1, settle mode first); 'r' is the header's first-acquirer false; the x-delivery-count annotation, when sent, is checked against the header.",
        ]
      : []),
    ...(disagreements.length > 0 ? ['', ...disagreements] : []),
    r.ok ? 'verdict: OK (every action did what RabbitMQ 4.3 documents)' : 'verdict: FAILED (the broker disagrees with a documented rule)',
  ].join('\n');
}
