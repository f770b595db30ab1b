import type { DlqDemoResult } from '../scenarios/dlq-demo.js';
import type { RetryDemoResult } from '../scenarios/retry-demo.js';
import type { DelayedRetryDemoResult } from '../scenarios/delayed-retry-plan.js';
import type { RetryLadderResult } from '../scenarios/retry-ladder.js';
import type { DeadLetterRow, ReplayResult } from '../scenarios/dlq-tools.js';
import { renderTable } from './table.js';

/** dlq-demo result → text. Pure. */
export function renderDlqDemo(r: DlqDemoResult): string {
  const table = renderTable(
    ['reason', 'published', 'deliveries each', 'in demo.dlq', 'x-first-death-reason', 'verdict'],
    r.results.map((x) => {
      const counts = [...new Set(Object.values(x.deliveriesPerMessage))];
      const reasons = [...new Set(x.dead.map((d) => d.firstDeathReason ?? 'none'))];
      return [
        x.reason,
        x.published,
        counts.length === 0 ? '- (no consumer)' : counts.join('/'),
        `${x.dead.length} of ${x.expectedInDlq} expected`,
        reasons.join(', ') || '-',
        x.ok ? 'OK' : 'FAILED',
      ];
    }),
  );
  const how = r.results.map((x) => `${x.reason}: ${x.how}`);
  const problems = r.results.flatMap((x) => x.problems.map((p) => `${x.reason}: ${p}`));
  return [
    table,
    '',
    ...how,
    ...(problems.length > 0 ? ['', ...problems] : []),
    '',
    r.ok ? 'verdict: OK (the broker dead-lettered every message as claimed)' : 'verdict: FAILED',
  ].join('\n');
}

export function renderRetryDemo(r: RetryDemoResult): string {
  const table = renderTable(
    ['attempt', 'at', 'gap', 'outcome', 'x-death'],
    r.attempts.map((a) => [
      a.attempt,
      `${(a.atMs / 1000).toFixed(2)} s`,
      a.gapMs === null ? '-' : `${(a.gapMs / 1000).toFixed(2)} s`,
      a.outcome,
      a.death ?? '-',
    ]),
  );
  return [
    `retry-demo: ${r.messageId} through demo.orders → demo.dlx → demo.retry (TTL ${r.ttlMs} ms) → demo.orders`,
    '',
    table,
    '',
    ...r.problems,
    r.ok ? `verdict: OK (each retry waited the TTL; processed once, at the end)` : 'verdict: FAILED',
  ].join('\n');
}

export function renderDlqInspect(r: { queue: string; rows: DeadLetterRow[]; total: number }): string {
  if (r.rows.length === 0) return `${r.queue} is empty`;
  const table = renderTable(
    ['message id', 'reason', 'from queue', 'count', 'first death', 'last death', 'bytes'],
    r.rows.map((x) => [x.messageId ?? '-', x.reason ?? '-', x.sourceQueue ?? '-', x.count ?? '-', x.firstDeathAt ?? '-', x.lastDeathAt ?? '-', x.bytes]),
  );
  return `${r.queue}: ${r.rows.length} of ${r.total} messages shown (they stay in the queue)\n${table}`;
}

export function renderDlqReplay(r: ReplayResult): string {
  return `replayed ${r.replayed} messages from ${r.queue} to ${r.to} (each removed only after its confirm); ${r.skipped} skipped by the filter; ${r.leftInQueue} left in ${r.queue}`;
}

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
  const setup = r.setup.skipped
    ? `setup: none (--skip-setup): ${r.queue} has no delayed retry`
    : r.via === 'policy'
      ? `setup: policy ${r.setup.name} at priority ${r.setup.priority ?? '-'}: ${JSON.stringify(r.setup.definition)}` +
        (r.setup.keptFrom
          ? `\n  it keeps ${r.setup.keptFrom}' keys: ${r.setup.keptKeys.join(', ')}, which a priority-${r.setup.priority ?? '-'} policy without them would silently drop; removed at the end`
          : '')
      : `setup: ${r.setup.name}: ${JSON.stringify(r.setup.definition)}; deleted at the end`;
  return [
    `delayed-retry-demo on RabbitMQ ${r.brokerVersion}: ${r.messages.length} message(s) in ${r.queue}, delayed-retry-type ${r.type}, min ${r.minMs} ms, max ${r.maxMs} ms`,
    setup,
    `expected delay = min(min × x-delivery-count (at least 1), max) for the returns the type names, none for the others; accepted: ${r.earlySlackMs} ms early to ${r.toleranceMs} ms late`,
    '',
    table,
    '',
    ...r.problems,
    `processed ${r.processed} of ${r.messages.length}`,
    r.ok ? 'verdict: OK (every redelivery waited as the formula says)' : 'verdict: FAILED',
  ].join('\n');
}

/** retry-demo --backoff result → text. Pure. */
export function renderRetryLadder(r: RetryLadderResult): string {
  const s = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);
  const table = renderTable(
    ['message', 'attempt', 'at', 'gap', 'rung TTL', 'key', 'x-death earlier', 'outcome'],
    r.attempts.map((a) => [a.messageId, a.attempt, s(a.atMs), s(a.gapMs), s(a.expectedGapMs), a.routingKey, a.earlierAttempts, a.outcome]),
  );
  const ladder = r.rungs.map((x) => `${x.queue} ${s(x.ttlMs)}`).join(' → ');
  return [
    `retry-demo --backoff: ${r.workQueue} → ${ladder} → demo.dlq${r.timeScale === 1 ? '' : ` (TTLs × ${r.timeScale})`}`,
    '',
    table,
    '',
    `${r.good.messageId}: failed ${r.good.failures} time(s), processed ${r.good.processedTimes} time(s)`,
    `${r.poison.messageId}: ${r.poison.attempts} attempts, ${r.poison.inDlq ? `in demo.dlq (key ${r.poison.dlqRoutingKey ?? '?'}; x-death: ${r.poison.deaths.join(', ')}); left there for 'rmq-bench dlq inspect'` : 'NOT in demo.dlq'}`,
    ...r.problems,
    r.ok ? 'verdict: OK (each rung held the message for its TTL, and the ladder ended in demo.dlq instead of looping)' : 'verdict: FAILED',
  ].join('\n');
}
