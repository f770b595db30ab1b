import type { DlqDemoResult } from '../scenarios/dlq-demo.js';
import type { RetryDemoResult } from '../scenarios/retry-demo.js';
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
