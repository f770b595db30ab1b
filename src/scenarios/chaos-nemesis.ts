import { combineFaults, restoreQuietly, type AppliedFault, type FaultKind } from '../cluster/faults.js';
import {
  currentLeader,
  type FaultPhase,
  type LeaderFault,
  type LeaderFaultDriver,
  type LeaderFaultHandle,
  type QueueRef,
  startLeaderFault,
  waitForRejoin,
} from '../cluster/leader-fault.js';
import { shortNodeName } from '../cluster/leader.js';
import type { NetemSpec } from '../cluster/netfaults.js';
import type { Context } from '../context.js';
import { InterruptedError, errorMessage } from '../errors.js';
import { systemClock } from '../util/retry.js';
import { type FaultRecord, type PlannedFault, pickIndex } from './chaos-plan.js';

/**
 * chaos's nemesis: every interval, the next planned fault on the node its target resolves to,
 * held for holdMs, healed, and the cluster awaited until whole again (every node running, every
 * chaos queue with all its members online). Each step is the shared leader-fault sequence
 * (startLeaderFault) with a driver that picks the node, so the restore is guaranteed on every way
 * out: finish() lets the fault on run to its end, close() heals at once.
 */

export interface NemesisOptions {
  schedule: readonly PlannedFault[];
  queues: readonly QueueRef[];
  intervalMs: number;
  holdMs: number;
  rejoinTimeoutMs: number;
  /** The first fault starts this long after start(). */
  firstAtMs: number;
  netem?: NetemSpec | undefined;
  /** Each producer's node now (Erlang name), undefined while it has no connection. */
  producerNodes: () => readonly (string | undefined)[];
  /** performance.now() of the run's start: the records' times are relative to it. */
  t0: number;
  /** A line for people when a fault starts, is healed, or the cluster is whole again. */
  onLine?: (line: string) => void;
}

export interface ActiveFault {
  index: number;
  kind: FaultKind;
  nodes: string[];
  phase: FaultPhase;
}

export interface NemesisHandle {
  readonly history: readonly FaultRecord[];
  /** The fault on now, from its start until the cluster is whole again; null in calm. */
  active(): ActiveFault | null;
  /** Settles once every planned fault has run, been healed and the cluster is whole again (or the nemesis stopped). */
  readonly allRun: Promise<void>;
  /** Schedule no more faults; the one on (if any) is healed after its hold and awaited until whole. */
  finish(): Promise<void>;
  /** Heal the fault on at once and stop (Ctrl+C, an error elsewhere). Safe to call more than once. */
  close(): Promise<void>;
  /** Why the nemesis stopped early (a fault that could not be applied or healed), or null. */
  error(): string | null;
}

interface Resolved {
  nodeName: string;
  second: string | undefined;
  reason: string;
  leaders: Record<string, string | null>;
  /** The leadership of a queue the node leads (else the first queue's), for the shared sequence. */
  before: LeaderFault['before'];
}

/** The queues' leaders now (short names), asking only nodes not in `exclude`. */
async function leadersOf(ctx: Context, queues: readonly QueueRef[]): Promise<{ map: Record<string, string | null>; list: LeaderFault['before'][] }> {
  const list: LeaderFault['before'][] = [];
  const map: Record<string, string | null> = {};
  for (const ref of queues) {
    const q = await currentLeader(ctx, ref);
    list.push(q);
    map[ref.queue] = shortNodeName(q.leader);
  }
  return { map, list };
}

/** The node (and quorum-loss's second node) a planned fault hits now. */
export async function resolveTarget(
  ctx: Context,
  planned: PlannedFault,
  queues: readonly QueueRef[],
  producerNodes: readonly (string | undefined)[],
): Promise<Resolved> {
  const { map: leaders, list } = await leadersOf(ctx, queues);
  const running = (await ctx.management.nodes()).filter((n) => n.running).map((n) => n.name);
  let nodeName: string;
  let reason: string;
  const pickNode = (): string => running[pickIndex(planned.pick, running.length)]!;
  if (planned.target === 'leader') {
    const i = pickIndex(planned.pick, queues.length);
    nodeName = list[i]!.leader;
    reason = `leader of ${queues[i]!.queue}`;
  } else if (planned.target === 'producer') {
    const connected = producerNodes.map((n, i) => ({ n, i })).filter((p): p is { n: string; i: number } => p.n !== undefined);
    if (connected.length === 0) {
      nodeName = pickNode();
      reason = 'random (no producer connected)';
    } else {
      const p = connected[pickIndex(planned.pick, connected.length)]!;
      nodeName = p.n;
      reason = `producer ${p.i + 1}'s node`;
    }
  } else {
    nodeName = pickNode();
    reason = 'random';
  }
  const led = list.find((q) => q.leader === nodeName);
  const before = led ?? list[0]!;
  let second: string | undefined;
  if (planned.kind === 'quorum-loss') {
    // A second member of a queue the node is in: that queue loses its majority.
    const members = (led ?? list.find((q) => q.members.includes(nodeName)) ?? list[0]!).members.filter((m) => m !== nodeName);
    second = members[pickIndex(planned.pick2, members.length)];
  }
  return { nodeName, second, reason, leaders, before };
}

