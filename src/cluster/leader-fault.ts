import { type NodeSpec, nodeByName } from '../config.js';
import type { Context } from '../context.js';
import { BrokerUnavailableError, InterruptedError, NotFoundError, errorMessage } from '../errors.js';
import { retryUntil, systemClock, type Clock } from '../util/retry.js';
import { inspectContainer } from './engine.js';
import { callNode } from './erl-call.js';
import { type AppliedFault, combineFaults, type FaultKind, type FaultOptions, restoreQuietly } from './faults.js';
import { parseQuorumStatus, quorumStatusCall, shortNodeName, type QueueLeadership } from './leader.js';
import { ManagementClient } from './management.js';

/**
 * The reusable fault piece: find a quorum queue's leader, fault that node's container, watch
 * the election, restore the node and wait until it is back. Scenarios inject faults mid-run
 * through it.
 */

export interface QueueRef {
  vhost: string;
  queue: string;
}

/** The queue's leadership now; throws when the queue is unknown, not quorum, or leaderless. */
export async function currentLeader(ctx: Context, ref: QueueRef, exclude?: readonly string[]): Promise<QueueLeadership & { leader: string }> {
  const q = await ctx.management.queue(ref.vhost, ref.queue, exclude);
  if (q.type !== 'quorum') throw new NotFoundError(`queue '${ref.queue}' is a ${q.type} queue; leader faults need a quorum queue`);
  if (q.leader === undefined) throw new BrokerUnavailableError(`queue '${ref.queue}' has no leader right now`);
  return q as QueueLeadership & { leader: string };
}

export interface LeaderFault {
  /** Short name (container) of the faulted leader: rabbit2. */
  oldLeader: string;
  /** Other nodes faulted with it (quorum-loss: the follower killed too). */
  alsoFaulted: string[];
  before: QueueLeadership & { leader: string };
  fault: AppliedFault;
  /** Erlang name of the faulted node when it is not before.leader (chaos faults followers too). */
  node?: string;
}

/**
 * Fault the container of the queue's current leader. First waits (up to healthyTimeoutMs) until
 * every member is online, so that the fault never takes away a majority.
 */
export async function faultLeader(
  ctx: Context,
  ref: QueueRef,
  kind: FaultKind,
  options: { healthyTimeoutMs?: number; faultOptions?: FaultOptions } = {},
): Promise<LeaderFault> {
  // An unknown or non-quorum queue is the user's input: fail at once, not after a wait.
  await currentLeader(ctx, ref);
  const before = await retryUntil(
    () => currentLeader(ctx, ref),
    (q) => q.online.length >= q.members.length,
    {
      timeoutMs: options.healthyTimeoutMs ?? 30_000,
      intervalMs: 500,
      signal: ctx.signal,
      describe: (last) =>
        last.value
          ? `queue '${ref.queue}' has ${last.value.online.length} of ${last.value.members.length} members online; a leader fault now could lose the majority`
          : `queue '${ref.queue}' has no leader (${errorMessage(last.error)})`,
      hint: "wait for the cluster to heal, or run 'rmq-bench cluster up'",
    },
  );
  if (kind === 'quorum-loss') {
    const follower = before.members.find((m) => m !== before.leader);
    if (follower === undefined) throw new NotFoundError(`queue '${ref.queue}' has no follower: quorum-loss needs at least 2 members`);
    const leaderKill = await ctx.faults.inject(before.leader, 'kill');
    let followerKill: AppliedFault;
    try {
      followerKill = await ctx.faults.inject(follower, 'kill');
    } catch (err) {
      await restoreQuietly(leaderKill, ctx.log);
      throw err;
    }
    return { oldLeader: shortNodeName(before.leader), alsoFaulted: [shortNodeName(follower)], before, fault: combineFaults(kind, [leaderKill, followerKill]) };
  }
  const fault = await ctx.faults.inject(before.leader, kind, options.faultOptions);
  return { oldLeader: shortNodeName(before.leader), alsoFaulted: [], before, fault };
}

export interface Election {
  newLeader: string;
  /** Which watcher saw it first: management API or quorum_status. */
  source: string;
  /** performance.now() when the new leader was first seen. */
  electedAt: number;
  electionMs: number;
}

/** The leader as a survivor reports it, asked inside its container (see quorumStatusCall). */
export async function leaderViaCli(ctx: Context, survivor: NodeSpec, ref: QueueRef): Promise<string | undefined> {
  return parseQuorumStatus(await callNode(await ctx.docker(), survivor.container, survivor.nodeName, quorumStatusCall(ref), 15_000)).leader;
}

/** How often the in-container watcher asks once it has started: a docker exec and an erl_call each time. */
const CLI_POLL_MS = 250;

