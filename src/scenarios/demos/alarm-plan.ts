/**
 * alarm-demo, the pure part: the options, what each publisher and the consumer measured, and the
 * checks of RabbitMQ's documented behaviour (alarms.md, flow-control: "a connection is blocked
 * when it publishes while an alarm is in force, on every node") and of rmq-bench's own promises
 * against it. No I/O: the runner (alarm-demo.ts) fills these records in.
 */
import type { AlarmKind } from '../../cluster/broker/alarms.js';
import type { FlushOutcome } from '../../client/publish-loop.js';

/** The publishers of the demo, each on its own connection. */
const PUBLISHER_ROLES = ['deadline', 'waits', 'naive', 'sigterm', 'sigkill'] as const;
export type PublisherRole = (typeof PUBLISHER_ROLES)[number];

export interface AlarmDemoOptions {
  /** memory or disk (not `kind`: that is the JSON document's). */
  alarm: AlarmKind;
  /** The node whose limit is changed (rabbit1). */
  node: string;
  /** Publishing before the alarm is raised, the alarm itself, and publishing after it cleared. */
  beforeMs: number;
  holdMs: number;
  afterMs: number;
  /** Each publisher's rate, and the body size of its messages. */
  ratePerSec: number;
  sizeBytes: number;
  /** The deadline publisher's --blocked-timeout (below holdMs). */
  deadlineMs: number;
  /** How long into the alarm the children are stopped (SIGTERM) and killed (SIGKILL). */
  killAfterMs: number;
  /** The SIGTERM child's --flush-timeout. */
  flushTimeoutMs: number;
  /** Messages in the queue (confirmed) before the alarm, for the consumer to read during it. */
  backlog: number;
  /** The end: no delivery for this long after every publisher finished. */
  quietMs: number;
  /** Accepted lateness of a give-up past its deadline, and of an unblock past the clear. */
  toleranceMs: number;
}

/** What one publisher measured, ms since the demo's t0; the arrivals come from the consumer. */
export interface PublisherInput {
  role: PublisherRole;
  node: string;
  url: string;
  runId: string;
  /** Distinct messages it reports written (without confirms: what it calls sent); sequences 0..sent-1. */
  sent: number;
  /** Of those, written after its connection was blocked (the naive publisher; 0 for those that wait). */
  sentWhileBlocked: number;
  /** The sequence at which its connection was blocked (null: never blocked). */
  seqAtBlock: number | null;
  /** Sequences the broker confirmed (null: no confirms). */
  confirmedSeqs: number[] | null;
  indeterminate: number | null;
  blockedAtMs: number | null;
  unblockedAtMs: number | null;
  gaveUpAtMs: number | null;
  gaveUp: string | null;
  completed: boolean;
  longestStallMs: number | null;
  flush: FlushOutcome | null;
  /** The most bytes its socket held in this process at once (the naive publisher). */
  maxBufferedBytes: number | null;
  /** Children: how they ended ("exit 130", "SIGKILL"). */
  exit: string | null;
  /** Every delivery of its messages to the consumer. */
  arrivals: { seq: number; atMs: number }[];
}

export interface PublisherRun extends Omit<PublisherInput, 'arrivals' | 'confirmedSeqs'> {
  confirmed: number | null;
  arrived: number;
  duplicates: number;
  /** Of what arrived, how many while the alarm was in force (between its report and the clear). */
  arrivedDuringAlarm: number;
  /** Written after the block, and delivered before the alarm cleared (the claim says none). */
  blockedArrivedEarly: number;
  /** Confirmed and never delivered: a loss. */
  confirmedMissing: number;
  /** Reported sent and never delivered. */
  missing: number;
  /** Delivered but beyond what it reported sent (a killed process reports late). */
  beyondReported: number;
  /** Unconfirmed (indeterminate) yet delivered. */
  indeterminateArrived: number | null;
}

export interface AlarmTimeline {
  /** The limit set, the cluster reporting the alarm, the clear command, the alarm gone; ms since t0. */
  raiseAtMs: number;
  raisedAtMs: number;
  clearAtMs: number | null;
  clearedAtMs: number | null;
}

export interface ConsumerRun {
  node: string;
  /** Backlog messages read while the alarm was in force. */
  backlogDuringAlarm: number;
  backlogArrived: number;
  backlogMissing: number;
  deliveries: number;
  /** Messages left in the queue at the end (a passive declare). */
  leftInQueue: number;
}

export interface Check {
  claim: string;
  held: boolean;
  measured: string;
}

export interface AlarmSample {
  tMs: number;
  /** role → distinct messages sent so far. */
  sent: Partial<Record<PublisherRole, number>>;
  /** Deliveries to the consumer so far. */
  delivered: number;
}

