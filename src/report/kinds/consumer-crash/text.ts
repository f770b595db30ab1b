import type { ConsumerCrashResult, CrashMode, CrashRun } from '../../../scenarios/crashes/consumer-crash.js';
import { orderSummary } from '../../order-text.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** consumer-crash result → text. Pure. */

const CRASH_LABEL: Record<CrashMode, string> = { autoack: 'autoack', manual: 'manual ack', idempotent: 'manual + idempotent' };

/** One line for all runs when they say the same of their order (replayed from counts: not observed), else a line per run. */
function orderLine(runs: readonly CrashRun[]): string[] {
  const lines = runs.map((r) => orderSummary(r.order));
  if (lines.length === 0) return [];
  if (lines.every((l) => l === lines[0])) return [`order of the reads: ${lines[0]}`];
  return runs.map((r, i) => `order of the reads, ${r.mode} run ${r.run}: ${lines[i]}`);
}

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
  return fitLines([
    head,
    '',
    renderTable(['', ...modes.map((m) => CRASH_LABEL[m])], rows),
    '',
    ...verdicts,
    ...orderLine(c.runs),
    c.ok ? 'verdict: OK' : `verdict: FAILED: ${c.reasons.join('; ')}`,
  ]);
}