/**
 * Watch the survivors until the queue reports a leader other than oldLeader. The management
 * API is polled every pollMs: it answers within ~100 ms after a kill or a stop, but hangs while
 * a member is paused or cut off. From its first failed request on, the survivors are asked in
 * their containers too (quorumStatusCall, every 250 ms, in turn), which answers in every case.
 * electionMs runs from the moment the fault was issued to the first answer that named the new
 * leader: an upper bound, within one poll of the source that saw it.
 */
export async function waitForNewLeader(ctx: Context, ref: QueueRef, lf: LeaderFault, options: { timeoutMs: number; pollMs?: number }): Promise<Election> {
  const survivors = ctx.config.nodes.filter((n) => n.name !== lf.oldLeader);
  const withCli = ctx.faults.kind === 'docker';
  const quickMgmt = new ManagementClient(
    ctx.management.endpoints.filter((e) => e.node !== lf.oldLeader),
    ctx.config.user,
    ctx.config.password,
    { requestTimeoutMs: 1_000 },
  );
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const deadline = performance.now() + options.timeoutMs;
  const isNew = (leader: string | undefined): boolean => leader !== undefined && shortNodeName(leader) !== lf.oldLeader;
  let turn = 0;
  const watch = (source: 'management' | 'cli', probe: () => Promise<string | undefined>, intervalMs: number): Promise<{ leader: string; source: string }> =>
    retryUntil(probe, isNew, {
      timeoutMs: Math.max(0, deadline - performance.now()),
      intervalMs,
      signal,
      describe: (last) =>
        `no new leader for '${ref.queue}' after '${lf.fault.kind}' of ${lf.oldLeader} (${source}, last seen: ${last.value ?? (last.error ? errorMessage(last.error) : 'none')})`,
    }).then((leader) => ({ leader: leader!, source }));
  let startCli = (): void => {};
  const management = watch(
    'management',
    async () => {
      try {
        return (await quickMgmt.queue(ref.vhost, ref.queue)).leader;
      } catch (err) {
        startCli();
        throw err;
      }
    },
    options.pollMs ?? 100,
  );
  // quorum_status is asked inside our own containers only, once the management API has failed to answer.
  const cli = new Promise<{ leader: string; source: string }>((resolve, reject) => {
    let started = false;
    startCli = () => {
      if (started || !withCli) return;
      started = true;
      watch('cli', () => leaderViaCli(ctx, survivors[turn++ % survivors.length]!, ref), CLI_POLL_MS).then(resolve, reject);
    };
    // Never started: it ends with the management watcher.
    management.catch((err: unknown) => {
      if (!started) reject(err);
    });
  });
  try {
    const found = await Promise.any([management, cli]).catch((err: unknown) => {
      throw err instanceof AggregateError ? (err.errors.find((e) => e instanceof InterruptedError) ?? err.errors[0]) : err;
    });
    const electedAt = performance.now();
    return { newLeader: shortNodeName(found.leader), electedAt, electionMs: electedAt - lf.fault.issuedAt, source: found.source };
  } finally {
    stop.abort();
  }
}

export interface Rejoin {
  restoredAt: number;
  rejoinedAt: number;
  /** From the restore call to the start of the stable stretch: running in the cluster, every queue member online. */
  rejoinMs: number;
  /** Of the first queue watched. */
  members: string[];
  online: string[];
  /** Short name of the (first) queue's leader once the node is back. */
  leaderAfter: string | null;
  /** Every queue watched → short name of its leader once the node is back. */
  leaders?: Record<string, string | null>;
}

/**
 * Wait until a node whose fault was undone at restoredAt is back: its container (and those
 * faulted with it) runs, the cluster lists it as running, and every queue in refs has a leader
 * and every member online, all of it unchanged for stableMs (a restarting node shows up as
 * online once before its queues recover).
 */
