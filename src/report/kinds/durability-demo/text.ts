import type { DurabilityDemoResult } from '../../../scenarios/demos/durability-demo.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** durability-demo result → text. Pure. */
export function renderDurabilityDemo(r: DurabilityDemoResult): string {
  const table = renderTable(
    ['queue', 'delivery mode', 'confirmed', 'after the restart', 'the article says', 'verdict'],
    r.rows.map((x) => [`${x.queueType} (${x.queue})`, x.deliveryMode, x.confirmed, x.survived, x.expected, x.ok ? 'OK' : 'DIFFERENT']),
  );
  return fitLines([
    `durability-demo: every node ${r.how === 'stop' ? 'stopped (clean shutdown)' : 'killed (SIGKILL)'} and started again (the queues were ${(r.queueAgeMs / 1000).toFixed(0)} s old when the messages were published); back in ${(r.restartMs / 1000).toFixed(1)} s${r.classicNode ? `; the classic queue lived on ${r.classicNode} only` : ''}`,
    '',
    table,
    '',
    ...r.problems,
    r.ok
      ? 'verdict: OK (as the article says: the quorum queue kept both kinds; the classic queue kept only the persistent messages)'
      : 'verdict: FAILED (the broker did not do what the article says; the table shows what it did)',
  ]);
}
