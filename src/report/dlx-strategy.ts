import type { DlxStrategyResult } from '../scenarios/dlx-strategy-plan.js';
import { renderTable } from './table.js';

const s = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);

/** dlq-demo --strategy result → text. Pure. */
export function renderDlxStrategy(r: DlxStrategyResult): string {
  const runs = renderTable(
    ['strategy', 'run', 'DLQ leader', 'rejected (during fault)', 'in DLQ', 'left in source', 'lost', 'fault → restore', 'restore → settled'],
    r.runs.map((x) => [
      x.variant,
      x.run,
      x.dlqLeader,
      `${x.rejected} (${x.rejectedDuringFault})`,
      x.duplicatesInDlq > 0 ? `${x.inDlq} (+${x.duplicatesInDlq} copies)` : x.inDlq,
      x.leftInSource,
      x.lost,
      x.faultAtMs === null || x.restoredAtMs === null ? '-' : s(x.restoredAtMs - x.faultAtMs),
      x.settledMs === null ? `still holding ${x.heldAtEnd}` : s(x.settledMs),
    ]),
  );
  const summary = renderTable(
    ['strategy', 'set by', 'the docs', 'lost', 'per run', 'median'],
    r.summaries.map((x) => [x.variant, x.setBy, x.claim, `${x.lost} of ${x.published}`, x.lostPerRun.join(', '), x.medianLost]),
  );
  const held = r.runs
    .filter((x) => x.heldAtEnd > 0)
    .map((x) => `${x.variant} run ${x.run}: the source still held ${x.heldAtEnd} dead letters for the DLQ when the wait ended: kept, not delivered yet`);
  const plain = r.summaries.map((x) =>
    x.keptAll
      ? `${x.variant}: kept every dead letter in ${x.runs} run(s)${x.variant === 'at-least-once' ? '' : ` under '${r.fault}' here (the docs allow a loss; none was seen)`}`
      : `${x.variant}: lost ${x.lost} of ${x.published} dead letters (median ${x.medianLost} a run)`,
  );
  return [
    `dlq-demo --strategy on RabbitMQ ${r.brokerVersion}: ${r.count} messages a run rejected (requeue=false) while the DLQ's leader is under '${r.fault}' for ${s(r.holdMs)}`,
    `restore → settled: at-least-once, until every rejected message is in the DLQ (its worker resends what is unconfirmed every ${s(r.workerRetryMs)}, dead_letter_worker_publisher_confirm_timeout; waited up to a minute past that); the others, until the DLQ's count stood still for 10 s`,
    '',
    runs,
    '',
    summary,
    '',
    ...plain,
    ...held,
    ...r.problems,
    r.ok ? 'verdict: OK (at-least-once with reject-publish kept every dead letter)' : 'verdict: FAILED',
  ].join('\n');
}
