import { FAILURE_DESCRIPTIONS } from '../amqp/consumer-failures.js';
import type { ConsumerResult, DeliveryRecord } from '../amqp/consumer-result.js';
import type { FailureAction } from '../amqp/failure-actions.js';
import type { ConsumerCrashResult, CrashMode, CrashRun } from '../scenarios/consumer-crash.js';
import type { PrefetchDemoResult } from '../scenarios/prefetch-demo.js';
import { formatMs } from '../util/duration.js';
import { renderTable } from './table.js';

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

export function renderConsumer(r: ConsumerResult, failure: FailureAction | undefined): string {
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
    [
      'by outcome',
      Object.entries(r.byOutcome)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none',
    ],
    ['duration', formatMs(r.durationMs)],
    ['stopped', r.stoppedBecause === 'gave-up' ? `gave up: ${r.gaveUp ?? ''}` : r.stoppedBecause],
  ];
  if (failure) rows.splice(1, 0, ['on failure', `${failure}: ${FAILURE_DESCRIPTIONS[failure]}`]);
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

const CRASH_LABEL: Record<CrashMode, string> = { autoack: 'autoack', manual: 'manual ack', idempotent: 'manual + idempotent' };

export function renderConsumerCrash(c: ConsumerCrashResult): string {
  const o = c.options;
  const modes = o.modes;
  const sum = (m: CrashMode, f: (r: CrashRun) => number): number => c.runs.filter((r) => r.mode === m).reduce((a, r) => a + f(r), 0);
  const rows: [string, ...(string | number)[]][] = [
    ['runs', ...modes.map((m) => c.runs.filter((r) => r.mode === m).length)],
    ['confirmed', ...modes.map((m) => sum(m, (r) => r.confirmed))],
    ['processed before the kill', ...modes.map((m) => sum(m, (r) => r.processedBeforeKill))],
    ['processed (distinct)', ...modes.map((m) => sum(m, (r) => r.processed))],
    ['lost', ...modes.map((m) => sum(m, (r) => r.lost))],
    ['processed twice', ...modes.map((m) => sum(m, (r) => r.processedTwice))],
    ['duplicates skipped', ...modes.map((m) => sum(m, (r) => r.duplicatesSkipped))],
  ];
  const head = `consumer-crash: ${o.count} messages per run, prefetch ${o.prefetch}, ${o.workMs} ms of work each, a multiple-ack every ${o.ackEvery}; the consumer is SIGKILLed after ${Math.round(o.killAt * 100)}% and a fresh one finishes`;
  const verdicts = modes.map((m) => {
    const lost = sum(m, (r) => r.lost);
    const twice = sum(m, (r) => r.processedTwice);
    const skipped = sum(m, (r) => r.duplicatesSkipped);
    if (m === 'autoack') return `autoack: ${lost} messages lost: the broker had forgotten them when it sent them, and they died with the consumer.`;
    if (m === 'manual') return `manual ack: ${lost} lost; ${twice} processed twice (acked after the work: the kill fell between work and ack).`;
    return `manual + idempotent: ${lost} lost; ${twice} processed twice; ${skipped} redeliveries recognised and skipped.`;
  });
  return [
    head,
    '',
    renderTable(['', ...modes.map((m) => CRASH_LABEL[m])], rows),
    '',
    ...verdicts,
    c.ok ? 'verdict: OK' : `verdict: FAILED: ${c.reasons.join('; ')}`,
  ].join('\n');
}

export function renderPrefetchDemo(r: PrefetchDemoResult): string {
  const o = r.options;
  const head = `prefetch-demo: ${o.count} messages, a slow consumer (${o.slowWorkMs} ms a message, subscribed first) and a fast one (${o.fastWorkMs} ms)`;
  const table = renderTable(
    ['prefetch', 'fast processed', 'slow processed', 'slow share', 'total time', 'peak held fast', 'peak held slow'],
    r.rows.map((x) => [
      x.prefetch === 0 ? '0 (unlimited)' : String(x.prefetch),
      x.fastProcessed,
      x.slowProcessed,
      `${Math.round((100 * x.slowProcessed) / Math.max(1, x.fastProcessed + x.slowProcessed))} %`,
      formatMs(x.totalMs),
      x.fastMaxHeld,
      x.slowMaxHeld,
    ]),
  );
  const notes = [
    'prefetch 1: fair, each consumer takes one at a time, but a round trip per message.',
    'prefetch 0: the broker pushes everything to whoever subscribed first; the slow consumer hoards the queue while the fast one idles.',
    'tens (10-50) keep both busy without hoarding: the usual advice.',
  ];
  return [head, '', table, '', ...notes].join('\n');
}
