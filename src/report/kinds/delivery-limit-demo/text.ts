import { loopsForEver, roundsOf, type DeliveryLimitDemoResult, type DeliveryLimitRow } from '../../../scenarios/delivery-limit-plan.js';
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

const count = (n: number): string => n.toLocaleString('en-US');

/**
 * The rows whose message loops for ever, with how fast it went round in the loop window: a small
 * table under the main one, said in words. Nothing when no row was measured (and one line when
 * --loop-window 0 left a looping row unmeasured). Pure.
 */
export function loopLines(r: DeliveryLimitDemoResult): string[] {
  const looping = r.rows.filter((x) => x.loop);
  if (looping.length === 0) {
    return r.loopWindowMs === 0 && r.rows.some(loopsForEver) ? ['', 'how fast a looping message goes round: not measured (--loop-window 0).'] : [];
  }
  return [
    '',
    `Looping for ever: with x-delivery-limit ${r.deliveryLimit} set, these actions never raise the delivery count, so the`,
    'message never reaches the limit: it goes round for ever, at this rate. After the rounds, a push',
    'consumer doing the same at once on each delivery (0-9-1: basic.consume, prefetch 1; AMQP 1.0: a',
    'receiver link, credit 1) counted its deliveries:',
    '',
    renderTable(
      ['action', 'DLX', 'deliveries', 'in', 'deliveries/s'],
      looping.map((x) => {
        const loop = x.loop!;
        return [x.action, x.dlx ? 'yes' : 'no', count(loop.deliveries), `${(loop.windowMs / 1000).toFixed(2)} s`, count(loop.perSec)];
      }),
    ),
  ];
}

/**
 * The consumer-timeout rows' legend: how their consumer ran and when the broker cancelled it, and
 * that they have no loop rate. Nothing without such a row. Pure.
 */
export function timeoutLines(r: DeliveryLimitDemoResult): string[] {
  const rows = r.rows.filter((x) => x.action === 'consumer-timeout');
  if (rows.length === 0) return [];
  const timeout = r.consumerTimeoutMs === undefined ? 'x-consumer-timeout' : `x-consumer-timeout ${count(r.consumerTimeoutMs)} ms`;
  const delays = rows.flatMap((x) => x.deliveries.map((d) => d.cancelMs)).filter((ms): ms is number => typeof ms === 'number');
  const cancel =
    delays.length === 0
      ? ''
      : ` (it came ${Math.min(...delays)}${Math.max(...delays) > Math.min(...delays) ? ` to ${Math.max(...delays)}` : ''} ms after the delivery)`;
  const rounds = roundsOf('consumer-timeout', r);
  return [
    `consumer-timeout rows: basic.consume (prefetch 1, ${timeout}), never acked; a new consumer after each basic.cancel${cancel}; at most ${rounds} ${rounds === 1 ? 'round' : 'rounds'}.`,
    "consumer-timeout rows have no loop rate: a timeout loop goes round at the timeout's pace, one delivery per timeout.",
  ];
}

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
  const loops = loopLines(r);
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
    ...timeoutLines(r),
    ...(disagreements.length > 0 ? ['', ...disagreements] : []),
    ...(loops.length > 0 ? [...loops, ''] : []),
    r.ok ? 'verdict: OK (every action did what RabbitMQ 4.3 documents)' : 'verdict: FAILED (the broker disagrees with a documented rule)',
  ].join('\n');
}
