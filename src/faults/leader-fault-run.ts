import { InterruptedError, errorMessage } from '../errors.js';
import { systemClock, type Clock } from '../util/retry.js';
import { type Election, waitForNewLeader } from './election.js';
import { faultLeader, type LeaderFault } from './at-leader.js';
import { type EnabledFlag, type FaultContext, type FaultOptions, shapeOf } from './applied.js';
import type { FaultKind } from './kinds.js';
import { awaitsElection } from './registry.js';
import type { QueueRef } from '../cluster/broker/queue-leader-lookup.js';
import { type Rejoin, waitForRejoin } from './rejoin.js';

/**
 * A leader fault as one sequence, run in the background: fault a quorum queue's leader
 * (at-leader.ts), watch the election (election.ts), hold, restore the node and wait until it is
 * back (rejoin.ts). Every scenario that faults a leader mid-run uses it; the fault is undone on
 * every way out.
 */

/** Where a leader fault is: it only moves forward, and ends in one of the last three. */
export type FaultPhase = 'faulting' | 'electing' | 'holding' | 'restoring' | 'rejoining' | 'rejoined' | 'left-faulted' | 'failed';

/**
 * What happened to the leader, as it happened: filled in phase by phase, so a scenario can read
 * it while the fault is on (progress lines) and after it ended (reports). Times are the clock's
 * (performance.now() for the real one): scenarios subtract their own start.
 */
export interface LeaderFaultTimeline {
  kind: FaultKind;
  phase: FaultPhase;
  /** Short name (container) of the faulted leader: null until the fault is applied. */
  node: string | null;
  /** Other nodes faulted with it (quorum-loss). */
  alsoFaulted: string[];
  /** A partition shape's groups ("rabbit2 rabbit4 | rabbit1 rabbit3 rabbit5"); null for the other faults. */
  shape: string | null;
  /** feature-flags: each flag it enabled and how long its call took; null for the other faults. */
  enabledFlags: EnabledFlag[] | null;
  membersBefore: string[] | null;
  /** When the fault call was issued and when it returned (a stop waits for the clean shutdown). */
  issuedAt: number | null;
  appliedAt: number | null;
  appliedAtIso: string | null;
  newLeader: string | null;
  /** Which watcher saw the new leader first (management or cli). */
  electionSource: string | null;
  electedAt: number | null;
  /** Fault issued → first answer that named a different leader. */
  electionMs: number | null;
  /** When the restore call began; restoredAt is when it returned (a partition's mend before 4.3 is inside it). */
  restoreStartedAt: number | null;
  restoredAt: number | null;
  rejoinedAt: number | null;
  /** Restore call → the node back with every queue member online. */
  rejoinMs: number | null;
  membersAfter: string[] | null;
  onlineAfter: string[] | null;
  /** The queue's leader once the node was back. */
  leaderAfter: string | null;
  /** The fault was undone (by plan, or on the way out after an error or Ctrl+C). */
  restored: boolean;
  /** Why the sequence ended early (the error's message), or null; and when. */
  error: string | null;
  failedAt: number | null;
}

/** A fault with no election to wait for is held at least this long (it would be over at once otherwise). */
export const NO_ELECTION_HOLD_MS = 10_000;

function minimumHoldMs(kind: FaultKind): number {
  return awaitsElection(kind) ? 0 : NO_ELECTION_HOLD_MS;
}

/** The steps, behind an interface so that the state machine is unit-tested with a fake. */
export interface LeaderFaultDriver {
  fault(kind: FaultKind, signal: AbortSignal): Promise<LeaderFault>;
  waitForNewLeader(lf: LeaderFault, timeoutMs: number, signal: AbortSignal): Promise<Election>;
  /** After lf.fault.restore() returned at restoredAt: wait until the node is back. */
  waitForRejoin(lf: LeaderFault, restoredAt: number, timeoutMs: number, signal: AbortSignal): Promise<Rejoin>;
}

export interface LeaderFaultPlan {
  /**
   * Keep the node faulted at least this long after the fault was issued (0: restore once the
   * new leader is seen); null: leave it faulted (failover --no-restore), also on Ctrl+C.
   */
  restoreAfterMs: number | null;
  electionTimeoutMs: number;
  rejoinTimeoutMs: number;
  /** Called on entering each phase (progress lines). */
  onPhase?: (phase: FaultPhase, timeline: Readonly<LeaderFaultTimeline>) => void;
  /** For tests: the clock of the --hold wait. */
  clock?: Clock;
  /** For tests: the steps. Default: the real ones on ctx (dockerode or --fault-cmd). */
  driver?: LeaderFaultDriver;
  /** What the fault takes besides the node (latency's delay and loss). */
  faultOptions?: FaultOptions;
  /**
   * Wait for a new leader while the fault is on (default: awaitsElection(kind), from its spec's leader effect). false: hold
   * exactly restoreAfterMs, with no election awaited and no minimum hold (chaos's nemesis, which
   * faults followers as well as leaders and records the leaders itself).
   */
  awaitElection?: boolean;
}

interface LeaderFaultOutcome {
  timeline: LeaderFaultTimeline;
  /** The error that ended the sequence early (InterruptedError on Ctrl+C), or undefined. */
  error: unknown;
}

export interface LeaderFaultHandle {
  /** Live: read it at any time. */
  readonly timeline: Readonly<LeaderFaultTimeline>;
  /** Settles when the sequence has ended; never rejects (the error is in the outcome). */
  readonly done: Promise<LeaderFaultOutcome>;
  /**
   * End it now: stop waiting, undo the fault at once unless the plan leaves it faulted, and
   * resolve with the outcome. Safe to call at any time and more than once: every scenario calls
   * it in a finally.
   */
  close(): Promise<LeaderFaultOutcome>;
}

