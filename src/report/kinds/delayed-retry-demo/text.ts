import type { DelayedRetryDemoResult } from '../../../scenarios/demos/delayed-retry-plan.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** delayed-retry-demo result → text. Pure. */
export function renderDelayedRetryDemo(r: DelayedRetryDemoResult): string {
  const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
  const table = renderTable(
    ['return', 'how', 'kind', 'x-delivery-count', 'expected', 'measured', 'messages_delayed', 'verdict'],
    r.rounds.map((x) => {
      const delays = x.measured.map((m) => m.delayMs);
      const lo = Math.min(...delays);
      const hi = Math.max(...delays);
      return [
        `#${x.index}`,
        x.kind,
        x.delayed ? x.class : `${x.class} (not delayed)`,
        x.deliveryCount,
        s(x.expectedMs),
        delays.length === 0 ? '-' : lo === hi || delays.length === 1 ? s(lo) : `${s(lo)}–${s(hi)}`,
        x.messagesDelayedSeen === null ? '-' : x.messagesDelayedSeen,
        x.ok ? 'OK' : 'FAILED',
      ];
    }),
  );
  const definition = `{${Object.entries(r.setup.definition)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ')}}`;
  const setup = r.setup.skipped
    ? [`setup: none (--skip-setup): ${r.queue} has no delayed retry`]
    : r.via === 'policy'
      ? [
          `setup: policy ${r.setup.name} at priority ${r.setup.priority ?? '-'}: ${definition}`,
          ...(r.setup.keptFrom
            ? [
                `  it keeps ${r.setup.keptFrom}' keys: ${r.setup.keptKeys.join(', ')}, which a priority-${r.setup.priority ?? '-'} policy without them would silently drop; removed at the end`,
              ]
            : []),
        ]
      : [`setup: ${r.setup.name}: ${definition}; deleted at the end`];
  return fitLines([
    `delayed-retry-demo on RabbitMQ ${r.brokerVersion}: ${r.messages.length} message(s) in ${r.queue}, delayed-retry-type ${r.type}, min ${r.minMs} ms, max ${r.maxMs} ms`,
    ...setup,
    `expected delay = min(min × x-delivery-count (at least 1), max) for the returns the type names, none for the others; accepted: ${r.earlySlackMs} ms early to ${r.toleranceMs} ms late`,
    '',
    table,
    '',
    ...r.problems,
    `processed ${r.processed} of ${r.messages.length}`,
    r.ok ? 'verdict: OK (every redelivery waited as the formula says)' : 'verdict: FAILED',
  ]);
}
