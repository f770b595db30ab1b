import type { RetryDemoResult } from '../../../scenarios/demos/retry-demo.js';
import type { RetryLadderResult } from '../../../scenarios/demos/retry-ladder.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** retry-demo result → text. Pure. */

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
  return fitLines([
    `retry-demo: ${r.messageId} through demo.orders → demo.dlx → demo.retry (TTL ${r.ttlMs} ms) → demo.orders`,
    '',
    table,
    '',
    ...r.problems,
    r.ok ? `verdict: OK (each retry waited the TTL; processed once, at the end)` : 'verdict: FAILED',
  ]);
}

/** retry-demo --backoff result → text. Pure. */
export function renderRetryLadder(r: RetryLadderResult): string {
  const s = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);
  const table = renderTable(
    ['message', 'attempt', 'at', 'gap', 'rung TTL', 'key', 'x-death earlier', 'outcome'],
    r.attempts.map((a) => [a.messageId, a.attempt, s(a.atMs), s(a.gapMs), s(a.expectedGapMs), a.routingKey, a.earlierAttempts, a.outcome]),
  );
  const ladder = r.rungs.map((x) => `${x.queue} ${s(x.ttlMs)}`).join(' → ');
  return fitLines([
    `retry-demo --backoff: ${r.workQueue} → ${ladder} → demo.dlq${r.timeScale === 1 ? '' : ` (TTLs × ${r.timeScale})`}`,
    '',
    table,
    '',
    `${r.good.messageId}: failed ${r.good.failures} time(s), processed ${r.good.processedTimes} time(s)`,
    `${r.poison.messageId}: ${r.poison.attempts} attempts, ${r.poison.inDlq ? `in demo.dlq (key ${r.poison.dlqRoutingKey ?? '?'}; x-death: ${r.poison.deaths.join(', ')}); left there for 'rmq-bench dlq inspect'` : 'NOT in demo.dlq'}`,
    ...r.problems,
    r.ok ? 'verdict: OK (each rung held the message for its TTL, and the ladder ended in demo.dlq instead of looping)' : 'verdict: FAILED',
  ]);
}