export interface AlarmDemoResult extends AlarmDemoOptions {
  brokerVersion: string;
  queue: string;
  timeline: AlarmTimeline;
  publishers: PublisherRun[];
  consumer: ConsumerRun;
  samples: AlarmSample[];
  checks: Check[];
  /** What was measured where the docs make no promise (the children's fate). */
  findings: string[];
  problems: string[];
  ok: boolean;
  interrupted: boolean;
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

/** One publisher's counts from its arrivals. Pure. */
export function countPublisher(p: PublisherInput, alarm: AlarmTimeline): PublisherRun {
  const { arrivals, confirmedSeqs, ...rest } = p;
  const seen = new Map<number, number>();
  for (const a of arrivals) seen.set(a.seq, Math.min(seen.get(a.seq) ?? Number.POSITIVE_INFINITY, a.atMs));
  const clearAt = alarm.clearAtMs ?? Number.POSITIVE_INFINITY;
  let arrivedDuringAlarm = 0;
  let blockedArrivedEarly = 0;
  let missing = 0;
  let beyondReported = 0;
  for (const [seq, at] of seen) {
    if (at >= alarm.raisedAtMs && at < clearAt) arrivedDuringAlarm++;
    if (p.seqAtBlock !== null && p.sentWhileBlocked > 0 && seq > p.seqAtBlock && at < clearAt) blockedArrivedEarly++;
    if (seq >= p.sent) beyondReported++;
  }
  for (let seq = 0; seq < p.sent; seq++) if (!seen.has(seq)) missing++;
  const confirmedSet = confirmedSeqs === null ? null : new Set(confirmedSeqs);
  const confirmedMissing = confirmedSet === null ? 0 : [...confirmedSet].filter((s) => !seen.has(s)).length;
  let indeterminateArrived: number | null = null;
  if (confirmedSet !== null) {
    indeterminateArrived = 0;
    for (let seq = 0; seq < p.sent; seq++) if (!confirmedSet.has(seq) && seen.has(seq)) indeterminateArrived++;
  }
  return {
    ...rest,
    confirmed: confirmedSet?.size ?? null,
    arrived: seen.size,
    duplicates: arrivals.length - seen.size,
    arrivedDuringAlarm,
    blockedArrivedEarly,
    confirmedMissing,
    missing,
    beyondReported,
    indeterminateArrived,
  };
}

/** The claims, the findings and the verdict. Pure. */
export function assessAlarmDemo(
  o: AlarmDemoOptions,
  alarm: AlarmTimeline,
  publishers: PublisherRun[],
  consumer: ConsumerRun,
): { checks: Check[]; findings: string[]; problems: string[]; ok: boolean } {
  const by = (role: PublisherRole): PublisherRun | undefined => publishers.find((p) => p.role === role);
  const inProcess = (['deadline', 'waits', 'naive'] as const).map(by).filter((p): p is PublisherRun => p !== undefined);
  const blockedAfter = (p: PublisherRun): string =>
    p.blockedAtMs === null ? `${p.role} on ${p.node}: never blocked` : `${p.role} on ${p.node}: ${secs(p.blockedAtMs - alarm.raiseAtMs)}`;
  const naive = by('naive');
  const deadline = by('deadline');
  const waits = by('waits');
  const checks: Check[] = [];

  checks.push({
    claim: `an alarm on one node (${o.node}) blocks publishing connections on every node`,
    held: inProcess.length > 0 && inProcess.every((p) => p.blockedAtMs !== null) && new Set(inProcess.map((p) => p.node)).size > 1,
    measured: `connection.blocked after the limit was set: ${inProcess.map(blockedAfter).join('; ')}`,
  });
  checks.push({
    claim: 'a connection that only consumes is not blocked: consumers go on, and can free the memory',
    held: o.backlog === 0 ? false : consumer.backlogDuringAlarm > 0,
    measured: `the consumer on ${consumer.node} read ${consumer.backlogDuringAlarm} of the ${o.backlog}-message backlog while the alarm was in force`,
  });
  if (naive) {
    checks.push({
      claim: 'while a connection is blocked, nothing it publishes reaches a queue',
      held: naive.sentWhileBlocked > 0 && naive.blockedArrivedEarly === 0,
      measured: `the naive publisher "sent" ${naive.sentWhileBlocked} after its connection was blocked (${naive.maxBufferedBytes ?? 0} bytes at most in its socket buffer); ${naive.blockedArrivedEarly} of them reached the queue before the clear`,
    });
  }
  if (deadline) {
    const waitedMs = deadline.gaveUpAtMs !== null && deadline.blockedAtMs !== null ? deadline.gaveUpAtMs - deadline.blockedAtMs : null;
    checks.push({
      claim: `with a publish deadline (--blocked-timeout ${o.deadlineMs} ms), rmq-bench's publisher gives up instead of hanging, and loses no confirmed message`,
      held: waitedMs !== null && waitedMs >= o.deadlineMs - 50 && waitedMs <= o.deadlineMs + o.toleranceMs && deadline.confirmedMissing === 0,
      measured:
        waitedMs === null
          ? `it did not give up (${deadline.blockedAtMs === null ? 'never blocked' : 'blocked, no give-up'})`
          : `gave up ${secs(waitedMs)} after the block; ${deadline.confirmed} confirmed (${deadline.confirmedMissing} of them missing), ${deadline.indeterminate} indeterminate (reported as such, not as lost; ${deadline.indeterminateArrived} arrived after the clear)`,
    });
  }
  if (waits) {
    // The broker lifts the block when the node's monitor next looks (memory: every 2.5 s by default), so
    // the bound is the node's own report that the alarm is gone, not the command.
    const unblockLateMs = waits.unblockedAtMs !== null && alarm.clearAtMs !== null ? waits.unblockedAtMs - alarm.clearAtMs : null;
    const reportedGoneMs = alarm.clearedAtMs !== null && alarm.clearAtMs !== null ? alarm.clearedAtMs - alarm.clearAtMs : null;
    checks.push({
      claim: 'a publisher that waits out the alarm is unblocked when it clears, and loses nothing',
      held:
        waits.completed &&
        waits.confirmedMissing === 0 &&
        unblockLateMs !== null &&
        reportedGoneMs !== null &&
        unblockLateMs >= 0 &&
        unblockLateMs <= reportedGoneMs + o.toleranceMs,
      measured: `${waits.completed ? 'completed' : 'did not complete'}: ${waits.confirmed}/${waits.sent} confirmed, ${waits.confirmedMissing} confirmed missing; unblocked ${unblockLateMs === null ? 'never' : `${secs(unblockLateMs)} after the clear command`}${reportedGoneMs === null ? '' : ` (the node reported the alarm gone ${secs(reportedGoneMs)} after it)`}; longest stall ${waits.longestStallMs === null ? '?' : secs(waits.longestStallMs)}`,
    });
  }

  const findings: string[] = [];
  const term = by('sigterm');
  if (term) {
    const flushed = term.flush?.channel === 'closed';
    findings.push(
      `SIGTERM ${secs(o.killAfterMs)} into the alarm (${term.exit ?? '?'}): it reported ${term.sent} sent and ${flushed ? 'a clean flush' : `no flush (${term.flush ? term.flush.channel : 'no report'}${term.flush?.blockedBy ? `, blocked: ${term.flush.blockedBy}` : ''}; ${term.flush?.bufferedBytes ?? 0} bytes left in the process)`}; ${term.arrived} arrived, ${term.missing} lost`,
    );
  }
  const kill = by('sigkill');
  if (kill) {
    findings.push(
      `SIGKILL ${secs(o.killAfterMs)} into the alarm: its last progress line said ${kill.sent} sent; ${kill.arrived} arrived${kill.beyondReported > 0 ? ` (${kill.beyondReported} beyond the last line)` : ''}, ${kill.missing} of the reported lost`,
    );
  }
  if (naive)
    findings.push(`the naive publisher: ${naive.sent} sent, ${naive.arrived} arrived, ${naive.missing} lost (its process lived until its buffer drained)`);

  const problems: string[] = [];
  if (alarm.clearedAtMs === null) problems.push(`the ${o.alarm} alarm on ${o.node} was not seen clearing`);
  for (const p of publishers) {
    if (p.confirmedMissing > 0) problems.push(`${p.role}: ${p.confirmedMissing} confirmed messages never arrived`);
  }
  if (consumer.backlogMissing > 0) problems.push(`${consumer.backlogMissing} backlog messages (confirmed) never arrived`);
  if (term && term.flush?.channel === 'closed' && term.missing > 0)
    problems.push(`sigterm: rmq-bench's producer reported a clean flush, yet ${term.missing} of what it reported sent never arrived`);
  if (term && term.flush === null && term.exit !== null) problems.push(`sigterm: rmq-bench's producer said nothing of its flush after SIGTERM (${term.exit})`);
  if (consumer.leftInQueue > 0) problems.push(`${consumer.leftInQueue} messages left in the queue after the consumer's end`);
  for (const c of checks) if (!c.held) problems.push(`claim not seen: ${c.claim} (${c.measured})`);
  return { checks, findings, problems, ok: problems.length === 0 };
}