export function startNemesis(ctx: Context, opts: NemesisOptions): NemesisHandle {
  const history: FaultRecord[] = [];
  const finishing = new AbortController();
  const closing = new AbortController();
  const runSignal = AbortSignal.any([ctx.signal, closing.signal]);
  const rel = (t: number | null): number | null => (t === null ? null : Math.round(t - opts.t0));
  let current: { handle: LeaderFaultHandle; record: FaultRecord; planned: PlannedFault } | undefined;
  let stoppedBecause: string | null = null;
  const say = (line: string): void => opts.onLine?.(line);

  const step = async (planned: PlannedFault): Promise<void> => {
    const issuedAt = performance.now();
    const record: FaultRecord = {
      index: planned.index,
      kind: planned.kind,
      target: planned.target,
      nodes: [],
      reason: '',
      issuedAtMs: rel(issuedAt)!,
      appliedAtMs: null,
      restoredAtMs: null,
      wholeAtMs: null,
      leadersBefore: {},
      leadersAfter: {},
      error: null,
    };
    history.push(record);
    const scoped: Context = { ...ctx, signal: runSignal };
    const driver: LeaderFaultDriver = {
      fault: async (kind, signal) => {
        const s: Context = { ...ctx, signal };
        const r = await resolveTarget(s, planned, opts.queues, opts.producerNodes());
        record.reason = r.reason;
        record.leadersBefore = r.leaders;
        let fault: AppliedFault;
        if (kind === 'quorum-loss') {
          const first = await ctx.faults.inject(r.nodeName, 'kill');
          let other: AppliedFault;
          try {
            if (r.second === undefined) throw new Error(`no second member next to ${r.nodeName} for quorum-loss`);
            other = await ctx.faults.inject(r.second, 'kill');
          } catch (err) {
            await restoreQuietly(first, ctx.log);
            throw err;
          }
          fault = combineFaults(kind, [first, other]);
        } else {
          fault = await ctx.faults.inject(r.nodeName, kind, opts.netem ? { netem: opts.netem } : {});
        }
        const alsoFaulted = r.second !== undefined && kind === 'quorum-loss' ? [shortNodeName(r.second)] : [];
        record.nodes = [shortNodeName(r.nodeName), ...alsoFaulted];
        say(`fault ${planned.index}: ${kind} ${record.nodes.join(' and ')} (${r.reason})`);
        return { oldLeader: shortNodeName(r.nodeName), alsoFaulted, before: r.before, fault, node: r.nodeName };
      },
      waitForNewLeader: () => Promise.reject(new Error('chaos awaits no election')),
      waitForRejoin: (lf, restoredAt, timeoutMs, signal) => waitForRejoin({ ...ctx, signal }, opts.queues, lf, { timeoutMs, restoredAt }),
    };
    const handle = startLeaderFault(scoped, opts.queues[0]!, planned.kind, {
      restoreAfterMs: opts.holdMs,
      awaitElection: false,
      electionTimeoutMs: 0,
      rejoinTimeoutMs: opts.rejoinTimeoutMs,
      driver,
      onPhase: (phase, t) => {
        if (phase === 'restoring') say(`fault ${planned.index}: healing ${record.nodes.join(' and ')}`);
        if (phase === 'rejoined' && t.rejoinedAt !== null) say(`fault ${planned.index}: cluster whole again`);
      },
    });
    current = { handle, record, planned };
    const { timeline, error } = await handle.done;
    record.appliedAtMs = rel(timeline.appliedAt);
    record.restoredAtMs = rel(timeline.restoredAt);
    record.wholeAtMs = rel(timeline.rejoinedAt);
    record.error = timeline.error;
    current = undefined;
    if (error !== undefined) {
      if (error instanceof InterruptedError || runSignal.aborted) throw new InterruptedError();
      throw new Error(`fault ${planned.index} (${planned.kind}): ${timeline.error}`);
    }
    // The leaders once whole: which queues changed leader.
    record.leadersAfter = (await leadersOf(scoped, opts.queues).catch(() => ({ map: {} }))).map;
  };

  const run = async (): Promise<void> => {
    const started = performance.now();
    const untilOrStop = (at: number): Promise<void> =>
      systemClock.sleep(Math.max(0, at - performance.now()), AbortSignal.any([runSignal, finishing.signal])).catch(() => undefined);
    try {
      let nextAt = started + opts.firstAtMs;
      for (const planned of opts.schedule) {
        await untilOrStop(nextAt);
        if (finishing.signal.aborted || runSignal.aborted) return;
        const stepStart = performance.now();
        await step(planned);
        nextAt = stepStart + opts.intervalMs;
      }
    } catch (err) {
      if (!(err instanceof InterruptedError)) {
        stoppedBecause = errorMessage(err);
        say(`nemesis stopped: ${stoppedBecause}`);
      }
    }
  };
  const done = run();

  return {
    history,
    allRun: done,
    active: () => {
      const c = current;
      if (!c) return null;
      return { index: c.planned.index, kind: c.planned.kind, nodes: c.record.nodes, phase: c.handle.timeline.phase };
    },
    finish: async () => {
      finishing.abort();
      await done;
    },
    close: async () => {
      closing.abort();
      await current?.handle.close();
      await done;
    },
    error: () => stoppedBecause,
  };
}
