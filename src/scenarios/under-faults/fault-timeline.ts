import type { PublisherResult } from '../../client/publisher-result.js';
import type { EnabledFlag } from '../../faults/applied.js';
import type { FaultKind } from '../../faults/kinds.js';
import type { LeaderFaultTimeline } from '../../faults/leader-fault-run.js';

/** A run's leader fault as compare reports it: the leader-fault sequence's times, from the producer's start. */
export interface FaultTimeline {
  kind: FaultKind;
  node: string;
  newLeader: string | null;
  /** Other nodes faulted with it (quorum-loss: a follower killed too). */
  alsoFaulted: string[];
  /** A partition shape's groups ("rabbit2 rabbit4 | rabbit1 rabbit3 rabbit5"); null for the other faults. */
  shape: string | null;
  /** feature-flags: each flag it enabled, in turn, and how long its call took; absent for the other faults. */
  enabledFlags?: EnabledFlag[];
  /** All times in ms since the producer started. Fault issued, and the fault call returned. */
  faultAtMs: number;
  appliedAtMs: number | null;
  electedAtMs: number | null;
  electionMs: number | null;
  restoredAtMs: number | null;
  rejoinedAtMs: number | null;
  /** First connection the producer got back after losing one, if it lost one. */
  producerResumedAtMs: number | null;
  error: string | null;
}

/** The fault's timeline in ms since the producer started, with when the producer got a connection back. */
export function relativeTimeline(t: LeaderFaultTimeline, t0: number, leaderNode: string, producer: Pick<PublisherResult, 'events'>): FaultTimeline {
  const rel = (at: number | null): number | null => (at === null ? null : at - t0);
  // The producer may reconnect before the kill call has even returned: take it from its events.
  const lostAt = producer.events.find((e) => e.type === 'connection-lost')?.atMs;
  const resumed = lostAt === undefined ? undefined : producer.events.find((e) => e.type === 'connected' && e.atMs > lostAt);
  return {
    kind: t.kind,
    node: t.node ?? leaderNode,
    newLeader: t.newLeader,
    alsoFaulted: t.alsoFaulted,
    shape: t.shape,
    ...(t.enabledFlags ? { enabledFlags: t.enabledFlags } : {}),
    faultAtMs: rel(t.issuedAt ?? t.failedAt) ?? 0,
    appliedAtMs: rel(t.appliedAt),
    electedAtMs: rel(t.electedAt),
    electionMs: t.electionMs,
    restoredAtMs: rel(t.restoredAt),
    rejoinedAtMs: rel(t.rejoinedAt),
    producerResumedAtMs: resumed?.atMs ?? null,
    error: t.error,
  };
}