export async function waitForRejoin(
  ctx: Context,
  refs: QueueRef | readonly QueueRef[],
  lf: LeaderFault,
  options: { timeoutMs: number; restoredAt: number; stableMs?: number },
): Promise<Rejoin> {
  const { restoredAt } = options;
  const queues: readonly QueueRef[] = Array.isArray(refs) ? refs : [refs as QueueRef];
  const stableMs = options.stableMs ?? 3_000;
  const nodeName = lf.node ?? lf.before.leader;
  const container = ctx.faults.kind === 'docker' ? nodeByName(ctx.config, nodeName)?.container : undefined;
  const docker = container ? await ctx.docker() : undefined;
  const node = { name: lf.oldLeader, nodeName };
  let streakSince: number | undefined;
  const check = async (): Promise<{ ok: boolean; why: string; qs: QueueLeadership[] }> => {
    if (docker && container) {
      for (const name of [container, ...lf.alsoFaulted.map((n) => nodeByName(ctx.config, n)?.container ?? n)]) {
        const c = await inspectContainer(docker, name);
        if (c.state !== 'running') return { ok: false, why: `container ${name} ${c.state}`, qs: [] };
      }
    }
    const nodes = await ctx.management.nodes([node.name]);
    if (!nodes.find((n) => n.name === node.nodeName)?.running) return { ok: false, why: `${node.nodeName} not running in the cluster`, qs: [] };
    const qs: QueueLeadership[] = [];
    for (const ref of queues) {
      const q = await ctx.management.queue(ref.vhost, ref.queue, [node.name]);
      qs.push(q);
      const whole = q.leader !== undefined && q.online.includes(node.nodeName) && q.online.length >= q.members.length;
      if (!whole) return { ok: false, why: `${ref.queue}: ${q.online.length} of ${q.members.length} members online`, qs };
    }
    return { ok: true, why: 'every member online', qs };
  };
  const r = await retryUntil(
    async () => {
      const v = await check().catch((err: unknown) => ({ ok: false, why: errorMessage(err), qs: [] }));
      if (!v.ok) streakSince = undefined;
      else streakSince ??= performance.now();
      return v;
    },
    (v) => v.ok && streakSince !== undefined && performance.now() - streakSince >= stableMs,
    {
      timeoutMs: options.timeoutMs,
      intervalMs: 250,
      signal: ctx.signal,
      describe: (last) => `${node.name} did not rejoin after '${lf.fault.kind}' was undone (last state: ${last.value?.why ?? errorMessage(last.error)})`,
      hint: `see 'rmq-bench cluster logs ${node.name}'`,
    },
  );
  const rejoinedAt = streakSince!;
  const first = r.qs[0]!;
  const short = (leader: string | undefined): string | null => (leader === undefined ? null : shortNodeName(leader));
  return {
    restoredAt,
    rejoinedAt,
    rejoinMs: rejoinedAt - restoredAt,
    members: first.members,
    online: first.online,
    leaderAfter: short(first.leader),
    leaders: Object.fromEntries(queues.map((ref, i) => [ref.queue, short(r.qs[i]?.leader)])),
  };
}

// ---------------------------------------------------------------------------------------------
// The whole sequence as one handle: every scenario that faults a leader mid-run uses this.
// ---------------------------------------------------------------------------------------------

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

/**
 * Whether a new leader is awaited while the fault is on: not for latency (a slow leader usually
 * stays leader) nor quorum-loss (no majority is left to elect one); the sequence holds those for
 * a while instead, and the rejoin wait after the restore sees the queue led again.
 */
export function takesLeaderAway(kind: FaultKind): boolean {
  return kind !== 'latency' && kind !== 'quorum-loss';
}

/** A fault with no election to wait for is held at least this long (it would be over at once otherwise). */
export const NO_ELECTION_HOLD_MS = 10_000;

function minimumHoldMs(kind: FaultKind): number {
  return takesLeaderAway(kind) ? 0 : NO_ELECTION_HOLD_MS;
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
  /** For tests: the clock of the --restore-after wait. */
  clock?: Clock;
  /** For tests: the steps. Default: the real ones on ctx (dockerode or --fault-cmd). */
  driver?: LeaderFaultDriver;
  /** What the fault takes besides the node (latency's delay and loss). */
  faultOptions?: FaultOptions;
  /**
   * Wait for a new leader while the fault is on (default: takesLeaderAway(kind)). false: hold
   * exactly restoreAfterMs, with no election awaited and no minimum hold (chaos's nemesis, which
   * faults followers as well as leaders and records the leaders itself).
   */
  awaitElection?: boolean;
}

export interface LeaderFaultOutcome {
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
export function contextDriver(ctx: Context, ref: QueueRef, faultOptions?: FaultOptions): LeaderFaultDriver {
  const scoped = (signal: AbortSignal): Context => ({ ...ctx, signal });
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
    membersBefore: null,
    issuedAt: null,
    appliedAt: null,
    appliedAtIso: null,
    newLeader: null,
    electionSource: null,
    electedAt: null,
    electionMs: null,
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
export function startLeaderFault(ctx: Context, ref: QueueRef, kind: FaultKind, plan: LeaderFaultPlan): LeaderFaultHandle {
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
      t.membersBefore = lf.before.members;
      t.issuedAt = lf.fault.issuedAt;
      t.appliedAt = lf.fault.appliedAt;
      t.appliedAtIso = lf.fault.appliedAtIso;
      // Closed while the fault call ran: it is on now, so undo it (in the finally).
      if (signal.aborted) throw new InterruptedError();

      const awaitElection = plan.awaitElection ?? takesLeaderAway(kind);
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
