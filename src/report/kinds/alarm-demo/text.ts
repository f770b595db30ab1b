import type { AlarmDemoResult, PublisherRun } from '../../../scenarios/demos/alarm-plan.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

const s = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);

/** A publisher's own account: confirmed, indeterminate, or (no confirms) only "sent". */
function account(p: PublisherRun): string {
  if (p.confirmed === null) return `sent ${p.sent}`;
  return `${p.confirmed} confirmed, ${p.indeterminate ?? 0} indeterminate`;
}

function ending(p: PublisherRun): string {
  if (p.exit !== null) {
    const f = p.flush;
    const flush = f === null ? 'no report' : f.channel === 'closed' ? 'flushed' : `not flushed (${f.channel}${f.blockedBy ? `, ${f.blockedBy}` : ''})`;
    return p.exit === 'SIGKILL' ? 'killed: no report' : `${p.exit}, ${flush}`;
  }
  if (p.gaveUp !== null) return `gave up at ${s(p.gaveUpAtMs)}`;
  return p.completed ? 'completed' : 'stopped';
}

/** alarm-demo result → text. Pure. */
export function renderAlarmDemo(r: AlarmDemoResult): string {
  const a = r.timeline;
  const table = renderTable(
    ['publisher', 'node', 'its account', 'blocked at', 'unblocked at', 'end', 'arrived', 'lost', 'of it confirmed'],
    r.publishers.map((p) => [
      p.role,
      p.node,
      account(p),
      s(p.blockedAtMs),
      s(p.unblockedAtMs),
      ending(p),
      p.beyondReported > 0 ? `${p.arrived} (${p.beyondReported} beyond its last line)` : p.arrived,
      p.missing,
      p.confirmed === null ? '-' : p.confirmedMissing,
    ]),
  );
  const claims = renderTable(
    ['claim', 'measured', 'held'],
    r.checks.map((c) => [c.claim, c.measured, c.held ? 'yes' : 'NO']),
  );
  return fitLines([
    `alarm-demo on RabbitMQ ${r.brokerVersion}: a ${r.alarm} alarm on ${r.node}, held ${s(r.holdMs)}; ${r.ratePerSec} msg/s per publisher into ${r.queue}`,
    `alarm: limit set at ${s(a.raiseAtMs)}, reported at ${s(a.raisedAtMs)}, cleared at ${s(a.clearAtMs)} (gone at ${s(a.clearedAtMs)}); times are since the publishers started`,
    '',
    table,
    '',
    `consumer on ${r.consumer.node}: read ${r.consumer.backlogDuringAlarm} of the ${r.backlog}-message backlog during the alarm; ${r.consumer.deliveries} deliveries in all; ${r.consumer.leftInQueue} left in the queue`,
    ...r.findings,
    '',
    claims,
    '',
    ...r.problems,
    r.ok
      ? 'verdict: OK (the alarm blocked publishers on every node, not the consumer; rmq-bench lost no confirmed message and did not hang)'
      : 'verdict: FAILED',
  ]);
}
