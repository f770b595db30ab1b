import type { DlqDemoResult } from '../../../scenarios/demos/dlq-demo.js';
import { registrationTimeoutMs, type DlxStrategyResult, type StrategyRun } from '../../../scenarios/demos/dlx-strategy-plan.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

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
  return fitLines([
    table,
    '',
    ...how,
    ...(problems.length > 0 ? ['', ...problems] : []),
    '',
    r.ok ? 'verdict: OK (the broker dead-lettered every message as claimed)' : 'verdict: FAILED',
  ]);
}

const s = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);

/** The DLQ's leader before the fault, and after it when another node took over. */
const leaders = (x: StrategyRun): string =>
  x.dlqLeaderAfter !== null && x.dlqLeaderAfter !== x.dlqLeader ? `${x.dlqLeader} → ${x.dlqLeaderAfter}` : x.dlqLeader;

/** Why a run's held dead letters left when they did, where the demo knows (waitedOutRegistration). */
function registrationLine(x: StrategyRun, netTicktimeS: number): string {
  const waited = x.restoredAtMs! + x.settledMs! - x.firstRejectedAtMs!;
  return (
    `${x.variant} run ${x.run}: the held dead letters reached the DLQ ${s(waited)} after the first rejection. The source's dead-letter worker ` +
    `registers with the DLQ in a blocking call to the leader it knew (timeout net_ticktime + 5 s = ${s(registrationTimeoutMs(netTicktimeS))}); ` +
    `${x.dlqLeader}, paused and replaced by ${x.dlqLeaderAfter} meanwhile, never answered it, so nothing moved until it timed out`
  );
}

/** dlq-demo --strategy result → text. Pure. */
export function renderDlxStrategy(r: DlxStrategyResult): string {
  const runs = renderTable(
    ['strategy', 'run', 'DLQ leader', 'rejected (during fault)', 'in DLQ', 'left in source', 'lost', 'fault → restore', 'restore → settled'],
    r.runs.map((x) => [
      x.variant,
      x.run,
      leaders(x),
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
  const registration = r.runs.filter((x) => x.waitedOutRegistration).map((x) => registrationLine(x, r.netTicktimeS));
  return fitLines([
    `dlq-demo --strategy on RabbitMQ ${r.brokerVersion}: ${r.count} messages a run rejected (requeue=false) while the DLQ's leader is under '${r.fault}' for ${s(r.holdMs)}`,
    `restore → settled: at-least-once, until every rejected message is in the DLQ (its worker resends what is unconfirmed every ${s(r.workerRetryMs)}, dead_letter_worker_publisher_confirm_timeout; waited up to a minute past that); the others, until the DLQ's count stood still for 10 s`,
    '',
    runs,
    '',
    summary,
    '',
    ...plain,
    ...registration,
    ...held,
    ...r.problems,
    r.ok ? 'verdict: OK (at-least-once with reject-publish kept every dead letter)' : 'verdict: FAILED',
  ]);
}
