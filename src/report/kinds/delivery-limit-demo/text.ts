import {
  type DeliveryLimitDemoResult,
  type DeliveryLimitRow,
  type DeliveryLimitVersionRun,
  loopsForEver,
  PROTOCOL_WORDS,
  roundsOf,
} from '../../../scenarios/demos/delivery-limit-plan.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/**
 * Each delivery's delivery count ('-' when absent), with 'r' when flagged redelivered, and an
 * AMQP 1.0 x-delivery-count annotation that says otherwise than the header in brackets: "- 1r 2r",
 * "0 0r[1] 0r[2]". Pure.
 */
export function deliveriesText(r: Pick<DeliveryLimitRow, 'deliveries'>): string {
  if (r.deliveries.length === 0) return '(none)';
  return r.deliveries
    .map((d) => {
      const annotation = d.from === 'header' && d.annotation != null && d.annotation !== d.deliveryCount ? `[${d.annotation}]` : '';
      return `${d.deliveryCount ?? '-'}${d.redelivered ? 'r' : ''}${annotation}`;
    })
    .join(' ');
}

/** The fate in words: dead-lettered with its reason. Pure. */
function fateText(r: Pick<DeliveryLimitRow, 'fate' | 'deathReason'>): string {
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
  // Before 4.3 the broker closes the channel instead of cancelling the consumer.
  const ending = (r.rulesEra ?? '4.3') === '4.3' ? 'basic.cancel' : "closed channel (the broker's PRECONDITION_FAILED)";
  return [
    `consumer-timeout rows: basic.consume (prefetch 1, ${timeout}), never acked; a new consumer after each ${ending}${cancel}; at most ${rounds} ${rounds === 1 ? 'round' : 'rounds'}.`,
    "consumer-timeout rows have no loop rate: a timeout loop goes round at the timeout's pace, one delivery per timeout.",
  ];
}

/** A row's measured outcome in one cell: "- 1r 2r, dropped". Pure. */
const outcomeCell = (x: DeliveryLimitRow): string => `${deliveriesText(x)}, ${fateText(x)}${x.agrees ? '' : ' (NOT as documented)'}`;

/** What differs between the versions for one action and DLX: the fate or the counts; undefined when they agree. Pure. */
function changeLine(rows: readonly (DeliveryLimitRow | undefined)[], versions: readonly DeliveryLimitVersionRun[]): string | undefined {
  const present = rows.filter((x): x is DeliveryLimitRow => x !== undefined);
  if (present.length < 2) return undefined;
  const key = (x: DeliveryLimitRow): string => `${fateText(x)}|${deliveriesText(x)}`;
  if (new Set(present.map(key)).size === 1) return undefined;
  const parts = rows.map((x, i) =>
    x ? `${versions[i]!.brokerVersion} ${fateText(x)} after ${x.deliveries.length} deliveries (${deliveriesText(x)})` : undefined,
  );
  return `${rowName(present[0]!)}: ${parts.filter((p) => p !== undefined).join('; ')}`;
}

/** Several clusters side by side: a version a column, then what changed between them and what disagreed with each one's rules. Pure. */
function renderDeliveryLimitVersions(r: DeliveryLimitDemoResult, versions: readonly DeliveryLimitVersionRun[]): string {
  const keys = versions[0]!.rows.map((x) => ({ action: x.action, dlx: x.dlx }));
  for (const v of versions.slice(1))
    for (const x of v.rows) if (!keys.some((k) => k.action === x.action && k.dlx === x.dlx)) keys.push({ action: x.action, dlx: x.dlx });
  const find = (v: DeliveryLimitVersionRun, k: { action: string; dlx: boolean }): DeliveryLimitRow | undefined =>
    v.rows.find((x) => x.action === k.action && x.dlx === k.dlx);
  const table = renderTable(
    ['action', 'DLX', ...versions.map((v) => `RabbitMQ ${v.brokerVersion} (${v.cluster}): delivery counts, fate`)],
    keys.map((k) => [
      k.action,
      k.dlx ? 'yes' : 'no',
      ...versions.map((v) => {
        const x = find(v, k);
        return x ? outcomeCell(x) : '(not run)';
      }),
    ]),
  );
  const changes = keys
    .map((k) =>
      changeLine(
        versions.map((v) => find(v, k)),
        versions,
      ),
    )
    .filter((l): l is string => l !== undefined);
  const disagreements = versions.flatMap((v) =>
    v.rows
      .filter((x) => !x.agrees)
      .map((x) => `RabbitMQ ${v.brokerVersion}: ${rowName(x)}: not as its rules (${v.rulesEra}) say: ${x.disagreements.join('; ')}`),
  );
  return [
    `delivery-limit-demo on ${versions.map((v) => `RabbitMQ ${v.brokerVersion}`).join(' and ')}: quorum queues with x-delivery-limit ${r.deliveryLimit}; one message each, at most ${r.rounds} deliveries`,
    '',
    table,
    '',
    "delivery counts per delivery: '-' absent, 'r' flagged redelivered, [n] an AMQP 1.0 x-delivery-count annotation that says otherwise than the header.",
    '',
    ...(changes.length > 0 ? ['what changed between the versions:', ...changes.map((l) => `  ${l}`)] : ['every action did the same on every version.']),
    '',
    'the rules each version is judged by:',
    ...versions.map(
      (v) =>
        `  RabbitMQ ${v.brokerVersion}: ${v.rulesEra}'s (${v.rulesEra === '4.3' ? 'the delivery limit counts failed deliveries only' : 'the delivery limit counts every return'})`,
    ),
    ...(disagreements.length > 0 ? ['', ...disagreements] : []),
    '',
    r.ok ? `verdict: OK (every action did what each version's rules document)` : 'verdict: FAILED (a broker disagrees with a documented rule)',
  ].join('\n');
}

/** delivery-limit-demo result → text: one table, the documented rule beside each measured row, disagreements called out. Pure. */
export function renderDeliveryLimitDemo(r: DeliveryLimitDemoResult): string {
  if (r.versions && r.versions.length > 1) return renderDeliveryLimitVersions(r, r.versions);
  const table = renderTable(
    ['action', 'DLX', 'delivery count per delivery', 'count read from', 'fate', 'as documented', `rule (RabbitMQ ${r.rulesEra ?? '4.3'})`],
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
  // A document written before rows had a protocol has no legend to show.
  const legends = [...new Set(r.rows.map((x) => (Object.hasOwn(PROTOCOL_WORDS, x.protocol ?? '') ? PROTOCOL_WORDS[x.protocol].legend : null)))].filter(
    (x) => x !== null,
  );
  const loops = loopLines(r);
  return fitLines([
    `delivery-limit-demo on RabbitMQ ${r.brokerVersion}: quorum queues with x-delivery-limit ${r.deliveryLimit}; one message each, at most ${r.rounds} deliveries`,
    '',
    table,
    '',
    "delivery count per delivery: '-' absent, 'r' flagged redelivered.",
    ...legends,
    ...timeoutLines(r),
    ...(disagreements.length > 0 ? ['', ...disagreements] : []),
    ...(loops.length > 0 ? [...loops, ''] : []),
    r.ok ? `verdict: OK (every action did what RabbitMQ ${r.rulesEra ?? '4.3'} documents)` : 'verdict: FAILED (the broker disagrees with a documented rule)',
  ]);
}
