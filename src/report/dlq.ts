import type { DlqDemoResult } from '../scenarios/dlq-demo.js';
import type { RetryDemoResult } from '../scenarios/retry-demo.js';
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
  return [table, '', ...how, ...(problems.length > 0 ? ['', ...problems] : []), '', r.ok ? 'verdict: OK (the broker dead-lettered every message as claimed)' : 'verdict: FAILED'].join('\n');
}

export function renderRetryDemo(r: RetryDemoResult): string {
  const table = renderTable(
    ['attempt', 'at', 'gap', 'outcome', 'x-death'],
    r.attempts.map((a) => [a.attempt, `${(a.atMs / 1000).toFixed(2)} s`, a.gapMs === null ? '-' : `${(a.gapMs / 1000).toFixed(2)} s`, a.outcome, a.death ?? '-']),
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