/** The real steps, on this context's cluster. */
function contextDriver(ctx: FaultContext, ref: QueueRef, faultOptions?: FaultOptions): LeaderFaultDriver {
  const scoped = (signal: AbortSignal): FaultContext => ({ ...ctx, signal });
  return {
    fault: (kind, signal) => faultLeader(scoped(signal), ref, kind, faultOptions ? { faultOptions } : {}),
    waitForNewLeader: (lf, timeoutMs, signal) => waitForNewLeader(scoped(signal), ref, lf, { timeoutMs }),
    waitForRejoin: (lf, restoredAt, timeoutMs, signal) => waitForRejoin(scoped(signal), ref, lf, { timeoutMs, restoredAt }),
  };
}

function emptyTimeline(kind: FaultKind): LeaderFaultTimeline {
  return {
    kind,
    phase: 'faulting',
    node: null,
    alsoFaulted: [],
    shape: null,
    enabledFlags: null,
    membersBefore: null,
    issuedAt: null,
    appliedAt: null,
    appliedAtIso: null,
    newLeader: null,
    electionSource: null,
    electedAt: null,
    electionMs: null,
    restoreStartedAt: null,
    restoredAt: null,
    rejoinedAt: null,
    rejoinMs: null,
    membersAfter: null,
    onlineAfter: null,
    leaderAfter: null,
    restored: false,
    error: null,
    failedAt: null,
  };
}

/**
 * Start the leader-fault sequence in the background: fault the queue's leader, wait for a new
 * one, keep the node down until restoreAfterMs has passed since the fault, restore it, wait for
 * it to rejoin. Ctrl+C (ctx.signal) or close() cuts any wait short, and the fault is undone on
 * every way out, at once, unless the plan leaves it faulted. Errors end the sequence and are
 * kept in the outcome, never thrown from here.
 */
export function startLeaderFault(ctx: FaultContext, ref: QueueRef, kind: FaultKind, plan: LeaderFaultPlan): LeaderFaultHandle {
  const clock = plan.clock ?? systemClock;
  const driver = plan.driver ?? contextDriver(ctx, ref, plan.faultOptions);
  const closing = new AbortController();
  const signal = AbortSignal.any([ctx.signal, closing.signal]);
  const t = emptyTimeline(kind);
  const enter = (phase: FaultPhase): void => {
    t.phase = phase;
    plan.onPhase?.(phase, t);
  };
  let lf: LeaderFault | undefined;

  const undo = async (): Promise<void> => {
    if (!lf || lf.fault.restored) return;
    try {
      await lf.fault.restore();
      t.restoredAt ??= clock.now();
      t.restored = true;
    } catch (err) {
      ctx.log(`could not restore ${lf.oldLeader} after '${kind}': ${errorMessage(err)}`);
    }
  };

  const run = async (): Promise<LeaderFaultOutcome> => {
    let error: unknown;
    try {
      enter('faulting');
      if (signal.aborted) throw new InterruptedError();
      lf = await driver.fault(kind, signal);
      t.node = lf.oldLeader;
      t.alsoFaulted = lf.alsoFaulted;
      t.shape = shapeOf(lf.fault);
      t.enabledFlags = lf.fault.enabledFlags ? [...lf.fault.enabledFlags] : null;
      t.membersBefore = lf.before.members;
      t.issuedAt = lf.fault.issuedAt;
      t.appliedAt = lf.fault.appliedAt;
      t.appliedAtIso = lf.fault.appliedAtIso;
      // Closed while the fault call ran: it is on now, so undo it (in the finally).
      if (signal.aborted) throw new InterruptedError();

      const awaitElection = plan.awaitElection ?? awaitsElection(kind);
      if (awaitElection) {
        enter('electing');
        const election = await driver.waitForNewLeader(lf, plan.electionTimeoutMs, signal);
        t.newLeader = election.newLeader;
        t.electionSource = election.source;
        t.electedAt = election.electedAt;
        t.electionMs = election.electionMs;
      }

      if (plan.restoreAfterMs === null) {
        enter('left-faulted');
        return { timeline: t, error: undefined };
      }
      const minimumMs = plan.awaitElection === false ? 0 : minimumHoldMs(kind);
      const holdMs = lf.fault.issuedAt + Math.max(plan.restoreAfterMs, minimumMs) - clock.now();
      if (holdMs > 0) {
        enter('holding');
        await clock.sleep(holdMs, signal);
      }

      enter('restoring');
      t.restoreStartedAt = clock.now();
      await lf.fault.restore();
      t.restored = true;
      t.restoredAt = clock.now();
      enter('rejoining');
      const rejoin = await driver.waitForRejoin(lf, t.restoredAt, plan.rejoinTimeoutMs, signal);
      t.rejoinedAt = rejoin.rejoinedAt;
      t.rejoinMs = rejoin.rejoinMs;
      t.membersAfter = rejoin.members;
      t.onlineAfter = rejoin.online;
      t.leaderAfter = rejoin.leaderAfter;
      enter('rejoined');
    } catch (err) {
      error = err;
      t.error = errorMessage(err);
      t.failedAt = clock.now();
      enter('failed');
    } finally {
      if (plan.restoreAfterMs !== null) await undo();
    }
    return { timeline: t, error };
  };

  const done = run();
  return {
    timeline: t,
    done,
    close: () => {
      closing.abort();
      return done;
    },
  };
}
